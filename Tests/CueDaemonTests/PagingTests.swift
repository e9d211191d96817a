import DaemonBehaviours
import Testing

/// The paging bodies (DaemonBehaviours/Paging.swift) on the daemon in process; EndToEndTests runs
/// the same bodies on the real cued (`make test-live`).
@Suite("Audible paging: bindings and rapid-paging policies, in process")
struct PagingTests {
  @Test(arguments: Paging.all) func paging(_ behaviour: Behaviour) throws {
    try behaviour.body(InProcessDaemon.start)
  }
}
