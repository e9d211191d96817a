import CuePosix
import CueProtocol

#if canImport(Glibc)
import Glibc
#endif

/// Why a connection to the daemon failed (as opposed to an error reply, which is a `ProtocolError`).
enum WireError: Error, CustomStringConvertible {
  case unreachable(String)
  case disconnected
  case timedOut(seconds: Double)
  case protocolViolation(String)

  var description: String {
    switch self {
    case .unreachable(let reason): "cannot connect: \(reason)"
    case .disconnected: "the daemon closed the connection"
    case .timedOut(let seconds): "no reply within \(seconds) s"
    case .protocolViolation(let text): "unexpected line from the daemon: \(text)"
    }
  }
}

/// One blocking connection to cued, for one thread.
///
/// Unlike CueClient's `CueConnection` it can pipeline requests, write raw (half) lines, half-close,
/// and hands events to `onEvent` as they are read instead of queueing them: a soak connection
/// reads hundreds of thousands of events and must not keep them.
final class Wire {
  let fd: FileDescriptor
  private var framer = LineFramer(maxLineBytes: 16 << 20)
  private var nextID = 1
  private var scratch = [UInt8](repeating: 0, count: 64 * 1024)
  private var isOpen = true
  /// Replies read while waiting for another one (pipelined requests).
  private var early: [Int: Result<JSONValue, ProtocolError>] = [:]
  /// Called for every event line read, in order.
  var onEvent: (Event) -> Void = { _ in }

  private init(fd: FileDescriptor) { self.fd = fd }

  static func connect(_ path: String) throws(WireError) -> Wire {
    do {
      return Wire(fd: try UnixSocket.connect(path: path))
    } catch {
      throw .unreachable(error.description)
    }
  }

  deinit { close() }

  func close() {
    if isOpen {
      fd.close()
      isOpen = false
    }
  }

  /// `shutdown(SHUT_WR)`: the daemon sees end-of-file but may still answer.
  func shutdownWrite() {
    fd.shutdown(.write)
  }

  /// Writes one request line; returns its id.
  @discardableResult
  func send(_ request: Request) throws(WireError) -> Int {
    let id = nextID
    nextID += 1
    try write(request.line(id: .number(id)))
    return id
  }

  func write(_ bytes: [UInt8]) throws(WireError) {
    do {
      try fd.writeAll(bytes)
    } catch {
      throw .disconnected
    }
  }

  /// Waits for the reply to request `id`, handing on the events read meanwhile.
  func reply(to id: Int, timeout: Double = 20) throws(WireError) -> Result<JSONValue, ProtocolError> {
    if let result = early.removeValue(forKey: id) { return result }
    let deadline = MonotonicClock.seconds() + timeout
    while true {
      guard let message = try readMessage(deadline: deadline, timeout: timeout) else { throw .disconnected }
      switch message {
      case .event(let event, _):
        onEvent(event)
      case .reply(let replyID, let result):
        // A reply without an id answers a line the daemon could not read at all.
        if replyID == .number(id) || replyID == nil { return result }
        if case .number(let other)? = replyID { early[other] = result }
      }
    }
  }

  /// Sends `request` and waits for its reply.
  func request(_ request: Request, timeout: Double = 20) throws(WireError) -> Result<JSONValue, ProtocolError> {
    try reply(to: try send(request), timeout: timeout)
  }

  /// Reads whatever arrives within `milliseconds` and hands the events on; false at end-of-file.
  func pump(milliseconds: Int32) throws(WireError) -> Bool {
    var wait = milliseconds
    while true {
      while let frame = framer.next() {
        guard case .line(let bytes) = frame, !bytes.isEmpty else { continue }
        switch try parse(bytes) {
        case .event(let event, _): onEvent(event)
        case .reply(let replyID, let result): if case .number(let other)? = replyID { early[other] = result }
        }
      }
      guard let got = try fill(milliseconds: wait) else { return false }
      if !got { return true }
      wait = 0
    }
  }

  /// Reads (and hands on events) until the daemon closes the connection.
  func readToEnd(timeout: Double) throws(WireError) {
    let deadline = MonotonicClock.seconds() + timeout
    while try pump(milliseconds: 20) {
      if MonotonicClock.seconds() > deadline { throw .timedOut(seconds: timeout) }
    }
  }

  private func parse(_ bytes: [UInt8]) throws(WireError) -> ServerMessage {
    do {
      return try ServerMessage.parse(bytes)
    } catch {
      throw .protocolViolation(error.message)
    }
  }

  /// The next message, or nil at end-of-file.
  private func readMessage(deadline: Double, timeout: Double) throws(WireError) -> ServerMessage? {
    while true {
      while let frame = framer.next() {
        guard case .line(let bytes) = frame, !bytes.isEmpty else { continue }
        return try parse(bytes)
      }
      let left = deadline - MonotonicClock.seconds()
      if left <= 0 { throw .timedOut(seconds: timeout) }
      if try fill(milliseconds: Int32(min(left * 1000 + 1, 1_000_000))) == nil { return nil }
    }
  }

  /// One poll and read: true when bytes came, false on timeout, nil at end-of-file.
  private func fill(milliseconds: Int32) throws(WireError) -> Bool? {
    guard isOpen else { return nil }
    do {
      let ready = try Poll.wait([PollRequest(fd: fd, events: .readable)], timeoutMilliseconds: milliseconds)
      if ready[0].isEmpty { return false }
      let result = try scratch.withUnsafeMutableBytes { buffer throws(SystemError) in try fd.read(into: buffer) }
      switch result {
      case .bytes(let n):
        framer.append(scratch[0..<n])
        return true
      case .wouldBlock: return false
      case .endOfFile: return nil
      }
    } catch {
      // ECONNRESET: the daemon closed with unread input; the same as end-of-file here.
      return nil
    }
  }
}
