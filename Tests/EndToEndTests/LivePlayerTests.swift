import DaemonBehaviours
import Testing

/// The players' bodies (DaemonBehaviours/Players.swift), which CueDaemonTests runs in process, on
/// the real cued: through the ALSA tee in front of a paced null sink, in real time.
@Suite("Players on captured samples, live: the in-process bodies on the real cued", .serialized, .liveBehaviours)
struct LivePlayerTests {
  @Test(arguments: Players.all) func player(_ behaviour: Behaviour) throws {
    try behaviour.body(LiveDaemon.start)
  }
}
