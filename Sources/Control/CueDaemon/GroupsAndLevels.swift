import CueCore
import CuePosix
import CueProtocol

#if canImport(Glibc)
import Glibc
#endif

/// A group lowering another while any of its cues plays.
public struct Ducking: Sendable, Equatable {
  /// The group lowered.
  public var group = ""
  /// By how much, in dB (negative).
  public var byDecibels = -12.0
  /// How long the fall takes when the first cue of the ducking group starts, and the rise after its last ends.
  public var attack = 0.02
  public var release = 0.3
}

/// `[groups.NAME]`: a bus with its own volume and mute, that may play at `quiet` and may duck another.
public struct GroupSettings: Sendable, Equatable {
  public var volume = 1.0
  public var muted = false
  public var atQuiet = false
  public var duck: Ducking? = nil
  /// The media roles (`play`'s `role`, libcanberra's `media.role`) it plays when the sound has no
  /// group of its own; a role is in one group at most.
  public var roles: [String] = []
}

/// `[clients.NAME]`: what a client that says `hello` with that name may do.
public struct ClientSettings: Sendable, Equatable {
  /// Its plays never sound above this level.
  public var ceiling = SoundLevel.full
  /// Its important cues play even at `silent`.
  public var breaksSilence = false
}

/// `[quiet-hours]`: a daily time range (local time) and the level it sets.
public struct QuietHours: Sendable, Equatable {
  /// Minutes after local midnight.
  public var from: Int
  public var to: Int
  public var level = SoundLevel.quiet

  /// Whether `minute` (after local midnight) falls inside; a range may cross midnight.
  public func contains(_ minute: Int) -> Bool {
    from <= to ? (minute >= from && minute < to) : (minute >= from || minute < to)
  }

  /// `22:00-07:00`.
  public var text: String {
    func hhmm(_ m: Int) -> String {
      let h = m / 60, mm = m % 60
      return (h < 10 ? "0" : "") + "\(h):" + (mm < 10 ? "0" : "") + "\(mm)"
    }
    return hhmm(from) + "-" + hhmm(to)
  }
}

extension ConfigFile {
  /// Reads the `[groups.NAME]` tables (Settings.groupKeys), and checks that each ducks a group that
  /// exists and that no role is in two groups.
  static func interpretGroups(_ value: JSONValue, path: String, locator: KeyLocator) throws(ConfigError) -> [String: GroupSettings] {
    let groups = try namedTables(value, kind: "groups", path: path, locator: locator, Settings.groupKeys)
    var roleGroups: [String: String] = [:]
    // In name order, so that the message is the same whichever way the tables were read.
    for (name, group) in groups.sorted(by: { $0.key < $1.key }) {
      for role in group.roles {
        if let other = roleGroups.updateValue(name, forKey: role), other != name {
          throw ConfigError(
            path: path, line: locator.line(of: "roles", in: "groups." + name),
            message: "[groups.\(name)] roles lists '\(role)', which [groups.\(other)] lists too; a role plays in one group: remove it from one")
        }
      }
      if let target = group.duck?.group, groups[target] == nil, !CueRule.builtInGroups.contains(target) {
        throw ConfigError(
          path: path, line: locator.line(of: "duck", in: "groups." + name),
          message: "[groups.\(name)] ducks the group '\(target)', which has no [groups.\(target)] table")
      }
    }
    return groups
  }
}

/// The local time of day, for quiet hours (tests inject their own).
protocol WallClock {
  /// Seconds after local midnight, now.
  func secondsOfDay() -> Double
}

struct LocalWallClock: WallClock {
  func secondsOfDay() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    var seconds = now.tv_sec
    var local = tm()
    localtime_r(&seconds, &local)
    return Double(local.tm_hour * 3600 + local.tm_min * 60 + local.tm_sec) + Double(now.tv_nsec) / 1e9
  }
}

/// Groups (buses) and the level: the volume factor a voice of each group gets, ducking, who may
/// sound at the level in force, and the quiet hours that change it.
///
/// Group gain is applied on the control side: a voice starts at its group's factor, and a change
/// (a `group` request, a duck's attack or release) sends each voice of the group a gain ramp over
/// the change's time; the mixer ramps per sample, so the fall and rise are exact in length.
final class GroupsAndLevels {
  private(set) var groups: [String: GroupSettings] = [:]
  private(set) var clients: [String: ClientSettings] = [:]
  private(set) var quietHours: QuietHours? = nil
  /// Runtime changes (`cuectl group`) over the config's, by group.
  private var volumes: [String: Double] = [:]
  private var mutes: [String: Bool] = [:]
  /// The ducking each group is under now (linear factor, 1: none).
  private var ducked: [String: Double] = [:]
  /// Sounding voices of each ducking group.
  private var duckerVoices: [String: Set<VoiceID>] = [:]
  private(set) var level = SoundLevel.full
  private(set) var setBy = "start"
  /// The level quiet hours found when they began, and whether they are on.
  private var inQuietHours = false
  private var levelBeforeQuietHours = SoundLevel.full

