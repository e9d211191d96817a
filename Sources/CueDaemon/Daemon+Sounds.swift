import CueAudio
import CueCore
import CuePosix
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
  var pendingReply: (client: UInt64, id: RequestID?)? = nil

  init(id: UInt64, owner: UInt64, detached: Bool, cue: Cue?) {
    self.id = id
    self.owner = owner
    self.detached = detached
    self.cue = cue
  }
}

extension Daemon {
  func performSound(_ request: SoundRequest, id requestID: RequestID?, client: ClientConnection) throws(ProtocolError) -> [(String, JSONValue)]? {
    switch request {
    case .create(let source, let detached):
      guard sounds.count < configuration.maximumSounds else {
        throw ProtocolError(.limitReached, "cued already has \(configuration.maximumSounds) system sounds (--max-sounds); dispose of some first")
      }
      switch source {
      case .cue(let name):
        guard let cue = library[name] else { throw ProtocolError(.unknownCue, "no cue named '\(name.prefix(200))'; \(cueHint())") }
        let sound = SoundState(id: nextID, owner: client.serial, detached: detached, cue: cue)
        nextID += 1
        sounds[sound.id] = sound
        return [("sound", .number(Double(sound.id)))]
      case .path(let requested):
        let path = try resolveSoundPath(requested)
        let sound = SoundState(id: nextID, owner: client.serial, detached: detached, cue: nil)
        nextID += 1
        sounds[sound.id] = sound
        sound.pendingReply = (client.serial, requestID)
        decodeInBackground(path: path, token: sound.id)
        return nil  // answered when the file is decoded
      }
    case .play(let id):
      return try playSound(try sound(id), client: client)
    case .completion(let id, let enabled):
      let sound = try sound(id, allowDisposed: true)
      if enabled { sound.completionClients.insert(client.serial) } else { sound.completionClients.remove(client.serial) }
      return [("sound", .number(Double(id))), ("completion", .bool(enabled))]
    case .dispose(let id, let now):
      let sound = try sound(id)
      disposeSound(sound, now: now)
      return [("sound", .number(Double(id))), ("playing", .number(Double(sound.liveVoices.count)))]
    }
  }

  func sound(_ id: UInt64, allowDisposed: Bool = false) throws(ProtocolError) -> SoundState {
    if let sound = sounds[id], allowDisposed || !sound.disposed { return sound }
    if sounds[id] != nil || disposedSounds.contains(id) {
      throw ProtocolError(.unknownSound, "system sound \(id) was disposed of; create a new one to play it again")
    }
    throw ProtocolError(.unknownSound, "no system sound \(id) (create one with sound.create)")
  }

  func playSound(_ sound: SoundState, client: ClientConnection) throws(ProtocolError) -> [(String, JSONValue)] {
    guard let cue = sound.cue else {
      throw ProtocolError(.busy, "system sound \(sound.id) is still loading; play it once sound.create has answered")
    }
    if systemMuted {
      // Like the "sound effects" switch: nothing plays, and the completion says so.
      emit(
        "completion", [("sound", .number(Double(sound.id))), ("played", false), ("reason", "muted")], ids: [sound.id],
        alsoTo: sound.completionClients)
      return [("muted", true)]
    }
    let attachPending = try prepareDevice()
    defer { if attachPending { attachDevice() } }
    let stolen = try makeRoomForAVoice()
    let id = VoiceID(nextID)
    let start = VoiceStart(
      id: id, samples: cue.decoded.buffer.samples,
      gain: StereoGain.voice(volume: systemVolume, pan: 0, sourceIsMono: cue.isMono), loops: .count(0))
    guard engine.send(.start(start)) else {
      throw ProtocolError(.busy, "the audio thread's queue is full; try again in a few milliseconds")
    }
    nextID += 1
    playsStarted += 1
    voices[id] = LiveVoice(
      cue: cue, owner: client.serial, notify: false, startedAt: MonotonicClock.nanoseconds(), loops: .count(0),
      origin: .sound(sound.id), requestArrival: client.lastReceived)
    sound.liveVoices.insert(id)
    var fields: [(String, JSONValue)] = [("voice", .number(Double(id.rawValue)))]
    if let stolen { fields.append(("stole", .number(Double(stolen.rawValue)))) }
    return fields
  }

  /// Stops taking plays at once; what plays finishes (or, `now`, fades out in a few milliseconds).
  /// The sound's memory goes when its last voice has ended, so disposing right after a play never cuts it.
  func disposeSound(_ sound: SoundState, now: Bool) {
    sound.disposed = true
    disposedSounds.append(sound.id)
    if disposedSounds.count > 4096 { disposedSounds.removeFirst(disposedSounds.count - 4096) }
    if now {
      for voice in sound.liveVoices where voices[voice]?.stopping == false {
        if engine.send(.stop(voice, fadeFrames: stopFadeFrames, reason: .disposed)) { voices[voice]?.stopping = true }
      }
    }
    releaseSoundIfDone(sound)
  }

  func releaseSoundIfDone(_ sound: SoundState) {
    if sound.disposed && sound.liveVoices.isEmpty && sound.pendingReply == nil { sounds[sound.id] = nil }
  }

  /// A voice of a system sound ended: the completion for that play, then perhaps the sound's release.
  func soundVoiceEnded(_ soundID: UInt64, voice: LiveVoice, end: VoiceEnd) {
    guard let sound = sounds[soundID] else { return }
    sound.liveVoices.remove(end.id)
    emit(
      "completion",
      [
        ("sound", .number(Double(soundID))), ("voice", .number(Double(end.id.rawValue))), ("played", .bool(end.reason == .end)),
        ("reason", .string(end.reason.name)),
      ], ids: [soundID, end.id.rawValue], alsoTo: sound.completionClients)
    emitFinished(voice, id: end.id, reason: end.reason, alsoTo: [])
    releaseSoundIfDone(sound)
  }

  /// A system sound's file finished decoding: answer `sound.create`.
  func finishSoundDecode(token: UInt64, _ outcome: Result<Cue, DecodeError>) {
    guard let sound = sounds[token], let waiter = sound.pendingReply else { return }
    sound.pendingReply = nil
    switch outcome {
    case .success(let cue):
      sound.cue = cue
      clients[waiter.client]?.send(Reply.success(id: waiter.id, [("sound", .number(Double(sound.id)))]))
      if clients[waiter.client] == nil && !sound.detached { sounds[sound.id] = nil }
    case .failure(let error):
      sounds[sound.id] = nil
      clients[waiter.client]?.send(Reply.failure(id: waiter.id, ProtocolError(.badPath, "\(error.path): \(error.reason)")))
    }
  }

  func performSystem(volume: Double?, muted: Bool?) -> [(String, JSONValue)] {
    if let volume { systemVolume = volume }
    if let muted { systemMuted = muted }
    return [("volume", .number(systemVolume)), ("muted", .bool(systemMuted))]
  }

  /// A connection closed: its players and system sounds go with it, unless they were made detached.
  /// Its sounds are disposed of gently (what plays finishes); its players stop with a fade.
  func releaseObjects(ownedBy serial: UInt64) {
    for player in players.values where player.owner == serial && !player.detached {
      destroyPlayer(player)
    }
    for sound in sounds.values where sound.owner == serial && !sound.detached && !sound.disposed {
      disposeSound(sound, now: false)
    }
    for sound in sounds.values { sound.completionClients.remove(serial) }
  }
}
