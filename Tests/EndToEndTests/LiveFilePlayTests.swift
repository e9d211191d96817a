import DaemonBehaviours
import Testing

/// The file-play bodies (DaemonBehaviours/FilePlays.swift), which CueDaemonTests runs in process,
/// on the real cued; what cuectl makes of a path stays in FilePlayTests.
@Suite("Playing a file by its path, live: the in-process bodies on the real cued", .serialized, .liveBehaviours)
struct LiveFilePlayTests {
  @Test(arguments: FilePlays.all) func heard(_ behaviour: Behaviour) throws {
    try behaviour.body(LiveDaemon.start)
  }
}
