/// The core ops, `hello` to `voices`, each declared once: its request type (name, owner, fields,
/// reply type), a shorthand on `Request`, and its place in `coreOps`. Their replies are in
/// Replies.swift and StatusReply.swift (with its sections, Status*.swift).

extension Op {
  /// The core ops, in the order `hello` lists them.
  static let coreOps: [any RequestFields.Type] = [
    HelloRequest.self, PingRequest.self, PlayRequest.self, StopRequest.self, ListRequest.self, StatusRequest.self,
    ReloadRequest.self, SubscribeRequest.self, UnsubscribeRequest.self, VoicesRequest.self, PrepareRequest.self,
  ]
}

/// `hello`: says who the client is; the reply says what the daemon can do.
public struct HelloRequest: RequestFields {
  public static let op = Op("hello", owner: .daemon)
  public typealias Reply = HelloReply
  /// The client's name (logs, `[clients.NAME]` ceilings).
  public var client: String?

  static let client = Field.string("client", "The client's name, for information: cued logs it at debug level.")
  public static var fieldSpecs: [FieldSpec] { [client.spec] }

  public init(client: String?) { self.client = client }
  public init(fields: inout FieldReader) throws(ProtocolError) { client = try fields.read(Self.client) }
  public var fields: [(String, JSONValue)] { client.map { [("client", .string($0))] } ?? [] }
}

/// `ping`: answered `pong`.
public struct PingRequest: FieldlessRequest {
  public static let op = Op("ping", owner: .daemon)
  public typealias Reply = PingReply
  public init() {}
}

/// `play`: a cue, a sound-theme event or a sound file, fire-and-forget.
public struct PlayRequest: RequestFields {
  public static let op = Op("play", owner: .daemon)
  public typealias Reply = PlayReply
  public var parameters: PlayParameters

  static let cue = Field.string(
    "cue", range: "the name of a loaded cue", default: "—", "What to play. `list` shows the names.")
  static let event = Field.string(
    "event", PlayParameters.eventRule, default: "—",
    "Play the desktop sound theme's sound for this name instead of a cue, as libcanberra's `event.id` (`bell`, `complete`, `message-new-instant`, `dialog-warning`…). See [Sound-theme events](#sound-theme-events).")
  static let file = Field.string(
    "file", PlayParameters.fileRule, default: "—",
    "Play this sound file instead of a cue, as libcanberra's `media.filename`: MP3, Ogg Vorbis or Opus, WAV or FLAC, told apart by their contents. See [Files](#files).")
  static let volume = Field.number(
    "volume", 0...1, "Linear gain, as in AVAudioPlayer's `volume`. `1` plays the decoded samples at full level and `0` is silent."
  ).defaulting(to: 1, shown: "`1`")
  static let pan = Field.number(
    "pan", -1...1,
    "-1 is hard left, 0 is centre and 1 is hard right. `0` leaves the samples untouched, so volume 1 at pan 0 reproduces the decoded cue bit for bit (while the mix stays within ±0.9: the limiter below). Away from centre, the pan keeps power constant (see below)."
  ).defaulting(to: 0, shown: "`0`")
  static let loops = Field.loopCount(
    "loops",
    "As AVAudioPlayer's `numberOfLoops`: `0` plays once, `n` plays n+1 times back to back, and any negative value loops until the voice is stopped.",
    hint: "use -1 to loop until stopped"
  ).defaulting(to: 0, shown: "`0`")
  static let notify = Field.boolean(
    "notify",
    "When `true`, the daemon sends a `finished` event (section 4) on **this connection** when the voice ends. Subscribers to `finished` receive it with or without `notify`."
  ).defaulting(to: false, shown: "`false`")
  static let role = Field.string(
    "role", PlayParameters.roleRule, default: "none",
    "What the sound is for, as libcanberra's `media.role` (`event`, `a11y`, `phone`, `test`…). The config's `[groups.NAME] roles` choose its group when its cue or event has no group of its own; see [Levels and groups](#levels-and-groups).")
  static let oneSource = FieldRule("Give exactly one of `cue`, `event` and `file`.", exactlyOneOf: ["cue", "event", "file"])

