/// Where a player or system sound gets its audio: a loaded cue, or an MP3 file inside the sound directories.
public enum SoundSource: Sendable, Equatable {
  case cue(String)
  case path(String)

  static let cue = Field.string("cue", range: "the name of a loaded cue", default: "—", "The cue to play.")

  /// The rule over `cue` and `path`.
  static let exactlyOne = FieldRule("Give exactly one of `cue` and `path`.", exactlyOneOf: ["cue", "path"])

  /// Reads `cue` or `path` (`path` declared by each op, with its own words).
  static func decode(_ fields: inout FieldReader, path: Field<String>, op: String) throws(ProtocolError) -> SoundSource {
    let source = try fields.readExactlyOne(
      of: [cue, path], "\(op) needs exactly one of \"cue\" (a cue name) or \"path\" (an MP3 file)")
    return source.name == "cue" ? .cue(source.value) : .path(source.value)
  }

  var fields: [(String, JSONValue)] {
    switch self {
    case .cue(let c): [("cue", .string(c))]
    case .path(let p): [("path", .string(p))]
    }
  }
}

/// Settable player properties, AVAudioPlayer's names; nil leaves a property as it is.
public struct PlayerSettings: Sendable, Equatable {
  public var volume: Double?
  public var pan: Double?
  public var numberOfLoops: Int?
  /// Seconds; setting it seeks.
  public var currentTime: Double?
  public var rate: Double?
  /// Seconds over which a volume change ramps (AVAudioPlayer's `setVolume(_:fadeDuration:)`).
  public var fade: Double?

  public init(
    volume: Double? = nil, pan: Double? = nil, numberOfLoops: Int? = nil, currentTime: Double? = nil, rate: Double? = nil,
    fade: Double? = nil
  ) {
    self.volume = volume
    self.pan = pan
    self.numberOfLoops = numberOfLoops
    self.currentTime = currentTime
    self.rate = rate
    self.fade = fade
  }

  static let volume = Field.number("volume", 0...1, default: "absent: unchanged", "See the [property table](#player-properties).")
  static let pan = Field.number("pan", -1...1, default: "absent: unchanged", "")
  static let numberOfLoops = Field.loopCount("numberOfLoops", default: "absent: unchanged", "", hint: "-1 loops until stopped")
  static let currentTime = Field.number("currentTime", 0...86_400, default: "absent: unchanged", "Seeks.")
  static let rate = Field.number("rate", 0.5...2, default: "absent: unchanged", "Needs a player made with `\"enableRate\":true`.")
  static let fade = Field.number(
    "fade", 0...Request.maximumFadeSeconds, default: "`0`", "Seconds over which a `volume` or `pan` change ramps while the player plays.")

  /// The settings' fields, in the order they are read.
  static var fieldSpecs: [FieldSpec] { [volume.spec, pan.spec, numberOfLoops.spec, currentTime.spec, rate.spec, fade.spec] }

  static func decode(_ fields: inout FieldReader) throws(ProtocolError) -> PlayerSettings {
    var settings = PlayerSettings()
    settings.volume = try fields.read(volume)
    settings.pan = try fields.read(pan)
    settings.numberOfLoops = try fields.read(numberOfLoops)
    settings.currentTime = try fields.read(currentTime)
    settings.rate = try fields.read(rate)
    settings.fade = try fields.read(fade)
    return settings
  }

  var fields: [(String, JSONValue)] {
    var members: [(String, JSONValue)] = []
    if let volume { members.append(("volume", .number(volume))) }
    if let pan { members.append(("pan", .number(pan))) }
    if let numberOfLoops { members.append(("numberOfLoops", .number(Double(numberOfLoops)))) }
    if let currentTime { members.append(("currentTime", .number(currentTime))) }
    if let rate { members.append(("rate", .number(rate))) }
    if let fade { members.append(("fade", .number(fade))) }
    return members
  }
}

/// How a player is made.
public struct PlayerCreation: Sendable, Equatable {
  public var source: SoundSource
  /// Outlives the connection that made it (until `player.destroy`).
  public var detached: Bool
  /// Allows `rate` changes (AVAudioPlayer's `enableRate`).
  public var enableRate: Bool
  /// Reports `averagePower` / `peakPower` (AVAudioPlayer's `isMeteringEnabled`).
  public var meteringEnabled: Bool
  public var settings: PlayerSettings

