/// A successful reply's body, typed: one encoder to the fields after `"id"` and `"ok"`, one decoder back.
///
/// `fields` writes exactly the daemon's fields in the daemon's order; `init(reply:)` reads a whole
/// reply object (it skips `id` and `ok`, and ignores fields it does not know, so a newer daemon's
/// additions do not break an older client) and throws when a field it needs is missing or mistyped.
public protocol ReplyFields: Sendable, Equatable {
  /// The body's fields in the daemon's order, as they follow `"id"` and `"ok"`.
  var fields: [(String, JSONValue)] { get }
  /// Decodes the body from a reply object.
  init(reply: JSONValue) throws(ProtocolError)
}

/// `hello`: who answers, and which protocol it speaks.
public struct HelloReply: ReplyFields {
  /// Always `cued`.
  public var server: String
  /// The daemon's release (`cuedVersion`).
  public var version: String
  /// The protocol version (`protocolVersion`); on the wire as `protocol`.
  public var protocolVersion: Int
  /// What this daemon can do, so a client detects features without parsing `version` or probing
  /// for `unknown-op`. Nil from an older daemon, from before `hello` said so (2026-11).
  public var capabilities: Capabilities?

  /// The ops, event kinds, carousel messages, features and limits of this daemon.
  public struct Capabilities: Sendable, Equatable {
    /// Every op `"op"` may name.
    public var ops: [String]
    /// Every event kind the daemon may send.
    public var events: [String]
    /// Every carousel message (`"carousel"` lines, section 4b).
    public var carousel: [String]
    /// Named behaviours beyond the ops (`ProtocolFeature`).
    public var features: [String]
    /// Numbers past which a request is refused (or a client, player or sound is not made).
    public var limits: [(String, Int)]

    public init(ops: [String], events: [String], carousel: [String], features: [String], limits: [(String, Int)]) {
      self.ops = ops
      self.events = events
      self.carousel = carousel
      self.features = features
      self.limits = limits
    }

    /// This build's ops, kinds, carousel messages and features, with the limits the daemon was given.
    public static func current(limits: [(String, Int)]) -> Capabilities {
      Capabilities(
        ops: Request.knownOps, events: EventKind.allCases.map(\.rawValue), carousel: CarouselMessage.eventNames,
        features: ProtocolFeature.allCases.map(\.rawValue), limits: protocolLimits + limits)
    }

    /// The limits of the protocol itself (the daemon adds those its settings choose).
    public static let protocolLimits: [(String, Int)] = [
      ("lineBytes", LineFramer.protocolLineLimit), ("idStringBytes", RequestID.maximumStringBytes),
      ("idMagnitude", RequestID.maximumMagnitude), ("loops", PlayParameters.maximumLoops),
      ("fadeSeconds", Int(Request.maximumFadeSeconds)),
    ]

    public static func == (a: Capabilities, b: Capabilities) -> Bool {
      a.ops == b.ops && a.events == b.events && a.carousel == b.carousel && a.features == b.features
        && a.limits.map(\.0) == b.limits.map(\.0) && a.limits.map(\.1) == b.limits.map(\.1)
    }

    var json: JSONValue {
      .object([
        ("ops", .array(ops.map(JSONValue.string))), ("events", .array(events.map(JSONValue.string))),
        ("carousel", .array(carousel.map(JSONValue.string))), ("features", .array(features.map(JSONValue.string))),
        ("limits", .object(limits.map { ($0.0, .int($0.1)) })),
      ])
    }

    init(json: JSONValue) throws(ProtocolError) {
      var fields = FieldReader(json)
      let what = "the hello reply's capabilities"
      ops = try required(fields.stringArray("ops"), "ops", in: what)
      events = try required(fields.stringArray("events"), "events", in: what)
      carousel = try fields.stringArray("carousel") ?? []
      features = try fields.stringArray("features") ?? []
      guard case .object(let members)? = json["limits"] else {
        throw ProtocolError(.invalidRequest, "\(what) has no \"limits\" object")
      }
      limits = members.compactMap { key, value in value.intValue.map { (key, $0) } }
    }

    /// A limit by name (`lineBytes`, `players`, …), or nil.
    public func limit(_ name: String) -> Int? { limits.first { $0.0 == name }?.1 }
  }

  public init(
    server: String = "cued", version: String = cuedVersion, protocolVersion: Int = CueProtocol.protocolVersion,
    capabilities: Capabilities? = nil
  ) {
    self.server = server
    self.version = version
    self.protocolVersion = protocolVersion
    self.capabilities = capabilities
  }

  public var fields: [(String, JSONValue)] {
    var members: [(String, JSONValue)] = [("server", .string(server)), ("version", .string(version)), ("protocol", .int(protocolVersion))]
    if let capabilities { members.append(("capabilities", capabilities.json)) }
    return members
  }

