import CuePosix
import CueProtocol
import DaemonTestSupport
import Foundation

/// A raw protocol connection, for what cuectl never sends.
final class RawClient {
  let fd: CuePosix.FileDescriptor
  var framer = LineFramer(maxLineBytes: 1 << 20)

  init(socket: String) throws {
    fd = try UnixSocket.connect(path: socket)
  }

  deinit { fd.close() }

  func send(_ text: String) throws { try fd.writeAll(Array(text.utf8)) }
  func send(bytes: [UInt8]) throws { try fd.writeAll(bytes) }

  /// The next line from the daemon, parsed.
  func receive(timeout: Double = 5) throws -> JSONValue {
    guard let line = try receive(within: timeout) else { throw HarnessError("no line from the daemon within \(timeout) s") }
    return line
  }

  /// The next line from the daemon, parsed, or nil when none came within `timeout` seconds (with
  /// 0, a line already sent).
  func receive(within timeout: Double) throws -> JSONValue? {
    let deadline = Date().addingTimeInterval(timeout)
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
      if let frame = framer.next(), case .line(let bytes) = frame { return try JSONParser.parse(bytes) }
      let remaining = deadline.timeIntervalSinceNow
      let ready = try Poll.wait([PollRequest(fd: fd, events: .readable)], timeoutMilliseconds: Int32(max(0, min(remaining, 0.1)) * 1000))
      if ready[0].isEmpty {
        if remaining <= 0 { return nil }
        continue
      }
      switch try buffer.withUnsafeMutableBytes({ try fd.read(into: $0) }) {
      case .bytes(let n): framer.append(buffer[0..<n])
      case .endOfFile: throw HarnessError("the daemon closed the connection")
      case .wouldBlock: continue
      }
    }
  }
}
