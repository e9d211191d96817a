import CAllocCounter
import CuePosix
import Testing

/// What the audio thread calls in CuePosix (its eventfd park and wake, the clock, NullSink's sleep)
/// must not allocate: the rules at the top of CueCore/Engine.swift.
@Suite(
  "CuePosix's audio-path calls allocate nothing",
  .enabled(if: cued_alloc_counter_is_active() == 1, "the allocation counter is not interposed in this binary"))
struct AudioPathAllocationTests {
  @Test func eventFDSignalWaitDrainAndTheClockAllocateNothing() throws {
    let event = try EventFD()
    defer { event.close() }
    // Warm up: first calls may resolve symbols lazily.
    event.signal()
    _ = event.wait(timeoutMilliseconds: 0)
    event.drain()
    MonotonicClock.sleep(nanoseconds: 1000)
    cued_alloc_counter_start()
    var total: UInt64 = 0
    for _ in 0..<100 {
      event.signal()
      _ = event.wait(timeoutMilliseconds: 1)
      total &+= event.drain()
      _ = event.wait(timeoutMilliseconds: 0)
      total &+= MonotonicClock.nanoseconds() & 1
      MonotonicClock.sleep(nanoseconds: 1000)
    }
    let allocations = cued_alloc_counter_stop()
    #expect(allocations == 0)
    #expect(total >= 100)
  }
}
