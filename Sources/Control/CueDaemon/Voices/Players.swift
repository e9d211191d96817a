import CueDecoding
import CueCore
import CueProtocol
import Logging

/// The players (AVAudioPlayer's model): their requests, their voices' news, and their lifetimes.
final class Players {
  private(set) var players: [UInt64: PlayerState] = [:]
  /// `--max-players`; reloadable.
  var maximum: Int
  private let gate: VoiceGate
  private let voices: VoiceTable
  private let device: DeviceController
  private let catalog: CueCatalog
  private let files: PathDecoder
  private let events: EventRouter
  private let ids: IDAllocator
  private let logger: Logger
  private let sampleRate: Double

  init(
    maximum: Int, gate: VoiceGate, device: DeviceController, catalog: CueCatalog, files: PathDecoder,
    events: EventRouter, ids: IDAllocator, sampleRate: Int, logger: Logger
  ) {
    self.maximum = maximum
    self.gate = gate
    self.voices = gate.voices
    self.device = device
    self.catalog = catalog
    self.files = files
    self.events = events
    self.ids = ids
    self.sampleRate = Double(sampleRate)
    self.logger = logger
  }

  var count: Int { players.count }

  /// The `hello` name of a connection (by serial), for its ceiling.
  var clientName: (UInt64) -> String? = { _ in nil }

  func player(_ id: UInt64) throws(ProtocolError) -> PlayerState {
    guard let player = players[id] else {
      throw ProtocolError(
        .unknownPlayer,
        "no player \(id): it was never made, was destroyed, or went with the connection that made it (create it with \"detached\":true to keep it)")
    }
    return player
  }

  private func create(_ creation: PlayerCreation, owner: UInt64) throws(ProtocolError) -> PlayerCreateReply {
    guard players.count < maximum else {
      throw ProtocolError(.limitReached, "cued already has \(maximum) players (--max-players); destroy some first")
    }
    var cue: Cue? = nil
    var path: String? = nil
    switch creation.source {
    case .cue(let name): cue = try catalog.cue(named: name)
    case .path(let requested): path = try files.resolve(requested)
    }
    let player = PlayerState(
      id: ids.peek, owner: owner, detached: creation.detached, enableRate: creation.enableRate,
      meteringEnabled: creation.meteringEnabled, cue: cue, path: path)
    try apply(creation.settings, to: player)
    _ = ids.make()
    players[player.id] = player
    player.loopsLeft = player.numberOfLoops
    return PlayerCreateReply(player: player.id, properties: properties(player))
  }

  /// Starts decoding a path player's file in the background (once).
  private func decode(_ player: PlayerState) {
    guard player.cue == nil, player.phase == .idle, let path = player.path else { return }
    player.phase = .decoding
    files.decode(path: path, token: player.id)
  }

  /// Plays, or says why the gate keeps it silent (the owner then hears `finished` with that reason).
  private func play(_ player: PlayerState, atDeviceTime: Double?) throws(ProtocolError) -> SilenceReason? {
    switch player.phase {
    case .playing:
      return nil  // already playing, as AVAudioPlayer's play()
    case .idle where player.cue != nil:
      return try startVoice(player, atDeviceTime: atDeviceTime)
    case .idle, .decoding, .ending:
      // Decoding, or the last voice is still ending: start as soon as it is done.
      player.pendingPlay = PlayerState.PendingPlay(atDeviceTime: atDeviceTime)
      decode(player)
      return nil
    }
  }

  /// Starts the player's voice through the gate (its cue's rules, the level, its group, the
  /// owner's ceiling; not the repeat rules: a player is one instance). A silent play leaves the
  /// player where it was and tells the owner why.
  private func startVoice(_ player: PlayerState, atDeviceTime: Double?) throws(ProtocolError) -> SilenceReason? {
    guard let cue = player.cue else { return nil }
    if player.position >= cue.frameCount { player.position = 0 }
    let loops: LoopCount = player.numberOfLoops < 0 ? .forever : .count(max(player.loopsLeft, 0))
    var request = VoiceRequest(cue: cue, gain: player.gain(for: cue), loops: loops, origin: .player(player.id), owner: player.owner)
    request.startPosition = player.position
    if let atDeviceTime { request.startAtFrame = UInt64(max(0, atDeviceTime * sampleRate).rounded()) }
    request.rate = player.voiceRate
    let play = VoiceGate.Play(request: request, rule: cue.name, client: clientName(player.owner), repeats: [])
    switch try gate.start(play) {
    case .started(let id, _):
      player.phase = .playing(voice: id, startPosition: player.position, firstFrame: nil)
      return nil
    case .silent(let reason):
      events.emit(
        .finished(Event.Finished(voice: nil, cue: cue.name, origin: .player(player.id), reason: FinishReason(reason))), alsoTo: [player.owner])
      return reason
    }
  }

