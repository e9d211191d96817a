import DaemonBehaviours
import Testing

/// The connection bodies (DaemonBehaviours/Connections.swift), which CueDaemonTests runs in
/// process, on the real cued: the same body, live, in real time.
@Suite("Connections, live: the in-process bodies on the real cued", .serialized, .liveBehaviours)
struct LiveConnectionsTests {
  @Test(arguments: Connections.all) func connection(_ behaviour: Behaviour) throws {
    try behaviour.body(LiveDaemon.start)
  }
}

/// The sound library's bodies (DaemonBehaviours/SoundLibrary.swift), which CueDaemonTests runs in
/// process, on the real cued: the same body, live, in real time.
@Suite("Sound library, live: the in-process bodies on the real cued", .serialized, .liveBehaviours)
struct LiveSoundLibraryTests {
  @Test(arguments: SoundLibrary.all) func library(_ behaviour: Behaviour) throws {
    try behaviour.body(LiveDaemon.start)
  }
}
