import DaemonBehaviours
import Testing

/// The system-sound, player-file and event bodies (DaemonBehaviours/SoundsAndEvents.swift) on the
/// daemon in process; EndToEndTests runs the same bodies on the real cued (`make test-live`).
@Suite("System sounds and events, in process")
struct SoundsAndEventsTests {
  @Test(arguments: SoundsAndEvents.all) func sounds(_ behaviour: Behaviour) throws {
    try behaviour.body(InProcessDaemon.start)
  }

  @Test(.enabled(if: SoundsAndEvents.themeInstalled, "needs sound-theme-freedesktop"), arguments: SoundsAndEvents.withTheme)
  func themes(_ behaviour: Behaviour) throws {
    try behaviour.body(InProcessDaemon.start)
  }
}

/// The watched-directory bodies (DaemonBehaviours/SoundWatching.swift) on the daemon in process,
/// whose step reads the watch and rescans as cued's loop does; live: `make test-live`.
@Suite("Watched sound directories, in process")
struct SoundWatchingTests {
  @Test(arguments: SoundWatching.all) func watching(_ behaviour: Behaviour) throws {
    try behaviour.body(InProcessDaemon.start)
  }
}