  public static var fieldSpecs: [FieldSpec] {
    [cue.spec, event.spec, file.spec, volume.spec, pan.spec, loops.spec, notify.spec, role.spec]
  }
  public static var fieldRules: [FieldRule] { [oneSource] }

  public init(_ parameters: PlayParameters) { self.parameters = parameters }

  public init(fields: inout FieldReader) throws(ProtocolError) {
    let source = try fields.readExactlyOne(
      of: [Self.cue, Self.event, Self.file],
      "play needs exactly one of \"cue\" (a cue name), \"event\" (a sound-theme event name, e.g. message-new-instant) or \"file\" (a sound file's absolute path)"
    )
    let volume = try fields.read(Self.volume)
    let pan = try fields.read(Self.pan)
    let loops = try fields.read(Self.loops)
    let notify = try fields.read(Self.notify)
    let role = try fields.read(Self.role)
    switch source.name {
    case "event": parameters = PlayParameters(event: source.value, volume: volume, pan: pan, loops: loops, notify: notify)
    case "file": parameters = PlayParameters(file: source.value, volume: volume, pan: pan, loops: loops, notify: notify)
    default: parameters = PlayParameters(cue: source.value, volume: volume, pan: pan, loops: loops, notify: notify)
    }
    parameters.role = role
  }

  public var fields: [(String, JSONValue)] {
    let p = parameters
    var members: [(String, JSONValue)] = []
    if let event = p.event {
      members.append(("event", .string(event)))
    } else if let file = p.file {
      members.append(("file", .string(file)))
    } else {
      members.append(("cue", .string(p.cue)))
    }
    if p.volume != 1 { members.append(("volume", .number(p.volume))) }
    if p.pan != 0 { members.append(("pan", .number(p.pan))) }
    if p.loops != 0 { members.append(("loops", .number(Double(p.loops)))) }
    if p.notify { members.append(("notify", .bool(true))) }
    if let role = p.role { members.append(("role", .string(role))) }
    return members
  }
}

/// `prepare`: a sound-theme event's file or a sound file decoded and kept, nothing played, so that
/// its first play starts at once (libcanberra's `ca_context_cache`); answered once it is decoded.
public struct PrepareRequest: RequestFields {
  public static let op = Op("prepare", owner: .daemon)
  public typealias Reply = PrepareReply
  /// What to decode: a sound-theme event name or a file's absolute path, as `play` takes them.
  public enum Sound: Sendable, Equatable {
    case event(String)
    case file(String)
  }
  public var sound: Sound

  static let event = Field.string(
    "event", PlayParameters.eventRule, default: "—",
    "A sound-theme event name, as `play`'s `event`: the theme's file for it is looked up as a play would look it up. The desktop's event-sounds switch does not stop it (it may be turned on before the play).")
  static let file = Field.string(
    "file", PlayParameters.fileRule, default: "—",
    "A sound file's absolute path, as `play`'s `file`, under the same rules (a client of another user is held to the sound directories unless `--allow-any-path`).")
  public static var fieldSpecs: [FieldSpec] { [event.spec, file.spec] }
  public static var fieldRules: [FieldRule] { [FieldRule("Give exactly one of `event` and `file`.", exactlyOneOf: ["event", "file"])] }

  public init(_ sound: Sound) { self.sound = sound }

  public init(fields: inout FieldReader) throws(ProtocolError) {
    let source = try fields.readExactlyOne(
      of: [Self.event, Self.file],
      "prepare needs exactly one of \"event\" (a sound-theme event name, e.g. bell) or \"file\" (a sound file's absolute path)")
    sound = source.name == "event" ? .event(source.value) : .file(source.value)
  }

  public var fields: [(String, JSONValue)] {
    switch sound {
    case .event(let event): [("event", .string(event))]
    case .file(let file): [("file", .string(file))]
    }
  }
}

