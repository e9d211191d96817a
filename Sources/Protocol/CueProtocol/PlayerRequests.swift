/// Where a player or system sound gets its audio: a loaded cue, or an MP3 file inside the sound directories.
public enum SoundSource: Sendable, Equatable {
  case cue(String)
  case path(String)

  static func decode(_ fields: inout FieldReader, op: String) throws(ProtocolError) -> SoundSource {
    let cue = try fields.string("cue")
    let path = try fields.string("path")
    switch (cue, path) {
    case (let cue?, nil): return .cue(cue)
    case (nil, let path?): return .path(path)
    default: throw ProtocolError(.invalidRequest, "\(op) needs exactly one of \"cue\" (a cue name) or \"path\" (an MP3 file)")
    }
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

  static func decode(_ fields: inout FieldReader) throws(ProtocolError) -> PlayerSettings {
    var settings = PlayerSettings()
    settings.volume = try fields.optionalNumber("volume", in: 0...1)
    settings.pan = try fields.optionalNumber("pan", in: -1...1)
    if fields.has("numberOfLoops") {
      let loops = try fields.loopCount("numberOfLoops")
      guard loops <= PlayParameters.maximumLoops else {
        throw ProtocolError(.outOfRange, "\"numberOfLoops\" is \(loops); the most is \(PlayParameters.maximumLoops) (-1 loops until stopped)")
      }
      settings.numberOfLoops = loops
    }
    settings.currentTime = try fields.optionalNumber("currentTime", in: 0...86_400)
    settings.rate = try fields.optionalNumber("rate", in: 0.5...2)
    settings.fade = try fields.optionalNumber("fade", in: 0...Request.maximumFadeSeconds)
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

  /// Reads a `player.create` request's fields.
  static func decode(_ fields: inout FieldReader, op name: String) throws(ProtocolError) -> PlayerCreation {
    var creation = PlayerCreation(source: try SoundSource.decode(&fields, op: name))
    creation.detached = try fields.bool("detached") ?? false
    creation.enableRate = try fields.bool("enableRate") ?? false
    creation.meteringEnabled = try fields.bool("meteringEnabled") ?? false
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

// MARK: - player.*: the AVAudioPlayer model (replies in PlayerReplies.swift)

/// `player.create`: makes a player.
public struct PlayerCreateRequest: RequestFields {
  public static let op = Op("player.create", owner: .players)
  public typealias Reply = PlayerCreateReply
  public var creation: PlayerCreation

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
  public init(fields: inout FieldReader) throws(ProtocolError) { self.init(player: try fields.requiredID("player", op: Self.op.rawValue)) }
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

  public init(fields: inout FieldReader) throws(ProtocolError) {
    player = try fields.requiredID("player", op: Self.op.rawValue)
    atDeviceTime = try fields.optionalNumber("atTime", in: 0...1e12)
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

  public init(fields: inout FieldReader) throws(ProtocolError) {
    player = try fields.requiredID("player", op: Self.op.rawValue)
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

  public init(fields: inout FieldReader) throws(ProtocolError) {
    source = try SoundSource.decode(&fields, op: Self.op.rawValue)
    detached = try fields.bool("detached") ?? false
  }

  public var fields: [(String, JSONValue)] { source.fields + (detached ? [("detached", true)] : []) }
}

/// `sound.play`: fire-and-forget, at the system-sound volume.
public struct SoundPlayRequest: RequestFields {
  public static let op = Op("sound.play", owner: .sounds)
  public typealias Reply = SoundPlayReply
  public var sound: UInt64

  public init(sound: UInt64) { self.sound = sound }
  public init(fields: inout FieldReader) throws(ProtocolError) { sound = try fields.requiredID("sound", op: Self.op.rawValue) }
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

  public init(fields: inout FieldReader) throws(ProtocolError) {
    sound = try fields.requiredID("sound", op: Self.op.rawValue)
    enabled = try fields.bool("enabled") ?? true
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

  public init(fields: inout FieldReader) throws(ProtocolError) {
    sound = try fields.requiredID("sound", op: Self.op.rawValue)
    now = try fields.bool("now") ?? false
  }

  public var fields: [(String, JSONValue)] { [("sound", .id(sound))] + (now ? [("now", true)] : []) }
}
