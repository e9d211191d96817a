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

  /// `read(2)` into `buffer`; EINTR is retried.
  public func read(into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> IOResult {
    while true {
      let n = Glibc.read(rawValue, buffer.baseAddress, buffer.count)
      if n > 0 { return .bytes(n) }
      if n == 0 { return buffer.count == 0 ? .bytes(0) : .endOfFile }
      let code = errno
      if code == EINTR { continue }
      if code == EAGAIN || code == EWOULDBLOCK { return .wouldBlock }
      throw SystemError("read(fd \(rawValue))", code: code)
    }
  }

  /// `send(2)` (with MSG_NOSIGNAL for sockets, so a closed peer is an error, not SIGPIPE) or `write(2)`.
  public func write(_ buffer: UnsafeRawBufferPointer, isSocket: Bool = true) throws(SystemError) -> IOResult {
    while true {
      let n =
        isSocket
        ? Glibc.send(rawValue, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL))
        : Glibc.write(rawValue, buffer.baseAddress, buffer.count)
      if n >= 0 { return .bytes(n) }
      let code = errno
      if code == EINTR { continue }
      if code == EAGAIN || code == EWOULDBLOCK { return .wouldBlock }
      throw SystemError("write(fd \(rawValue))", code: code)
    }
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

  /// `close(2)`. Errors are ignored: the descriptor is gone either way on Linux.
  public func close() {
    _ = Glibc.close(rawValue)
  }

  /// Sets or clears O_NONBLOCK.
  public func setNonBlocking(_ on: Bool) throws(SystemError) {
    let flags = fcntl(rawValue, F_GETFL)
    if flags < 0 { throw SystemError("fcntl(F_GETFL)") }
    let wanted = on ? flags | O_NONBLOCK : flags & ~O_NONBLOCK
    if fcntl(rawValue, F_SETFL, wanted) < 0 { throw SystemError("fcntl(F_SETFL)") }
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
