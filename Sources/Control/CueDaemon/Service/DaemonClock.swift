import CuePosix

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
