import CueCore
import CueOutput
import Testing

/// The control side of a pulled sink's latency: xrun counts read from the C face, time from the
/// daemon's clock, the amount from `LatencyAdapter`.
@Suite("Pulled latency")
struct PulledLatencyTests {
  @Test func aFixedLatencyHasNoAdapter() {
    #expect(PulledLatency(minimumFrames: 480, maximumFrames: 480, decaySeconds: 60) == nil)
    #expect(PulledLatency(minimumFrames: 480, maximumFrames: 256, decaySeconds: 60) == nil)
  }

  @Test func newXrunsDoubleItAndQuietSecondsHalveIt() throws {
    var latency = try #require(PulledLatency(minimumFrames: 128, maximumFrames: 1024, decaySeconds: 1))
    let ms: UInt64 = 1_000_000
    #expect(latency.observe(xruns: 0, nowNanoseconds: 0) == nil)
    #expect(latency.observe(xruns: 0, nowNanoseconds: 50 * ms) == nil)
    // Three xruns since the last look: one doubling (the next look sees whether it was enough).
    #expect(latency.observe(xruns: 3, nowNanoseconds: 100 * ms) == 256)
    #expect(latency.observe(xruns: 3, nowNanoseconds: 150 * ms) == nil)
    #expect(latency.observe(xruns: 4, nowNanoseconds: 200 * ms) == 512)
    #expect(latency.adapter.raises == 2)
    // A quiet second after the last raise: half; another: the configured amount again.
    var changes: [Int] = []
    for step in 1...40 {
      if let frames = latency.observe(xruns: 4, nowNanoseconds: 200 * ms + UInt64(step) * 50 * ms) { changes.append(frames) }
    }
    #expect(changes == [256, 128])
    #expect(latency.adapter.targetFrames == 128)
  }
}
