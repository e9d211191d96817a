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

/// What `play` asks for.
public struct PlayParameters: Sendable, Equatable {
  /// The cue to play; empty when `event` names a sound-theme event instead.
  public var cue: String
  /// A freedesktop sound-theme event name (`message-new-instant`), as libcanberra's `event.id`.
  public var event: String?
  /// Linear, 0...1.
  public var volume: Double
  /// -1 (left) ... 1 (right).
  public var pan: Double
  /// AVAudioPlayer's numberOfLoops: 0 once, n → n+1 times, negative → until stopped.
  public var loops: Int
  /// Send a `finished` event for this voice on this connection.
  public var notify: Bool

  public init(cue: String, volume: Double = 1, pan: Double = 0, loops: Int = 0, notify: Bool = false) {
    self.cue = cue
    self.event = nil
    self.volume = volume
    self.pan = pan
    self.loops = loops
    self.notify = notify
  }

  /// A play of the sound-theme event `event` (`cue` stays empty).
  public init(event: String, volume: Double = 1, pan: Double = 0, loops: Int = 0, notify: Bool = false) {
    self.init(cue: "", volume: volume, pan: pan, loops: loops, notify: notify)
    self.event = event
  }

  /// The largest finite loop count accepted.
  public static let maximumLoops = 1_000_000

  /// Whether `name` can be a sound-theme event name: 1 to 128 bytes of letters, digits, `-`, `_`
  /// and `.`, not starting with a dot (the Sound Naming Specification's names are lowercase words
  /// joined by dashes; a slash could lead out of the theme).
  public static func isEventName(_ name: String) -> Bool {
    guard (1...128).contains(name.utf8.count), name.first != "." else { return false }
    return name.utf8.allSatisfy { byte in
      (0x61...0x7a).contains(byte) || (0x41...0x5a).contains(byte) || (0x30...0x39).contains(byte) || byte == 0x2d || byte == 0x5f
        || byte == 0x2e
    }
  }
}

/// What `stop` stops.
public enum StopTarget: Sendable, Equatable {
  case voice(UInt64)
  case cue(String)
  case all
}

/// One operation of the protocol: its raw value is the `op` string on the wire.
///
/// The single list of op names: `Request.op`, `Request.knownOps` and `RequestDecoder`'s dispatch all
/// derive from it, so a new op is added here and the compiler points at every switch to extend.
public enum Op: String, CaseIterable, Sendable {
  case hello, ping, play, stop, list, status, reload, subscribe, unsubscribe, voices
  case playerCreate = "player.create"
  case playerPrepare = "player.prepare"
  case playerPlay = "player.play"
  case playerPause = "player.pause"
  case playerStop = "player.stop"
  case playerSet = "player.set"
  case playerGet = "player.get"
  case playerDestroy = "player.destroy"
  case soundCreate = "sound.create"
  case soundPlay = "sound.play"
  case soundCompletion = "sound.completion"
  case soundDispose = "sound.dispose"
  case system
  case level, group

  /// The `unknown-op` error a family's decoder (`player.`, `sound.`) answers for an op of another family.
  func notOf(family prefix: String) -> ProtocolError {
    let family = prefix.dropLast()
    return ProtocolError(
      .unknownOp, "\(rawValue) is not a \(family) op; the \(family) ops are \(Op.names(withPrefix: prefix).joined(separator: ", "))")
  }

  /// The ops of one family (`player.`, `sound.`), in declaration order, for error messages.
  static func names(withPrefix prefix: String) -> [String] {
    allCases.map(\.rawValue).filter { $0.hasPrefix(prefix) }
  }
}

/// One request of the protocol (see docs/PROTOCOL.md).
public enum Request: Sendable, Equatable {
  case hello(client: String?)
  case ping
  case play(PlayParameters)
  /// Fade in seconds; nil takes the daemon's default (a few milliseconds).
  case stop(StopTarget, fadeSeconds: Double?)
  case list
  case status
  case reload
  /// Replaces this connection's event subscription.
  case subscribe(EventFilter)
  case unsubscribe
  case player(PlayerRequest)
  case sound(SoundRequest)
  /// Reads or changes the daemon-wide system-sound settings (nil: unchanged).
  case system(volume: Double?, muted: Bool?)
  /// Lists the voices sounding now.
  case voices
  /// Reads or sets the level.
  case level(SoundLevel?)
  /// Reads or changes groups: one by name (nil: every group), its volume and mute (nil: unchanged).
  case group(name: String?, volume: Double?, muted: Bool?)

