import CueAudio
import CueCore
import CuePosix
import CueProtocol

#if canImport(Glibc)
import Glibc
#endif

/// A player, as the control side keeps it: AVAudioPlayer's state, and the voice that plays it now.
///
/// A player owns at most one voice at a time. Pausing or stopping ends that voice (the engine
/// reports the exact frame it reached); playing again starts a new voice from there, so nothing is
/// skipped or repeated.
final class PlayerState {
  let id: UInt64
  let owner: UInt64
  let detached: Bool
  let enableRate: Bool
  let meteringEnabled: Bool
  /// The audio; nil while a file given by path is still to be decoded.
  var cue: Cue?
  /// The file to decode on `prepare`/`play` (players made from a path).
  let path: String?
  var decoding = false
  var volume = 1.0
  var pan = 0.0
  var numberOfLoops = 0
  var rate = 1.0
  /// The cue frame to play from next (when no voice plays).
  var position = 0
  /// Passes still to play after the current one (when no voice plays); -1 forever.
  var loopsLeft = 0
  /// The voice playing now, and where and how it started.
  var voice: VoiceID? = nil
  var voiceStartPosition = 0
  var firstFrame: UInt64? = nil
  /// The voice is on its way out (pause or stop sent, its end not yet reported).
  var ending = false
  /// `play` arrived while the previous voice was ending or the file decoding: start when possible.
  var pendingPlay: (atDeviceTime: Double?, requested: Bool) = (nil, false)
  /// Replies that wait for the voice's end (pause, stop: the exact position) or the decode (prepare).
  var pendingReplies: [(client: UInt64, id: RequestID?)] = []

  init(id: UInt64, owner: UInt64, detached: Bool, enableRate: Bool, meteringEnabled: Bool, cue: Cue?, path: String?) {
    self.id = id
    self.owner = owner
    self.detached = detached
    self.enableRate = enableRate
    self.meteringEnabled = meteringEnabled
    self.cue = cue
    self.path = path
  }

  var isPlaying: Bool { (voice != nil && !ending) || (pendingPlay.requested && cue != nil) }
}

extension Daemon {
  func performPlayer(_ request: PlayerRequest, id requestID: RequestID?, client: ClientConnection) throws(ProtocolError) -> [(String, JSONValue)]? {
    switch request {
    case .create(let creation):
      return try createPlayer(creation, client: client)
    case .prepare(let id):
      let player = try player(id)
      // prepareToPlay: decoded and the device open, so that play starts within one period.
      if player.cue == nil {
        decodeForPlayer(player)
        player.pendingReplies.append((client.serial, requestID))
        return nil  // answered once the file is decoded
      }
      if try prepareDevice() { attachDevice() }
      return playerFields(player)
    case .play(let id, let at):
      let player = try player(id)
      try playPlayer(player, atDeviceTime: at)
      return [("playing", .bool(true))]
    case .pause(let id):
      let player = try player(id)
      // Answered with the exact position once the audio thread reports where the voice stopped.
      guard endPlayerVoice(player, fadeFrames: 0) else { return playerFields(player) }
      player.pendingReplies.append((client.serial, requestID))
      return nil
    case .stop(let id):
      let player = try player(id)
      guard endPlayerVoice(player, fadeFrames: stopFadeFrames) else { return playerFields(player) }
      player.pendingReplies.append((client.serial, requestID))
      return nil
    case .set(let id, let settings):
      let player = try player(id)
      try apply(settings, to: player)
      return playerFields(player)
    case .get(let id):
      return playerFields(try player(id))
    case .destroy(let id):
      let player = try player(id)
      destroyPlayer(player)
      return [("destroyed", .number(Double(id)))]
    }
  }

  func player(_ id: UInt64) throws(ProtocolError) -> PlayerState {
    guard let player = players[id] else {
      throw ProtocolError(
        .unknownPlayer,
        "no player \(id): it was never made, was destroyed, or went with the connection that made it (create it with \"detached\":true to keep it)")
    }
    return player
  }

