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

  static func decode(_ fields: inout FieldReader) throws(ProtocolError) -> EventFilter {
    let kinds = try fields.stringArray("kinds")
    if let unknown = kinds?.first(where: { !knownKinds.contains($0) }) {
      throw ProtocolError(
        .invalidRequest, "unknown event kind \"\(unknown.prefix(64))\"; the kinds are \(knownKinds.sorted().joined(separator: ", "))")
    }
    let ids = try fields.idArray("ids")
    return EventFilter(kinds: kinds.map(Set.init), ids: ids.map(Set.init))
  }

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

/// The AVAudioPlayer model: `player.*` ops.
public enum PlayerRequest: Sendable, Equatable {
  case create(PlayerCreation)
  case prepare(player: UInt64)
  /// `atDeviceTime`: start when the device clock (seconds, `deviceCurrentTime`) reaches it.
  case play(player: UInt64, atDeviceTime: Double?)
  case pause(player: UInt64)
  case stop(player: UInt64)
  case set(player: UInt64, PlayerSettings)
  case get(player: UInt64)
  case destroy(player: UInt64)

  /// The operation, whose raw value is the `op` string.
  public var op: Op {
    switch self {
    case .create: .playerCreate
    case .prepare: .playerPrepare
    case .play: .playerPlay
    case .pause: .playerPause
    case .stop: .playerStop
    case .set: .playerSet
    case .get: .playerGet
    case .destroy: .playerDestroy
    }
  }

  static func decode(op: Op, _ fields: inout FieldReader) throws(ProtocolError) -> PlayerRequest {
    if op == .playerCreate { return .create(try PlayerCreation.decode(&fields, op: op.rawValue)) }
    // Every other player op names its player first.
    guard op.rawValue.hasPrefix("player.") else { throw op.notOf(family: "player.") }
    let player = try fields.requiredID("player", op: op.rawValue)
    switch op {
    case .playerPlay: return .play(player: player, atDeviceTime: try fields.optionalNumber("atTime", in: 0...1e12))
    case .playerSet: return .set(player: player, try PlayerSettings.decode(&fields))
    case .playerPrepare: return .prepare(player: player)
    case .playerPause: return .pause(player: player)
    case .playerStop: return .stop(player: player)
    case .playerGet: return .get(player: player)
    case .playerDestroy: return .destroy(player: player)
    default: throw op.notOf(family: "player.")
    }
  }

  var fields: [(String, JSONValue)] {
    switch self {
    case .create(let c):
      var members = c.source.fields
      if c.detached { members.append(("detached", true)) }
      if c.enableRate { members.append(("enableRate", true)) }
      if c.meteringEnabled { members.append(("meteringEnabled", true)) }
      return members + c.settings.fields
    case .prepare(let p), .pause(let p), .stop(let p), .get(let p), .destroy(let p):
      return [("player", .number(Double(p)))]
    case .play(let p, let at):
      return [("player", .number(Double(p)))] + (at.map { [("atTime", .number($0))] } ?? [])
    case .set(let p, let settings):
      return [("player", .number(Double(p)))] + settings.fields
    }
  }
}

/// The System Sound Services model: `sound.*` ops.
public enum SoundRequest: Sendable, Equatable {
  case create(SoundSource, detached: Bool)
  /// Fire-and-forget, at the system-sound volume.
  case play(sound: UInt64)
  /// Asks for (or stops) a `completion` event on this connection for every play of the sound.
  case completion(sound: UInt64, enabled: Bool)
  /// `now: false` lets what plays finish; `now: true` cuts it with a short fade.
  case dispose(sound: UInt64, now: Bool)

  /// The operation, whose raw value is the `op` string.
  public var op: Op {
    switch self {
    case .create: .soundCreate
    case .play: .soundPlay
    case .completion: .soundCompletion
    case .dispose: .soundDispose
    }
  }

  static func decode(op: Op, _ fields: inout FieldReader) throws(ProtocolError) -> SoundRequest {
    if op == .soundCreate {
      let source = try SoundSource.decode(&fields, op: op.rawValue)
      return .create(source, detached: try fields.bool("detached") ?? false)
    }
    // Every other sound op names its sound first.
    guard op.rawValue.hasPrefix("sound.") else { throw op.notOf(family: "sound.") }
    let sound = try fields.requiredID("sound", op: op.rawValue)
    switch op {
    case .soundPlay: return .play(sound: sound)
    case .soundCompletion: return .completion(sound: sound, enabled: try fields.bool("enabled") ?? true)
    case .soundDispose: return .dispose(sound: sound, now: try fields.bool("now") ?? false)
    default: throw op.notOf(family: "sound.")
    }
  }

  var fields: [(String, JSONValue)] {
    switch self {
    case .create(let source, let detached): source.fields + (detached ? [("detached", true)] : [])
    case .play(let s): [("sound", .number(Double(s)))]
    case .completion(let s, let enabled): [("sound", .number(Double(s))), ("enabled", .bool(enabled))]
    case .dispose(let s, let now): [("sound", .number(Double(s)))] + (now ? [("now", true)] : [])
    }
  }
}