/// `stop`: a voice, every voice of a cue, or everything, with a fade.
public struct StopRequest: RequestFields {
  public static let op = Op("stop", owner: .daemon)
  public typealias Reply = StopReply
  public var target: StopTarget
  /// Fade in seconds; nil takes the daemon's default (a few milliseconds).
  public var fadeSeconds: Double?

  public init(_ target: StopTarget, fadeSeconds: Double? = nil) {
    self.target = target
    self.fadeSeconds = fadeSeconds
  }

  static let voice = Field.signedID(
    "voice", "Stop this one voice (an id from a `play` reply).", negative: "\"voice\" must be a voice id (0 or more)")
  static let cue = Field.string("cue", "Stop every sounding voice of this cue, whichever client started it.")
  static let all = Field.boolean("all", "`true` stops every sounding voice of every client. `false` counts as absent.")
  static let fade = Field.number(
    "fade", 0...Request.maximumFadeSeconds, default: "`0.008`",
    "The fade-out, in seconds. It is a linear ramp to silence, and `0` cuts the voice at once.")
  public static var fieldSpecs: [FieldSpec] { [voice.spec, cue.spec, all.spec, fade.spec] }
  public static var fieldRules: [FieldRule] {
    [FieldRule("Give **exactly one** of `voice`, `cue` or `\"all\":true`.")]
  }

  public init(fields: inout FieldReader) throws(ProtocolError) {
    let voice = try fields.readType(Self.voice)
    let cue = try fields.read(Self.cue)
    let all = try fields.read(Self.all)
    fadeSeconds = try fields.read(Self.fade)
    let chosen = [voice != nil, cue != nil, all == true].filter { $0 }.count
    guard chosen == 1 else {
      throw ProtocolError(.invalidRequest, "stop needs exactly one of \"voice\", \"cue\" or \"all\":true")
    }
    if let voice {
      try Self.voice.check(voice)
      target = .voice(UInt64(voice))
    } else if let cue {
      target = .cue(cue)
    } else {
      target = .all
    }
  }

  public var fields: [(String, JSONValue)] {
    var members: [(String, JSONValue)]
    switch target {
    case .voice(let v): members = [("voice", .number(Double(v)))]
    case .cue(let c): members = [("cue", .string(c))]
    case .all: members = [("all", .bool(true))]
    }
    if let fadeSeconds { members.append(("fade", .number(fadeSeconds))) }
    return members
  }
}

/// `list`: the loaded cues.
public struct ListRequest: FieldlessRequest {
  public static let op = Op("list", owner: .daemon)
  public typealias Reply = ListReply
  public init() {}
}

/// `status`: the daemon's state and counters.
public struct StatusRequest: FieldlessRequest {
  public static let op = Op("status", owner: .daemon)
  public typealias Reply = StatusReply
  public init() {}
}

/// `reload`: the config file and the sound directories again; answered when the scan is done.
public struct ReloadRequest: FieldlessRequest {
  public static let op = Op("reload", owner: .reloader)
  public typealias Reply = ReloadReply
  public init() {}
}

/// `subscribe`: replaces this connection's event subscription.
public struct SubscribeRequest: RequestFields {
  public static let op = Op("subscribe", owner: .daemon)
  public typealias Reply = SubscribeReply
  public var filter: EventFilter

  static let kinds = Field.words(
    "kinds", EventKind.allCases.filter(\.isSubscribable).map(\.rawValue), default: "absent: every kind",
    "Only events of these kinds. An empty array admits no event."
  ) { unknown in
    ProtocolError(
      .invalidRequest, "unknown event kind \"\(unknown.prefix(64))\"; the kinds are \(EventFilter.knownKinds.sorted().joined(separator: ", "))")
  }
  static let ids = Field.ids(
    "ids", default: "absent: any",
    "Only events about one of these ids. An event is about the ids in its `voice`, `player` and `sound` fields, so a player's id selects the events of every voice it plays, and a sound's id those of every play of it. Events that carry no id (`device` and `reloaded`) never pass an `ids` filter. An empty array admits no event."
  )
  public static var fieldSpecs: [FieldSpec] { [kinds.spec, ids.spec] }

