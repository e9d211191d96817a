import CueCore
import CueProtocol

/// What a voice belongs to: a one-shot `play` (or a paging cue), a player, or a system sound —
/// as its events say it.
typealias VoiceOrigin = Event.Origin

/// A voice as the control side keeps it, from its start until the engine reports its end.
struct LiveVoice {
  /// Held here so the decoded samples outlive the voice on the audio thread.
  let cue: Cue
  /// The connection that started it (0: none, as for paging).
  let owner: UInt64
  /// The owner asked for its `finished` event whatever it subscribed to.
  let notify: Bool
  /// When it was started (daemon clock, ns): a device loss drops one-shots that would play too late.
  let startedAt: UInt64
  let loops: LoopCount
  let origin: VoiceOrigin
  /// A stop has been sent; its end is on its way.
  var stopping = false
  /// When the request that started it arrived (ns), for the trigger latency; 0 unknown.
  let requestArrival: UInt64
  /// The keys of the repeat rules it started under (the cue played, a paging binding), by which
  /// `VoiceGate` counts instances; none for players.
  let repeatKeys: [RepeatKey]
  /// Its cue's priority: at the voice limit only a voice of at most the new one's priority is taken.
  let priority: Int
  /// Its group (bus), and its source gain: the play's own volume and pan (and spread), before
  /// loudness normalisation and the group's factor. Every change recomputes the chain from it.
  let group: String
  var sourceGain: StereoGain
  /// The lowest level at which it may sound, and its client's ceiling: a level change below either fades it out.
  let lowestLevel: SoundLevel
  let ceiling: SoundLevel
}

/// What to start: a cue with its gain, loops and position, and whose it is.
struct VoiceRequest {
  var cue: Cue
  /// The source gain (volume, pan, spread); the table applies loudness and the group.
  var gain: StereoGain
  var loops: LoopCount
  var origin: VoiceOrigin = .oneShot
  var owner: UInt64 = 0
  var notify = false
  /// The cue frame to start from.
  var startPosition = 0
  /// The mixer frame to start on (0: the next period).
  var startAtFrame: UInt64 = 0
  /// A voice this one takes the place of when its first frame sounds (a scheduled page sound past
  /// `max-page-voices`): it fades out over the stop fade then, not before.
  var replaces: VoiceID? = nil
  var rate = 1.0
  var requestArrival: UInt64 = 0
  var repeatKeys: [RepeatKey] = []
  var priority = CueRule.defaultPriority
  var group = CueRule.defaultGroup
  var lowestLevel = SoundLevel.full
  var ceiling = SoundLevel.full
}

/// Every voice the control side has started and not yet seen end: the only writer of engine voice
/// commands (start, stop, gain, rate, loops, seek). Plays reach it through `VoiceGate`.
///
/// It owns the voice ids (shared with players and sounds), the voice limit and stealing (the
/// oldest sounding voice makes room, fading), the count of plays, the gain chain (a voice's source
/// gain × loudness normalisation × its group's factor, recomputed on every change), and the rule
/// that the command ring is checked before anything changes: a request either happens whole or is
/// refused `busy`.
final class VoiceTable {
  private(set) var voices: [VoiceID: LiveVoice] = [:]
  private let engine: EngineControl
  private let device: DeviceController
  let ids: IDAllocator
  let clock: DaemonClock
  /// Voices sounding at once (`--max-voices`); reloadable.
  var limit: Int
  /// The fade of a stop or a steal, in frames.
  let stopFadeFrames: Int
  /// `loudness-normalize`: every start's gain goes through it.
  let loudness: LoudnessNormalizer
  private(set) var playsStarted: UInt64 = 0
  /// Told when a voice starts ending by the control side's word (stop, steal, late drop), so its
  /// owner's state follows at once rather than when the end arrives.
  var onStopping: (VoiceID, LiveVoice) -> Void = { _, _ in }
  /// Told when a voice is queued to start (ducking counts its group's voices).
  var onStart: (VoiceID, LiveVoice) -> Void = { _, _ in }
  /// The factor a voice of a group gets now (volume, mute, ducking).
  var groupFactor: (String) -> Float = { _ in 1 }

