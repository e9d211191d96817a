import CueOutput
import Testing

/// How much of a PulseAudio stream's queue a cue is rendered over: decided in Swift from the
/// timing the C face reports.
@Suite("PulseAudio rewrite span")
struct PulseRewriteSpanTests {
  @Test func itIsWhatTheServerHoldsLessWhatTheSinkTookTheTransportAndTheMargin() {
    // 20 ms held, 5 ms of it in the sink, 1 ms in transit: 14 ms at 48 kHz.
    #expect(PulseSink.rewriteSpan(latencyMicroseconds: 20_000, sinkMicroseconds: 5_000, transportMicroseconds: 1_000, rate: 48000, marginFrames: 0) == 672)
    #expect(PulseSink.rewriteSpan(latencyMicroseconds: 20_000, sinkMicroseconds: 5_000, transportMicroseconds: 1_000, rate: 48000, marginFrames: 96) == 576)
  }

  @Test func aQueueTheSinkAlreadyTookLeavesNothing() {
    #expect(PulseSink.rewriteSpan(latencyMicroseconds: 4_000, sinkMicroseconds: 5_000, transportMicroseconds: 0, rate: 48000, marginFrames: 0) <= 0)
  }
}
