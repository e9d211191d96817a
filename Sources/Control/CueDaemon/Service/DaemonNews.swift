import CueCore
import CueOutput

/// News for the control thread: the audio thread's events (a voice started or ended, the device
/// released, the latency raised) and finished background work (decodes, scans, the desktop's
/// settings), each handed to the owner concerned.
extension Daemon {
  /// Takes every event the audio thread posted and hands it to the owner concerned.
  func drainEngineEvents() {
    engineWakeups.acknowledgeControl()
    while let event = engine.nextEvent() {
      switch event {
      case .started(let id, let frame, let clock, let delay, let handedAt):
        voiceStarted(id, frame: frame, clock: clock, delayFrames: delay, handedAt: handedAt)
      case .ended(let end):
        voiceEnded(end)
      case .refused(let id):
        logger.warning("voice \(id) was refused: the voice table is full")
        voiceEnded(VoiceEnd(id: id, reason: .error, position: 0))
      case .released(let reason):
        device.released(reason)
      case .latencyRaised(let raise):
        device.noteRaise(raise)
      }
    }
    // A pulled sink's first callback since it connected has run (it sent these events): make its thread real-time.
    device.settleMixingThread()
  }

  /// A voice's first frame went out: its latency, its player's clock, and when it will be heard.
  func voiceStarted(_ id: VoiceID, frame: UInt64, clock mixerClock: UInt64, delayFrames: Int, handedAt: UInt64) {
    guard let voice = voices.started(id) else { return }
    if voice.requestArrival > 0 && handedAt >= voice.requestArrival {
      triggerLatency.record(nanoseconds: handedAt - voice.requestArrival)
    }
    if case .player(let player) = voice.origin { players.voiceStarted(id, player: player, frame: frame) }
    let rate = Double(configuration.sampleRate)
    // Frames queued in the device after the first one, then the first one itself is heard.
    let aheadFrames = Double(delayFrames) - Double(mixerClock &- frame)
    events.started(id, voice, deviceTime: Double(frame) / rate, heardIn: max(0, aheadFrames / rate))
  }

  /// A voice stopped sounding: forget it, and tell whoever is owed the news.
  func voiceEnded(_ end: VoiceEnd) {
    guard let voice = voices.ended(end.id) else { return }
    groups.voiceEnded(end.id, group: voice.group)
    switch voice.origin {
    case .oneShot: events.finished(end.id, voice, reason: end.reason, alsoTo: voice.notify ? [voice.owner] : [])
    case .player(let player): players.voiceEnded(end, voice: voice, player: player)
    case .sound(let sound): sounds.voiceEnded(end, voice: voice, sound: sound)
    }
  }

  /// Takes every finished piece of background work and applies it, on the control thread.
  func finishWork() {
    for result in work.take() {
      switch result {
      case .reload(let scan):
        reloader.finished(scan)
      case .desktopSound(let settings):
        desktop.changed(settings, configuration)
      case .decoded(let token, let outcome):
        // A deferred reply (the first `play` of a file or theme event, `player.prepare`, `sound.create`) comes
        // before the events its request caused (the device's `opened`, the voice's `started`).
        events.holding {
          if !players.decoded(token: token, outcome), !fileSounds.decoded(token: token, outcome) {
            _ = sounds.decoded(token: token, outcome) { [unowned self] client in clients.connection(client) != nil }
          }
        }
      }
    }
  }
}