  /// Commands the engine's ring can take now: a change that needs several checks this first.
  var commandRoom: Int { engine.commandRoom }

  /// The gain chain: what a voice of `cue` in `group` with `source` gain sounds at now.
  /// How `voice` sounds now, for the `voices` reply: its chain's response to a centred unit source.
  func mix(of voice: LiveVoice, client: String?) -> VoiceMix {
    let g = chainGain(voice.sourceGain, cue: voice.cue, group: voice.group)
    return VoiceMix(group: voice.group, client: client, left: Double(abs(g.ll + g.lr)), right: Double(abs(g.rl + g.rr)))
  }

  func chainGain(_ source: StereoGain, cue: Cue, group: String) -> StereoGain {
    loudness.gain(source, for: cue).scaled(by: groupFactor(group))
  }

  init(
    engine: EngineControl, device: DeviceController, ids: IDAllocator, clock: DaemonClock, limit: Int, stopFadeFrames: Int,
    loudness: LoudnessNormalizer
  ) {
    self.engine = engine
    self.device = device
    self.ids = ids
    self.clock = clock
    self.limit = limit
    self.stopFadeFrames = stopFadeFrames
    self.loudness = loudness
  }

  static let busy = ProtocolError(.busy, "the audio thread's queue is full; try again in a few milliseconds")

  subscript(id: VoiceID) -> LiveVoice? { voices[id] }

  /// The mixer frame a start queued now begins at: where starts scheduled after it count from.
  func nextMixFrame() -> UInt64 { device.mixFrame() }

  /// Voices not on their way out.
  var soundingCount: Int { voices.values.reduce(0) { $1.stopping ? $0 : $0 + 1 } }

  /// True while `id` plays and no stop has been sent.
  func isSounding(_ id: VoiceID) -> Bool { voices[id].map { !$0.stopping } ?? false }

  /// The voices not on their way out that `include` accepts, oldest first.
  func sounding(where include: (LiveVoice) -> Bool = { _ in true }) -> [VoiceID] {
    voices.filter { !$0.value.stopping && include($0.value) }.keys.sorted { $0.rawValue < $1.rawValue }
  }

  /// Where a new voice finds room under the voice limit.
  enum Room: Equatable {
    /// Below the limit: nothing to take.
    case free
    /// At the limit: this voice (the oldest of the lowest priority not above the new one's) fades out.
    case taking(VoiceID)
    /// At the limit, and every voice plays something of a higher priority.
    case none
  }

  /// The room for a new voice of `priority` once `freeing` (voices on their way out) have gone.
  func room(priority: Int, excluding freeing: Set<VoiceID> = []) -> Room {
    guard soundingCount - freeing.count >= limit else { return .free }
    var best: (id: VoiceID, priority: Int)? = nil
    for (id, voice) in voices where !voice.stopping && !freeing.contains(id) && voice.priority <= priority {
      if let current = best, current.priority < voice.priority || (current.priority == voice.priority && current.id.rawValue < id.rawValue) {
        continue
      }
      best = (id, voice.priority)
    }
    return best.map { .taking($0.id) } ?? .none
  }

