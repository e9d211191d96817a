import DaemonBehaviours
import Testing

/// The hostile-path and hostile-file bodies (DaemonBehaviours/HostilePaths.swift), which
/// CueDaemonTests runs in process, on the real cued; the log, cuectl and another user stay in
/// HostileInputTests.
@Suite("Hostile sound files and paths, live: the in-process bodies on the real cued", .serialized, .liveBehaviours)
struct LiveHostilePathsTests {
  @Test(arguments: HostilePaths.all) func hostile(_ behaviour: Behaviour) throws {
    try behaviour.body(LiveDaemon.start)
  }
}
