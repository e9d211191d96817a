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