  /// Starts a voice: opens the device if it is closed (handing it to the audio thread after the
  /// start, so the cue is the device's first frame), steals the oldest voice past the limit,
  /// takes an id and queues the start. Returns the new voice and the stolen one. The request's
  /// gain is scaled by `loudness` (the cue normalised to the target, when that is on).
  ///
  /// `deadline` (ns, daemon clock): refused when opening the device took it past that.
  /// `replacing`: voices to stop (fading) in the same step, once the start is sure to be queued.
  func start(
    _ request: VoiceRequest, deadline: UInt64? = nil, replacing: [(VoiceID, VoiceEndReason)] = []
  ) throws(ProtocolError) -> (id: VoiceID, stolen: VoiceID?) {
    let attachPending = try device.prepare()
    defer { if attachPending { device.attach() } }
    if let deadline, clock.nanoseconds() > deadline { throw ProtocolError(.busy, "the cue could not start before its deadline") }
    let replaced = replacing.filter { isSounding($0.0) }
    // A voice the new one takes the place of at once (`VoiceRequest.replaces`) makes room too.
    let immediateReplacement = request.startAtFrame == 0 ? request.replaces.flatMap { isSounding($0) ? $0 : nil } : nil
    // Only at the limit is a voice to take looked for: the oldest of the lowest priority.
    var victim: VoiceID? = nil
    switch room(priority: request.priority, excluding: Set(replaced.map(\.0) + (immediateReplacement.map { [$0] } ?? []))) {
    case .free: break
    case .taking(let id): victim = id
    case .none:
      throw ProtocolError(.busy, "all \(limit) voices play cues of a higher priority than '\(request.cue.name)' (\(request.priority)); try again when one ends")
    }
    guard engine.commandRoom >= replaced.count + (victim == nil ? 1 : 2) else { throw Self.busy }
    for (id, reason) in replaced { stopQueued(id, fadeFrames: stopFadeFrames, reason: reason) }
    if let victim { stopQueued(victim, fadeFrames: stopFadeFrames, reason: .stolen) }
    let id = VoiceID(ids.make())
    let start = VoiceStart(
      id: id, samples: request.cue.decoded.buffer.samples, gain: chainGain(request.gain, cue: request.cue, group: request.group),
      loops: request.loops,
      startPosition: request.startPosition, startAtFrame: request.startAtFrame, rate: request.rate,
      replaces: request.replaces ?? VoiceID(0), replaceFadeFrames: stopFadeFrames)
    send(.start(start))
    if let immediateReplacement {
      // The engine ends it as this one starts (VoiceStart.replaces): it is on its way out now.
      voices[immediateReplacement]?.stopping = true
      if let voice = voices[immediateReplacement] { onStopping(immediateReplacement, voice) }
    }
    playsStarted += 1
    voices[id] = LiveVoice(
      cue: request.cue, owner: request.owner, notify: request.notify, startedAt: clock.nanoseconds(), loops: request.loops,
      origin: request.origin, requestArrival: request.requestArrival, repeatKeys: request.repeatKeys, priority: request.priority,
      group: request.group, sourceGain: request.gain, lowestLevel: request.lowestLevel, ceiling: request.ceiling)
    onStart(id, voices[id]!)
    return (id, victim)
  }

  /// Stops one voice (fading over `fadeFrames`, the stop fade when nil). True when it is on its
  /// way out (or already was); false when the command ring is full and nothing changed.
  @discardableResult
  func stop(_ id: VoiceID, fadeFrames: Int? = nil, reason: VoiceEndReason) -> Bool {
    guard let voice = voices[id] else { return false }
    if voice.stopping { return true }
    guard engine.commandRoom >= 1 else { return false }
    stopQueued(id, fadeFrames: fadeFrames ?? stopFadeFrames, reason: reason)
    return true
  }

  /// Stops every voice in `ids` or, when the ring cannot take them all, none (`busy`). Returns how many stopped.
  func stop(_ ids: [VoiceID], fadeFrames: Int? = nil, reason: VoiceEndReason) throws(ProtocolError) -> Int {
    let targets = ids.filter { isSounding($0) }
    guard engine.commandRoom >= targets.count else {
      throw ProtocolError(.busy, "the audio thread's queue is full (\(targets.count) voices to stop); nothing was stopped, try again")
    }
    for id in targets { stopQueued(id, fadeFrames: fadeFrames ?? stopFadeFrames, reason: reason) }
    return targets.count
  }

