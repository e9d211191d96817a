import CSystemShims

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Signals delivered as reads from a descriptor (`signalfd(2)`), so a poll loop handles SIGTERM
/// or SIGHUP in its own time instead of in an async-signal handler.
///
/// The signals must be blocked in every thread, or the kernel may deliver them the default way
/// (SIGTERM kills) to a thread that has them unblocked: call `SignalFD.block` on the main thread
/// before starting any other, which then inherit the mask, or create the `SignalFD` there first.
public struct SignalFD: Hashable, Sendable {
  /// The descriptor to register in a poll set (readable while a signal is pending).
  public let descriptor: FileDescriptor

  /// `pthread_sigmask(SIG_BLOCK)` for `signals` in the calling thread; threads it starts later inherit the mask.
  public static func block(_ signals: [Int32]) throws(SystemError) {
    _ = try retryingOnInterrupt("pthread_sigmask(SIG_BLOCK)") {
      signals.withUnsafeBufferPointer { cued_block_signals($0.baseAddress, Int32($0.count)) }
    }
  }

  /// Blocks `signals` in the calling thread and opens a nonblocking, close-on-exec signalfd for them
  /// (`cued_signalfd`: Swift's Glibc hides `signalfd`).
  public init(signals: [Int32]) throws(SystemError) {
    let fd = try retryingOnInterrupt("signalfd") {
      signals.withUnsafeBufferPointer { cued_signalfd($0.baseAddress, Int32($0.count)) }
    }
    descriptor = FileDescriptor(rawValue: fd)
  }

  /// The size of `struct signalfd_siginfo`, fixed by the kernel ABI; its first field is the signal number.
  private static let infoBytes = 128

  /// Reads the next pending signal (`read(2)` of one `signalfd_siginfo`): its number, or nil when none is pending.
  public func next() throws(SystemError) -> Int32? {
    var info = (UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0),
                UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0))
    return try withUnsafeMutableBytes(of: &info) { (raw) throws(SystemError) -> Int32? in
      precondition(raw.count == Self.infoBytes)
      switch try descriptor.read(into: raw) {
      case .bytes(let n) where n == Self.infoBytes: return Int32(bitPattern: raw.load(as: UInt32.self))
      case .bytes(let n): throw SystemError("read(signalfd): \(n) bytes", code: EIO)
      case .wouldBlock: return nil
      case .endOfFile: throw SystemError("read(signalfd): end of file", code: EIO)
      }
    }
  }

  /// `close(2)`. The signals stay blocked.
  public func close() { descriptor.close() }
}

extension SignalFD {
  /// Waits in the calling thread for one of `signals`, which must be blocked (`block`), and
  /// returns its number (`sigwait(3)`). For a thread whose only job is to wait for signals.
  public static func waitSynchronously(for signals: [Int32]) -> Int32 {
    var set = sigset_t()
    sigemptyset(&set)
    for number in signals { sigaddset(&set, number) }
    var number: Int32 = 0
    _ = SystemCall.retrying("sigwait") { () -> Int32 in
      // sigwait returns its error instead of setting errno.
      let rc = sigwait(&set, &number)
      if rc == 0 { return 0 }
      errno = rc
      return -1
    }
    return number
  }

  /// Ignores `signal` in this process (`signal(sig, SIG_IGN)`), e.g. SIGPIPE, so a write to a
  /// closed pipe or terminal is an error to handle, not a death.
  public static func ignore(_ signal: Int32) {
    _ = Glibc.signal(signal, SIG_IGN)
  }
}

/// Sends a signal (`kill(2)`); a process that is gone (ESRCH) is not an error.
public func sendSignal(_ signal: Int32, to pid: Int32) throws(SystemError) {
  switch SystemCall.retrying("kill(\(pid), \(signal))", { kill(pid, signal) }) {
  case .success, .failure(.noSuchProcess): return
  case .failure(let code): throw SystemError("kill(\(pid), \(signal))", code)
  }
}

extension ProcessInfo {
  /// True while a process with that id exists, even one this user may not signal (`kill(pid, 0)`).
  public static func exists(pid: Int32) -> Bool {
    switch SystemCall.retrying("kill(\(pid), 0)", { kill(pid, 0) }) {
    case .success: true
    case .failure(let code): code.rawValue == EPERM
    }
  }
}