  public init(_ filter: EventFilter) { self.filter = filter }

  public init(fields: inout FieldReader) throws(ProtocolError) {
    let kinds = try fields.read(Self.kinds)
    let ids = try fields.read(Self.ids)
    filter = EventFilter(kinds: kinds.map(Set.init), ids: ids.map(Set.init))
  }

  public var fields: [(String, JSONValue)] {
    var members: [(String, JSONValue)] = []
    if let kinds = filter.kinds { members.append(("kinds", .array(kinds.sorted().map { .string($0) }))) }
    if let ids = filter.ids { members.append(("ids", .array(ids.sorted().map { .number(Double($0)) }))) }
    return members
  }
}

/// `unsubscribe`: no more events on this connection.
public struct UnsubscribeRequest: FieldlessRequest {
  public static let op = Op("unsubscribe", owner: .daemon)
  public typealias Reply = EmptyReply
  public init() {}
}

/// `voices`: the voices sounding now.
public struct VoicesRequest: FieldlessRequest {
  public static let op = Op("voices", owner: .daemon)
  public typealias Reply = VoicesReply
  public init() {}
}

/// Shorthands for the core ops' requests (`connection.send(.status, as: StatusReply.self)`).
extension Request {
  public static func hello(client: String?) -> Request { Request(HelloRequest(client: client)) }
  public static let ping = Request(PingRequest())
  public static func play(_ parameters: PlayParameters) -> Request { Request(PlayRequest(parameters)) }
  public static func stop(_ target: StopTarget, fadeSeconds: Double?) -> Request { Request(StopRequest(target, fadeSeconds: fadeSeconds)) }
  public static let list = Request(ListRequest())
  public static let status = Request(StatusRequest())
  public static let reload = Request(ReloadRequest())
  /// Replaces this connection's event subscription.
  public static func subscribe(_ filter: EventFilter) -> Request { Request(SubscribeRequest(filter)) }
  public static let unsubscribe = Request(UnsubscribeRequest())
  /// Lists the voices sounding now.
  public static let voices = Request(VoicesRequest())
  /// Decodes a sound-theme event's file or a sound file and keeps it.
  public static func prepare(_ sound: PrepareRequest.Sound) -> Request { Request(PrepareRequest(sound)) }
}

/// Which events a connection wants. nil means "no restriction" for that part.
public struct EventFilter: Sendable, Equatable {
  /// Event kinds (`started`, `finished`, `completion`, `device`, `reloaded`, `decode-error`, `paging`); nil: all.
  public var kinds: Set<String>?
  /// Voice, player or sound ids the events must concern; nil: any.
  public var ids: Set<UInt64>?

  public init(kinds: Set<String>? = nil, ids: Set<UInt64>? = nil) {
    self.kinds = kinds
    self.ids = ids
  }

  /// A filter of typed kinds (every kind named must be subscribable: `events-dropped` always comes).
  public init(kinds: Set<EventKind>, ids: Set<UInt64>? = nil) {
    self.init(kinds: Set(kinds.map(\.rawValue)), ids: ids)
  }

  /// The kinds a subscription can name: `EventKind`'s subscribable raw values.
  public static let knownKinds = Set(EventKind.allCases.filter(\.isSubscribable).map(\.rawValue))

  /// True when `event` passes this filter (by its kind and its `subjectIDs`).
  public func admits(_ event: Event) -> Bool {
    admits(kind: event.kindName, ids: event.subjectIDs)
  }

  /// True when an event of `kind` about `ids` passes this filter.
  public func admits(kind: String, ids eventIDs: [UInt64]) -> Bool {
    if let kinds, !kinds.contains(kind) { return false }
    if let ids { return eventIDs.contains(where: ids.contains) }
    return true
  }
}