  public init(reply: JSONValue) throws(ProtocolError) {
    var fields = FieldReader(reply)
    let what = "the hello reply"
    server = try required(fields.string("server"), "server", in: what)
    version = try required(fields.string("version"), "version", in: what)
    protocolVersion = try required(fields.integer("protocol"), "protocol", in: what)
    capabilities = try reply["capabilities"].map { (json) throws(ProtocolError) in try Capabilities(json: json) }
  }
}

/// Behaviours a client may depend on that the list of ops does not show; `hello` lists them.
/// A name, once listed, keeps its meaning for the protocol version; new ones may be added.
public enum ProtocolFeature: String, CaseIterable, Sendable {
  /// `player.play` takes `atTime` (a time on the `deviceCurrentTime` clock to start at).
  case scheduledPlay = "scheduled-play"
  /// Players take `rate` (0.5 to 2) and `enableRate`.
  case playerRate = "player-rate"
  /// Players and system sounds may be made `detached` (they outlive their connection).
  case detached
  /// `subscribe` takes `ids` (the events of given voices, players and sounds).
  case subscribeIDs = "subscribe-ids"
  /// Carousel lines with an `id` are answered with the decision (`paging` events otherwise).
  case carouselReplies = "carousel-replies"
  /// Some replies are deferred (docs/PROTOCOL.md, "Connections and ordering"): match replies by `id`.
  case deferredReplies = "deferred-replies"
  /// The reply to a request comes before every event that request caused.
  case replyBeforeEvents = "reply-before-events"
  /// A play may be silent and says why (`played`, `reason`); `status` counts silent plays.
  case silentPlays = "silent-plays"
  /// Cues may be variation sets (the play reply's `variation`).
  case variations
  /// `play` takes `file`: a sound file's absolute path, decoded once and kept.
  case filePlay = "file-play"
  /// `play` takes `role` (libcanberra's `media.role`): the config's `[groups.NAME] roles` choose
  /// the group of a sound that has none of its own.
  case playRole = "play-role"
}

/// `ping`: `pong`, always true.
public struct PingReply: ReplyFields {
  public init() {}
  public var fields: [(String, JSONValue)] { [("pong", true)] }
  public init(reply: JSONValue) throws(ProtocolError) {
    var fields = FieldReader(reply)
    guard try fields.bool("pong") == true else { throw ProtocolError(.invalidRequest, "the ping reply has no \"pong\":true") }
  }
}

/// `play` (and `sound.play` when not muted): the new voice, and the voice stolen to make room for it.
public struct PlayReply: ReplyFields {
  public var voice: UInt64
  /// The voice that was faded out because the voice limit was reached.
  public var stole: UInt64?
  /// For a sound-theme event: the file the theme gave for it; for a `file` play, the file played.
  public var file: String?
  /// Why it is silent; nil when it plays. On the wire `played` says which, and `reason` why not.
  public var silenced: SilenceReason?
  /// For a variation set: the member cue chosen (`page-next/soft`).
  public var variation: String?

  public init(voice: UInt64, stole: UInt64? = nil, file: String? = nil, silenced: SilenceReason? = nil, variation: String? = nil) {
    self.voice = voice
    self.stole = stole
    self.file = file
    self.silenced = silenced
    self.variation = variation
  }

  /// Whether the cue sounds (a voice started).
  public var played: Bool { silenced == nil }

  public var fields: [(String, JSONValue)] {
    var members: [(String, JSONValue)] = [("voice", .id(voice)), ("played", .bool(played))]
    if let silenced { members.append(("reason", .string(silenced.rawValue))) }
    if let stole { members.append(("stole", .id(stole))) }
    if let variation { members.append(("variation", .string(variation))) }
    if let file { members.append(("file", .string(file))) }
    return members
  }

  public init(reply: JSONValue) throws(ProtocolError) {
    var fields = FieldReader(reply)
    voice = try required(fields.id("voice"), "voice", in: "the play reply")
    stole = try fields.id("stole")
    file = try fields.string("file")
    variation = try fields.string("variation")
    let reason = try fields.string("reason")
    if try fields.bool("played") == false {
      silenced = reason.flatMap(SilenceReason.init(rawValue:)) ?? .cap
    } else {
      silenced = nil
    }
  }
}

/// `stop`: how many voices were stopped.
public struct StopReply: FlatReply {
  public var stopped: Int

  public init(stopped: Int) { self.stopped = stopped }

  static var layout: Layout { Layout("the stop reply", .int("stopped", \.stopped), Self.init(stopped:)) }
}

