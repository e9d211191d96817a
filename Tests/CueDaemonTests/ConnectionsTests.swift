import DaemonBehaviours
import Testing

/// The connection bodies (DaemonBehaviours/Connections.swift) on the daemon in process;
/// EndToEndTests runs the same bodies on the real cued (`make test-live`).
@Suite("Connections: bad lines, pipelining, hanging up, the voice limit, in process")
struct ConnectionsTests {
  @Test(arguments: Connections.all) func connection(_ behaviour: Behaviour) throws {
    try behaviour.body(InProcessDaemon.start)
  }
}

/// The sound library's bodies (DaemonBehaviours/SoundLibrary.swift) on the daemon in process;
/// EndToEndTests runs the same bodies on the real cued (`make test-live`).
@Suite("Sound library: list, reload, broken files, status's counters, in process")
struct SoundLibraryTests {
  @Test(arguments: SoundLibrary.all) func library(_ behaviour: Behaviour) throws {
    try behaviour.body(InProcessDaemon.start)
  }
}
