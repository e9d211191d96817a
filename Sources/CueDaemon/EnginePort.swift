import CueCore
import CuePosix

/// The control side's half of the engine: what the daemon's owners may do with the audio thread.
///
/// `Engine` is it in the daemon; in-process tests use an `Engine` over a test sink and run its
/// cycles themselves. Only plain values go through (`EngineCommand` in, `EngineEvent` out).
protocol EngineControl: AnyObject {
  /// Queues a command; false when the command ring is full (nothing was queued).
  func send(_ command: EngineCommand) -> Bool
  /// Commands that can be queued now without one failing (a lower bound: the audio thread only frees room).
  var commandRoom: Int { get }
  /// The next event from the audio thread, or nil.
  func nextEvent() -> EngineEvent?
  var counters: EngineCounters { get }
  /// True while the audio thread waits for work with no device attached.
  var isParked: Bool { get }
}

extension Engine: EngineControl {}

/// Where the control side reads the time: the monotonic clock in the daemon, a hand-moved one in tests.
///
/// Nanoseconds from an arbitrary fixed point; never goes back.
protocol DaemonClock: AnyObject {
  func nanoseconds() -> UInt64
}

/// CLOCK_MONOTONIC.
final class SystemClock: DaemonClock {
  func nanoseconds() -> UInt64 { MonotonicClock.nanoseconds() }
}

/// One counter for voice, player and sound ids, so an id names one thing (subscriptions filter by id).
final class IDAllocator {
  private var next: UInt64 = 1

  /// A fresh id, below 2^53 (a daemon would need centuries of plays to get there).
  func make() -> UInt64 {
    precondition(next < 1 << 53, "ran out of ids below 2^53 (the largest integer a JSON number holds exactly)")
    defer { next += 1 }
    return next
  }

  /// The id `make()` returns next, without taking it.
  var peek: UInt64 { next }
}
