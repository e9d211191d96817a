/// The replies to the `player.*` and `sound.*` ops (their requests are in PlayerRequests.swift).

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

/// `player.play`: `playing`, true once the play is under way (or will start once the file is
/// decoded); false when the gate keeps it silent, and `reason` says why (as a silent `play`).
public struct PlayerPlayReply: ReplyFields {
  public var playing: Bool
  public var silenced: SilenceReason?

  public init(playing: Bool = true, silenced: SilenceReason? = nil) {
    self.playing = playing
    self.silenced = silenced
  }

  public var fields: [(String, JSONValue)] {
    var members: [(String, JSONValue)] = [("playing", .bool(playing))]
    if let silenced { members += [("played", false), ("reason", .string(silenced.rawValue))] }
    return members
  }

  public init(reply: JSONValue) throws(ProtocolError) {
    var fields = FieldReader(reply)
    playing = try required(fields.bool("playing"), "playing", in: "the player.play reply")
    silenced = try fields.string("reason").flatMap(SilenceReason.init(rawValue:))
  }
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
  /// Nothing sounds, for this reason (as a `play` that is silent; `muted`: system sounds are muted).
  case silent(SilenceReason)

  /// The voice, or nil when silent.
  public var voice: UInt64? {
    if case .playing(let play) = self { return play.voice }
    return nil
  }

  public var fields: [(String, JSONValue)] {
    switch self {
    case .playing(let play): return play.fields
    case .silent(let reason):
      var members: [(String, JSONValue)] = [("played", false), ("reason", .string(reason.rawValue))]
      // Protocol 1's form of the mute switch, kept for the clients that read it.
      if reason == .muted { members.append(("muted", true)) }
      return members
    }
  }

  public init(reply: JSONValue) throws(ProtocolError) {
    var fields = FieldReader(reply)
    guard try fields.id("voice") == nil else {
      self = .playing(try PlayReply(reply: reply))
      return
    }
    let reason = try fields.string("reason").flatMap(SilenceReason.init(rawValue:))
    self = .silent(reason ?? .muted)
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
