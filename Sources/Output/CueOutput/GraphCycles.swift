/// PipeWire's xrun test, from what `pw_stream` reports each cycle: the graph position (`pw_time.ticks`,
/// the driver's clock rebased to this stream), when the driver started the cycle (`pw_time.now`,
/// the driver's `clock.nsec`), and when this stream's own callback started and finished.
///
/// A cycle that does not start where the stream's previous one ended means the graph ran cycles
/// without this stream (pw_time has no xrun counter in 0.3.65: this is the documented way). Whose
/// fault it was decides whether the latency should rise:
/// - the stream's: its previous callback was still running when the next cycle was due (it took
///   too long), or the driver went on cycling on time while the stream's thread slept (it woke
///   late: the callback after the gap starts within a quantum of its cycle's start);
/// - the whole graph's: the previous callback had finished in time and the cycle after the gap
///   itself started more than a quantum late (the driver stalled and skipped ahead, which every
///   client sees alike), or the quantum changed (the graph was rebuilt); a longer latency for cued
///   would not have prevented either;
/// - neither, when the late cycle was the first after a resume or a (re)connect (`resumed`).
///
/// A plain value owned by PipeWire's data thread: no allocation, no lock.
public struct GraphCycles: Sendable, Equatable {
  /// Where the next cycle should start (ticks); nil after a resume or a connect.
  private var nextTicks: UInt64? = nil
  /// When the cycle after the previous one was due (ns): the previous cycle's start plus its length.
  private var nextCycleDue: Int64 = 0
  /// When the previous callback finished (ns).
  private var finishedAt: Int64 = 0
  private var lastFrames = 0
  /// Callbacks since the last resume or connect.
  private var cyclesSinceResume = 0

  /// A gap: the cycles between the previous callback and this one ran without the stream.
  public struct Gap: Sendable, Equatable {
    public var afterResume: Bool
    public var graphWide: Bool

    public init(afterResume: Bool, graphWide: Bool) {
      self.afterResume = afterResume
      self.graphWide = graphWide
    }
  }

  public init() {}

  /// The stream was resumed or (re)connected: the graph moved on meanwhile, which is no xrun, and
  /// the next cycle is the first.
  public mutating func resumed() {
    nextTicks = nil
    cyclesSinceResume = 0
  }

  /// A callback starts at `calledAtNanoseconds` (CLOCK_MONOTONIC) for the cycle the driver started
  /// at `startNanoseconds`, at graph position `ticks`, the position counting
  /// `rateDenominator / rateNumerator` per second, `frames` asked for at `rate`. Returns the gap
  /// before it, if any.
  public mutating func cycle(
    ticks: UInt64, rateNumerator: UInt32, rateDenominator: UInt32, frames: Int, rate: Int, startNanoseconds: Int64,
    calledAtNanoseconds: Int64
  ) -> Gap? {
    guard rateNumerator != 0, rateDenominator != 0, frames > 0, rate > 0 else { return nil }
    let length = UInt64(frames) * UInt64(rateDenominator) / (UInt64(rateNumerator) * UInt64(rate))
    let lengthNanoseconds = Int64(frames) * 1_000_000_000 / Int64(rate)
    var gap: Gap? = nil
    if let expected = nextTicks, ticks > expected + length / 2 {
      // The previous callback is the late one; it was the first since a resume when only it ran.
      let overran = finishedAt > nextCycleDue
      let cycleLate = calledAtNanoseconds - startNanoseconds > lengthNanoseconds
      gap = Gap(afterResume: cyclesSinceResume <= 1, graphWide: (!overran && cycleLate) || frames != lastFrames)
    }
    nextTicks = ticks + length
    nextCycleDue = startNanoseconds + lengthNanoseconds
    lastFrames = frames
    cyclesSinceResume += 1
    return gap
  }

  /// The callback finished at `nanoseconds` (CLOCK_MONOTONIC, as the driver's clock).
  public mutating func finished(atNanoseconds nanoseconds: Int64) {
    finishedAt = nanoseconds
  }
}