  /// The operation, whose raw value is the `op` string.
  public var op: Op {
    switch self {
    case .hello: .hello
    case .ping: .ping
    case .play: .play
    case .stop: .stop
    case .list: .list
    case .status: .status
    case .reload: .reload
    case .subscribe: .subscribe
    case .unsubscribe: .unsubscribe
    case .player(let p): p.op
    case .sound(let s): s.op
    case .system: .system
    case .voices: .voices
    case .level: .level
    case .group: .group
    }
  }

  /// Every op this protocol version knows, for messages: `Op`'s raw values in declaration order.
  public static let knownOps = Op.allCases.map(\.rawValue)

  /// The longest fade a request may ask for, in seconds.
  public static let maximumFadeSeconds = 60.0

  /// The request as a JSON object, `id` first (what a client sends).
  public func json(id: RequestID?) -> JSONValue {
    var members: [(String, JSONValue)] = []
    if let id { members.append(("id", id.json)) }
    members.append(("op", .string(op.rawValue)))
    switch self {
    case .hello(let client):
      if let client { members.append(("client", .string(client))) }
    case .ping, .list, .status, .reload, .voices:
      break
    case .play(let p):
      if let event = p.event { members.append(("event", .string(event))) } else { members.append(("cue", .string(p.cue))) }
      if p.volume != 1 { members.append(("volume", .number(p.volume))) }
      if p.pan != 0 { members.append(("pan", .number(p.pan))) }
      if p.loops != 0 { members.append(("loops", .number(Double(p.loops)))) }
      if p.notify { members.append(("notify", .bool(true))) }
    case .stop(let target, let fade):
      switch target {
      case .voice(let v): members.append(("voice", .number(Double(v))))
      case .cue(let c): members.append(("cue", .string(c)))
      case .all: members.append(("all", .bool(true)))
      }
      if let fade { members.append(("fade", .number(fade))) }
    case .subscribe(let filter):
      if let kinds = filter.kinds { members.append(("kinds", .array(kinds.sorted().map { .string($0) }))) }
      if let ids = filter.ids { members.append(("ids", .array(ids.sorted().map { .number(Double($0)) }))) }
    case .unsubscribe:
      break
    case .player(let p):
      members += p.fields
    case .sound(let s):
      members += s.fields
    case .system(let volume, let muted):
      if let volume { members.append(("volume", .number(volume))) }
      if let muted { members.append(("muted", .bool(muted))) }
    case .level(let level):
      if let level { members.append(("level", .string(level.rawValue))) }
    case .group(let name, let volume, let muted):
      if let name { members.append(("group", .string(name))) }
      if let volume { members.append(("volume", .number(volume))) }
      if let muted { members.append(("muted", .bool(muted))) }
    }
    return .object(members)
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
    guard let op = Op(rawValue: name) else {
      // A name of the player or sound family is told that family's ops; any other all of them.
      for family in ["player", "sound"] where name.hasPrefix(family + ".") {
        throw ProtocolError(
          .unknownOp,
          "unknown op \"\(name.prefix(64))\"; the \(family) ops are \(Op.names(withPrefix: family + ".").joined(separator: ", "))")
      }
      throw ProtocolError(
        .unknownOp, "unknown op \"\(name.prefix(64))\"; this daemon knows: \(Request.knownOps.joined(separator: ", "))")
    }
    let request: Request
    switch op {
    case .hello:
      request = .hello(client: try fields.string("client"))
    case .ping:
      request = .ping
    case .list:
      request = .list
    case .voices:
      request = .voices
    case .status:
      request = .status
    case .reload:
      request = .reload
    case .play:
      let cue = try fields.string("cue")
      let event = try fields.string("event")
      guard (cue == nil) != (event == nil) else {
        throw ProtocolError(
          .invalidRequest,
          "play needs exactly one of \"cue\" (a cue name) or \"event\" (a sound-theme event name, e.g. message-new-instant)")
      }
      if let event, !PlayParameters.isEventName(event) {
        throw ProtocolError(
          .invalidRequest, "\"event\" must be a sound-theme name of letters, digits, '-', '_' and '.' (at most 128 bytes), like bell or message-new-instant")
      }
      let volume = try fields.number("volume", in: 0...1, default: 1)
      let pan = try fields.number("pan", in: -1...1, default: 0)
      let loops = try fields.loopCount("loops")
      if loops > PlayParameters.maximumLoops {
        throw ProtocolError(
          .outOfRange,
          "\"loops\" is \(loops); the most is \(PlayParameters.maximumLoops) (use -1 to loop until stopped)")
      }
      let notify = try fields.bool("notify") ?? false
      if let event {
        request = .play(PlayParameters(event: event, volume: volume, pan: pan, loops: loops, notify: notify))
      } else {
        request = .play(PlayParameters(cue: cue ?? "", volume: volume, pan: pan, loops: loops, notify: notify))
      }
    case .stop:
      let voice = try fields.integer("voice")
      let cue = try fields.string("cue")
      let all = try fields.bool("all")
      let fade = try fields.optionalNumber("fade", in: 0...Request.maximumFadeSeconds)
      let chosen = [voice != nil, cue != nil, all == true].filter { $0 }.count
      guard chosen == 1 else {
        throw ProtocolError(.invalidRequest, "stop needs exactly one of \"voice\", \"cue\" or \"all\":true")
      }
      if let voice {
        guard voice >= 0 else { throw ProtocolError(.outOfRange, "\"voice\" must be a voice id (0 or more)") }
        request = .stop(.voice(UInt64(voice)), fadeSeconds: fade)
      } else if let cue {
        request = .stop(.cue(cue), fadeSeconds: fade)
      } else {
        request = .stop(.all, fadeSeconds: fade)
      }
    case .subscribe:
      request = .subscribe(try EventFilter.decode(&fields))
    case .unsubscribe:
      request = .unsubscribe
    case .system:
      request = .system(volume: try fields.optionalNumber("volume", in: 0...1), muted: try fields.bool("muted"))
    case .level:
      let level = try fields.string("level")
      if let level, SoundLevel(rawValue: level) == nil {
        throw ProtocolError(.outOfRange, "\"level\" is \(level.prefix(40)); it must be \"full\", \"quiet\" or \"silent\"")
      }
      request = .level(level.flatMap(SoundLevel.init(rawValue:)))
    case .group:
      let name = try fields.string("group")
      let volume = try fields.optionalNumber("volume", in: 0...1)
      let muted = try fields.bool("muted")
      if name == nil && (volume != nil || muted != nil) {
        throw ProtocolError(.invalidRequest, "group needs \"group\" (its name) to change its volume or mute")
      }
      request = .group(name: name, volume: volume, muted: muted)
    case .playerCreate, .playerPrepare, .playerPlay, .playerPause, .playerStop, .playerSet, .playerGet, .playerDestroy:
      request = .player(try PlayerRequest.decode(op: op, &fields))
    case .soundCreate, .soundPlay, .soundCompletion, .soundDispose:
      request = .sound(try SoundRequest.decode(op: op, &fields))
    }
    try fields.rejectUnread(op: name)
    return request
  }
}

