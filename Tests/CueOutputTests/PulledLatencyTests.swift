import CueCore
import CueOutput
import Testing

/// The control side of a pulled sink's latency: counts of xruns that cut sound (the engine's
/// counters, which the sink's thread feeds), time from the daemon's clock, the amount from
/// `LatencyAdapter`.
@Suite("Pulled latency")
struct PulledLatencyTests {
  @Test func aFixedLatencyHasNoAdapter() {
    #expect(PulledLatency.policy(minimumFrames: 480, maximumFrames: 480, decaySeconds: 60) == nil)
    #expect(PulledLatency.policy(minimumFrames: 480, maximumFrames: 256, decaySeconds: 60) == nil)
  }

  @Test func newAudibleXrunsRaiseItAStepAndQuietSecondsBringItDown() throws {
    let policy = try #require(PulledLatency.policy(minimumFrames: 128, maximumFrames: 1024, decaySeconds: 1))
    var latency = try #require(PulledLatency(policy: policy))
    let ms: UInt64 = 1_000_000
    #expect(latency.observe(audibleXruns: 0, nowNanoseconds: 0) == nil)
    #expect(latency.observe(audibleXruns: 0, nowNanoseconds: 50 * ms) == nil)
    // Three since the last look: one step (the next looks see whether it was enough).
    #expect(latency.observe(audibleXruns: 3, nowNanoseconds: 100 * ms) == .raised(frames: 256))
    // One more within the raise's settling time (a fortieth of the decay): the same stall.
    #expect(latency.observe(audibleXruns: 4, nowNanoseconds: 110 * ms) == nil)
    #expect(latency.observe(audibleXruns: 4, nowNanoseconds: 150 * ms) == nil)
    #expect(latency.observe(audibleXruns: 5, nowNanoseconds: 400 * ms) == .raised(frames: 512))
    #expect(latency.adapter.raises == 2)
    // A quiet second after the last raise: half; another: the configured amount again.
    var changes: [PulledLatency.Change] = []
    for step in 1...40 {
      if let change = latency.observe(audibleXruns: 5, nowNanoseconds: 400 * ms + UInt64(step) * 50 * ms) { changes.append(change) }
    }
    #expect(changes == [.lowered(frames: 256), .lowered(frames: 128)])
    #expect(latency.adapter.targetFrames == 128)
    #expect(latency.nextStepDown == nil)
  }

  @Test func whilePausedTheNextLookIsWhenTheNextStepDownIsDue() throws {
    let policy = try #require(PulledLatency.policy(minimumFrames: 128, maximumFrames: 1024, decaySeconds: 1))
    var latency = try #require(PulledLatency(policy: policy))
    #expect(latency.observe(audibleXruns: 0, nowNanoseconds: 1_000_000_000) == nil)
    #expect(latency.nextStepDown == nil, "at the minimum nothing is due")
    #expect(latency.observe(audibleXruns: 1, nowNanoseconds: 1_100_000_000) == .raised(frames: 256))
    #expect(latency.nextStepDown == 2_100_000_000)
    // A look long after (the stream was paused meanwhile) takes it all the way down.
    #expect(latency.observe(audibleXruns: 1, nowNanoseconds: 60_000_000_000) == .lowered(frames: 128))
  }
}
