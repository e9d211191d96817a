/// The body of a successful reply: the `ReplyFields` value of the op it answers (its `Reply`
/// type), or a `PagingOutcome` for a carousel message sent with an id.
public struct ReplyBody: Sendable, Equatable {
  /// The typed body; `value(as:)` reads it as its type.
  public let value: any ReplyFields

  public init(_ value: any ReplyFields) {
    self.value = value
  }

  /// Decodes the reply object to a request of `op` (the client knows what it asked), as the op's `Reply` type.
  public init(op: Op, reply: JSONValue) throws(ProtocolError) {
    self = try op.declaration.readReply(reply)
  }

  /// The body's fields after `"id"` and `"ok"`, in the daemon's order.
  public var fields: [(String, JSONValue)] { value.fields }

  /// The body as `type`, or nil when it is another type's.
  public func value<Body: ReplyFields>(as type: Body.Type) -> Body? { value as? Body }

  public static func == (a: ReplyBody, b: ReplyBody) -> Bool { a.value.isEqual(to: b.value) }
}

extension ReplyFields {
  func isEqual(to other: any ReplyFields) -> Bool { self == (other as? Self) }
}

/// One reply as the daemon sends it: the request's id, and a typed body or an error.
///
/// `json` is `{"id":…,"ok":true,…body}` or `{"id":…,"ok":false,"error":{"code":…,"message":…}}`;
/// `id` is `null` when the request's id could not be read (or it had none).
public struct ReplyEnvelope: Sendable, Equatable {
  public var id: RequestID?
  public var result: Result<ReplyBody, ProtocolError>

  public init(id: RequestID?, _ result: Result<ReplyBody, ProtocolError>) {
    self.id = id
    self.result = result
  }

  /// A successful reply.
  public static func success(id: RequestID?, _ body: ReplyBody) -> ReplyEnvelope { ReplyEnvelope(id: id, .success(body)) }

  /// An error reply.
  public static func failure(id: RequestID?, _ error: ProtocolError) -> ReplyEnvelope { ReplyEnvelope(id: id, .failure(error)) }

  /// The reply object, `id` and `ok` first.
  public var json: JSONValue {
    switch result {
    case .success(let body): Self.success(id: id, fields: body.fields)
    case .failure(let error): Self.failure(id: id, error)
    }
  }

  /// The reply as one wire line (`json`, compact, and a newline).
  public var line: [UInt8] { json.line }

  /// `{"id":…,"ok":true,…fields}`.
  static func success(id: RequestID?, fields: [(String, JSONValue)]) -> JSONValue {
    .object([("id", id?.json ?? .null), ("ok", .bool(true))] + fields)
  }

  /// `{"id":…,"ok":false,"error":{"code":…,"message":…}}`.
  static func failure(id: RequestID?, _ error: ProtocolError) -> JSONValue {
    .object([
      ("id", id?.json ?? .null), ("ok", .bool(false)),
      ("error", .object([("code", .string(error.code.rawValue)), ("message", .string(error.message))])),
    ])
  }
}

/// A parsed line from the daemon, as a client sees it: a reply or an event.
public enum ServerMessage: Sendable, Equatable {
  /// A reply: its id, and the reply object (decode it with the `ReplyFields` type of the op sent) or the error.
  case reply(id: RequestID?, result: Result<JSONValue, ProtocolError>)
  /// An event, typed, and its object as it arrived (with any fields this version does not know).
  ///
  /// A kind this version does not know, or a known kind it cannot read (a newer daemon's new
  /// `reason`, say), arrives as `.unknown`, so that a newer daemon never breaks an older client.
  case event(Event, object: JSONValue)

  /// Parses one line; throws when it is not JSON, or is neither a reply nor an event.
  public static func parse(_ line: some Collection<UInt8>) throws(ProtocolError) -> ServerMessage {
    let value: JSONValue
    do {
      value = try JSONParser.parse(line)
    } catch {
      throw ProtocolError(.parseError, "the daemon sent a line that is not JSON: \(error.message)")
    }
    if let kind = value["event"]?.stringValue {
      return .event((try? Event(json: value)) ?? .unknown(kind: kind, value), object: value)
    }
    guard let ok = value["ok"]?.boolValue else {
      throw ProtocolError(.invalidRequest, "the daemon sent a line that is neither a reply nor an event")
    }
    var id: RequestID? = nil
    if let raw = value["id"] {
      if let n = raw.intValue { id = .number(n) } else if let s = raw.stringValue { id = .string(s) }
    }
    if ok { return .reply(id: id, result: .success(value)) }
    let code = value["error"]?["code"]?.stringValue.flatMap(ErrorCode.init(rawValue:)) ?? .internalError
    let message = value["error"]?["message"]?.stringValue ?? "the daemon refused the request"
    return .reply(id: id, result: .failure(ProtocolError(code, message)))
  }
}

extension Request {
  /// The request as one wire line, `id` first: what a client writes.
  public func line(id: RequestID?) -> [UInt8] { json(id: id).line }
}

extension CarouselMessage {
  /// The message as one wire line: what a carousel writes.
  public var line: [UInt8] { json.line }
}