  /// A play that waited (for a decode or the last voice's end) starts now; if it cannot, the
  /// owner hears `finished` with reason `error` rather than nothing.
  private func startPendingPlay(_ player: PlayerState) {
    guard let pending = player.pendingPlay else { return }
    player.pendingPlay = nil
    do {
      _ = try startVoice(player, atDeviceTime: pending.atDeviceTime)
    } catch {
      logger.warning("player \(player.id): the play it was waiting for could not start: \(error.message)")
      events.emit(.finished(.decodeFailed(player: player.id)), alsoTo: [player.owner])
    }
  }

  /// Pause (no fade, sample-exact) or stop (a short fade): the player keeps its position either
  /// way. The reply waits for the voice's end, which reports the position; nil then.
  private func end(_ player: PlayerState, fadeFrames: Int, waiter: Waiter) throws(ProtocolError) -> PlayerProperties? {
    player.pendingPlay = nil
    switch player.phase {
    case .idle, .decoding:
      return properties(player)
    case .ending:
      player.pendingReplies.append(waiter)
      return nil
    case .playing(let voice, _, _):
      guard voices.stop(voice, fadeFrames: fadeFrames, reason: .paused) else { throw VoiceTable.busy }
      player.pendingReplies.append(waiter)
      return nil
    }
  }

  private func destroy(_ player: PlayerState) {
    if let voice = player.voice { voices.stop(voice, reason: .stopped) }
    players[player.id] = nil
  }

  /// Applies settings; while a voice plays, they reach it too. Nothing changes when the command
  /// ring cannot take every command the change needs (`busy`).
  private func apply(_ settings: PlayerSettings, to player: PlayerState) throws(ProtocolError) {
    if settings.rate != nil && !player.enableRate {
      throw ProtocolError(.notEnabled, "player \(player.id) was made without \"enableRate\":true, so its rate cannot change")
    }
    var voice: VoiceID? = nil
    if case .playing(let playing, _, _) = player.phase { voice = playing }
    if voice != nil {
      let needed = [settings.volume != nil || settings.pan != nil, settings.rate != nil, settings.numberOfLoops != nil, settings.currentTime != nil]
      guard voices.commandRoom >= needed.filter({ $0 }).count else { throw VoiceTable.busy }
    }
    if let volume = settings.volume { player.volume = volume }
    if let pan = settings.pan { player.pan = pan }
    if let loops = settings.numberOfLoops {
      player.numberOfLoops = loops
      // AVAudioPlayer: a new count applies to the play under way.
      player.loopsLeft = loops
    }
    if let rate = settings.rate, rate != player.rate {
      // Rebase the position estimate: frames up to the block the new rate is mixed in counted at
      // the old rate, from there at the new one (heard a device delay after now).
      if case .playing(let id, _, _?) = player.phase {
        let mixed = device.mixFrame()
        player.phase = .playing(voice: id, startPosition: player.currentFrame(heardFrame: mixed), firstFrame: mixed)
      }
      player.rate = rate
    }
    if let voice, let cue = player.cue {
      if settings.volume != nil || settings.pan != nil {
        // The voice's source gain: the table's chain (loudness, the group) applies on top, now
        // and at every later change of the group.
        voices.setSourceGain(voice, player.gain(for: cue), rampFrames: Int((settings.fade ?? 0) * sampleRate))
      }
      if let rate = settings.rate { voices.setRate(voice, rate) }
      if let loops = settings.numberOfLoops { voices.setLoops(voice, loopsLeft: loops) }
    }
    if let time = settings.currentTime {
      let target = min(Int((time * sampleRate).rounded()), player.cue?.frameCount ?? Int.max)
      if let voice {
        voices.seek(voice, to: target)
        // The target is mixed in the next block, heard a device delay from now: until then
        // currentTime reads the target, then advances with what is heard.
        player.phase = .playing(voice: voice, startPosition: target, firstFrame: device.mixFrame())
      } else {
        player.position = target
      }
    }
  }

  // MARK: - News from the engine and the decoder

  /// The engine reported the first frame of a player's voice: the position estimate starts there.
  func voiceStarted(_ id: VoiceID, player playerID: UInt64, frame: UInt64) {
    guard let player = players[playerID], case .playing(id, let start, _) = player.phase else { return }
    player.phase = .playing(voice: id, startPosition: start, firstFrame: frame)
  }

  /// The control side stopped a player's voice (a stop, a steal): the player is ending now.
  func voiceStopping(_ id: VoiceID, player playerID: UInt64) {
    guard let player = players[playerID], case .playing(id, let start, _) = player.phase else { return }
    player.phase = .ending(voice: id, startPosition: start)
  }

  /// The engine reported the end of a player's voice.
  func voiceEnded(_ end: VoiceEnd, voice: LiveVoice, player playerID: UInt64) {
    guard let player = players[playerID], player.voice == end.id else { return }
    player.phase = .idle
    switch end.reason {
    case .paused:
      player.position = end.position
      player.loopsLeft = end.loopsLeft
    case .end:
      // As AVAudioPlayer: back to the start, the loop count whole again, and `finished`.
      player.position = 0
      player.loopsLeft = player.numberOfLoops
      events.finished(end.id, voice, reason: .end, alsoTo: [player.owner])
    default:
      player.position = end.position
      player.loopsLeft = end.loopsLeft
      events.finished(end.id, voice, reason: end.reason, alsoTo: [player.owner])
    }
    answerPendingReplies(player)
    startPendingPlay(player)
  }

