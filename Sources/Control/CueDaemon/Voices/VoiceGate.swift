import CueCore
import CueProtocol

/// The one admission path for every voice, whatever asked for it: a one-shot `play`, a theme
/// event, a paging binding, a player's `play`, a system sound's `play` (as feedbackd's trigger
/// handler is for every event: the effective level first, then the rest).
///
/// A play's group is its cue's table's; without one, the group whose `roles` list the play's
/// `role` (a client's `media.role`), else the origin's (`default`, `system` for system sounds).
/// A play is checked once, in this order: the cue's `muted`; the level in force (quiet hours
/// included) against the client's ceiling and what the cue may play at (`important`, its group's
/// `at-quiet`, `breaks-silence`); its group's mute; the repeat rules it carries, each in turn (its
/// cooldown, then its instances: steal, refuse or restart); the voice limit by priority. A play
/// that passes starts in the `VoiceTable` with its source gain, and the table's gain chain
/// (loudness, the group's volume and ducking) applies to it as to every voice. A play that does not
/// is `silent` with the reason, and counted; each origin answers it in its own reply and event,
/// always with that reason.
///
/// Repeat rules (`RepeatRule`) are counted by key: a voice remembers the keys of the rules it
/// started under, a rule's instances are the sounding voices with its key, and a start is recorded
/// under each key for the cooldowns. A fire-and-forget play carries its cue's rule; a paging
/// binding's play carries the binding's and the cue's; a player's carries none (a player is one
/// instance that pauses and resumes; its plays are not repeats).
final class VoiceGate {
  /// What one play asks for.
  struct Play {
    var request: VoiceRequest
    /// The `[cues.NAME]` whose table applies (muted, group, priority, important): the name played
    /// (a set's name for a member), the player's or system sound's cue, the theme event.
    var rule: String
    /// The client's `hello` name: its ceiling, and whether its important cues break silence.
    var client: String?
    /// The repeat rules that apply, in the order they are checked; the voice counts under their keys.
    var repeats: [RepeatRule]
    /// False for the later sounds of a play already admitted (a binding's `multi-page = "each"`):
    /// they count under the rules' keys but are not checked against them, nor recorded as starts.
    var checksRepeats = true
    /// The group when the cue's table names none (`system` for system sounds).
    var fallbackGroup = CueRule.defaultGroup
    /// What the sound is for (`play`'s `role`): when the cue's table names no group, the group
    /// whose `roles` list it plays it, before `fallbackGroup`.
    var role: String? = nil
    /// Refused (`busy`) when opening the device took the start past this (daemon clock, ns).
    var deadline: UInt64? = nil
  }

  enum Outcome {
    /// It sounds: its voice, and a voice it took (the voice limit, or a repeat rule's steal).
    case started(VoiceID, stole: VoiceID?)
    case silent(SilenceReason)
  }

  /// What `admit` found.
  enum Admission {
    case admitted(Admitted)
    case silent(SilenceReason)
  }

  /// An admitted play, as `start(_:)` of it will start it.
  struct Admitted {
    /// The play, its request as it will start (its group, priority, levels and repeat keys
    /// worked out once, by `admit`); the caller may still set where it starts and what it replaces.
    var play: Play
    /// The voices its repeat rules end, which fade out as it starts (`stolen` past a steal rule's
    /// maximum, `stopped` by a restart rule), oldest first per rule; the caller may add to them.
    var stopping: [(VoiceID, VoiceEndReason)]
  }

  let voices: VoiceTable
  let rules: CueRules
  let groups: Groups
  let levels: Levels

  init(voices: VoiceTable, rules: CueRules, groups: Groups, levels: Levels) {
    self.voices = voices
    self.rules = rules
    self.groups = groups
    self.levels = levels
  }

  /// Admits `play` or says why it is silent; throws only what starting itself can (`busy`).
  func start(_ play: Play) throws(ProtocolError) -> Outcome {
    switch admit(play) {
    case .admitted(let admitted): try start(admitted)
    case .silent(let reason): .silent(reason)
    }
  }

  /// The checks of `start` up to the voice limit: the cue's table, the level, the group's mute and
  /// the repeat rules. A silent play is counted here. Nothing changes until `start(_:)` of the
  /// admitted play, so a caller may choose between the two (paging chooses its crossfade and its page cap).
  func admit(_ play: Play) -> Admission {
    let (rule, request) = prepare(play)
    var play = play
    play.request = request
    if let reason = silence(rule, request) {
      rules.count(reason)
      return .silent(reason)
    }
    var stopping: [(VoiceID, VoiceEndReason)] = []
    if play.checksRepeats {
      for repeatRule in play.repeats {
        if let reason = apply(repeatRule, stopping: &stopping) {
          rules.count(reason)
          return .silent(reason)
        }
      }
    }
    return .admitted(Admitted(play: play, stopping: stopping))
  }

  /// Starts an admitted play, stopping its `stopping` (fading, with their reasons) in the same
  /// step, unless the voice limit leaves it no room (`cap`, counted); records the start under each
  /// of its repeat rules' keys.
  func start(_ admitted: Admitted) throws(ProtocolError) -> Outcome {
    let (play, request, stopping) = (admitted.play, admitted.play.request, admitted.stopping)
    let now = voices.clock.nanoseconds()
    var freeing = Set(stopping.map(\.0))
    if request.startAtFrame == 0, let replaced = request.replaces { freeing.insert(replaced) }
    if voices.room(priority: request.priority, excluding: freeing) == .none {
      rules.count(.cap)
      return .silent(.cap)
    }
    let started = try voices.start(request, deadline: play.deadline, replacing: stopping)
    if play.checksRepeats {
      for repeatRule in play.repeats { rules.started(repeatRule.key, now: now) }
    }
    return .started(started.id, stole: started.stolen ?? stopping.first { $0.1 == .stolen }?.0)
  }