/// `prepare`: the file decoded and kept (a theme event's file, or the file's real path), and the
/// memory its decode takes.
public struct PrepareReply: FlatReply {
  public var file: String
  public var bytes: Int

  public init(file: String, bytes: Int) {
    self.file = file
    self.bytes = bytes
  }

  static var layout: Layout { Layout("the prepare reply", .string("file", \.file), .int("bytes", \.bytes), Self.init(file:bytes:)) }
}

/// One loaded cue, as `list` describes it.
public struct CueInfo: Sendable, Equatable {
  public var name: String
  /// Seconds at the daemon's rate.
  public var duration: Double
  /// Frames at the daemon's rate.
  public var frames: Int
  /// The file's own sample rate.
  public var sourceRate: Int
  /// The file's channels (1 or 2).
  public var channels: Int
  /// Memory the decoded cue takes.
  public var bytes: Int
  /// Whether the file had gapless (encoder delay and padding) information.
  public var gapless: Bool
  public var path: String
  /// `MP3`, `Ogg Vorbis`, `Ogg Opus`, `WAV (PCM 16-bit)`, `FLAC`…; nil from a daemon that does not say.
  public var format: String?
  /// Integrated loudness (EBU R128) in LUFS; nil for a silent cue, or from a daemon that does not say.
  public var loudness: Double?
  /// Sample peak in dBFS; nil for a cue of digital silence, or from a daemon that does not say.
  public var peak: Double?
  /// For a file in a folder of a sound directory: the folder, the variation set it belongs to.
  public var set: String?

  public init(
    name: String, duration: Double, frames: Int, sourceRate: Int, channels: Int, bytes: Int, gapless: Bool, path: String,
    format: String? = nil, loudness: Double? = nil, peak: Double? = nil
  ) {
    self.name = name
    self.duration = duration
    self.frames = frames
    self.sourceRate = sourceRate
    self.channels = channels
    self.bytes = bytes
    self.gapless = gapless
    self.path = path
    self.format = format
    self.loudness = loudness
    self.peak = peak
  }

  /// The cue as one object, fields in the daemon's order; the optional ones only when known.
  public var json: JSONValue {
    let optional: [(String, JSONValue?)] = [
      ("format", format.map(JSONValue.string)), ("loudness", loudness.map(JSONValue.number)), ("peak", peak.map(JSONValue.number)), ("set", set.map(JSONValue.string)),
    ]
    return .object(
      [
        ("name", .string(name)), ("duration", .number(duration)), ("frames", .int(frames)), ("sourceRate", .int(sourceRate)),
        ("channels", .int(channels)), ("bytes", .int(bytes)), ("gapless", .bool(gapless)), ("path", .string(path)),
      ] + optional.compactMap { key, value in value.map { (key, $0) } })
  }

  /// Decodes one cue object of a `list` reply.
  public init(json: JSONValue) throws(ProtocolError) {
    var fields = FieldReader(json)
    let what = "a cue of the list reply"
    name = try required(fields.string("name"), "name", in: what)
    duration = try required(fields.double("duration"), "duration", in: what)
    frames = try required(fields.integer("frames"), "frames", in: what)
    sourceRate = try required(fields.integer("sourceRate"), "sourceRate", in: what)
    channels = try required(fields.integer("channels"), "channels", in: what)
    bytes = try required(fields.integer("bytes"), "bytes", in: what)
    gapless = try required(fields.bool("gapless"), "gapless", in: what)
    path = try required(fields.string("path"), "path", in: what)
    format = try fields.string("format")
    loudness = try fields.double("loudness")
    peak = try fields.double("peak")
    set = try fields.string("set")
  }
}

/// `list`: the loaded cues, by name.
public struct ListReply: ReplyFields {
  public var cues: [CueInfo]

  public init(cues: [CueInfo]) { self.cues = cues }

  public var fields: [(String, JSONValue)] { [("cues", .array(cues.map(\.json)))] }

  public init(reply: JSONValue) throws(ProtocolError) {
    var fields = FieldReader(reply)
    cues = try required(fields.objects("cues", CueInfo.init(json:)), "cues", in: "the list reply")
  }
}

/// `reload`: what the scan changed (as the `reloaded` event says), and the files it could not load.
public struct ReloadReply: ReplyFields {
  /// A file the scan skipped, and why.
  public struct Failure: Sendable, Equatable {
    public var path: String
    public var reason: String

    public init(path: String, reason: String) {
      self.path = path
      self.reason = reason
    }
  }

  public var library: Event.Reloaded
  public var failed: [Failure]

  public init(library: Event.Reloaded, failed: [Failure] = []) {
    self.library = library
    self.failed = failed
  }

  public var fields: [(String, JSONValue)] {
    library.fields + [("failed", .array(failed.map { .object([("path", .string($0.path)), ("reason", .string($0.reason))]) }))]
  }

