/// Builds the lines the daemon sends: replies and events.
public enum Reply {
  /// `{"id":…,"ok":true,…}` with `fields` after `ok`.
  public static func success(id: RequestID?, _ fields: [(String, JSONValue)] = []) -> JSONValue {
    var members: [(String, JSONValue)] = []
    members.append(("id", id?.json ?? .null))
    members.append(("ok", .bool(true)))
    members.append(contentsOf: fields)
    return .object(members)
  }

  /// `{"id":…,"ok":false,"error":{"code":…,"message":…}}`.
  public static func failure(id: RequestID?, _ error: ProtocolError) -> JSONValue {
    .object([
      ("id", id?.json ?? .null),
      ("ok", .bool(false)),
      ("error", .object([("code", .string(error.code.rawValue)), ("message", .string(error.message))])),
    ])
  }

  /// `{"event":kind,…}`: events never carry `id` or `ok`, so a client tells them from replies at a glance.
  public static func event(_ kind: String, _ fields: [(String, JSONValue)]) -> JSONValue {
    .object([("event", .string(kind))] + fields)
  }

  /// One wire line: the compact JSON and a newline.
  public static func line(_ value: JSONValue) -> [UInt8] {
    var bytes: [UInt8] = []
    JSONWriter.write(value, into: &bytes)
    bytes.append(0x0A)
    return bytes
  }
}

/// A parsed line from the daemon, as a client sees it.
public enum ServerMessage: Sendable, Equatable {
  case reply(id: RequestID?, result: Result<JSONValue, ProtocolError>)
  case event(kind: String, body: JSONValue)

  public static func parse(_ line: some Collection<UInt8>) throws(ProtocolError) -> ServerMessage {
    let value: JSONValue
    do {
      value = try JSONParser.parse(line)
    } catch {
      throw ProtocolError(.parseError, "the daemon sent a line that is not JSON: \(error.message)")
    }
    if let kind = value["event"]?.stringValue { return .event(kind: kind, body: value) }
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