  /// The voices sounding (not on their way out) that count under `key`, oldest first.
  func instances(of key: RepeatKey) -> [VoiceID] {
    voices.sounding { $0.repeatKeys.contains(key) }
  }

  /// The voices sounding that count under any of `keys` (a carousel's page sounds), oldest first.
  func instances(ofAny keys: Set<RepeatKey>) -> [VoiceID] {
    voices.sounding { $0.repeatKeys.contains(where: keys.contains) }
  }

  /// `play`'s cue table, and its request as it will start: its group, priority, levels and keys.
  private func prepare(_ play: Play) -> (CueRule, VoiceRequest) {
    let rule = rules.rule(for: play.rule)
    var request = play.request
    request.group = rule.group != CueRule.defaultGroup ? rule.group : play.role.flatMap(groups.group(forRole:)) ?? play.fallbackGroup
    request.priority = rule.priority
    request.lowestLevel = levels.lowestLevel(important: rule.important, group: request.group, client: play.client)
    request.ceiling = levels.ceiling(for: play.client)
    request.repeatKeys = play.repeats.map(\.key)
    return (rule, request)
  }

  /// Why a play of `rule` as `request` may not sound, whatever its repeats: its cue muted, the level, its group muted.
  private func silence(_ rule: CueRule, _ request: VoiceRequest) -> SilenceReason? {
    if rule.muted { return .muted }
    if levels.silences(lowest: request.lowestLevel, ceiling: request.ceiling) { return .level }
    return groups.muteReason(request.group)
  }

  /// Checks one repeat rule: silent within its cooldown or past its maximum with `refuse`; past
  /// it with `steal` or `restart`, adds the instances to end to `stopping`. An instance an earlier
  /// rule of the play already ends no longer counts.
  private func apply(_ repeatRule: RepeatRule, stopping: inout [(VoiceID, VoiceEndReason)]) -> SilenceReason? {
    if repeatRule.cooldown > 0, let last = rules.lastStart(repeatRule.key), voices.clock.nanoseconds() &- last < UInt64(repeatRule.cooldown * 1e9) {
      return .cooldown
    }
    guard repeatRule.maxInstances > 0 else { return nil }
    let ending = Set(stopping.map(\.0))
    let instances = instances(of: repeatRule.key).filter { !ending.contains($0) }
    guard instances.count >= repeatRule.maxInstances else { return nil }
    switch repeatRule.pastMaximum {
    case .refuse: return .cap
    case .steal: stopping += instances.prefix(instances.count - repeatRule.maxInstances + 1).map { ($0, .stolen) }
    case .restart: stopping += instances.map { ($0, .stopped) }
    }
    return nil
  }
}

extension VoiceGate {
  /// `play` of the cue `name`: a member of its set with its spreads (`CueRules.choose`), then
  /// `playOneShot(_:choice:rule:…)`.
  func playOneShot(
    _ p: PlayParameters, named name: String, owner: UInt64, client: String?, arrival: UInt64, events: EventRouter, catalog: CueCatalog
  ) throws(ProtocolError) -> PlayReply {
    let choice: CueRules.Choice
    do {
      choice = try rules.choose(name, catalog: catalog)
    } catch {
      rules.count(.unknown)
      throw error
    }
    return try playOneShot(p, choice: choice, rule: name, owner: owner, client: client, arrival: arrival, events: events)
  }

  /// A one-shot voice of `choice` under the rules of `rule` (the name played, or a theme event).
  /// A silent play gets a voice id of its own, a reply that says why, and a `finished` with that
  /// reason (to its owner when `notify`).
  func playOneShot(
    _ p: PlayParameters, choice: CueRules.Choice, rule: String, file: String? = nil, owner: UInt64, client: String?, arrival: UInt64,
    events: EventRouter
  ) throws(ProtocolError) -> PlayReply {
    var request = VoiceRequest(
      cue: choice.cue,
      gain: StereoGain.voice(volume: p.volume, pan: p.pan, sourceIsMono: choice.cue.isMono).scaled(by: choice.gainFactor),
      loops: LoopCount(numberOfLoops: p.loops), owner: owner, notify: p.notify)
    request.rate = max(0.5, min(2, choice.rateFactor))
    request.requestArrival = arrival
    switch try start(Play(request: request, rule: rule, client: client, repeats: [rules.repeatRule(playedAs: rule)], role: p.role)) {
    case .started(let id, let stole):
      return PlayReply(voice: id.rawValue, stole: stole?.rawValue, file: file, variation: choice.variation)
    case .silent(let reason):
      return silentOneShot(p, cue: choice.cue.name, file: file, reason: reason, owner: owner, events: events, counted: true)
    }
  }

  /// A one-shot play that is silent for `reason` (counted unless the gate already did): a voice id
  /// of its own, a `finished` with that reason under the name `cue` (to its owner when `notify`),
  /// and the reply that says why.
  func silentOneShot(
    _ p: PlayParameters, cue: String, file: String? = nil, reason: SilenceReason, owner: UInt64, events: EventRouter, counted: Bool = false
  ) -> PlayReply {
    if !counted { rules.count(reason) }
    let id = VoiceID(voices.ids.make())
    events.emit(
      .finished(Event.Finished(voice: id.rawValue, cue: cue, origin: .oneShot, reason: FinishReason(reason))), alsoTo: p.notify ? [owner] : [])
    return PlayReply(voice: id.rawValue, file: file, silenced: reason)
  }
}
