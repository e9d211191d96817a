import CueOutput
import Testing

/// PipeWire's xrun test: gaps in the graph position between a stream's cycles, and whose fault each was.
@Suite("PipeWire graph cycles")
struct GraphCyclesTests {
  /// 128 frames at 48 kHz, the position counted in 1/48000 s: 128 ticks, 2 666 666 ns a cycle.
  let length: UInt64 = 128
  let period: Int64 = 2_666_666

  /// Runs cycle `index` (ticks `index * 128` unless `ticks` says otherwise): the callback is called
  /// `calledAfter` ns after the cycle started and finishes `took` ns after that.
  func run(
    _ cycles: inout GraphCycles, _ index: UInt64, ticks: UInt64? = nil, frames: Int = 128, calledAfter: Int64 = 100_000,
    took: Int64 = 400_000
  ) -> GraphCycles.Gap? {
    let start = 1_000_000_000 + Int64(index) * period
    let gap = cycles.cycle(
      ticks: ticks ?? index * length, rateNumerator: 1, rateDenominator: 48000, frames: frames, rate: 48000, startNanoseconds: start,
      calledAtNanoseconds: start + calledAfter)
    cycles.finished(atNanoseconds: start + calledAfter + took)
    return gap
  }

  @Test func cyclesThatFollowEachOtherAreNoXrun() {
    var cycles = GraphCycles()
    for index in 0..<10 { #expect(run(&cycles, UInt64(index)) == nil) }
  }

  @Test func aCallbackStillRunningWhenTheNextCycleWasDueIsThisStreamsXrun() {
    var cycles = GraphCycles()
    for index in 0..<5 { _ = run(&cycles, UInt64(index)) }
    _ = run(&cycles, 5, took: 4_000_000)  // took too long: past the next cycle's start
    #expect(run(&cycles, 7) == GraphCycles.Gap(afterResume: false, graphWide: false))
    #expect(run(&cycles, 8) == nil)
  }

  @Test func cyclesThatRanOnTimeWhileTheStreamsThreadSleptAreThisStreamsXrun() {
    var cycles = GraphCycles()
    for index in 0..<5 { _ = run(&cycles, UInt64(index)) }
    // Its thread was stopped after cycle 4 ended in time; the driver ran 5…9 without it, and the
    // callback for cycle 10 comes within that cycle.
    #expect(run(&cycles, 10, calledAfter: 1_000_000) == GraphCycles.Gap(afterResume: false, graphWide: false))
  }

  @Test func aJumpToACycleThatItselfStartedLateIsTheWholeGraphs() {
    var cycles = GraphCycles()
    for index in 0..<5 { _ = run(&cycles, UInt64(index)) }
    // The driver stalled and skipped ahead: the cycle after the gap started 4 ms before anyone ran.
    #expect(run(&cycles, 9, calledAfter: 4_000_000) == GraphCycles.Gap(afterResume: false, graphWide: true))
    // A new quantum with a jump is the graph rebuilt, whatever the callback did.
    _ = run(&cycles, 10, took: 4_000_000)
    #expect(run(&cycles, 14, ticks: 14 * length, frames: 256) == GraphCycles.Gap(afterResume: false, graphWide: true))
  }

  @Test func theGapOfAPauseIsNoXrunAndALateFirstCycleAfterItIsTheResumes() {
    var cycles = GraphCycles()
    for index in 0..<5 { _ = run(&cycles, UInt64(index)) }
    cycles.resumed()
    #expect(run(&cycles, 1000) == nil, "the graph moved on while the stream was paused")
    cycles.resumed()
    _ = run(&cycles, 2000, took: 4_000_000)  // the first cycle after the resume is slow
    #expect(run(&cycles, 2002) == GraphCycles.Gap(afterResume: true, graphWide: false))
    _ = run(&cycles, 2003, took: 4_000_000)
    #expect(run(&cycles, 2005) == GraphCycles.Gap(afterResume: false, graphWide: false))
  }

  @Test func aLateButWholeCycleIsNoGap() {
    var cycles = GraphCycles()
    _ = run(&cycles, 0)
    // Less than half a quantum off (a rate adjustment): no cycle was skipped.
    #expect(run(&cycles, 1, ticks: length + length / 2 - 1) == nil)
  }
}