  /// A background decode finished; false when `token` is not a player's.
  func decoded(token: UInt64, _ outcome: Result<Cue, DecodeError>) -> Bool {
    guard let player = players[token] else { return false }
    player.phase = .idle
    switch outcome {
    case .success(let cue):
      player.cue = cue
      if !player.pendingReplies.isEmpty, (try? device.prepare()) == true { device.attach() }
      answerPendingReplies(player)
      startPendingPlay(player)
    case .failure(let error):
      logger.warning("player \(player.id): cannot decode \(error.path): \(error.reason)")
      let wanted = player.pendingPlay != nil
      player.pendingPlay = nil
      for waiter in player.pendingReplies { events.fail(waiter, PathDecoder.failure(error)) }
      player.pendingReplies.removeAll()
      events.emit(.decodeError(Event.DecodeError(player: player.id, path: error.path, reason: error.reason)), alsoTo: [player.owner])
      if wanted { events.emit(.finished(.decodeFailed(player: player.id)), alsoTo: [player.owner]) }
    }
    return true
  }

  /// Answers the requests waiting on this player with its properties now.
  private func answerPendingReplies(_ player: PlayerState) {
    let waiting = player.pendingReplies
    player.pendingReplies.removeAll()
    for waiter in waiting { events.reply(to: waiter, properties(player)) }
  }

  // MARK: - Connections

  /// True while `client` is owed something: its player plays (a `finished` will come) or a reply waits.
  func owes(_ client: UInt64) -> Bool {
    players.values.contains { ($0.owner == client && $0.isPlaying) || $0.pendingReplies.contains { $0.client == client } }
  }

  /// A connection closed: its players go with it (fading), unless made detached.
  func release(ownedBy client: UInt64) {
    for player in players.values where player.owner == client && !player.detached { destroy(player) }
  }

  // MARK: - Properties

  func properties(_ player: PlayerState) -> PlayerProperties {
    let heard = device.heardFrame()
    let frame = player.currentFrame(heardFrame: heard)
    var properties = PlayerProperties(
      volume: player.volume, pan: player.pan, numberOfLoops: player.numberOfLoops, currentTime: Double(frame) / sampleRate,
      duration: Double(player.cue?.frameCount ?? 0) / sampleRate, isPlaying: player.isPlaying,
      numberOfChannels: player.cue?.decoded.sourceChannels ?? 0, deviceCurrentTime: Double(heard) / sampleRate,
      enableRate: player.enableRate, rate: player.rate, meteringEnabled: player.meteringEnabled, detached: player.detached,
      cue: player.cue?.name)
    if player.meteringEnabled {
      (properties.averagePower, properties.peakPower) = player.meters(at: frame)
    }
    return properties
  }
}

extension Players: OpHandler {
  /// The `player.*` ops; a nil reply is deferred (it goes to the waiter later).
  func register(_ routes: inout Routes) {
    routes.on(PlayerCreateRequest.self) { [unowned self] request, context throws(ProtocolError) in
      try create(request.creation, owner: context.waiter.client)
    }
    routes.on(PlayerPrepareRequest.self) { [unowned self] request, context throws(ProtocolError) in
      try prepare(try player(request.player), waiter: context.waiter)
    }
    routes.on(PlayerPlayRequest.self) { [unowned self] request, _ throws(ProtocolError) in
      let silenced = try play(try player(request.player), atDeviceTime: request.atDeviceTime)
      return PlayerPlayReply(playing: silenced == nil, silenced: silenced)
    }
    // Pause and stop are answered with the exact position once the audio thread reports where the voice stopped.
    routes.on(PlayerPauseRequest.self) { [unowned self] request, context throws(ProtocolError) in
      try end(try player(request.player), fadeFrames: 0, waiter: context.waiter)
    }
    routes.on(PlayerStopRequest.self) { [unowned self] request, context throws(ProtocolError) in
      try end(try player(request.player), fadeFrames: voices.stopFadeFrames, waiter: context.waiter)
    }
    routes.on(PlayerSetRequest.self) { [unowned self] request, _ throws(ProtocolError) in
      let player = try player(request.player)
      try apply(request.settings, to: player)
      return properties(player)
    }
    routes.on(PlayerGetRequest.self) { [unowned self] request, _ throws(ProtocolError) in properties(try player(request.player)) }
    routes.on(PlayerDestroyRequest.self) { [unowned self] request, _ throws(ProtocolError) in
      destroy(try player(request.player))
      return PlayerDestroyReply(destroyed: request.player)
    }
  }

  /// prepareToPlay: decoded and the device open, so that play starts within one period; nil until the file is decoded.
  private func prepare(_ player: PlayerState, waiter: Waiter) throws(ProtocolError) -> PlayerProperties? {
    if player.cue == nil {
      decode(player)
      player.pendingReplies.append(waiter)
      return nil
    }
    if try device.prepare() { device.attach() }
    return properties(player)
  }
}
