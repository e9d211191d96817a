import CuePosix

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A pipe that wakes the terminal loop from its poll(2): other threads write a byte saying why.
///
/// Writing never blocks (a full pipe already means "wake up"), so it may be done from any thread.
final class Wakeup: Sendable {
  /// Why the loop was woken.
  enum Reason: UInt8, Sendable {
    /// News from cued (an answer, a change of connection).
    case news = 0x6e
    /// SIGWINCH: the window changed size.
    case resized = 0x77
    /// SIGINT, SIGTERM or SIGHUP: time to go.
    case stop = 0x73
  }

  /// The end the loop polls.
  let readEnd: FileDescriptor
  private let writeEnd: FileDescriptor

  /// Makes the pipe, both ends nonblocking and close-on-exec.
  init() throws(SystemError) {
    var ends: [Int32] = [-1, -1]
    guard pipe(&ends) == 0 else { throw SystemError("pipe") }
    readEnd = FileDescriptor(rawValue: ends[0])
    writeEnd = FileDescriptor(rawValue: ends[1])
    for end in [readEnd, writeEnd] {
      try end.setNonBlocking(true)
      _ = fcntl(end.rawValue, F_SETFD, FD_CLOEXEC)
    }
  }

  deinit {
    readEnd.close()
    writeEnd.close()
  }

  /// Wakes the loop.
  func wake(_ reason: Reason) {
    var byte = reason.rawValue
    _ = Glibc.write(writeEnd.rawValue, &byte, 1)
  }

  /// The reasons written since the last call (after poll said the pipe is readable).
  func drain() -> [Reason] {
    var reasons: [Reason] = []
    var buffer = [UInt8](repeating: 0, count: 256)
    while true {
      let n = buffer.withUnsafeMutableBytes { Glibc.read(readEnd.rawValue, $0.baseAddress, $0.count) }
      guard n > 0 else { return reasons }
      reasons += buffer[0..<n].compactMap(Reason.init(rawValue:))
    }
  }
}
