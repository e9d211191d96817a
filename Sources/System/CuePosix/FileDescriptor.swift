#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An owned file descriptor number with the few operations cued needs. Closing is explicit.
public struct FileDescriptor: Hashable, Sendable {
  public let rawValue: Int32
  public init(rawValue: Int32) { self.rawValue = rawValue }

  /// Result of a nonblocking read or write.
  public enum IOResult: Equatable, Sendable {
    case bytes(Int)
    /// Nothing could be transferred now (EAGAIN).
    case wouldBlock
    /// The peer closed (read returned 0).
    case endOfFile
  }

  /// `read(2)` into `buffer`.
  ///
  /// EINTR is retried and EBADF traps (`SystemCall.retrying`); EAGAIN is `.wouldBlock`; any other
  /// failure (ECONNRESET from a peer that went away, EIO) is thrown.
  public func read(into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> IOResult {
    switch SystemCall.retrying("read(fd \(rawValue))", { Glibc.read(rawValue, buffer.baseAddress, buffer.count) }) {
    case .success(let n) where n > 0: return .bytes(n)
    case .success: return buffer.count == 0 ? .bytes(0) : .endOfFile
    case .failure(let code): return try Self.wouldBlockOrThrow(code, "read(fd \(rawValue))")
    }
  }

  /// `send(2)` (with MSG_NOSIGNAL for sockets, so a closed peer is an error, not SIGPIPE) or `write(2)`.
  ///
  /// EINTR is retried and EBADF traps; EAGAIN is `.wouldBlock`; EPIPE/ECONNRESET (the peer went away) are thrown.
  public func write(_ buffer: UnsafeRawBufferPointer, isSocket: Bool = true) throws(SystemError) -> IOResult {
    let result = SystemCall.retrying("write(fd \(rawValue))") {
      isSocket
        ? Glibc.send(rawValue, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL))
        : Glibc.write(rawValue, buffer.baseAddress, buffer.count)
    }
    switch result {
    case .success(let n): return .bytes(n)
    case .failure(let code): return try Self.wouldBlockOrThrow(code, "write(fd \(rawValue))")
    }
  }

  private static func wouldBlockOrThrow(_ code: Errno, _ operation: String) throws(SystemError) -> IOResult {
    if code.rawValue == EAGAIN || code.rawValue == EWOULDBLOCK { return .wouldBlock }
    throw SystemError(operation, code)
  }

  /// Writes all of `bytes`, waiting with poll(2) while the descriptor is full. For blocking use (the CLI, logs).
  public func writeAll(_ bytes: some Collection<UInt8>, isSocket: Bool = true) throws(SystemError) {
    let array = Array(bytes)
    var offset = 0
    while offset < array.count {
      let attempt: Result<IOResult, SystemError> = array.withUnsafeBytes { raw in
        Result { () throws(SystemError) -> IOResult in
          try write(UnsafeRawBufferPointer(rebasing: raw[offset...]), isSocket: isSocket)
        }
      }
      switch try attempt.get() {
      case .bytes(let n): offset += n
      case .wouldBlock: _ = try Poll.wait([PollRequest(fd: self, events: .writable)], timeoutMilliseconds: -1)
      case .endOfFile: return
      }
    }
  }

  /// `close(2)`. EINTR and EIO are ignored (on Linux the descriptor is gone either way, so it is
  /// never retried); EBADF traps: closing twice is a bug that would close someone else's descriptor.
  public func close() {
    if Glibc.close(rawValue) != 0 && errno == EBADF { SystemCall.badDescriptor("close(fd \(rawValue))") }
  }

  /// Which directions `shutdown` closes.
  public enum ShutdownDirection: Sendable {
    case write, readAndWrite
  }

  /// `shutdown(2)` of a connected socket: the peer sees end-of-file; with `.write` it may still
  /// answer. ENOTCONN (the peer already went) is not an error.
  public func shutdown(_ direction: ShutdownDirection) {
    let how = direction == .write ? Int32(SHUT_WR) : Int32(SHUT_RDWR)
    _ = SystemCall.retrying("shutdown(fd \(rawValue))") { Glibc.shutdown(rawValue, how) }
  }

  /// Sets or clears O_NONBLOCK.
  public func setNonBlocking(_ on: Bool) throws(SystemError) {
    let flags = try retryingOnInterrupt("fcntl(fd \(rawValue), F_GETFL)") { fcntl(rawValue, F_GETFL) }
    let wanted = on ? flags | O_NONBLOCK : flags & ~O_NONBLOCK
    _ = try retryingOnInterrupt("fcntl(fd \(rawValue), F_SETFL)") { fcntl(rawValue, F_SETFL, wanted) }
  }

  public static let standardInput = FileDescriptor(rawValue: 0)
  public static let standardOutput = FileDescriptor(rawValue: 1)
  public static let standardError = FileDescriptor(rawValue: 2)
}

/// Writes text to standard error unbuffered (a `print` to a pipe is block-buffered and lost on a signal).
public func writeToStandardError(_ text: String) {
  try? FileDescriptor.standardError.writeAll(Array(text.utf8), isSocket: false)
}

/// Writes text to standard output unbuffered.
public func writeToStandardOutput(_ text: String) {
  try? FileDescriptor.standardOutput.writeAll(Array(text.utf8), isSocket: false)
}
