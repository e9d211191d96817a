import CSystemShims

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An `eventfd(2)` counter: one thread signals, another waits for it in poll(2) and drains it.
///
/// Signal, drain and wait are allocation-free and lock-free, so the audio thread may use them.
/// The descriptor is nonblocking and close-on-exec. Closing is explicit (`close()`).
public struct EventFD: Hashable, Sendable {
  /// The descriptor to register in a poll set (readable while the counter is nonzero).
  public let descriptor: FileDescriptor

  /// `eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)` (through `cued_eventfd`: Swift's Glibc hides eventfd).
  public init() throws(SystemError) {
    let fd = try retryingOnInterrupt("eventfd") { cued_eventfd(0, 1) }
    descriptor = FileDescriptor(rawValue: fd)
  }

  /// Adds one to the counter (`write(2)` of 8 bytes), waking whoever polls the descriptor.
  ///
  /// A counter at its maximum (EAGAIN) is still signalled, so that failure is ignored.
  @inline(__always)
  public func signal() {
    var one: UInt64 = 1
    _ = SystemCall.retrying("write(eventfd \(descriptor.rawValue))") { Glibc.write(descriptor.rawValue, &one, 8) }
  }

  /// Reads and clears the counter (`read(2)` of 8 bytes): the number of signals since the last
  /// drain, 0 when there were none. Call it before handling what the signals announced.
  @inline(__always)
  @discardableResult
  public func drain() -> UInt64 {
    var value: UInt64 = 0
    let result = SystemCall.retrying("read(eventfd \(descriptor.rawValue))") { Glibc.read(descriptor.rawValue, &value, 8) }
    if case .success(8) = result { return value }
    return 0
  }

  /// Waits up to `timeoutMilliseconds` (negative: no limit) for a signal, without draining it;
  /// true when signalled. `poll(2)` on this one descriptor.
  @inline(__always)
  @discardableResult
  public func wait(timeoutMilliseconds: Int32) -> Bool {
    var request = pollfd(fd: descriptor.rawValue, events: Int16(POLLIN), revents: 0)
    let ready = withUnsafeMutablePointer(to: &request) { pointer in
      (try? Poll.poll(UnsafeMutableBufferPointer(start: pointer, count: 1), timeoutMilliseconds: timeoutMilliseconds)) ?? 0
    }
    return ready > 0
  }

  /// `close(2)`.
  public func close() { descriptor.close() }
}
