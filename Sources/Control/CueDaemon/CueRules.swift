import CueCore
import CueProtocol

#if canImport(Glibc)
import Glibc
#endif

/// What happens to a play of a cue that already sounds `max-instances` times.
public enum PastMaximum: String, Sendable, Equatable, CaseIterable {
  /// The oldest instance fades out (its `finished` says `stolen`) and the new one starts.
  case steal
  /// The new play is silent (`cap`).
  case refuse
}

/// One member of a variation set: a cue (`pico`, or a folder's member `page-next/soft`) and its weight.
public struct Variation: Sendable, Equatable {
  public var cue: String
  public var weight: Double

  public init(cue: String, weight: Double = 1) {
    self.cue = cue
    self.weight = weight
  }
}

/// `[cues.NAME]`: how a cue plays, whoever plays it (`play`, a paging binding, a system sound).
public struct CueRule: Sendable, Equatable {
  /// The set a play picks from; empty: the cue's own files (a folder's members, or its one file).
  public var variations: [Variation] = []
  /// Each play's volume moves by a random amount within ± this many dB.
  public var volumeSpread = 0.0
  /// Each play's rate (and so pitch) moves by a random amount within ± this many semitones.
  public var rateSpread = 0.0
  /// A play within this many seconds of the cue's last start is silent (`cooldown`).
  public var cooldown = 0.0
  /// The most instances sounding at once (0: no cap), and what a play past it does.
  public var maxInstances = 0
  public var pastMaximum = PastMaximum.steal
  /// 0…100: at the voice limit, a play takes the voice of the oldest lowest-priority sound of at
  /// most its own priority, and is silent (`cap`) when every voice plays something higher.
  public var priority = CueRule.defaultPriority
  /// Nothing of this cue plays (`muted`).
  public var muted = false
  /// The group (bus) it plays in: its volume, mute, ducking and whether it plays at `quiet`.
  public var group = CueRule.defaultGroup
  /// It plays at the level `quiet`, and at `silent` for clients allowed to break silence.
  public var important = false
  /// Where it was set (for messages), 0 when built in.
  public var line = 0

  public static let defaultPriority = 50
  public static let defaultGroup = "default"
  /// The group system sounds play in when their cue's table names none: `cuectl system` is its
  /// volume and mute.
  public static let systemGroup = "system"
  /// The groups that exist without a `[groups.NAME]` table.
  public static let builtInGroups: Set<String> = [defaultGroup, systemGroup]

  public init() {}
}

extension ConfigFile {
  /// The keys a `[cues.NAME]` table takes.
  static let cueRuleKeys = [
    "variations", "volume-spread", "rate-spread", "cooldown", "max-instances", "past-max", "priority", "muted", "group", "important",
  ]

  /// Reads the `[cues.NAME]` tables.
  static func interpretCueRules(_ value: JSONValue, path: String, locator: KeyLocator) throws(ConfigError) -> [String: CueRule] {
    try namedTables(value, kind: "cues", path: path, locator: locator, keys: cueRuleKeys.joined(separator: ", ")) {
      (name, members, fail) throws(ConfigError) -> CueRule in
      var rule = CueRule()
      rule.line = locator.line(of: "cues." + name, in: "cues." + name)
      for (key, setting) in members {
        switch key {
        case "variations": rule.variations = try variations(setting, fail: { fail(key, $0) })
        case "volume-spread": rule.volumeSpread = try unit(setting, key, 0...24, fail, of: "dB")
        case "rate-spread": rule.rateSpread = try unit(setting, key, 0...12, fail, of: "semitones")
        case "cooldown": rule.cooldown = try unit(setting, key, 0...3600, fail, of: "seconds")
        case "max-instances":
          guard let n = setting.intValue, (0...256).contains(n) else { throw fail(key, "max-instances must be a whole number from 0 (no cap) to 256") }
          rule.maxInstances = n
        case "past-max":
          guard let raw = setting.stringValue, let past = PastMaximum(rawValue: raw) else {
            throw fail(key, "past-max must be \"steal\" (the oldest instance fades out) or \"refuse\" (the new play is silent)")
          }
          rule.pastMaximum = past
        case "priority":
          guard let n = setting.intValue, (0...100).contains(n) else { throw fail(key, "priority must be a whole number from 0 to 100 (default 50)") }
          rule.priority = n
        case "muted": rule.muted = try flag(setting, key, fail)
        case "group":
          guard let group = setting.stringValue, !group.isEmpty else { throw fail(key, "group must be the name of a [groups.NAME] table") }
          rule.group = group
        case "important": rule.important = try flag(setting, key, fail)
        default:
          throw fail(key, "unknown key \(key); a cue's table takes \(cueRuleKeys.joined(separator: ", "))")
        }
      }
      return rule
    }
  }

