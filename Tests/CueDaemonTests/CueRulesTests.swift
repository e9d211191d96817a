import DaemonBehaviours
import Testing

/// The cue rules' bodies (DaemonBehaviours/CueRules.swift) on the daemon in process; EndToEndTests
/// runs the same bodies on the real cued (`make test-live`).
@Suite("Cue rules: variations, spreads, cooldown, caps and priority, in process")
struct CueRulesTests {
  @Test(arguments: CueRules.all) func rule(_ behaviour: Behaviour) throws {
    try behaviour.body(InProcessDaemon.start)
  }
}
