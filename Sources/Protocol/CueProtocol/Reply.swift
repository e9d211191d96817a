/// The body of a successful reply, typed per op: one case per shape of reply.
///
/// The five player ops that answer with the player's properties (`player.prepare`, `.pause`,
/// `.stop`, `.set`, `.get`) share `.player`; a carousel message sent with an id is answered with `.paging`.
public enum ReplyBody: Sendable, Equatable {
  case hello(HelloReply)
  case ping(PingReply)
  case play(PlayReply)
  case stop(StopReply)
  case list(ListReply)
  case status(StatusReply)
  case reload(ReloadReply)
  case subscribe(SubscribeReply)
  case unsubscribe(EmptyReply)
  case playerCreate(PlayerCreateReply)
  case player(PlayerProperties)
  case playerPlay(PlayerPlayReply)
  case playerDestroy(PlayerDestroyReply)
  case soundCreate(SoundCreateReply)
  case soundPlay(SoundPlayReply)
  case soundCompletion(SoundCompletionReply)
  case soundDispose(SoundDisposeReply)
  case system(SystemReply)
  case paging(PagingOutcome)
  case voices(VoicesReply)
  case level(LevelReply)
  case group(GroupReply)

  /// The body's fields after `"id"` and `"ok"`, in the daemon's order.
  public var fields: [(String, JSONValue)] { value.fields }

  /// The payload, for its encoder.
  private var value: any ReplyFields {
    switch self {
    case .hello(let body): body
    case .ping(let body): body
    case .play(let body): body
    case .stop(let body): body
    case .list(let body): body
    case .status(let body): body
    case .reload(let body): body
    case .subscribe(let body): body
    case .unsubscribe(let body): body
    case .playerCreate(let body): body
    case .player(let body): body
    case .playerPlay(let body): body
    case .playerDestroy(let body): body
    case .soundCreate(let body): body
    case .soundPlay(let body): body
    case .soundCompletion(let body): body
    case .soundDispose(let body): body
    case .system(let body): body
    case .paging(let body): body
    case .voices(let body): body
    case .level(let body): body
    case .group(let body): body
    }
  }

  /// Decodes the reply object to a request of `op` (the client knows what it asked).
  public init(op: Op, reply: JSONValue) throws(ProtocolError) {
    switch op {
    case .hello: self = .hello(try HelloReply(reply: reply))
    case .ping: self = .ping(try PingReply(reply: reply))
    case .play: self = .play(try PlayReply(reply: reply))
    case .stop: self = .stop(try StopReply(reply: reply))
    case .list: self = .list(try ListReply(reply: reply))
    case .voices: self = .voices(try VoicesReply(reply: reply))
    case .status: self = .status(try StatusReply(reply: reply))
    case .reload: self = .reload(try ReloadReply(reply: reply))
    case .subscribe: self = .subscribe(try SubscribeReply(reply: reply))
    case .unsubscribe: self = .unsubscribe(try EmptyReply(reply: reply))
    case .playerCreate: self = .playerCreate(try PlayerCreateReply(reply: reply))
    case .playerPrepare, .playerPause, .playerStop, .playerSet, .playerGet: self = .player(try PlayerProperties(reply: reply))
    case .playerPlay: self = .playerPlay(try PlayerPlayReply(reply: reply))
    case .playerDestroy: self = .playerDestroy(try PlayerDestroyReply(reply: reply))
    case .soundCreate: self = .soundCreate(try SoundCreateReply(reply: reply))
    case .soundPlay: self = .soundPlay(try SoundPlayReply(reply: reply))
    case .soundCompletion: self = .soundCompletion(try SoundCompletionReply(reply: reply))
    case .soundDispose: self = .soundDispose(try SoundDisposeReply(reply: reply))
    case .system: self = .system(try SystemReply(reply: reply))
    case .level: self = .level(try LevelReply(reply: reply))
    case .group: self = .group(try GroupReply(reply: reply))
    }
  }
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
