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

  public init(server: String = "cued", version: String = cuedVersion, protocolVersion: Int = CueProtocol.protocolVersion) {
    self.server = server
    self.version = version
    self.protocolVersion = protocolVersion
  }

  public var fields: [(String, JSONValue)] {
    [("server", .string(server)), ("version", .string(version)), ("protocol", .int(protocolVersion))]
  }

  public init(reply: JSONValue) throws(ProtocolError) {
    var fields = FieldReader(reply)
    let what = "the hello reply"
    server = try required(fields.string("server"), "server", in: what)
    version = try required(fields.string("version"), "version", in: what)
    protocolVersion = try required(fields.integer("protocol"), "protocol", in: what)
  }
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

  public init(voice: UInt64, stole: UInt64? = nil) {
    self.voice = voice
    self.stole = stole
  }

  public var fields: [(String, JSONValue)] {
    [("voice", .id(voice))] + (stole.map { [("stole", .id($0))] } ?? [])
  }

  public init(reply: JSONValue) throws(ProtocolError) {
    var fields = FieldReader(reply)
    voice = try required(fields.id("voice"), "voice", in: "the play reply")
    stole = try fields.id("stole")
  }
}

/// `stop`: how many voices were stopped.
public struct StopReply: FlatReply {
  public var stopped: Int

  public init(stopped: Int) { self.stopped = stopped }

  static var layout: Layout { Layout("the stop reply", .int("stopped", \.stopped), Self.init(stopped:)) }
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

  public init(name: String, duration: Double, frames: Int, sourceRate: Int, channels: Int, bytes: Int, gapless: Bool, path: String) {
    self.name = name
    self.duration = duration
    self.frames = frames
    self.sourceRate = sourceRate
    self.channels = channels
    self.bytes = bytes
    self.gapless = gapless
    self.path = path
  }