  func createPlayer(_ creation: PlayerCreation, client: ClientConnection) throws(ProtocolError) -> [(String, JSONValue)] {
    guard players.count < configuration.maximumPlayers else {
      throw ProtocolError(.limitReached, "cued already has \(configuration.maximumPlayers) players (--max-players); destroy some first")
    }
    var cue: Cue? = nil
    var path: String? = nil
    switch creation.source {
    case .cue(let name):
      guard let found = library[name] else {
        throw ProtocolError(.unknownCue, "no cue named '\(name.prefix(200))'; \(cueHint())")
      }
      cue = found
    case .path(let requested):
      path = try resolveSoundPath(requested)
    }
    let player = PlayerState(
      id: nextID, owner: client.serial, detached: creation.detached, enableRate: creation.enableRate,
      meteringEnabled: creation.meteringEnabled, cue: cue, path: path)
    nextID += 1
    players[player.id] = player
    do {
      try apply(creation.settings, to: player)
    } catch {
      players[player.id] = nil
      throw error
    }
    player.loopsLeft = player.numberOfLoops
    return [("player", .number(Double(player.id)))] + playerFields(player)
  }

  /// Checks that `requested` names an MP3 file inside a sound directory (symlinks resolved).
  func resolveSoundPath(_ requested: String) throws(ProtocolError) -> String {
    let directories = configuration.soundDirectories.joined(separator: ", ")
    let outside = ProtocolError(
      .badPath,
      "\(requested.prefix(300)) is not a file inside the sound directories (\(directories)); cued reads only files inside them. Move it into one of them, or start cued with --allow-any-path")
    guard let resolved = Files.realPath(requested) else {
      // Without --allow-any-path, a missing file and one outside read the same: no probing the disk.
      if !configuration.allowAnyPath { throw outside }
      throw ProtocolError(.badPath, "\(requested.prefix(300)) does not exist (or is a dangling symlink or a loop)")
    }
    let roots = configuration.soundDirectories.compactMap { Files.realPath($0) }
    // Compared as bytes: String's == and hasPrefix treat NFC and NFD spellings as equal, and the
    // file system does not.
    guard configuration.allowAnyPath || roots.contains(where: { resolved.utf8.starts(with: ($0 + "/").utf8) }) else {
      throw outside
    }
    guard Files.kind(of: resolved) == .regular else {
      throw ProtocolError(.badPath, "\(requested.prefix(300)) is not a regular file")
    }
    return resolved
  }

  /// Starts decoding a path player's file in the background (once).
  func decodeForPlayer(_ player: PlayerState) {
    guard player.cue == nil, !player.decoding, let path = player.path else { return }
    player.decoding = true
    decodeInBackground(path: path, token: player.id)
  }

  func decodeInBackground(path: String, token: UInt64) {
    var options = loader.options
    // Checked when the request came; checked again on the descriptor the decoder opens, so a
    // component swapped for a symlink in between cannot lead outside.
    if !configuration.allowAnyPath { options.confinedTo = configuration.soundDirectories.compactMap { Files.realPath($0) } }
    work.run { [options] in
      do throws(DecodeError) {
        let decoded = try MP3Decoder.decode(path: path, options: options)
        let name = CueLoader.cueName(forFile: String(path.split(separator: "/").last ?? "")) ?? path
        return .decoded(token: token, .success(Cue(name: name, path: path, decoded: decoded)))
      } catch {
        return .decoded(token: token, .failure(error))
      }
    }
  }

