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

  /// The repeat rule of plays of this cue under the name `name` (the name played: a set's name for a member).
  func repeatRule(playedAs name: String) -> RepeatRule {
    RepeatRule(key: .cue(name), cooldown: cooldown, maxInstances: maxInstances, pastMaximum: pastMaximum == .steal ? .steal : .refuse)
  }
}

/// What a repeat rule counts plays of: a cue by the name played, or a paging binding of a carousel.
/// Two spaces of names, so a cue named like a binding (`default/page-next`, a folder's member)
/// shares no cooldown or instances with it.
enum RepeatKey: Hashable {
  case cue(String)
  case binding(carousel: String, binding: String)
}

/// One rule on repeats of one thing, whoever plays it: how soon a play may follow the last start,
/// and how many voices may sound at once. A cue's `[cues.NAME]` table makes one (cooldown,
/// `max-instances`, `past-max`), a paging binding another (`min-interval`, its `retrigger` and
/// `max-voices`: `PagingBinding.repeatRule`); `VoiceGate` applies each rule a play carries.
struct RepeatRule: Equatable {
  /// What a play past `maxInstances` does.
  enum PastMaximum: Equatable {
    /// The oldest instances fade out (`stolen`), as many as make room for the new one.
    case steal
    /// The new play is silent (`cap`).
    case refuse
    /// Every instance fades out (`stopped`), and the new one starts.
    case restart
  }

  var key: RepeatKey
  /// A play within this many seconds of the key's last start is silent (`cooldown`); 0: none.
  var cooldown = 0.0
  /// The most voices counted under the key at once; 0: no cap.
  var maxInstances = 0
  var pastMaximum = PastMaximum.steal
}

/// Per-cue rules for every play: the variation picked, the random spreads, the cooldown, the cap
/// on instances, priority, and the tally of silent plays by reason.
///
/// Owned by the control thread. `choose` picks what to start; `VoiceGate` applies the rules
/// (muted, priority, and the repeat rules: `CueRule.repeatRule`) with the level and groups;
/// `started` records a start under a repeat rule's key, for its cooldown.
final class CueRules {
  private(set) var rules: [String: CueRule] = [:]
  /// When each repeat rule's key last started a voice (daemon clock, ns).
  private var lastStart: [RepeatKey: UInt64] = [:]
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

  /// The repeat rule of a play of `name` (every play's but a player's).
  func repeatRule(playedAs name: String) -> RepeatRule { rule(for: name).repeatRule(playedAs: name) }

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

  /// `addedRateSpread`: semitones of rate spread drawn on top of the cue's own, by the same rule
  /// (a paging binding's `rate-spread`, `PagingBinding.rateSpreadSemitones`).
  func choose(_ name: String, catalog: CueCatalog, addedRateSpread: Double = 0) throws(ProtocolError) -> Choice {
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
    let rate = spreadRate(semitones: rule.rateSpread) * spreadRate(semitones: addedRateSpread)
    return Choice(cue: pick.cue, variation: members.count > 1 ? pick.name : nil, gainFactor: gain, rateFactor: rate, rule: rule)
  }

  /// A rate moved by a random amount within ± `semitones` (1 when 0: nothing is drawn).
  private func spreadRate(semitones: Double) -> Double {
    semitones > 0 ? exp2(semitones * nextUnit() / 12) : 1
  }

  /// A play counted under `key` started now: its cooldown runs from here.
  func started(_ key: RepeatKey, now: UInt64) {
    lastStart[key] = now
  }

  /// When a play counted under `key` last started (daemon clock, ns), for its cooldown.
  func lastStart(_ key: RepeatKey) -> UInt64? { lastStart[key] }
}