  public init(
    source: SoundSource, detached: Bool = false, enableRate: Bool = false, meteringEnabled: Bool = false,
    settings: PlayerSettings = PlayerSettings()
  ) {
    self.source = source
    self.detached = detached
    self.enableRate = enableRate
    self.meteringEnabled = meteringEnabled
    self.settings = settings
  }

  static let path = Field.string(
    "path", range: "an existing file inside a sound directory", default: "—",
    "A sound file to play, named by its path: MP3, Ogg Vorbis or Opus (`.oga`, `.ogg`, `.opus`: what desktop sound themes ship), WAV or FLAC, told apart by their contents. See below."
  )
  static let detached = Field.boolean("detached", "Keep the player when this connection closes.").defaulting(to: false, shown: "`false`")
  static let enableRate = Field.boolean("enableRate", "Allow `rate` changes.").defaulting(to: false, shown: "`false`")
  static let meteringEnabled = Field.boolean("meteringEnabled", "Report `averagePower` and `peakPower`.").defaulting(to: false, shown: "`false`")
  static let rateNeedsEnableRate = FieldRule("`rate` needs `\"enableRate\":true`.")

  /// `player.create`'s fields: the source, the switches, then the initial properties.
  static var fieldSpecs: [FieldSpec] {
    [SoundSource.cue.spec, path.spec, detached.spec, enableRate.spec, meteringEnabled.spec]
      + PlayerSettings.fieldSpecs.map {
        $0.documented("Its initial value: see the [property table](#player-properties).", default: "the table's")
      }
  }

  /// Reads a `player.create` request's fields.
  static func decode(_ fields: inout FieldReader, op name: String) throws(ProtocolError) -> PlayerCreation {
    var creation = PlayerCreation(source: try SoundSource.decode(&fields, path: path, op: name))
    creation.detached = try fields.read(detached)
    creation.enableRate = try fields.read(enableRate)
    creation.meteringEnabled = try fields.read(meteringEnabled)
    creation.settings = try PlayerSettings.decode(&fields)
    if creation.settings.rate != nil && !creation.enableRate {
      throw ProtocolError(.invalidRequest, "\"rate\" needs \"enableRate\":true at creation, as with AVAudioPlayer")
    }
    return creation
  }
}

extension Op {
  /// The `player.*` ops, in the order `hello` lists them.
  static let playerOps: [any RequestFields.Type] = [
    PlayerCreateRequest.self, PlayerPrepareRequest.self, PlayerPlayRequest.self, PlayerPauseRequest.self, PlayerStopRequest.self,
    PlayerSetRequest.self, PlayerGetRequest.self, PlayerDestroyRequest.self,
  ]

  /// The `sound.*` ops, in the order `hello` lists them.
  static let soundOps: [any RequestFields.Type] = [
    SoundCreateRequest.self, SoundPlayRequest.self, SoundCompletionRequest.self, SoundDisposeRequest.self,
  ]
}

extension Op {
  /// The player a `player.*` op names: every one has it, first.
  var player: RequiredField<UInt64> {
    Field.id("player", "The player.").required("\(rawValue) needs a \"player\" field (an id)")
  }

  /// The sound a `sound.*` op names (all but `sound.create`).
  var sound: RequiredField<UInt64> {
    Field.id("sound", "The sound.").required("\(rawValue) needs a \"sound\" field (an id)")
  }
}

// MARK: - player.*: the AVAudioPlayer model (replies in PlayerReplies.swift)

/// `player.create`: makes a player.
public struct PlayerCreateRequest: RequestFields {
  public static let op = Op("player.create", owner: .players)
  public typealias Reply = PlayerCreateReply
  public var creation: PlayerCreation

  public static var fieldSpecs: [FieldSpec] { PlayerCreation.fieldSpecs }
  public static var fieldRules: [FieldRule] { [SoundSource.exactlyOne, PlayerCreation.rateNeedsEnableRate] }

