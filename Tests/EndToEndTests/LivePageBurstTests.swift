import DaemonBehaviours
import Testing

/// The page-burst bodies (DaemonBehaviours/PageBursts.swift), which CueDaemonTests runs in
/// process, on the real cued: through the ALSA tee in front of a paced null sink, lines a real
/// millisecond or key repeat apart.
@Suite("Paging at any speed, live: the in-process bodies on the real cued", .serialized, .liveBehaviours)
struct LivePageBurstTests {
  @Test(arguments: PageBursts.all) func burst(_ behaviour: Behaviour) throws {
    try behaviour.body(LiveDaemon.start)
  }
}
