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
/// `at-quiet`, `breaks-silence`); its group's mute; for fire-and-forget plays the repeat rules
/// (cooldown, `max-instances`); the voice limit by priority. A play that passes starts in the
/// `VoiceTable` with its source gain, and the table's gain chain (loudness, the group's volume and
/// ducking) applies to it as to every voice. A play that does not is `silent` with the reason, and
/// counted; each origin answers it in its own reply and event, always with that reason.
final class VoiceGate {
  /// What one play asks for.
  struct Play {
    var request: VoiceRequest
    /// The `[cues.NAME]` whose rules apply: the name played (a set's name for a member), the
    /// player's or system sound's cue, the theme event.
    var rule: String
    /// The client's `hello` name: its ceiling, and whether its important cues break silence.
    var client: String?
    /// Cooldown and `max-instances` apply: true for fire-and-forget plays. A player is one
    /// instance that pauses and resumes; its plays are not repeats.
    var repeatRules = true
    /// The group when the cue's table names none (`system` for system sounds).
    var fallbackGroup = CueRule.defaultGroup
    /// What the sound is for (`play`'s `role`): when the cue's table names no group, the group
    /// whose `roles` list it plays it, before `fallbackGroup`.
    var role: String? = nil
    /// Voices to stop (fading) in the same step, once the start is sure (paging's retrigger).
    var replacing: [(VoiceID, VoiceEndReason)] = []
    /// Refused (`busy`) when opening the device took the start past this (daemon clock, ns).
    var deadline: UInt64? = nil
  }

  enum Outcome {
    /// It sounds: its voice, and the voice it took (the voice limit, or `max-instances` with steal).
    case started(VoiceID, stole: VoiceID?)
    case silent(SilenceReason)
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
    let rule = rules.rule(for: play.rule)
    var request = play.request
    request.group = rule.group != CueRule.defaultGroup ? rule.group : play.role.flatMap(groups.group(forRole:)) ?? play.fallbackGroup
    request.priority = rule.priority
    request.lowestLevel = levels.lowestLevel(important: rule.important, group: request.group, client: play.client)
    request.ceiling = levels.ceiling(for: play.client)
    request.rule = play.repeatRules ? play.rule : nil
    let now = voices.clock.nanoseconds()
    var stealing: [VoiceID] = []
    if let reason = silence(rule, request, play, now: now, stealing: &stealing) {
      rules.count(reason)
      return .silent(reason)
    }
    let started = try voices.start(request, deadline: play.deadline, replacing: stealing.map { ($0, .stolen) } + play.replacing)
    if play.repeatRules { rules.started(play.rule, now: now) }
    return .started(started.id, stole: started.stolen ?? stealing.first)
  }

  /// Why `play` may not sound now, if so; `stealing`: the instances to fade past `max-instances`.
  private func silence(
    _ rule: CueRule, _ request: VoiceRequest, _ play: Play, now: UInt64, stealing: inout [VoiceID]
  ) -> SilenceReason? {
    if rule.muted { return .muted }
    if levels.silences(lowest: request.lowestLevel, ceiling: request.ceiling) { return .level }
    if let reason = groups.muteReason(request.group) { return reason }
    if play.repeatRules {
      if rule.cooldown > 0, let last = rules.lastStart(play.rule), now &- last < UInt64(rule.cooldown * 1e9) { return .cooldown }
      if rule.maxInstances > 0 {
        let instances = voices.sounding { $0.rule == play.rule }
        if instances.count >= rule.maxInstances {
          if rule.pastMaximum == .refuse { return .cap }
          stealing = Array(instances.prefix(instances.count - rule.maxInstances + 1))
        }
      }
    }
    let freeing = Set(stealing + play.replacing.map(\.0))
    if voices.room(priority: rule.priority, excluding: freeing) == .none { return .cap }
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
    switch try start(Play(request: request, rule: rule, client: client, role: p.role)) {
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