  private let voices: VoiceTable
  private let events: EventRouter
  private let wallClock: WallClock
  private let sampleRate: Int
  /// The fade of a voice the level no longer allows, and of a group volume change.
  static let levelFadeSeconds = 0.05
  static let volumeRampSeconds = 0.01

  init(voices: VoiceTable, events: EventRouter, wallClock: WallClock, sampleRate: Int) {
    self.voices = voices
    self.events = events
    self.wallClock = wallClock
    self.sampleRate = sampleRate
  }

  /// The config's tables (a reload keeps runtime volume and mute changes of groups that still exist).
  func configure(groups: [String: GroupSettings]?, clients: [String: ClientSettings]?, quietHours: QuietHours?) {
    self.groups = groups ?? [:]
    self.clients = clients ?? [:]
    self.quietHours = quietHours
    let kept = { (name: String) in self.groups[name] != nil || CueRule.builtInGroups.contains(name) }
    volumes = volumes.filter { kept($0.key) }
    mutes = mutes.filter { kept($0.key) }
    checkQuietHours()
    for name in groupNames { apply(name, rampSeconds: Self.volumeRampSeconds) }
  }

  func settings(_ group: String) -> GroupSettings { groups[group] ?? GroupSettings() }

  /// The group whose `roles` list `role`, if one does.
  func group(forRole role: String) -> String? {
    groups.first { $0.value.roles.contains(role) }?.key
  }
  func volume(_ group: String) -> Double { volumes[group] ?? settings(group).volume }
  func isMuted(_ group: String) -> Bool { mutes[group] ?? settings(group).muted }

  /// What a voice of `group` is multiplied by now: volume, mute, ducking.
  func factor(_ group: String) -> Float {
    isMuted(group) ? 0 : Float(volume(group) * (ducked[group] ?? 1))
  }

  // MARK: - Who may sound

  /// The lowest level at which a cue sounds for `client` (its hello name, if any).
  func lowestLevel(important: Bool, group: String, client: String?) -> SoundLevel {
    if important && (client.flatMap { clients[$0] }?.breaksSilence ?? false) { return .silent }
    if important || settings(group).atQuiet { return .quiet }
    return .full
  }

  /// The level a client's plays are held to: the level in force, or its ceiling when lower.
  func ceiling(for client: String?) -> SoundLevel { client.flatMap { clients[$0] }?.ceiling ?? .full }

  /// The level's rule, the one both a play starting (`silence`) and a level change (`setLevel`, for
  /// the voices sounding) ask: a play that may sound down to `lowest`, for a client held to
  /// `ceiling`, is silent at `level` when the lower of the two is below `lowest`.
  static func silences(_ level: SoundLevel, lowest: SoundLevel, ceiling: SoundLevel) -> Bool {
    min(level, ceiling) < lowest
  }

  /// Why a play in `group` that may sound down to `lowest` is silent now for a client held to
  /// `ceiling`, if it is. The `system` group's mute is the system-sound switch: its plays say `muted`.
  func silence(group: String, lowest: SoundLevel, ceiling: SoundLevel) -> SilenceReason? {
    if Self.silences(level, lowest: lowest, ceiling: ceiling) { return .level }
    if isMuted(group) { return group == CueRule.systemGroup ? .muted : .groupMuted }
    return nil
  }

  // MARK: - Changes

  /// `level`: sets the level; what it no longer allows fades out (finished `level`); a `level`
  /// event tells subscribers.
  func setLevel(_ new: SoundLevel, by: String) {
    let previous = level
    setBy = by
    guard new != previous else { return }
    level = new
    let fade = Int(Self.levelFadeSeconds * Double(sampleRate))
    let tooLoud = voices.sounding { Self.silences(new, lowest: $0.lowestLevel, ceiling: $0.ceiling) }
    for id in tooLoud { voices.stop(id, fadeFrames: fade, reason: .level) }
    events.emit(.level(Event.LevelChange(level: new, previous: previous, setBy: by)))
  }

  /// `group`: a group's volume and mute; its voices follow over a short ramp.
  func set(_ group: String, volume: Double?, muted: Bool?) {
    if let volume { volumes[group] = volume }
    if let muted { mutes[group] = muted }
    apply(group, rampSeconds: Self.volumeRampSeconds)
  }