  public init(_ creation: PlayerCreation) { self.creation = creation }
  public init(fields: inout FieldReader) throws(ProtocolError) { creation = try PlayerCreation.decode(&fields, op: Self.op.rawValue) }

  public var fields: [(String, JSONValue)] {
    var members = creation.source.fields
    if creation.detached { members.append(("detached", true)) }
    if creation.enableRate { members.append(("enableRate", true)) }
    if creation.meteringEnabled { members.append(("meteringEnabled", true)) }
    return members + creation.settings.fields
  }
}

/// A player op whose only field is the player it names.
public protocol PlayerTargeted: RequestFields {
  var player: UInt64 { get }
  init(player: UInt64)
}

extension PlayerTargeted {
  public static var fieldSpecs: [FieldSpec] { [op.player.spec] }
  public init(fields: inout FieldReader) throws(ProtocolError) { self.init(player: try fields.read(Self.op.player)) }
  public var fields: [(String, JSONValue)] { [("player", .id(player))] }
}

/// `player.prepare`: decodes (for a file) and opens the device; answered once decoded.
public struct PlayerPrepareRequest: PlayerTargeted {
  public static let op = Op("player.prepare", owner: .players)
  public typealias Reply = PlayerProperties
  public var player: UInt64
  public init(player: UInt64) { self.player = player }
}

/// `player.play`: starts or resumes, now or at a time of the device clock.
public struct PlayerPlayRequest: RequestFields {
  public static let op = Op("player.play", owner: .players)
  public typealias Reply = PlayerPlayReply
  public var player: UInt64
  /// Start when the device clock (seconds, `deviceCurrentTime`) reaches it; on the wire `atTime`.
  public var atDeviceTime: Double?

  public init(player: UInt64, atDeviceTime: Double? = nil) {
    self.player = player
    self.atDeviceTime = atDeviceTime
  }

  static let atTime = Field.number(
    "atTime", 0...1e12, default: "absent: at once",
    "When to start, on the `deviceCurrentTime` clock (AVAudioPlayer's `play(atTime:)`), in seconds. The voice's first frame is mixed at exactly that device frame, so players started with the same `atTime` start on the same frame. A time that has already been mixed starts at once."
  )
  public static var fieldSpecs: [FieldSpec] { [op.player.spec, atTime.spec] }

  public init(fields: inout FieldReader) throws(ProtocolError) {
    player = try fields.read(Self.op.player)
    atDeviceTime = try fields.read(Self.atTime)
  }

  public var fields: [(String, JSONValue)] { [("player", .id(player))] + (atDeviceTime.map { [("atTime", .number($0))] } ?? []) }
}

/// `player.pause`: at once, keeping the position; answered with the exact position.
public struct PlayerPauseRequest: PlayerTargeted {
  public static let op = Op("player.pause", owner: .players)
  public typealias Reply = PlayerProperties
  public var player: UInt64
  public init(player: UInt64) { self.player = player }
}

/// `player.stop`: with a short fade, keeping the position.
public struct PlayerStopRequest: PlayerTargeted {
  public static let op = Op("player.stop", owner: .players)
  public typealias Reply = PlayerProperties
  public var player: UInt64
  public init(player: UInt64) { self.player = player }
}

/// `player.set`: changes the settings it names.
public struct PlayerSetRequest: RequestFields {
  public static let op = Op("player.set", owner: .players)
  public typealias Reply = PlayerProperties
  public var player: UInt64
  public var settings: PlayerSettings

  public init(player: UInt64, _ settings: PlayerSettings) {
    self.player = player
    self.settings = settings
  }

  public static var fieldSpecs: [FieldSpec] { [op.player.spec] + PlayerSettings.fieldSpecs }

  public init(fields: inout FieldReader) throws(ProtocolError) {
    player = try fields.read(Self.op.player)
    settings = try PlayerSettings.decode(&fields)
  }

  public var fields: [(String, JSONValue)] { [("player", .id(player))] + settings.fields }
}

/// `player.get`: the player's properties.
public struct PlayerGetRequest: PlayerTargeted {
  public static let op = Op("player.get", owner: .players)
  public typealias Reply = PlayerProperties
  public var player: UInt64
  public init(player: UInt64) { self.player = player }
}

