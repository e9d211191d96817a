import CuePosix

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
    (readEnd, writeEnd) = try FileDescriptor.pipe(nonblocking: true)
  }

  deinit {
    readEnd.close()
    writeEnd.close()
  }

  /// Wakes the loop.
  func wake(_ reason: Reason) {
    var byte = reason.rawValue
    _ = withUnsafeBytes(of: &byte) { try? writeEnd.write($0, isSocket: false) }
  }

  /// The reasons written since the last call (after poll said the pipe is readable).
  func drain() -> [Reason] {
    var reasons: [Reason] = []
    var buffer = [UInt8](repeating: 0, count: 256)
    while true {
      let result = buffer.withUnsafeMutableBytes { try? readEnd.read(into: $0) }
      guard case .bytes(let n) = result, n > 0 else { return reasons }
      reasons += buffer[0..<n].compactMap(Reason.init(rawValue:))
    }
  }
}