/// Reads fields of a request object, remembering which were read so extra ones can be named.
struct FieldReader {
  private let members: [(String, JSONValue)]
  private var read: Set<String> = ["id"]

  init(_ value: JSONValue) {
    members = value.objectValue ?? []
  }

  mutating func take(_ key: String) -> JSONValue? {
    read.insert(key)
    guard let value = members.first(where: { $0.0 == key })?.1 else { return nil }
    if case .null = value { return nil }
    return value
  }

  mutating func string(_ key: String) throws(ProtocolError) -> String? {
    guard let value = take(key) else { return nil }
    guard let s = value.stringValue else { throw ProtocolError(.invalidRequest, "\"\(key)\" must be a string") }
    return s
  }

  mutating func bool(_ key: String) throws(ProtocolError) -> Bool? {
    guard let value = take(key) else { return nil }
    guard let b = value.boolValue else { throw ProtocolError(.invalidRequest, "\"\(key)\" must be true or false") }
    return b
  }

  mutating func optionalNumber(_ key: String, in range: ClosedRange<Double>) throws(ProtocolError) -> Double? {
    guard let value = take(key) else { return nil }
    guard let x = value.doubleValue else { throw ProtocolError(.invalidRequest, "\"\(key)\" must be a number") }
    guard x.isFinite, range.contains(x) else {
      throw ProtocolError(
        .outOfRange,
        "\"\(key)\" is \(format(x)); it must be between \(format(range.lowerBound)) and \(format(range.upperBound))")
    }
    return x
  }

