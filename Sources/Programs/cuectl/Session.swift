import ArgumentParser
import CueClient
import CuePosix
import CueProtocol

/// Connects, sends, prints; maps every failure to its exit status.
struct Session {
  /// --json: print the daemon's replies raw.
  let json: Bool
  let connection: CueConnection

  init(_ options: GlobalOptions) throws {
    try self.init(socket: options.socket, json: options.json)
  }

  init(socket: String?, json: Bool) throws {
    self.json = json
    do {
      connection = try CueConnection.connect(socketPath: socket)
    } catch {
      throw Self.fail(error, json: json)
    }
  }

  func send(_ request: Request) throws -> JSONValue {
    try Self.send(connection, request, json: json)
  }

  /// Sends the request of any op and reads the reply as the op's `Reply` type; an unreadable reply fails the command.
  func send<R: RequestFields>(_ request: R) throws -> R.Reply {
    try send(Request(request), as: R.Reply.self)
  }

  /// Sends `request` like `send(_:)` and reads the reply as `type`; an unreadable reply fails the command.
  func send<Body: ReplyFields>(_ request: Request, as type: Body.Type) throws -> Body {
    let reply = try send(request)
    do {
      return try Body(reply: reply)
    } catch {
      throw fail(.protocolViolation("\(error.message): \(reply)"))
    }
  }

  static func send(_ connection: CueConnection, _ request: Request, json: Bool) throws -> JSONValue {
    do {
      let reply = try connection.send(request)
      if json { writeToStandardOutput(JSONWriter.write(reply) + "\n") }
      return reply
    } catch {
      throw fail(error, json: json, id: connection.lastRequestID)
    }
  }

  func fail(_ error: ClientError) -> ExitCode { Self.fail(error, json: json, id: connection.lastRequestID) }

  static func fail(_ error: ClientError, json: Bool, id: RequestID? = nil) -> ExitCode {
    ExitCode(report(error, json: json, id: id).rawValue)
  }

  /// Prints what went wrong (and, with --json, the error reply) and returns the exit status.
  static func report(_ error: ClientError, json: Bool, id: RequestID?) -> ExitStatus {
    if json, case .refused(let protocolError) = error {
      writeToStandardOutput(JSONWriter.write(ReplyEnvelope.failure(id: id, protocolError).json) + "\n")
    }
    writeToStandardError("cuectl: \(String(describing: error).controlCharactersEscaped)\n")
    switch error {
    case .unreachable: return .unreachable
    case .refused: return .refused
    case .disconnected, .protocolViolation, .timedOut: return .unreachable
    }
  }
}
