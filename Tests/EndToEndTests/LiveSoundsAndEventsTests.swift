import DaemonBehaviours
import Testing

/// The system-sound, player-file and event bodies (DaemonBehaviours/SoundsAndEvents.swift), which
/// CueDaemonTests runs in process, on the real cued.
@Suite("System sounds and events, live: the in-process bodies on the real cued", .serialized, .liveBehaviours)
struct LiveSoundsAndEventsTests {
  @Test(arguments: SoundsAndEvents.all) func sounds(_ behaviour: Behaviour) throws {
    try behaviour.body(LiveDaemon.start)
  }

  @Test(.enabled(if: SoundsAndEvents.themeInstalled, "needs sound-theme-freedesktop"), arguments: SoundsAndEvents.withTheme)
  func themes(_ behaviour: Behaviour) throws {
    try behaviour.body(LiveDaemon.start)
  }
}

/// The watched-directory bodies (DaemonBehaviours/SoundWatching.swift) on the real cued.
@Suite("Watched sound directories, live: the in-process bodies on the real cued", .serialized, .liveBehaviours)
struct LiveSoundWatchingTests {
  @Test(arguments: SoundWatching.all) func watching(_ behaviour: Behaviour) throws {
    try behaviour.body(LiveDaemon.start)
  }
}