  public init(reply: JSONValue) throws(ProtocolError) {
    var fields = FieldReader(reply)
    let what = "the reload reply"
    library = try Event.Reloaded.decode(&fields, in: what)
    failed =
      try fields.objects("failed") { (value: JSONValue) throws(ProtocolError) -> Failure in
        var failure = FieldReader(value)
        return Failure(
          path: try required(failure.string("path"), "path", in: "a failure of \(what)"),
          reason: try required(failure.string("reason"), "reason", in: "a failure of \(what)"))
      } ?? []
  }
}

/// `subscribe`: the kinds the subscription admits now, sorted.
public struct SubscribeReply: ReplyFields {
  /// Event kind names; a newer daemon may list kinds this version does not know.
  public var kinds: [String]

  public init(kinds: [String]) { self.kinds = kinds }

  /// The reply to `filter`: its kinds, or every subscribable kind when it names none.
  public init(filter: EventFilter) {
    kinds = (filter.kinds ?? EventFilter.knownKinds).sorted()
  }

  public var fields: [(String, JSONValue)] { [("kinds", .strings(kinds))] }

  public init(reply: JSONValue) throws(ProtocolError) {
    var fields = FieldReader(reply)
    kinds = try required(fields.stringArray("kinds"), "kinds", in: "the subscribe reply")
  }
}

/// A reply with no fields beyond `id` and `ok` (`unsubscribe`).
public struct EmptyReply: ReplyFields {
  public init() {}
  public var fields: [(String, JSONValue)] { [] }
  public init(reply: JSONValue) throws(ProtocolError) {}
}

/// `system`: the daemon-wide system-sound settings, as they are after the request.
public struct SystemReply: FlatReply {
  public var volume: Double
  public var muted: Bool

  public init(volume: Double, muted: Bool) {
    self.volume = volume
    self.muted = muted
  }

  static var layout: Layout { Layout("the system reply", .number("volume", \.volume), .bool("muted", \.muted), Self.init(volume:muted:)) }
}

extension PagingOutcome: ReplyFields {
  /// Decodes the reply to a carousel message sent with an id.
  public init(reply: JSONValue) throws(ProtocolError) {
    var fields = FieldReader(reply)
    self = try PagingOutcome.decode(&fields, in: "the carousel reply")
  }
}

/// `voices`: the voices sounding now, oldest first.
public struct VoicesReply: ReplyFields {
  /// One voice: its cue, what played it, its loops, how long it has sounded, whether it is fading out.
  public struct Voice: Sendable, Equatable {
    public var voice: UInt64
    public var cue: String
    public var origin: Event.Origin
    /// AVAudioPlayer's numberOfLoops as the voice started: 0 once, n for n+1 plays, -1 until stopped.
    public var loops: Int
    /// Seconds since it was started.
    public var seconds: Double
    /// A stop has been sent; it is fading out.
    public var stopping: Bool
    /// What it sounds at after the chain (VoiceMix.swift); nil from a daemon older than these fields.
    public var mix: VoiceMix?

    public init(
      voice: UInt64, cue: String, origin: Event.Origin = .oneShot, loops: Int = 0, seconds: Double, stopping: Bool = false, mix: VoiceMix? = nil
    ) {
      (self.voice, self.cue, self.origin, self.loops, self.seconds, self.stopping) = (voice, cue, origin, loops, seconds, stopping)
      self.mix = mix
    }

    var json: JSONValue {
      .object(
        [("voice", .id(voice)), ("cue", .string(cue))] + origin.fields
          + [("loops", .int(loops)), ("seconds", .number(seconds)), ("stopping", .bool(stopping))] + (mix?.fields ?? []))
    }

    init(json: JSONValue) throws(ProtocolError) {
      var fields = FieldReader(json)
      let what = "a voice of the voices reply"
      voice = try required(fields.id("voice"), "voice", in: what)
      cue = try required(fields.string("cue"), "cue", in: what)
      origin = try Event.Origin.decode(&fields)
      loops = try required(fields.integer("loops"), "loops", in: what)
      seconds = try required(fields.double("seconds"), "seconds", in: what)
      stopping = try required(fields.bool("stopping"), "stopping", in: what)
      mix = try VoiceMix.decode(&fields, in: what)
    }
  }

  public var voices: [Voice]

  public init(voices: [Voice]) { self.voices = voices }

  public var fields: [(String, JSONValue)] { [("voices", .array(voices.map(\.json)))] }

  public init(reply: JSONValue) throws(ProtocolError) {
    var fields = FieldReader(reply)
    voices = try required(fields.objects("voices", Voice.init(json:)), "voices", in: "the voices reply")
  }
}