  mutating func number(_ key: String, in range: ClosedRange<Double>, default fallback: Double) throws(ProtocolError) -> Double {
    try optionalNumber(key, in: range) ?? fallback
  }

  mutating func integer(_ key: String) throws(ProtocolError) -> Int? {
    guard let value = take(key) else { return nil }
    guard let x = value.doubleValue else { throw ProtocolError(.invalidRequest, "\"\(key)\" must be an integer") }
    guard let n = value.intValue else {
      // Not an integer within ±2^53: either a fraction or too large to be exact.
      let tooLarge = abs(x) >= 9_007_199_254_740_992
      throw ProtocolError(
        tooLarge ? .outOfRange : .invalidRequest,
        tooLarge ? "\"\(key)\" is too large" : "\"\(key)\" must be an integer, not \(x)")
    }
    return n
  }

  /// A non-negative id field (player, sound, voice).
  mutating func id(_ key: String) throws(ProtocolError) -> UInt64? {
    guard let n = try integer(key) else { return nil }
    guard n >= 0 else { throw ProtocolError(.outOfRange, "\"\(key)\" must be an id (0 or more)") }
    return UInt64(n)
  }

  mutating func requiredID(_ key: String, op: String) throws(ProtocolError) -> UInt64 {
    guard let id = try id(key) else { throw ProtocolError(.invalidRequest, "\(op) needs a \"\(key)\" field (an id)") }
    return id
  }

  mutating func stringArray(_ key: String) throws(ProtocolError) -> [String]? {
    guard let value = take(key) else { return nil }
    guard let array = value.arrayValue, array.allSatisfy({ $0.stringValue != nil }) else {
      throw ProtocolError(.invalidRequest, "\"\(key)\" must be an array of strings")
    }
    return array.compactMap(\.stringValue)
  }

  mutating func idArray(_ key: String) throws(ProtocolError) -> [UInt64]? {
    guard let value = take(key) else { return nil }
    guard let array = value.arrayValue else { throw ProtocolError(.invalidRequest, "\"\(key)\" must be an array of ids") }
    var ids: [UInt64] = []
    for element in array {
      guard let n = element.intValue else { throw ProtocolError(.invalidRequest, "\"\(key)\" must be an array of ids") }
      guard n >= 0 else { throw ProtocolError(.outOfRange, "\"\(key)\" holds \(n); ids are 0 or more") }
      ids.append(UInt64(n))
    }
    return ids
  }

  mutating func integer(_ key: String, default fallback: Int) throws(ProtocolError) -> Int {
    try integer(key) ?? fallback
  }

  /// True when the request has a non-null `key` (without marking it read).
  func has(_ key: String) -> Bool {
    guard let value = members.first(where: { $0.0 == key })?.1 else { return false }
    if case .null = value { return false }
    return true
  }

  /// AVAudioPlayer's numberOfLoops: any negative number (however large) means "until stopped".
  mutating func loopCount(_ key: String) throws(ProtocolError) -> Int {
    guard let value = take(key) else { return 0 }
    if let x = value.doubleValue, x < -9_007_199_254_740_992 { return -1 }
    return try integer(key, default: 0)
  }

  func rejectUnread(op: String) throws(ProtocolError) {
    if let extra = members.first(where: { !read.contains($0.0) }) {
      throw ProtocolError(.invalidRequest, "\(op) has no field \"\(extra.0.prefix(64))\"; see docs/PROTOCOL.md")
    }
  }

  private func format(_ x: Double) -> String {
    abs(x) < 1e15 && Double(Int(x)) == x ? String(Int(x)) : String(x)
  }
}
