import DaemonBehaviours
import Testing

/// The players' bodies (DaemonBehaviours/Players.swift) on the daemon in process; EndToEndTests
/// runs the same bodies on the real cued (`make test-live`).
@Suite("Players on the output's samples, in process")
struct PlayerTests {
  @Test(arguments: Players.all) func player(_ behaviour: Behaviour) throws {
    try behaviour.body(InProcessDaemon.start)
  }
}