  /// A background decode finished: hand the cue to the player or sound that asked for it.
  func finishDecode(token: UInt64, _ outcome: Result<Cue, DecodeError>) {
    if let player = players[token] {
      player.decoding = false
      switch outcome {
      case .success(let cue):
        player.cue = cue
        if !player.pendingReplies.isEmpty, (try? prepareDevice()) == true { attachDevice() }
        answerPendingReplies(player)
        if player.pendingPlay.requested {
          player.pendingPlay.requested = false
          try? startPlayerVoice(player, atDeviceTime: player.pendingPlay.atDeviceTime)
        }
      case .failure(let error):
        logger.warning("player \(player.id): cannot decode \(error.path): \(error.reason)")
        let wanted = player.pendingPlay.requested
        player.pendingPlay.requested = false
        for waiter in player.pendingReplies {
          clients[waiter.client]?.send(Reply.failure(id: waiter.id, ProtocolError(.badPath, "\(error.path): \(error.reason)")))
        }
        player.pendingReplies.removeAll()
        emit(
          "decode-error", [("player", .number(Double(player.id))), ("path", .string(error.path)), ("reason", .string(error.reason))],
          ids: [player.id], alsoTo: [player.owner])
        if wanted {
          emit(
            "finished",
            [("player", .number(Double(player.id))), ("reason", .string("error")), ("successfully", .bool(false))],
            ids: [player.id], alsoTo: [player.owner])
        }
      }
    } else {
      finishSoundDecode(token: token, outcome)
    }
  }

  func playPlayer(_ player: PlayerState, atDeviceTime: Double?) throws(ProtocolError) {
    if player.voice != nil && !player.ending { return }  // already playing, as AVAudioPlayer's play()
    guard player.cue != nil, player.voice == nil else {
      // Decoding, or the last voice is still ending: start as soon as it is done.
      player.pendingPlay = (atDeviceTime, true)
      decodeForPlayer(player)
      return
    }
    try startPlayerVoice(player, atDeviceTime: atDeviceTime)
  }

  func startPlayerVoice(_ player: PlayerState, atDeviceTime: Double?) throws(ProtocolError) {
    guard let cue = player.cue else { return }
    let attachPending = try prepareDevice()
    defer { if attachPending { attachDevice() } }
    try makeRoomForAVoice()
    if player.position >= cue.frameCount { player.position = 0 }
    let loops: LoopCount = player.numberOfLoops < 0 ? .forever : .count(max(player.loopsLeft, 0))
    let id = VoiceID(nextID)
    var startFrame: UInt64 = 0
    if let atDeviceTime { startFrame = UInt64(max(0, atDeviceTime * Double(configuration.sampleRate)).rounded()) }
    let start = VoiceStart(
      id: id, samples: cue.decoded.buffer.samples, gain: gain(for: player, cue: cue), loops: loops,
      startPosition: player.position, startAtFrame: startFrame, rate: player.enableRate ? player.rate : 1)
    guard engine.send(.start(start)) else {
      throw ProtocolError(.busy, "the audio thread's queue is full; try again in a few milliseconds")
    }
    nextID += 1
    playsStarted += 1
    voices[id] = LiveVoice(
      cue: cue, owner: player.owner, notify: false, startedAt: MonotonicClock.nanoseconds(), loops: loops,
      origin: .player(player.id))
    player.voice = id
    player.voiceStartPosition = player.position
    player.firstFrame = nil
    player.ending = false
  }

  func gain(for player: PlayerState, cue: Cue) -> StereoGain {
    StereoGain.voice(volume: player.volume, pan: player.pan, sourceIsMono: cue.isMono)
  }

  /// Pause (no fade, sample-exact) or stop (a short fade): the player keeps its position either way.
  /// Returns true when a voice is on its way out (its end will report the position).
  @discardableResult
  func endPlayerVoice(_ player: PlayerState, fadeFrames: Int) -> Bool {
    player.pendingPlay.requested = false
    guard let voice = player.voice else { return false }
    if player.ending { return true }
    guard engine.send(.stop(voice, fadeFrames: fadeFrames, reason: .paused)) else { return false }
    player.ending = true
    voices[voice]?.stopping = true
    return true
  }