  private func stopQueued(_ id: VoiceID, fadeFrames: Int, reason: VoiceEndReason) {
    send(.stop(id, fadeFrames: fadeFrames, reason: reason))
    voices[id]?.stopping = true
    if let voice = voices[id] { onStopping(id, voice) }
  }

  /// Gives a sounding voice a new source gain (a player's volume or pan), reached over `rampFrames`
  /// through the whole chain. The caller made room in the command ring (`commandRoom`).
  func setSourceGain(_ id: VoiceID, _ gain: StereoGain, rampFrames: Int) {
    guard isSounding(id), let voice = voices[id] else { return }
    voices[id]?.sourceGain = gain
    send(.setGain(id, chainGain(gain, cue: voice.cue, group: voice.group), rampFrames: rampFrames))
  }

  /// Recomputes the chain of every sounding voice `include` accepts (a group's volume, mute or
  /// ducking changed; normalisation was turned on or off), reached over `rampFrames`. Best effort
  /// when the command ring is full: the next change, or the voice's end, settles it.
  func refreshGains(rampFrames: Int, where include: (LiveVoice) -> Bool = { _ in true }) {
    for id in sounding(where: include) {
      guard let voice = voices[id], engine.commandRoom >= 1 else { return }
      send(.setGain(id, chainGain(voice.sourceGain, cue: voice.cue, group: voice.group), rampFrames: rampFrames))
    }
  }

  /// A sounding voice's rate, loops left, or position (a player's settings). The caller made room.
  func setRate(_ id: VoiceID, _ rate: Double) { if isSounding(id) { send(.setRate(id, rate: rate)) } }
  func setLoops(_ id: VoiceID, loopsLeft: Int) { if isSounding(id) { send(.setLoops(id, loopsLeft: loopsLeft)) } }
  func seek(_ id: VoiceID, to position: Int) { if isSounding(id) { send(.seek(id, position: position)) } }

  /// Queues a command the caller made room for.
  private func send(_ command: EngineCommand) {
    let queued = engine.send(command)
    precondition(queued, "the command ring had room a moment ago")
  }

  /// The engine reported `id`'s first frame: the voice, for its event and the trigger latency.
  func started(_ id: VoiceID) -> LiveVoice? { voices[id] }

  /// The engine reported `id`'s end: forgets it and returns what it was.
  func ended(_ id: VoiceID) -> LiveVoice? { voices.removeValue(forKey: id) }

  /// After a device loss, one-shots started longer than `lateNanoseconds` ago are dropped (reason
  /// `device-lost`) rather than played late; loops carry on.
  func dropLate(olderThan lateNanoseconds: UInt64) {
    let now = clock.nanoseconds()
    for id in sounding(where: { $0.loops != .forever && now - $0.startedAt > lateNanoseconds }) {
      stop(id, fadeFrames: 0, reason: .deviceLost)
    }
  }

  /// `stop`: the voices `target` names, fading over `fadeFrames` (the stop fade when nil); how many.
  func stop(_ target: StopTarget, fadeFrames: Int?, catalog: CueCatalog) throws(ProtocolError) -> Int {
    switch target {
    case .voice(let raw):
      guard isSounding(VoiceID(raw)) else {
        throw ProtocolError(.unknownVoice, "no voice \(raw) is playing (it may have finished); `cuectl status` counts the voices playing")
      }
      return try stop([VoiceID(raw)], fadeFrames: fadeFrames, reason: .stopped)
    case .cue(let name):
      guard catalog[name] != nil || voices.values.contains(where: { $0.cue.name == name }) else { throw catalog.unknown(name) }
      return try stop(sounding { $0.cue.name == name }, fadeFrames: fadeFrames, reason: .stopped)
    case .all:
      return try stop(sounding(), fadeFrames: fadeFrames, reason: .stopped)
    }
  }
}
