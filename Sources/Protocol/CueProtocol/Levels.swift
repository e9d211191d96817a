/// How much may sound, as feedbackd's profiles: everything; only important cues and the groups
/// allowed at quiet; or nothing but important cues from clients allowed to break silence.
public enum SoundLevel: String, CaseIterable, Sendable, Comparable {
  case silent, quiet, full

  private var rank: Int {
    switch self {
    case .silent: 0
    case .quiet: 1
    case .full: 2
    }
  }

  public static func < (a: SoundLevel, b: SoundLevel) -> Bool { a.rank < b.rank }
}

/// `level`: the level now, after the request, and what set it.
public struct LevelReply: ReplyFields {
  public var level: SoundLevel
  /// What set it: `start`, `client`, `quiet-hours`.
  public var setBy: String
  /// The config's quiet hours (`22:00-07:00`), when there are any, and whether they are on now.
  public var quietHours: String?
  public var inQuietHours: Bool

  public init(level: SoundLevel, setBy: String, quietHours: String? = nil, inQuietHours: Bool = false) {
    self.level = level
    self.setBy = setBy
    self.quietHours = quietHours
    self.inQuietHours = inQuietHours
  }

  public var fields: [(String, JSONValue)] {
    var members: [(String, JSONValue)] = [("level", .string(level.rawValue)), ("setBy", .string(setBy))]
    if let quietHours { members += [("quietHours", .string(quietHours)), ("inQuietHours", .bool(inQuietHours))] }
    return members
  }

  public init(reply: JSONValue) throws(ProtocolError) {
    var fields = FieldReader(reply)
    level = try required(fields.value("level", as: SoundLevel.self), "level", in: "the level reply")
    setBy = try fields.string("setBy") ?? "start"
    quietHours = try fields.string("quietHours")
    inQuietHours = try fields.bool("inQuietHours") ?? false
  }
}

/// `group`: groups (buses) as they are after the request.
public struct GroupReply: ReplyFields {
  public struct Group: Sendable, Equatable {
    public var name: String
    public var volume: Double
    public var muted: Bool
    /// The ducking applied now by other groups that play (1: none), as a linear factor.
    public var ducked: Double
    /// Whether its cues play at the level `quiet`.
    public var atQuiet: Bool

    public init(name: String, volume: Double, muted: Bool, ducked: Double = 1, atQuiet: Bool = false) {
      (self.name, self.volume, self.muted, self.ducked, self.atQuiet) = (name, volume, muted, ducked, atQuiet)
    }

    var json: JSONValue {
      .object([
        ("name", .string(name)), ("volume", .number(volume)), ("muted", .bool(muted)), ("ducked", .number(ducked)),
        ("atQuiet", .bool(atQuiet)),
      ])
    }

    init(json: JSONValue) throws(ProtocolError) {
      var fields = FieldReader(json)
      let what = "a group of the group reply"
      name = try required(fields.string("name"), "name", in: what)
      volume = try required(fields.double("volume"), "volume", in: what)
      muted = try required(fields.bool("muted"), "muted", in: what)
      ducked = try fields.double("ducked") ?? 1
      atQuiet = try fields.bool("atQuiet") ?? false
    }
  }

  public var groups: [Group]

  public init(groups: [Group]) { self.groups = groups }

  public var fields: [(String, JSONValue)] { [("groups", .array(groups.map(\.json)))] }

  public init(reply: JSONValue) throws(ProtocolError) {
    var fields = FieldReader(reply)
    groups = try required(fields.objects("groups") { (json) throws(ProtocolError) in try Group(json: json) }, "groups", in: "the group reply")
  }
}

extension Event {
  /// `level`: the level changed, from what, and by whose word.
  public struct LevelChange: Sendable, Equatable {
    public var level: SoundLevel
    public var previous: SoundLevel
    /// `client` (a `level` request), `quiet-hours` (their start or end).
    public var setBy: String

    public init(level: SoundLevel, previous: SoundLevel, setBy: String) {
      (self.level, self.previous, self.setBy) = (level, previous, setBy)
    }
  }
}

// MARK: - The ops of groups and the level: system, level, group

extension Op {
  /// The ops of groups (buses) and the level, in the order `hello` lists them.
  static let levelOps: [any RequestFields.Type] = [SystemRequest.self, LevelRequest.self, GroupRequest.self]
}

/// `system`: reads or changes the daemon-wide system-sound settings (the `system` group's volume and mute).
public struct SystemRequest: RequestFields {
  public static let op = Op("system", owner: .groups)
  public typealias Reply = SystemReply
  /// Linear, 0...1; nil: unchanged.
  public var volume: Double?
  /// nil: unchanged.
  public var muted: Bool?

