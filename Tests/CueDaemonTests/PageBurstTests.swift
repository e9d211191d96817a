import DaemonBehaviours
import Testing

/// The page-burst bodies (DaemonBehaviours/PageBursts.swift) on the daemon in process, where a
/// millisecond between lines is the manual clock's; EndToEndTests runs the same bodies on the real
/// cued (`make test-live`).
@Suite("Paging at any speed: bursts of page changes, in process")
struct PageBurstTests {
  @Test(arguments: PageBursts.all) func burst(_ behaviour: Behaviour) throws {
    try behaviour.body(InProcessDaemon.start)
  }
}