  /// Answers the requests waiting on this player with its properties now.
  func answerPendingReplies(_ player: PlayerState) {
    let waiting = player.pendingReplies
    player.pendingReplies.removeAll()
    for waiter in waiting { clients[waiter.client]?.send(Reply.success(id: waiter.id, playerFields(player))) }
  }

  func destroyPlayer(_ player: PlayerState) {
    if let voice = player.voice, engine.send(.stop(voice, fadeFrames: stopFadeFrames, reason: .stopped)) {
      voices[voice]?.stopping = true
    }
    players[player.id] = nil
  }

  func apply(_ settings: PlayerSettings, to player: PlayerState) throws(ProtocolError) {
    if settings.rate != nil && !player.enableRate {
      throw ProtocolError(.notEnabled, "player \(player.id) was made without \"enableRate\":true, so its rate cannot change")
    }
    if let volume = settings.volume { player.volume = volume }
    if let pan = settings.pan { player.pan = pan }
    if let loops = settings.numberOfLoops {
      player.numberOfLoops = loops
      // AVAudioPlayer: a new count applies to the play under way.
      player.loopsLeft = loops
    }
    if let rate = settings.rate, rate != player.rate {
      // Rebase the position estimate: frames so far counted at the old rate, from now at the new one.
      if player.voice != nil && !player.ending && player.firstFrame != nil {
        player.voiceStartPosition = currentFrame(player)
        player.firstFrame = heardFrame()
      }
      player.rate = rate
    }
    if let voice = player.voice, !player.ending, let cue = player.cue {
      if settings.volume != nil || settings.pan != nil {
        let ramp = Int((settings.fade ?? 0) * Double(configuration.sampleRate))
        _ = engine.send(.setGain(voice, gain(for: player, cue: cue), rampFrames: ramp))
      }
      if let rate = settings.rate { _ = engine.send(.setRate(voice, rate: rate)) }
      if let loops = settings.numberOfLoops { _ = engine.send(.setLoops(voice, loopsLeft: loops)) }
    }
    if let time = settings.currentTime {
      let frames = player.cue?.frameCount ?? Int.max
      let target = min(Int((time * Double(configuration.sampleRate)).rounded()), frames)
      if let voice = player.voice, !player.ending {
        _ = engine.send(.seek(voice, position: target))
        player.voiceStartPosition = target
        player.firstFrame = heardFrame()
      } else {
        player.position = target
      }
    }
  }

  /// The mixer frame being heard now.
  func heardFrame() -> UInt64 {
    let clock = engine.counters.mixerClock.load(ordering: .relaxed)
    let delay = UInt64(max(engine.counters.delayFrames.load(ordering: .relaxed), 0))
    return clock >= delay ? clock - delay : 0
  }

  /// The player's position in frames: exact when stopped or paused, estimated from the device clock while playing.
  func currentFrame(_ player: PlayerState) -> Int {
    guard let cue = player.cue else { return player.position }
    guard player.voice != nil, !player.ending, let first = player.firstFrame else {
      return player.voice != nil && player.firstFrame == nil ? player.voiceStartPosition : player.position
    }
    let heard = heardFrame()
    let elapsed = heard > first ? Double(heard - first) * (player.enableRate ? player.rate : 1) : 0
    var frame = player.voiceStartPosition + Int(elapsed)
    if cue.frameCount > 0 && frame >= cue.frameCount {
      frame = player.numberOfLoops != 0 ? frame % cue.frameCount : cue.frameCount
    }
    return frame
  }

