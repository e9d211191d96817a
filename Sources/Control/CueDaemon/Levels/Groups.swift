import CueCore
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

/// Groups (buses): the volume factor a voice of each group gets, from its volume, its mute and
/// the ducking it is under.
///
/// Group gain is applied on the control side: a voice starts at its group's factor, and a change
/// (a `group` or `system` request, a duck's attack or release) sends each voice of the group a gain
/// ramp over the change's time; the mixer ramps per sample, so the fall and rise are exact in length.
final class Groups {
  private(set) var groups: [String: GroupSettings] = [:]
  /// Runtime changes (`cuectl group`) over the config's, by group.
  private var volumes: [String: Double] = [:]
  private var mutes: [String: Bool] = [:]
  /// The ducking each group is under now (linear factor, 1: none).
  private var ducked: [String: Double] = [:]
  /// Sounding voices of each ducking group.
  private var duckerVoices: [String: Set<VoiceID>] = [:]

  private let voices: VoiceTable
  private let sampleRate: Int
  /// The ramp of a group volume change.
  static let volumeRampSeconds = 0.01

  init(voices: VoiceTable, sampleRate: Int) {
    self.voices = voices
    self.sampleRate = sampleRate
  }

  /// The config's `[groups.NAME]` tables (a reload keeps runtime volume and mute changes of groups that still exist).
  func configure(_ groups: [String: GroupSettings]?) {
    self.groups = groups ?? [:]
    let kept = { (name: String) in self.groups[name] != nil || CueRule.builtInGroups.contains(name) }
    volumes = volumes.filter { kept($0.key) }
    mutes = mutes.filter { kept($0.key) }
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

  /// Why a play in `group` is silent for its group's mute, if it is. The `system` group's mute is
  /// the system-sound switch: its plays say `muted`.
  func muteReason(_ group: String) -> SilenceReason? {
    isMuted(group) ? (group == CueRule.systemGroup ? .muted : .groupMuted) : nil
  }

  // MARK: - Changes

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
}

extension Groups: OpHandler {
  /// `system` and `group`.
  func register(_ routes: inout Routes) {
    routes.on(SystemRequest.self) { [unowned self] request, _ in
      // The system-sound switch is the `system` group's volume and mute.
      set(CueRule.systemGroup, volume: request.volume, muted: request.muted)
      return SystemReply(volume: volume(CueRule.systemGroup), muted: isMuted(CueRule.systemGroup))
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
