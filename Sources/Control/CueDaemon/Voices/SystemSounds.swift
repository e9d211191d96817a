import CueDecoding
import CueCore
import CueProtocol

/// A system sound: a sound id made once, played fire-and-forget, disposed of safely.
final class SoundState {
  let id: UInt64
  let owner: UInt64
  let detached: Bool
  /// nil while a file given by path decodes (`sound.create` answers when it is done).
  var cue: Cue?
  /// Disposed: takes no more plays; freed when its last voice ends.
  var disposed = false
  /// Connections that asked for a `completion` event for every play.
  var completionClients: Set<UInt64> = []
  /// Voices of this sound still sounding.
  var liveVoices: Set<VoiceID> = []
  /// The `sound.create` reply waiting for a path to decode.
  var pendingReply: Waiter? = nil

  init(id: UInt64, owner: UInt64, detached: Bool, cue: Cue?) {
    self.id = id
    self.owner = owner
    self.detached = detached
    self.cue = cue
  }
}

/// System Sound Services: sound ids, fire-and-forget plays with a completion each, and a dispose
/// that never cuts what plays. The system-sound volume and mute switch is the `system` group's
/// (`Groups`): system sounds play in it unless their cue's table names another group.
final class SystemSounds {
  private(set) var sounds: [UInt64: SoundState] = [:]
  /// Recently disposed sound ids, for a clear error when one is played again.
  private var disposed: [UInt64] = []
  /// `--max-sounds`; reloadable.
  var maximum: Int
  private let gate: VoiceGate
  private let voices: VoiceTable
  private let catalog: CueCatalog
  private let files: PathDecoder
  private let events: EventRouter
  private let ids: IDAllocator

  init(maximum: Int, gate: VoiceGate, catalog: CueCatalog, files: PathDecoder, events: EventRouter, ids: IDAllocator) {
    self.maximum = maximum
    self.gate = gate
    self.voices = gate.voices
    self.catalog = catalog
    self.files = files
    self.events = events
    self.ids = ids
  }

  var count: Int { sounds.count }

  /// The `hello` name of a connection (by serial), for its ceiling.
  var clientName: (UInt64) -> String? = { _ in nil }

  private func sound(_ id: UInt64, allowDisposed: Bool = false) throws(ProtocolError) -> SoundState {
    if let sound = sounds[id], allowDisposed || !sound.disposed { return sound }
    if sounds[id] != nil || disposed.contains(id) {
      throw ProtocolError(.unknownSound, "system sound \(id) was disposed of; create a new one to play it again")
    }
    throw ProtocolError(.unknownSound, "no system sound \(id) (create one with sound.create)")
  }

  private func play(_ sound: SoundState, client: UInt64, arrival: UInt64) throws(ProtocolError) -> SoundPlayReply {
    guard let cue = sound.cue else {
      throw ProtocolError(.busy, "system sound \(sound.id) is still loading; play it once sound.create has answered")
    }
    var request = VoiceRequest(
      cue: cue, gain: StereoGain.voice(volume: 1, pan: 0, sourceIsMono: cue.isMono), loops: .count(0), origin: .sound(sound.id),
      owner: client)
    request.requestArrival = arrival
    let play = VoiceGate.Play(
      request: request, rule: cue.name, client: clientName(client), repeats: [gate.rules.repeatRule(playedAs: cue.name)],
      fallbackGroup: CueRule.systemGroup)
    switch try gate.start(play) {
    case .started(let id, let stole):
      sound.liveVoices.insert(id)
      return .playing(PlayReply(voice: id.rawValue, stole: stole?.rawValue))
    case .silent(let reason):
      // Like the "sound effects" switch: nothing plays, and the completion says why.
      let completion = Event.Completion(sound: sound.id, voice: nil, reason: CompletionReason(FinishReason(reason)))
      events.emit(.completion(completion), alsoTo: sound.completionClients)
      return .silent(reason)
    }
  }

  /// Stops taking plays at once; what plays finishes (or, `now`, fades out in a few milliseconds).
  /// The sound's memory goes when its last voice has ended, so disposing right after a play never cuts it.
  private func dispose(_ sound: SoundState, now: Bool) {
    sound.disposed = true
    disposed.append(sound.id)
    if disposed.count > 4096 { disposed.removeFirst(disposed.count - 4096) }
    if now {
      for voice in sound.liveVoices { voices.stop(voice, reason: .disposed) }
    }
    releaseIfDone(sound)
  }

