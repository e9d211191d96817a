#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The poll(2) events cued cares about.
public struct PollEvents: OptionSet, Sendable, Hashable {
  public let rawValue: Int16
  public init(rawValue: Int16) { self.rawValue = rawValue }
  public static let readable = PollEvents(rawValue: Int16(POLLIN))
  public static let writable = PollEvents(rawValue: Int16(POLLOUT))
  public static let hangup = PollEvents(rawValue: Int16(POLLHUP))
  public static let error = PollEvents(rawValue: Int16(POLLERR))
  public static let invalid = PollEvents(rawValue: Int16(POLLNVAL))
}

public struct PollRequest: Sendable {
  public var fd: FileDescriptor
  public var events: PollEvents
  public init(fd: FileDescriptor, events: PollEvents) {
    self.fd = fd
    self.events = events
  }
}

public enum Poll {
  /// `poll(2)`: waits for any of `requests`; returns the events seen, one per request, in order.
  /// EINTR returns an all-empty result rather than failing.
  public static func wait(_ requests: [PollRequest], timeoutMilliseconds: Int32) throws(SystemError) -> [PollEvents] {
    var fds = requests.map { pollfd(fd: $0.fd.rawValue, events: $0.events.rawValue, revents: 0) }
    let n = Glibc.poll(&fds, nfds_t(fds.count), timeoutMilliseconds)
    if n < 0 {
      if errno == EINTR { return Array(repeating: [], count: requests.count) }
      throw SystemError("poll")
    }
    return fds.map { PollEvents(rawValue: $0.revents) }
  }
}

/// Monotonic time, for deadlines, timeouts and latency figures.
public enum MonotonicClock {
  /// Nanoseconds since an arbitrary fixed point (CLOCK_MONOTONIC).
  @inline(__always)
  public static func nanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
  }

  /// Seconds since the same point, as a Double.
  public static func seconds() -> Double { Double(nanoseconds()) / 1e9 }
}
