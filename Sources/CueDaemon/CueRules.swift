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
/// Owned by the control thread. `choose` picks what to start; `admit` applies the repeat rules
/// (its victims are started's `replacing`); `started` records the start for the cooldown.
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

  /// The repeat rules for a play of `name` now: silent (`cooldown`, `cap`, `muted`), or the
  /// instances to fade out to make room (past `max-instances` with `steal`).
  enum Admission {
    case admit(stealing: [VoiceID])
    case silent(SilenceReason)
  }

  func admit(
    _ name: String, rule: CueRule, now: UInt64, voices: VoiceTable, levels: GroupsAndLevels, client: String?
  ) -> Admission {
    if rule.muted { return .silent(.muted) }
    if let reason = levels.silence(for: rule, client: client) { return .silent(reason) }
    if rule.cooldown > 0, let last = lastStart[name], now &- last < UInt64(rule.cooldown * 1e9) { return .silent(.cooldown) }
    if rule.maxInstances > 0 {
      let instances = voices.sounding { $0.rule == name }
      if instances.count >= rule.maxInstances {
        if rule.pastMaximum == .refuse { return .silent(.cap) }
        return .admit(stealing: Array(instances.prefix(instances.count - rule.maxInstances + 1)))
      }
    }
    if voices.limitVictim(priority: rule.priority) == nil { return .silent(.cap) }
    return .admit(stealing: [])
  }

  /// A play of `name` started now: its cooldown runs from here.
  func started(_ name: String, now: UInt64) {
    lastStart[name] = now
  }
}

extension VoiceTable {
  /// Starts a one-shot voice of the cue `name` (or of a member of its set) as `play` asks, under
  /// its rules; a silent play (its rules, or the voice limit taken by higher priorities) gets a
  /// voice id, a reply that says why, and a `finished` event with that reason.
  func startOneShot(
    _ p: PlayParameters, named name: String, catalog: CueCatalog, rules: CueRules, levels: GroupsAndLevels, events: EventRouter,
    owner: UInt64, client: String?, arrival: UInt64
  ) throws(ProtocolError) -> PlayReply {
    let choice: CueRules.Choice
    do {
      choice = try rules.choose(name, catalog: catalog)
    } catch {
      rules.count(.unknown)
      throw error
    }
    let now = clock.nanoseconds()
    switch rules.admit(name, rule: choice.rule, now: now, voices: self, levels: levels, client: client) {
    case .silent(let reason):
      return silent(reason, cue: choice.cue, rules: rules, events: events, owner: owner, notify: p.notify)
    case .admit(let stealing):
      var request = VoiceRequest(
        cue: choice.cue,
        gain: StereoGain.voice(volume: p.volume, pan: p.pan, sourceIsMono: choice.cue.isMono).scaled(by: choice.gainFactor),
        loops: LoopCount(numberOfLoops: p.loops), owner: owner, notify: p.notify)
      request.rate = max(0.5, min(2, choice.rateFactor))
      request.requestArrival = arrival
      request.rule = name
      request.priority = choice.rule.priority
      request.group = choice.rule.group
      request.lowestLevel = levels.lowestLevel(important: choice.rule.important, group: choice.rule.group, client: client)
      request.ceiling = levels.ceiling(for: client)
      let started = try start(request, replacing: stealing.map { ($0, .stolen) })
      rules.started(name, now: now)
      return PlayReply(voice: started.id.rawValue, stole: started.stolen?.rawValue ?? stealing.first?.rawValue, variation: choice.variation)
    }
  }

  /// A play that does not sound: an id of its own, the count, and its `finished` (after the reply).
  func silent(_ reason: SilenceReason, cue: Cue, rules: CueRules, events: EventRouter, owner: UInt64, notify: Bool) -> PlayReply {
    rules.count(reason)
    let id = VoiceID(ids.make())
    events.emit(
      .finished(Event.Finished(voice: id.rawValue, cue: cue.name, origin: .oneShot, reason: FinishReason(reason))),
      alsoTo: notify ? [owner] : [])
    return PlayReply(voice: id.rawValue, silenced: reason)
  }
}