  public init(volume: Double? = nil, muted: Bool? = nil) {
    self.volume = volume
    self.muted = muted
  }

  static let volume = Field.number(
    "volume", 0...1, default: "absent: unchanged",
    "The system volume: the `system` group's linear gain. Sounding system sounds follow over 10 ms. It does not affect `play` or players (unless their cue plays in the `system` group). Starts at `1`."
  )
  static let muted = Field.boolean(
    "muted", default: "absent: unchanged",
    "While `true`, `sound.play` plays nothing (like a \"sound effects\" switch): its reply and completion say `muted`; sounding system sounds fall silent. Starts at `false`."
  )
  public static var fieldSpecs: [FieldSpec] { [volume.spec, muted.spec] }

  public init(fields: inout FieldReader) throws(ProtocolError) {
    volume = try fields.read(Self.volume)
    muted = try fields.read(Self.muted)
  }

  public var fields: [(String, JSONValue)] {
    var members: [(String, JSONValue)] = []
    if let volume { members.append(("volume", .number(volume))) }
    if let muted { members.append(("muted", .bool(muted))) }
    return members
  }
}

/// `level`: reads or sets the level.
public struct LevelRequest: RequestFields {
  public static let op = Op("level", owner: .levels)
  public typealias Reply = LevelReply
  /// nil: only read it.
  public var level: SoundLevel?

  public init(_ level: SoundLevel?) { self.level = level }

  static let level = Field.choice(
    "level", ["full", "quiet", "silent"], default: "absent: unchanged", "The level to set. Without it, the request only reads the level."
  ) { name in ProtocolError(.outOfRange, "\"level\" is \(name.prefix(40)); it must be \"full\", \"quiet\" or \"silent\"") }
  public static var fieldSpecs: [FieldSpec] { [level.spec] }

  public init(fields: inout FieldReader) throws(ProtocolError) {
    level = try fields.read(Self.level).flatMap(SoundLevel.init(rawValue:))
  }

  public var fields: [(String, JSONValue)] { level.map { [("level", .string($0.rawValue))] } ?? [] }
}

/// `group`: reads or changes groups: one by name (nil: every group), its volume and mute (nil: unchanged).
public struct GroupRequest: RequestFields {
  public static let op = Op("group", owner: .groups)
  public typealias Reply = GroupReply
  public var name: String?
  public var volume: Double?
  public var muted: Bool?

  public init(name: String?, volume: Double? = nil, muted: Bool? = nil) {
    (self.name, self.volume, self.muted) = (name, volume, muted)
  }

  static let group = Field.string("group", range: "a group's name", default: "absent: every group", "The group to read or change.")
  static let volume = Field.number(
    "volume", 0...1, default: "absent: unchanged", "Its volume; its voices follow over 10 ms. Until a restart (a reload keeps it).")
  static let muted = Field.boolean(
    "muted", default: "absent: unchanged",
    "Mutes it: its voices fall silent over 10 ms and keep their place; new plays in it are silent (`group-muted`).")
  public static var fieldSpecs: [FieldSpec] { [group.spec, volume.spec, muted.spec] }
  public static var fieldRules: [FieldRule] { [FieldRule("`volume` and `muted` need `group`.")] }

  public init(fields: inout FieldReader) throws(ProtocolError) {
    name = try fields.read(Self.group)
    volume = try fields.read(Self.volume)
    muted = try fields.read(Self.muted)
    if name == nil && (volume != nil || muted != nil) {
      throw ProtocolError(.invalidRequest, "group needs \"group\" (its name) to change its volume or mute")
    }
  }

  public var fields: [(String, JSONValue)] {
    var members: [(String, JSONValue)] = []
    if let name { members.append(("group", .string(name))) }
    if let volume { members.append(("volume", .number(volume))) }
    if let muted { members.append(("muted", .bool(muted))) }
    return members
  }
}

/// Shorthands for these ops' requests.
extension Request {
  /// Reads or changes the daemon-wide system-sound settings (nil: unchanged).
  public static func system(volume: Double?, muted: Bool?) -> Request { Request(SystemRequest(volume: volume, muted: muted)) }
  /// Reads or sets the level.
  public static func level(_ level: SoundLevel?) -> Request { Request(LevelRequest(level)) }
  /// Reads or changes groups: one by name (nil: every group), its volume and mute (nil: unchanged).
  public static func group(name: String?, volume: Double?, muted: Bool?) -> Request {
    Request(GroupRequest(name: name, volume: volume, muted: muted))
  }
}