/// `player.destroy`: stops and forgets the player.
public struct PlayerDestroyRequest: PlayerTargeted {
  public static let op = Op("player.destroy", owner: .players)
  public typealias Reply = PlayerDestroyReply
  public var player: UInt64
  public init(player: UInt64) { self.player = player }
}

// MARK: - sound.*: the System Sound Services model (replies in PlayerReplies.swift)

/// `sound.create`: makes a system sound.
public struct SoundCreateRequest: RequestFields {
  public static let op = Op("sound.create", owner: .sounds)
  public typealias Reply = SoundCreateReply
  public var source: SoundSource
  /// Outlives the connection that made it (until `sound.dispose`).
  public var detached: Bool

  public init(_ source: SoundSource, detached: Bool = false) {
    self.source = source
    self.detached = detached
  }

  static let path = Field.string(
    "path", range: "a sound file inside a sound directory", default: "—",
    "A sound file to play, named by its path (MP3, Ogg Vorbis or Opus, WAV or FLAC), with the same checks as for [player.create](#playercreate)."
  )
  static let detached = Field.boolean("detached", "Keep the sound when this connection closes.").defaulting(to: false, shown: "`false`")
  public static var fieldSpecs: [FieldSpec] { [SoundSource.cue.spec, path.spec, detached.spec] }
  public static var fieldRules: [FieldRule] { [SoundSource.exactlyOne] }

  public init(fields: inout FieldReader) throws(ProtocolError) {
    source = try SoundSource.decode(&fields, path: Self.path, op: Self.op.rawValue)
    detached = try fields.read(Self.detached)
  }

  public var fields: [(String, JSONValue)] { source.fields + (detached ? [("detached", true)] : []) }
}

/// `sound.play`: fire-and-forget, at the system-sound volume.
public struct SoundPlayRequest: RequestFields {
  public static let op = Op("sound.play", owner: .sounds)
  public typealias Reply = SoundPlayReply
  public var sound: UInt64

  public static var fieldSpecs: [FieldSpec] { [op.sound.spec] }

  public init(sound: UInt64) { self.sound = sound }
  public init(fields: inout FieldReader) throws(ProtocolError) { sound = try fields.read(Self.op.sound) }
  public var fields: [(String, JSONValue)] { [("sound", .id(sound))] }
}

/// `sound.completion`: asks for (or stops) a `completion` event on this connection for every play of the sound.
public struct SoundCompletionRequest: RequestFields {
  public static let op = Op("sound.completion", owner: .sounds)
  public typealias Reply = SoundCompletionReply
  public var sound: UInt64
  public var enabled: Bool

  public init(sound: UInt64, enabled: Bool = true) {
    self.sound = sound
    self.enabled = enabled
  }

  static let enabled = Field.boolean("enabled", "`false` stops the events.").defaulting(to: true, shown: "`true`")
  public static var fieldSpecs: [FieldSpec] { [op.sound.spec, enabled.spec] }

  public init(fields: inout FieldReader) throws(ProtocolError) {
    sound = try fields.read(Self.op.sound)
    enabled = try fields.read(Self.enabled)
  }

  public var fields: [(String, JSONValue)] { [("sound", .id(sound)), ("enabled", .bool(enabled))] }
}

/// `sound.dispose`: `now: false` lets what plays finish; `now: true` cuts it with a short fade.
public struct SoundDisposeRequest: RequestFields {
  public static let op = Op("sound.dispose", owner: .sounds)
  public typealias Reply = SoundDisposeReply
  public var sound: UInt64
  public var now: Bool

  public init(sound: UInt64, now: Bool = false) {
    self.sound = sound
    self.now = now
  }

  static let now = Field.boolean("now", "`true` fades out what the sound is playing.").defaulting(to: false, shown: "`false`")
  public static var fieldSpecs: [FieldSpec] { [op.sound.spec, now.spec] }

  public init(fields: inout FieldReader) throws(ProtocolError) {
    sound = try fields.read(Self.op.sound)
    now = try fields.read(Self.now)
  }

  public var fields: [(String, JSONValue)] { [("sound", .id(sound))] + (now ? [("now", true)] : []) }
}
