import DaemonBehaviours
import Testing

/// The hostile-path and hostile-file bodies (DaemonBehaviours/HostilePaths.swift) on the daemon in
/// process; EndToEndTests runs the same bodies on the real cued (`make test-live`).
@Suite("Hostile sound files and paths, in process")
struct HostilePathsTests {
  @Test(arguments: HostilePaths.all) func hostile(_ behaviour: Behaviour) throws {
    try behaviour.body(InProcessDaemon.start)
  }
}
