/// The protocol version this module speaks. Bumped only for incompatible changes; additions
/// (new ops, new optional fields, new event kinds) keep it.
public let protocolVersion = 1

/// A request's id as the client sent it: echoed verbatim in the reply.
public enum RequestID: Sendable, Equatable, Hashable {
  case number(Int)
  case string(String)

  /// The longest string id, in bytes.
  public static let maximumStringBytes = 256
  /// The largest integer id in size (2^53 - 1: every integer up to it is exact as a JSON number).
  public static let maximumMagnitude = 9_007_199_254_740_991

  public var json: JSONValue {
    switch self {
    case .number(let n): .number(Double(n))
    case .string(let s): .string(s)
    }
  }
}

/// One request of the protocol (see docs/PROTOCOL.md): the request of one op, whichever.
///
/// Made from any op's request (`Request(PlayerGetRequest(player: 3))`), or with the shorthands
/// of the common ops (`.play(…)`, `.status`); `op` says which op it is.
public struct Request: Sendable, Equatable {
  /// The op's request; `body(as:)` reads it as its type.
  public let body: any RequestFields

  public init(_ body: any RequestFields) {
    self.body = body
  }

  /// The operation, whose raw value is the `op` string.
  public var op: Op { type(of: body).op }

  /// The request as `type`, or nil when it is another op's.
  public func body<Body: RequestFields>(as type: Body.Type) -> Body? { body as? Body }

  public static func == (a: Request, b: Request) -> Bool { a.body.isEqual(to: b.body) }

  /// Every op this protocol version knows, for messages: the op table's names in order.
  public static let knownOps = Op.allCases.map(\.rawValue)

  /// The longest fade a request may ask for, in seconds.
  public static let maximumFadeSeconds = 60.0

  /// The request as a JSON object, `id` first (what a client sends).
  public func json(id: RequestID?) -> JSONValue {
    var members: [(String, JSONValue)] = []
    if let id { members.append(("id", id.json)) }
    members.append(("op", .string(op.rawValue)))
    return .object(members + body.fields)
  }
}

/// A decoded request line: its id (if any) and the request.
public struct RequestEnvelope: Sendable, Equatable {
  public var id: RequestID?
  public var request: Request
}

/// A line that could not be turned into a request: the error, and the id when one could be read.
public struct RequestFailure: Error, Sendable, Equatable {
  public var id: RequestID?
  public var error: ProtocolError
}

/// A line from a client: a request (`op`) or a carousel message (`carousel`).
public enum ClientLine: Sendable, Equatable {
  case request(RequestEnvelope)
  case carousel(CarouselMessage)
}

/// Turns request lines into `Request`s, with an error that names the field and what is wrong.
public enum RequestDecoder {
  /// Decodes either kind of client line.
  public static func decodeLine(_ line: some Collection<UInt8>) -> Result<ClientLine, RequestFailure> {
    let value: JSONValue
    do {
      value = try JSONParser.parse(line)
    } catch {
      return .failure(RequestFailure(id: nil, error: ProtocolError(.parseError, error.message)))
    }
    if case .object = value, value["carousel"] != nil, value["op"] == nil {
      var id: RequestID? = nil
      if let raw = value["id"] {
        if let n = raw.intValue, abs(n) < 9_007_199_254_740_992 { id = .number(n) } else if let s = raw.stringValue, s.utf8.count <= 256 { id = .string(s) }
      }
      do {
        var message = try CarouselMessage.decode(value)
        message.id = id
        return .success(.carousel(message))
      } catch {
        return .failure(RequestFailure(id: id, error: error))
      }
    }
    return decode(value: value).map { .request($0) }
  }

  public static func decode(line: some Collection<UInt8>) -> Result<RequestEnvelope, RequestFailure> {
    let value: JSONValue
    do {
      value = try JSONParser.parse(line)
    } catch {
      return .failure(RequestFailure(id: nil, error: ProtocolError(.parseError, error.message)))
    }
    return decode(value: value)
  }

  static func decode(value: JSONValue) -> Result<RequestEnvelope, RequestFailure> {
    guard case .object = value else {
      return .failure(
        RequestFailure(id: nil, error: ProtocolError(.invalidRequest, "a request must be a JSON object like {\"id\":1,\"op\":\"ping\"}")))
    }
    var id: RequestID? = nil
    if let raw = value["id"] {
      switch raw {
      case .string(let s) where s.utf8.count <= RequestID.maximumStringBytes: id = .string(s)
      case .number where raw.intValue != nil && abs(raw.intValue!) <= RequestID.maximumMagnitude: id = .number(raw.intValue!)
      case .null: id = nil
      default:
        return .failure(
          RequestFailure(
            id: nil,
            error: ProtocolError(.invalidRequest, "\"id\" must be an integer (below 2^53 in size) or a string of at most 256 bytes")))
      }
    }
    do {
      return .success(RequestEnvelope(id: id, request: try decodeRequest(value)))
    } catch {
      return .failure(RequestFailure(id: id, error: error))
    }
  }

  private static func decodeRequest(_ value: JSONValue) throws(ProtocolError) -> Request {
    var fields = FieldReader(value)
    guard let name = try fields.string("op") else {
      throw ProtocolError(.invalidRequest, "the request has no \"op\" field; for example {\"id\":1,\"op\":\"ping\"}")
    }
    guard let op = Op(rawValue: name) else { throw Op.unknown(name) }
    fields.declare(op.declaration.fieldSpecs.map(\.name))
    let request = Request(try op.declaration.init(fields: &fields))
    try fields.rejectUnread(op: name)
    return request
  }
}
