import CueAudio
import CueCore
import CuePosix
import CueProtocol

/// Events: who gets them, and the engine's news turned into them.
extension Daemon {
  /// Sends an event to every connection whose subscription admits it, and to `alsoTo` (connections
  /// owed it regardless: the owner of a player, a `notify` play, a completion registration).
  /// Each connection gets an event once, in the order events are emitted.
  func emit(_ kind: String, _ fields: [(String, JSONValue)], ids: [UInt64], alsoTo: Set<UInt64> = []) {
    if holdingEvents {
      heldEvents.append((kind, fields, ids, alsoTo))
      return
    }
    var line: JSONValue? = nil
    for client in clients.values {
      let subscribed = client.subscription?.admits(kind: kind, ids: ids) ?? false
      guard subscribed || alsoTo.contains(client.serial) else { continue }
      if line == nil { line = Reply.event(kind, fields) }
      client.sendEvent(line!)
    }
  }

  /// The device's clock in seconds: the frame being heard now, as AVAudioPlayer's `deviceCurrentTime`.
  var deviceCurrentTime: Double {
    let clock = engine.counters.mixerClock.load(ordering: .relaxed)
    let delay = UInt64(max(engine.counters.delayFrames.load(ordering: .relaxed), 0))
    return Double(clock >= delay ? clock - delay : 0) / Double(configuration.sampleRate)
  }

  /// A voice's first frame went out: tell its player, and subscribers, when it will be heard.
  func voiceStarted(_ id: VoiceID, frame: UInt64, clock: UInt64, delayFrames: Int, handedAt: UInt64) {
    guard let voice = voices[id] else { return }
    if voice.requestArrival > 0 && handedAt >= voice.requestArrival {
      triggerLatency.record(nanoseconds: handedAt - voice.requestArrival)
    }
    let rate = Double(configuration.sampleRate)
    // Frames queued in the device after the first one, then the first one itself is heard.
    let aheadFrames = Double(delayFrames) - Double(clock &- frame)
    let heardIn = max(0, aheadFrames / rate)
    if case .player(let playerID) = voice.origin, let player = players[playerID], player.voice == id {
      player.firstFrame = frame
    }
    var fields: [(String, JSONValue)] = [("voice", .number(Double(id.rawValue))), ("cue", .string(voice.cue.name))]
    fields += originFields(voice.origin)
    fields += [("deviceTime", .number(Double(frame) / rate)), ("heardIn", .number(heardIn))]
    emit("started", fields, ids: [id.rawValue] + originIDs(voice.origin))
  }

  func originFields(_ origin: VoiceOrigin) -> [(String, JSONValue)] {
    switch origin {
    case .oneShot: []
    case .player(let p): [("player", .number(Double(p)))]
    case .sound(let s): [("sound", .number(Double(s)))]
    }
  }

  func originIDs(_ origin: VoiceOrigin) -> [UInt64] {
    switch origin {
    case .oneShot: []
    case .player(let p): [p]
    case .sound(let s): [s]
    }
  }

  /// A voice stopped sounding: free it, and tell whoever is owed the news.
  func voiceEnded(_ end: VoiceEnd) {
    guard let voice = voices.removeValue(forKey: end.id) else { return }
    switch voice.origin {
    case .oneShot:
      emitFinished(voice, id: end.id, reason: end.reason, alsoTo: voice.notify ? [voice.owner] : [])
    case .player(let playerID):
      playerVoiceEnded(playerID, voice: voice, end: end)
    case .sound(let soundID):
      soundVoiceEnded(soundID, voice: voice, end: end)
    }
  }

  func emitFinished(_ voice: LiveVoice, id: VoiceID, reason: VoiceEndReason, alsoTo: Set<UInt64>) {
    var fields: [(String, JSONValue)] = [("voice", .number(Double(id.rawValue))), ("cue", .string(voice.cue.name))]
    fields += originFields(voice.origin)
    fields += [("reason", .string(reason.name)), ("successfully", .bool(reason == .end))]
    emit("finished", fields, ids: [id.rawValue] + originIDs(voice.origin), alsoTo: alsoTo)
  }

  /// The device changed state: `opened`, `closed-idle`, `lost` or `restored`.
  func emitDevice(_ state: String, error: String? = nil) {
    notifier.notify(["STATUS=" + statusLine()])
    var fields: [(String, JSONValue)] = [("state", .string(state)), ("device", .string(device.name))]
    if let error { fields.append(("error", .string(error))) }
    emit("device", fields, ids: [])
  }
}