  /// `variations = ["a", "b", { cue = "c", weight = 2 }]`.
  private static func variations(_ value: JSONValue, fail: (String) -> ConfigError) throws(ConfigError) -> [Variation] {
    let usage = "variations must be a list of cue names or tables like { cue = \"page-next/soft\", weight = 2 }"
    guard let items = value.arrayValue, !items.isEmpty, items.count <= 256 else { throw fail(usage + " (1 to 256 of them)") }
    var result: [Variation] = []
    for item in items {
      if let name = item.stringValue, !name.isEmpty {
        result.append(Variation(cue: name))
        continue
      }
      guard let fields = item.objectValue, let name = item["cue"]?.stringValue, !name.isEmpty else { throw fail(usage) }
      var variation = Variation(cue: name)
      for (field, setting) in fields {
        switch field {
        case "cue": break
        case "weight":
          guard let w = setting.doubleValue, w.isFinite, w > 0, w <= 1000 else { throw fail("a variation's weight must be a number above 0, at most 1000") }
          variation.weight = w
        default: throw fail("unknown key \(field) in a variation; it takes cue and weight")
        }
      }
      result.append(variation)
    }
    return result
  }
}

/// Per-cue rules for every play: the variation picked, the random spreads, the cooldown, the cap
/// on instances, priority, and the tally of silent plays by reason.
///
/// Owned by the control thread. `choose` picks what to start; `VoiceGate` applies the rules
/// (muted, cooldown, max-instances, priority) with the level and groups; `started` records a start
/// for the cooldown.
final class CueRules {
  private(set) var rules: [String: CueRule] = [:]
  /// When each cue last started (daemon clock, ns).
  private var lastStart: [String: UInt64] = [:]
  /// The member each set played last: never twice in a row.
  private var lastMember: [String: String] = [:]
  private var random: UInt64
  private(set) var silenced = StatusReply.SilencedCounts()

  init(seed: UInt64) {
    random = seed | 1
  }

  func setRules(_ rules: [String: CueRule]?) {
    self.rules = rules ?? [:]
  }

  func rule(for name: String) -> CueRule { rules[name] ?? CueRule() }

  /// Counts a silent play.
  func count(_ reason: SilenceReason) { silenced[reason] += 1 }

  /// A uniform random number in -1...1 (xorshift64: cheap, and no allocation).
  func nextUnit() -> Double {
    random ^= random << 13
    random ^= random >> 7
    random ^= random << 17
    return Double(random >> 11) / Double(UInt64(1) << 53) * 2 - 1
  }

  /// What one play of `name` starts: a member of its set (weighted, never the one played last
  /// when there are two or more), with the volume factor and rate its spreads draw.
  struct Choice {
    var cue: Cue
    /// The member's name when `name` is a set of two or more.
    var variation: String?
    var gainFactor: Float
    var rateFactor: Double
    var rule: CueRule
  }

  func choose(_ name: String, catalog: CueCatalog) throws(ProtocolError) -> Choice {
    let rule = self.rule(for: name)
    let members = catalog.members(of: name)
    guard !members.isEmpty else { throw catalog.unknown(name) }
    var pick = members[0]
    if members.count > 1 {
      let candidates = members.filter { $0.name != lastMember[name] }
      let total = candidates.reduce(0) { $0 + $1.weight }
      var point = (nextUnit() + 1) / 2 * total
      pick = candidates.last!
      for candidate in candidates {
        if point < candidate.weight {
          pick = candidate
          break
        }
        point -= candidate.weight
      }
      lastMember[name] = pick.name
    }
    var gain: Float = 1
    if rule.volumeSpread > 0 { gain = Float(pow(10, rule.volumeSpread * nextUnit() / 20)) }
    var rate = 1.0
    if rule.rateSpread > 0 { rate = exp2(rule.rateSpread * nextUnit() / 12) }
    return Choice(cue: pick.cue, variation: members.count > 1 ? pick.name : nil, gainFactor: gain, rateFactor: rate, rule: rule)
  }

  /// A play of `name` started now: its cooldown runs from here.
  func started(_ name: String, now: UInt64) {
    lastStart[name] = now
  }

  /// When a play of `name` last started (daemon clock, ns), for its cooldown.
  func lastStart(_ name: String) -> UInt64? { lastStart[name] }
}