  func playerFields(_ player: PlayerState) -> [(String, JSONValue)] {
    let rate = Double(configuration.sampleRate)
    var fields: [(String, JSONValue)] = [
      ("volume", .number(player.volume)), ("pan", .number(player.pan)),
      ("numberOfLoops", .number(Double(player.numberOfLoops))),
      ("currentTime", .number(Double(currentFrame(player)) / rate)),
      ("duration", .number(Double(player.cue?.frameCount ?? 0) / rate)),
      ("isPlaying", .bool(player.isPlaying)),
      ("numberOfChannels", .number(Double(player.cue?.decoded.sourceChannels ?? 0))),
      ("deviceCurrentTime", .number(deviceCurrentTime)),
      ("enableRate", .bool(player.enableRate)), ("rate", .number(player.rate)),
      ("meteringEnabled", .bool(player.meteringEnabled)), ("detached", .bool(player.detached)),
    ]
    if let cue = player.cue { fields.append(("cue", .string(cue.name))) }
    if player.meteringEnabled {
      let (average, peak) = meters(player)
      fields.append(("averagePower", .array(average.map { .number($0) })))
      fields.append(("peakPower", .array(peak.map { .number($0) })))
    }
    return fields
  }

  /// AVAudioPlayer's meters, per source channel in dBFS (-160...0): the RMS and the peak of the
  /// 1024 frames before the current position, at the player's volume.
  func meters(_ player: PlayerState) -> (average: [Double], peak: [Double]) {
    guard let cue = player.cue else { return ([], []) }
    let channels = cue.decoded.sourceChannels
    guard player.isPlaying, cue.frameCount > 0 else {
      return (Array(repeating: -160, count: channels), Array(repeating: -160, count: channels))
    }
    let end = max(currentFrame(player), 1)
    let start = max(0, end - 1024)
    let samples = cue.decoded.buffer.samples.base
    var average: [Double] = []
    var peak: [Double] = []
    for channel in 0..<channels {
      var sum = 0.0
      var top = 0.0
      for frame in start..<min(end, cue.frameCount) {
        let x = Double(samples[2 * frame + channel]) * player.volume
        sum += x * x
        top = max(top, abs(x))
      }
      let count = Double(max(min(end, cue.frameCount) - start, 1))
      average.append(Self.decibels((sum / count).squareRoot()))
      peak.append(Self.decibels(top))
    }
    return (average, peak)
  }

  static func decibels(_ amplitude: Double) -> Double {
    amplitude <= 1e-8 ? -160 : max(-160, min(0, 20 * log10(amplitude)))
  }

  /// The engine reported the end of a player's voice.
  func playerVoiceEnded(_ playerID: UInt64, voice: LiveVoice, end: VoiceEnd) {
    guard let player = players[playerID], player.voice == end.id else { return }
    player.voice = nil
    player.ending = false
    player.firstFrame = nil
    switch end.reason {
    case .paused:
      player.position = end.position
      player.loopsLeft = end.loopsLeft
    case .end:
      // As AVAudioPlayer: back to the start, the loop count whole again, and `finished`.
      player.position = 0
      player.loopsLeft = player.numberOfLoops
      emitFinished(voice, id: end.id, reason: .end, alsoTo: [player.owner])
    default:
      player.position = end.position
      player.loopsLeft = end.loopsLeft
      emitFinished(voice, id: end.id, reason: end.reason, alsoTo: [player.owner])
    }
    answerPendingReplies(player)
    if player.pendingPlay.requested {
      player.pendingPlay.requested = false
      try? startPlayerVoice(player, atDeviceTime: player.pendingPlay.atDeviceTime)
    }
  }

  /// Before a new voice: past the voice limit, the oldest sounding voice fades out to make room.
  /// Returns the stolen voice, if any.
  @discardableResult
  func makeRoomForAVoice() throws(ProtocolError) -> VoiceID? {
    let sounding = voices.filter { !$0.value.stopping }
    guard sounding.count >= configuration.voiceLimit, let oldest = sounding.keys.min(by: { $0.rawValue < $1.rawValue }) else {
      return nil
    }
    guard engine.send(.stop(oldest, fadeFrames: stopFadeFrames, reason: .stolen)) else {
      throw ProtocolError(.busy, "the audio thread's queue is full; try again in a few milliseconds")
    }
    voices[oldest]?.stopping = true
    if case .player(let p) = voices[oldest]?.origin, let player = players[p], player.voice == oldest { player.ending = true }
    return oldest
  }
}