  /// Every group: `default`, `system` and those the config names, sorted.
  var groupNames: [String] { Set(groups.keys).union([CueRule.defaultGroup, CueRule.systemGroup]).sorted() }

  /// The groups, for the `group` reply: `name`'s, or every one.
  func reply(_ name: String?) -> GroupReply {
    let names = name.map { [$0] } ?? groupNames
    return GroupReply(groups: names.map { n in
      GroupReply.Group(name: n, volume: volume(n), muted: isMuted(n), ducked: ducked[n] ?? 1, atQuiet: settings(n).atQuiet)
    })
  }

  /// A voice started: a ducking group's first voice lowers its target over the attack.
  func voiceStarted(_ id: VoiceID, group: String) {
    guard let duck = settings(group).duck else { return }
    let wasQuiet = duckerVoices[group, default: []].isEmpty
    duckerVoices[group, default: []].insert(id)
    if wasQuiet {
      ducked[duck.group] = (ducked[duck.group] ?? 1) * pow(10, duck.byDecibels / 20)
      apply(duck.group, rampSeconds: duck.attack)
    }
  }

  /// A voice ended: a ducking group's last voice lets its target rise again over the release.
  func voiceEnded(_ id: VoiceID, group: String) {
    guard let duck = settings(group).duck, duckerVoices[group]?.remove(id) != nil, duckerVoices[group]?.isEmpty == true else { return }
    let factor = (ducked[duck.group] ?? 1) / pow(10, duck.byDecibels / 20)
    ducked[duck.group] = abs(factor - 1) < 1e-9 ? nil : factor
    apply(duck.group, rampSeconds: duck.release)
  }

  /// Every sounding voice of `group` goes to its gain with the group's factor now, over `rampSeconds`
  /// (each from its own source gain: a player's volume stays what it set).
  private func apply(_ group: String, rampSeconds: Double) {
    voices.refreshGains(rampFrames: max(1, Int(rampSeconds * Double(sampleRate)))) { $0.group == group }
  }

  // MARK: - Quiet hours

  /// Enters or leaves quiet hours when the time of day says so; call at start, on reload and at each boundary.
  func checkQuietHours() {
    guard let hours = quietHours else {
      if inQuietHours {
        inQuietHours = false
        setLevel(levelBeforeQuietHours, by: "quiet-hours")
      }
      return
    }
    let minute = Int(wallClock.secondsOfDay() / 60)
    let inside = hours.contains(minute)
    guard inside != inQuietHours else { return }
    inQuietHours = inside
    if inside {
      levelBeforeQuietHours = level
      setLevel(min(level, hours.level), by: "quiet-hours")
    } else {
      setLevel(levelBeforeQuietHours, by: "quiet-hours")
    }
  }

  /// Seconds until the next quiet-hours boundary (nil: no quiet hours), for the loop's timeout.
  func secondsToNextBoundary() -> Double? {
    guard let hours = quietHours else { return nil }
    let now = wallClock.secondsOfDay()
    func until(_ minute: Int) -> Double {
      let t = Double(minute * 60) - now
      return t > 0 ? t : t + 86400
    }
    return min(until(hours.from), until(hours.to))
  }

  var levelReply: LevelReply {
    LevelReply(level: level, setBy: setBy, quietHours: quietHours?.text, inQuietHours: inQuietHours)
  }
}

extension GroupsAndLevels: OpHandler {
  /// `system`, `level` and `group`.
  func register(_ routes: inout Routes) {
    routes.on(SystemRequest.self) { [unowned self] request, _ in
      // The system-sound switch is the `system` group's volume and mute.
      set(CueRule.systemGroup, volume: request.volume, muted: request.muted)
      return SystemReply(volume: volume(CueRule.systemGroup), muted: isMuted(CueRule.systemGroup))
    }
    routes.on(LevelRequest.self) { [unowned self] request, _ in
      if let level = request.level { setLevel(level, by: "client") }
      return levelReply
    }
    routes.on(GroupRequest.self) { [unowned self] request, _ throws(ProtocolError) in
      if let name = request.name {
        guard groupNames.contains(name) else {
          let known = ([CueRule.defaultGroup] + groupNames.filter { $0 != CueRule.defaultGroup }).joined(separator: ", ")
          throw ProtocolError(.unknownGroup, "no group named '\(name.prefix(100))'; the groups are \(known) ([groups.NAME] in the config)")
        }
        set(name, volume: request.volume, muted: request.muted)
      }
      return reply(request.name)
    }
  }
}
