#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Monotonic time, for deadlines, timeouts and latency figures. Allocation-free (audio-thread safe).
public enum MonotonicClock {
  /// Nanoseconds since an arbitrary fixed point (`clock_gettime(CLOCK_MONOTONIC)`).
  @inline(__always)
  public static func nanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
  }

  /// Seconds since the same point, as a Double.
  public static func seconds() -> Double { Double(nanoseconds()) / 1e9 }

  /// Sleeps until `nanoseconds()` reaches `deadline` (`clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME)`);
  /// a signal does not cut it short (the absolute deadline makes the EINTR retry exact).
  @inline(__always)
  public static func sleep(untilNanoseconds deadline: UInt64) {
    var request = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
    _ = SystemCall.retrying("clock_nanosleep") { () -> Int32 in
      // clock_nanosleep returns its error instead of setting errno.
      let rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &request, nil)
      if rc == 0 { return 0 }
      errno = rc
      return -1
    }
  }

  /// Sleeps for `nanoseconds`, whatever signals arrive meanwhile.
  @inline(__always)
  public static func sleep(nanoseconds: UInt64) { sleep(untilNanoseconds: Self.nanoseconds() &+ nanoseconds) }

  /// Sleeps for `seconds`, whatever signals arrive meanwhile.
  public static func sleep(seconds: Double) { sleep(nanoseconds: UInt64(max(0, seconds) * 1e9)) }
}

/// Wall-clock time, for timestamps people read (`clock_gettime(CLOCK_REALTIME)`); never for intervals.
public enum RealtimeClock {
  /// Seconds and nanoseconds since the Unix epoch.
  public static func now() -> (seconds: Int, nanoseconds: Int) {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return (Int(ts.tv_sec), Int(ts.tv_nsec))
  }

  /// The local time of day now (`localtime_r` of `now()`), for log and monitor stamps.
  public static func localTimeOfDay() -> (hour: Int, minute: Int, second: Int, millisecond: Int) {
    let (seconds, nanoseconds) = now()
    var epochSeconds = time_t(seconds)
    var parts = tm()
    localtime_r(&epochSeconds, &parts)
    return (Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec), nanoseconds / 1_000_000)
  }
}
