import CuePosix
import CueProtocol

/// Why a client call failed.
public enum ClientError: Error, Sendable, CustomStringConvertible {
  /// No daemon answers at the socket path.
  case unreachable(socketPath: String, reason: String)
  /// The daemon answered with an error reply.
  case refused(ProtocolError)
  /// The connection closed before the reply came.
  case disconnected(socketPath: String)
  /// The daemon sent something this client does not understand.
  case protocolViolation(String)
  /// No reply within the time allowed.
  case timedOut(seconds: Double)

  public var description: String {
    switch self {
    case .unreachable(let path, let reason):
      "cannot reach cued at \(path): \(reason). Start it with `cued` (or `systemctl --user start cued.socket`), or point --socket / CUED_SOCKET at the right path"
    case .refused(let error): error.message
    case .disconnected(let path): "cued at \(path) closed the connection"
    case .protocolViolation(let text): "unexpected message from cued: \(text)"
    case .timedOut(let seconds): "no answer from cued within \(seconds) s"
    }
  }
}

/// A blocking connection to cued: send a request, wait for its reply, read events.
///
/// One thread at a time. Events that arrive while a reply is awaited are kept, in order, for `nextEvent`.
public final class CueConnection {
  public let socketPath: String
  private let fd: FileDescriptor
  private var framer = LineFramer(maxLineBytes: 16 << 20)
  private var nextID = 1
  /// The id of the last request sent (replies echo it).
  public private(set) var lastRequestID: RequestID? = nil
  private var pendingEvents: [CueEvent] = []
  private var scratch = [UInt8](repeating: 0, count: 64 * 1024)

  private init(socketPath: String, fd: FileDescriptor) {
    self.socketPath = socketPath
    self.fd = fd
  }

  deinit {
    fd.close()
  }

  /// The socket, for a caller's poll(2) loop: readable when a line may have come (read it with
  /// `nextEvent`; lines that came with a reply are already kept and do not make it readable).
  public var descriptor: FileDescriptor { fd }

  /// Connects to the daemon at `socketPath` (default: `DefaultPaths.socket()`).
  public static func connect(socketPath: String? = nil) throws(ClientError) -> CueConnection {
    let path = DefaultPaths.socket(explicit: socketPath)
    do {
      let fd = try UnixSocket.connect(path: path)
      return CueConnection(socketPath: path, fd: fd)
    } catch {
      throw .unreachable(socketPath: path, reason: error.reason)
    }
  }

  /// Sends `request` and returns the reply object; an error reply throws `.refused`.
  public func send(_ request: Request, timeoutSeconds: Double = 10) throws(ClientError) -> JSONValue {
    try send(timeoutSeconds: timeoutSeconds) { id in request.json(id: id) }
  }

  /// Sends `request` like `send(_:timeoutSeconds:)` and reads the reply as `type` (`StatusReply`, `ListReply`, …).
  ///
  /// A reply that cannot be read as `type` throws `.protocolViolation`.
  public func send<Body: ReplyFields>(_ request: Request, as type: Body.Type, timeoutSeconds: Double = 10) throws(ClientError) -> Body {
    try Body.read(try send(request, timeoutSeconds: timeoutSeconds))
  }

  /// Sends a carousel message with an id, so the daemon answers with its decision.
  public func send(_ message: CarouselMessage, timeoutSeconds: Double = 10) throws(ClientError) -> JSONValue {
    try send(timeoutSeconds: timeoutSeconds) { id in
      var withID = message
      withID.id = id
      return withID.json
    }
  }

  private func send(timeoutSeconds: Double, _ line: (RequestID) -> JSONValue) throws(ClientError) -> JSONValue {
    let id = nextID
    nextID += 1
    lastRequestID = .number(id)
    do {
      try fd.writeAll(line(.number(id)).line)
    } catch {
      // The daemon may have said why before it closed (access-denied, limit-reached): read that.
      if case .reply(nil, .failure(let refusal))? = try? readMessage(deadline: MonotonicClock.seconds() + 1) {
        throw .refused(refusal)
      }
      throw .disconnected(socketPath: socketPath)
    }
    let deadline = MonotonicClock.seconds() + timeoutSeconds
    while true {
      switch try readMessage(deadline: deadline) {
      case .event(let event, let object):
        pendingEvents.append(CueEvent(event, object: object))
      case .reply(let replyID, let result):
        // A reply without an id answers a line the daemon could not read at all.
        guard replyID == .number(id) || replyID == nil else { continue }
        switch result {
        case .success(let value): return value
        case .failure(let error): throw .refused(error)
        }
      }
    }
  }

  /// The next event, typed (`CueEvent.daemonEvent`), waiting up to `timeoutSeconds` (nil: forever).
  public func nextEvent(timeoutSeconds: Double? = nil) throws(ClientError) -> CueEvent {
    if !pendingEvents.isEmpty { return pendingEvents.removeFirst() }
    let deadline = timeoutSeconds.map { MonotonicClock.seconds() + $0 }
    while true {
      if case .event(let event, let object) = try readMessage(deadline: deadline) { return CueEvent(event, object: object) }
    }
  }

  private func readMessage(deadline: Double?) throws(ClientError) -> ServerMessage {
    while true {
      while let frame = framer.next() {
        guard case .line(let bytes) = frame, !bytes.isEmpty else { continue }
        do {
          return try ServerMessage.parse(bytes)
        } catch {
          throw .protocolViolation(error.message)
        }
      }
      var timeout: Int32 = -1
      if let deadline {
        let left = deadline - MonotonicClock.seconds()
        if left <= 0 { throw .timedOut(seconds: (left * -1).rounded()) }
        timeout = Int32(min(left * 1000 + 1, 2_000_000_000))
      }
      let ready: [PollEvents]
      do {
        ready = try Poll.wait([PollRequest(fd: fd, events: .readable)], timeoutMilliseconds: timeout)
      } catch {
        throw .disconnected(socketPath: socketPath)
      }
      if ready[0].isEmpty { continue }
      let result: FileDescriptor.IOResult
      do {
        result = try scratch.withUnsafeMutableBytes { try fd.read(into: $0) }
      } catch {
        throw .disconnected(socketPath: socketPath)
      }
      switch result {
      case .bytes(let n): framer.append(scratch[0..<n])
      case .wouldBlock: continue
      case .endOfFile: throw .disconnected(socketPath: socketPath)
      }
    }
  }
}