  /// The cue as one object, fields in the daemon's order.
  public var json: JSONValue {
    .object([
      ("name", .string(name)), ("duration", .number(duration)), ("frames", .int(frames)), ("sourceRate", .int(sourceRate)),
      ("channels", .int(channels)), ("bytes", .int(bytes)), ("gapless", .bool(gapless)), ("path", .string(path)),
    ])
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

/// A player's properties (AVAudioPlayer's names): the reply to `player.prepare`, `.pause`, `.stop`, `.set` and `.get`.
public struct PlayerProperties: ReplyFields {
  public var volume: Double
  public var pan: Double
  public var numberOfLoops: Int
  /// Seconds into the sound.
  public var currentTime: Double
  /// Seconds; 0 until the file is decoded.
  public var duration: Double
  public var isPlaying: Bool
  /// The source's channels; 0 until the file is decoded.
  public var numberOfChannels: Int
  /// The device clock now, in seconds.
  public var deviceCurrentTime: Double
  public var enableRate: Bool
  public var rate: Double
  public var meteringEnabled: Bool
  public var detached: Bool
  /// The cue played (nil until a file is decoded).
  public var cue: String?
  /// Per channel, dBFS; only with `meteringEnabled`.
  public var averagePower: [Double]?
  /// Per channel, dBFS; only with `meteringEnabled`.
  public var peakPower: [Double]?

  public init(
    volume: Double = 1, pan: Double = 0, numberOfLoops: Int = 0, currentTime: Double = 0, duration: Double = 0,
    isPlaying: Bool = false, numberOfChannels: Int = 0, deviceCurrentTime: Double = 0, enableRate: Bool = false,
    rate: Double = 1, meteringEnabled: Bool = false, detached: Bool = false, cue: String? = nil,
    averagePower: [Double]? = nil, peakPower: [Double]? = nil
  ) {
    self.volume = volume
    self.pan = pan
    self.numberOfLoops = numberOfLoops
    self.currentTime = currentTime
    self.duration = duration
    self.isPlaying = isPlaying
    self.numberOfChannels = numberOfChannels
    self.deviceCurrentTime = deviceCurrentTime
    self.enableRate = enableRate
    self.rate = rate
    self.meteringEnabled = meteringEnabled
    self.detached = detached
    self.cue = cue
    self.averagePower = averagePower
    self.peakPower = peakPower
  }

  public var fields: [(String, JSONValue)] {
    var members: [(String, JSONValue)] = [
      ("volume", .number(volume)), ("pan", .number(pan)), ("numberOfLoops", .int(numberOfLoops)),
      ("currentTime", .number(currentTime)), ("duration", .number(duration)), ("isPlaying", .bool(isPlaying)),
      ("numberOfChannels", .int(numberOfChannels)), ("deviceCurrentTime", .number(deviceCurrentTime)),
      ("enableRate", .bool(enableRate)), ("rate", .number(rate)), ("meteringEnabled", .bool(meteringEnabled)),
      ("detached", .bool(detached)),
    ]
    if let cue { members.append(("cue", .string(cue))) }
    if let averagePower { members.append(("averagePower", .array(averagePower.map { .number($0) }))) }
    if let peakPower { members.append(("peakPower", .array(peakPower.map { .number($0) }))) }
    return members
  }

  public init(reply: JSONValue) throws(ProtocolError) {
    var fields = FieldReader(reply)
    let what = "the player reply"
    volume = try required(fields.double("volume"), "volume", in: what)
    pan = try required(fields.double("pan"), "pan", in: what)
    numberOfLoops = try required(fields.integer("numberOfLoops"), "numberOfLoops", in: what)
    currentTime = try required(fields.double("currentTime"), "currentTime", in: what)
    duration = try required(fields.double("duration"), "duration", in: what)
    isPlaying = try required(fields.bool("isPlaying"), "isPlaying", in: what)
    numberOfChannels = try required(fields.integer("numberOfChannels"), "numberOfChannels", in: what)
    deviceCurrentTime = try required(fields.double("deviceCurrentTime"), "deviceCurrentTime", in: what)
    enableRate = try required(fields.bool("enableRate"), "enableRate", in: what)
    rate = try required(fields.double("rate"), "rate", in: what)
    meteringEnabled = try required(fields.bool("meteringEnabled"), "meteringEnabled", in: what)
    detached = try required(fields.bool("detached"), "detached", in: what)
    cue = try fields.string("cue")
    averagePower = try fields.numbers("averagePower")
    peakPower = try fields.numbers("peakPower")
  }
}

/// `player.create`: the new player's id, then its properties.
public struct PlayerCreateReply: ReplyFields {
  public var player: UInt64
  public var properties: PlayerProperties

  public init(player: UInt64, properties: PlayerProperties) {
    self.player = player
    self.properties = properties
  }

  public var fields: [(String, JSONValue)] { [("player", .id(player))] + properties.fields }

  public init(reply: JSONValue) throws(ProtocolError) {
    var fields = FieldReader(reply)
    player = try required(fields.id("player"), "player", in: "the player.create reply")
    properties = try PlayerProperties(reply: reply)
  }
}

/// `player.play`: `playing`, true once the play is under way (or will start once the file is decoded).
public struct PlayerPlayReply: FlatReply {
  public var playing: Bool

  public init(playing: Bool = true) { self.playing = playing }

  static var layout: Layout { Layout("the player.play reply", .bool("playing", \.playing), Self.init(playing:)) }
}

/// `player.destroy`: the id of the player destroyed.
public struct PlayerDestroyReply: FlatReply {
  public var destroyed: UInt64

  public init(destroyed: UInt64) { self.destroyed = destroyed }

  static var layout: Layout { Layout("the player.destroy reply", .id("destroyed", \.destroyed), Self.init(destroyed:)) }
}

/// `sound.create`: the new system sound's id.
public struct SoundCreateReply: FlatReply {
  public var sound: UInt64

  public init(sound: UInt64) { self.sound = sound }

  static var layout: Layout { Layout("the sound.create reply", .id("sound", \.sound), Self.init(sound:)) }
}

/// `sound.play`: the voice playing it, or `muted` when system sounds are muted (nothing plays).
public enum SoundPlayReply: ReplyFields {
  case playing(PlayReply)
  case muted

  /// The voice, or nil when muted.
  public var voice: UInt64? {
    if case .playing(let play) = self { return play.voice }
    return nil
  }

  public var fields: [(String, JSONValue)] {
    switch self {
    case .playing(let play): play.fields
    case .muted: [("muted", true)]
    }
  }

  public init(reply: JSONValue) throws(ProtocolError) {
    var fields = FieldReader(reply)
    self = try fields.bool("muted") == true ? .muted : .playing(PlayReply(reply: reply))
  }
}

/// `sound.completion`: the sound, and whether its completions are now sent to this connection.
public struct SoundCompletionReply: FlatReply {
  public var sound: UInt64
  public var completion: Bool

  public init(sound: UInt64, completion: Bool) {
    self.sound = sound
    self.completion = completion
  }

  static var layout: Layout { Layout("the sound.completion reply", .id("sound", \.sound), .bool("completion", \.completion), Self.init(sound:completion:)) }
}

/// `sound.dispose`: the sound, and how many of its plays still sound (they finish unless disposed `now`).
public struct SoundDisposeReply: FlatReply {
  public var sound: UInt64
  public var playing: Int

  public init(sound: UInt64, playing: Int) {
    self.sound = sound
    self.playing = playing
  }

  static var layout: Layout { Layout("the sound.dispose reply", .id("sound", \.sound), .int("playing", \.playing), Self.init(sound:playing:)) }
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

extension PagingOutcome: ReplyFields {
  /// Decodes the reply to a carousel message sent with an id.
  public init(reply: JSONValue) throws(ProtocolError) {
    var fields = FieldReader(reply)
    self = try PagingOutcome.decode(&fields, in: "the carousel reply")
  }
}