  private func releaseIfDone(_ sound: SoundState) {
    if sound.disposed && sound.liveVoices.isEmpty && sound.pendingReply == nil { sounds[sound.id] = nil }
  }

  /// A voice of a system sound ended: the completion for that play, then perhaps the sound's release.
  func voiceEnded(_ end: VoiceEnd, voice: LiveVoice, sound soundID: UInt64) {
    guard let sound = sounds[soundID] else { return }
    sound.liveVoices.remove(end.id)
    let completion = Event.Completion(sound: soundID, voice: end.id.rawValue, reason: CompletionReason(FinishReason(end.reason)))
    events.emit(.completion(completion), alsoTo: sound.completionClients)
    events.finished(end.id, voice, reason: end.reason, alsoTo: [])
    releaseIfDone(sound)
  }

  /// A system sound's file finished decoding: answer `sound.create`. False when `token` is not a sound's.
  func decoded(token: UInt64, _ outcome: Result<Cue, DecodeError>, clientConnected: (UInt64) -> Bool) -> Bool {
    guard let sound = sounds[token] else { return false }
    guard let waiter = sound.pendingReply else { return true }
    sound.pendingReply = nil
    switch outcome {
    case .success(let cue):
      sound.cue = cue
      events.reply(to: waiter, SoundCreateReply(sound: sound.id))
      if !clientConnected(waiter.client) && !sound.detached { sounds[sound.id] = nil }
    case .failure(let error):
      sounds[sound.id] = nil
      events.fail(waiter, PathDecoder.failure(error))
    }
    return true
  }

  // MARK: - Connections

  /// True while `client` is owed something: a `sound.create` reply, or completions of sounds still playing.
  func owes(_ client: UInt64) -> Bool {
    sounds.values.contains { $0.pendingReply?.client == client || ($0.completionClients.contains(client) && !$0.liveVoices.isEmpty) }
  }

  /// A connection closed: its sounds are disposed of gently (what plays finishes), unless detached.
  func release(ownedBy client: UInt64) {
    for sound in sounds.values where sound.owner == client && !sound.detached && !sound.disposed { dispose(sound, now: false) }
    for sound in sounds.values { sound.completionClients.remove(client) }
  }
}

extension SystemSounds: OpHandler {
  /// The `sound.*` ops; `sound.create` of a path is answered once the file is decoded.
  func register(_ routes: inout Routes) {
    routes.on(SoundCreateRequest.self) { [unowned self] request, context throws(ProtocolError) in
      try create(request.source, detached: request.detached, waiter: context.waiter)
    }
    routes.on(SoundPlayRequest.self) { [unowned self] request, context throws(ProtocolError) in
      try play(try sound(request.sound), client: context.waiter.client, arrival: context.arrival)
    }
    routes.on(SoundCompletionRequest.self) { [unowned self] request, context throws(ProtocolError) in
      let sound = try sound(request.sound, allowDisposed: true)
      if request.enabled { sound.completionClients.insert(context.waiter.client) } else { sound.completionClients.remove(context.waiter.client) }
      return SoundCompletionReply(sound: request.sound, completion: request.enabled)
    }
    routes.on(SoundDisposeRequest.self) { [unowned self] request, _ throws(ProtocolError) in
      let sound = try sound(request.sound)
      dispose(sound, now: request.now)
      return SoundDisposeReply(sound: request.sound, playing: sound.liveVoices.count)
    }
  }

  private func create(_ source: SoundSource, detached: Bool, waiter: Waiter) throws(ProtocolError) -> SoundCreateReply? {
    guard sounds.count < maximum else {
      throw ProtocolError(.limitReached, "cued already has \(maximum) system sounds (--max-sounds); dispose of some first")
    }
    switch source {
    case .cue(let name):
      let sound = SoundState(id: ids.make(), owner: waiter.client, detached: detached, cue: try catalog.cue(named: name))
      sounds[sound.id] = sound
      return SoundCreateReply(sound: sound.id)
    case .path(let requested):
      let path = try files.resolve(requested)
      let sound = SoundState(id: ids.make(), owner: waiter.client, detached: detached, cue: nil)
      sounds[sound.id] = sound
      sound.pendingReply = waiter
      files.decode(path: path, token: sound.id)
      return nil  // answered when the file is decoded
    }
  }
}
