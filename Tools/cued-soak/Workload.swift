import CuePosix
import CueProtocol
import Synchronization

/// The work one thread does in one phase.
struct Quota: Sendable {
  var plays = 0
  var cycles = 0
  var playerSessions = 0
  var soundSessions = 0

  var total: Int { plays + cycles + playerSessions + soundSessions }

  /// `self` split over `parts` threads, the remainders going to the first ones.
  func split(_ parts: Int) -> [Quota] {
    func share(_ n: Int, _ i: Int) -> Int { n / parts + (i < n % parts ? 1 : 0) }
    return (0..<parts).map { i in
      Quota(
        plays: share(plays, i), cycles: share(cycles, i), playerSessions: share(playerSessions, i),
        soundSessions: share(soundSessions, i))
    }
  }

  static func - (a: Quota, b: Quota) -> Quota {
    Quota(
      plays: a.plays - b.plays, cycles: a.cycles - b.cycles, playerSessions: a.playerSessions - b.playerSessions,
      soundSessions: a.soundSessions - b.soundSessions)
  }
}


/// Progress the workers publish for the main thread's reports.
final class Progress: Sendable {
  let plays = Atomic<Int>(0)
  let cycles = Atomic<Int>(0)
  let sessions = Atomic<Int>(0)
}

/// What every worker shares.
struct WorkerContext: Sendable {
  var socket: String
  var cues: [CueInfo]
  var ledger: Ledger
  /// The most voices (plays and system-sound plays) the workers keep sounding at once.
  var budget: Int
  var abort: Flag
  var progress: Progress
}

/// Counts the events that arrive on a connection.
private final class Tally {
  var events: [String: Int] = [:]
}

/// One client thread: a connection of its own for plays, players and system sounds, and short-lived
/// connections for the connect/disconnect cycles, all interleaved at random.
final class Worker {
  private let context: WorkerContext
  private var rng: SplitMix64
  private var counts = Counts()
  private let tally = Tally()

  init(context: WorkerContext, seed: UInt64) {
    self.context = context
    self.rng = SplitMix64(seed: seed)
  }

  private func random(_ range: Range<Int>) -> Int { Int.random(in: range, using: &rng) }
  private func chance(_ percent: Int) -> Bool { random(0..<100) < percent }
  private func unit() -> Double { Double(random(0..<101)) / 100 }
  private func panValue() -> Double { Double(random(-100..<101)) / 100 }
  private func cue() -> CueInfo { context.cues[random(0..<context.cues.count)] }
  /// Mostly a cue; one time in ten the cue's file, decoded for this player or sound on a short-lived thread.
  private func source() -> SoundSource {
    let cue = cue()
    if chance(10) { return .path(cue.path) }
    return .cue(cue.name)
  }

  func run(_ quota: Quota) -> Counts {
    let wire: Wire
    do {
      wire = try connect()
      _ = try ask(wire, .hello(client: "cued-soak"))
    } catch {
      fail("connect: \(error)")
      return finish()
    }
    var left = quota
    while left.total > 0 && !context.abort.isSet {
      let pick = random(0..<left.total)
      do {
        if pick < left.plays {
          left.plays -= 1
          try play(wire)
          context.progress.plays.add(1, ordering: .relaxed)
        } else if pick < left.plays + left.cycles {
          left.cycles -= 1
          cycle(wire)
          context.progress.cycles.add(1, ordering: .relaxed)
        } else if pick < left.plays + left.cycles + left.playerSessions {
          left.playerSessions -= 1
          try playerSession(wire)
          context.progress.sessions.add(1, ordering: .relaxed)
        } else {
          left.soundSessions -= 1
          try soundSession(wire)
          context.progress.sessions.add(1, ordering: .relaxed)
        }
      } catch {
        // The worker's own connection failed: the daemon closed it or stopped answering.
        fail("worker connection: \(error)")
        context.abort.set()
      }
    }
    wire.close()
    return finish()
  }

  private func finish() -> Counts {
    counts.events.merge(tally.events, uniquingKeysWith: +)
    return counts
  }

  private func fail(_ text: String) {
    counts[.transportFailures] += 1
    counts.problem(text)
  }

  private func connect() throws(WireError) -> Wire {
    let wire = try Wire.connect(context.socket)
    let tally = self.tally
    wire.onEvent = { event in tally.events[event.kindName, default: 0] += 1 }
    return wire
  }

  /// Sends and waits, counting the request and its reply.
  private func ask(
    _ wire: Wire, _ request: Request, expected: Set<ErrorCode> = []
  ) throws(WireError) -> JSONValue? {
    counts[.requests] += 1
    return counts.record(request.op.rawValue, try wire.request(request), expected: expected)
  }

  /// Sends and waits like `ask`, and reads the reply as `type` (an unreadable reply counts as a problem).
  private func ask<T: ReplyFields>(
    _ wire: Wire, _ request: Request, as type: T.Type, expected: Set<ErrorCode> = []
  ) throws(WireError) -> T? {
    guard let body = try ask(wire, request, expected: expected) else { return nil }
    return counts.decode(type, body, request.op.rawValue)
  }

  /// Waits while the soak's voices fill the budget (10 s at most: then the voices are not ending).
  private func waitForBudget() {
    if context.ledger.inFlight < context.budget { return }
    let began = MonotonicClock.seconds()
    while context.ledger.inFlight >= context.budget && !context.abort.isSet {
      if MonotonicClock.seconds() - began > 10 {
        counts[.budgetStalls] += 1
        counts.problem("voices did not end: \(context.ledger.inFlight) in flight for 10 s (budget \(context.budget))")
        break
      }
      sleep(seconds: 0.0005)
    }
    counts[.budgetWaitMilliseconds] += Int((MonotonicClock.seconds() - began) * 1000)
  }

  /// One `sound.play` within the voice budget, its voice noted.
  private func playSound(_ sound: UInt64, on wire: Wire) throws(WireError) {
    waitForBudget()
    context.ledger.reserve()
    defer { context.ledger.release() }
    guard let reply = try ask(wire, Request(SoundPlayRequest(sound: sound)), as: SoundPlayReply.self) else { return }
    counts[.soundPlays] += 1
    switch reply {
    case .playing(let play): started(play)
    case .silent(let reason):
      counts[.unexpectedErrors] += 1
      counts.problem("sound.play answered silent (\(reason.rawValue)): nothing silences system sounds in a soak")
    }
  }

  /// Notes the voice a `play` or `sound.play` reply named, and the voice it stole.
  private func started(_ play: PlayReply) {
    context.ledger.replied(voice: play.voice)
    if let stolen = play.stole {
      counts[.steals] += 1
      context.ledger.stole(voice: stolen)
    }
  }

  private func playParameters(notify: Bool = false) -> PlayParameters {
    let r = random(0..<100)
    return PlayParameters(cue: cue().name, volume: unit(), pan: panValue(), loops: r < 90 ? 0 : r < 97 ? 1 : 2, notify: notify)
  }

  // MARK: - One-shot plays

  private func play(_ wire: Wire) throws(WireError) {
    waitForBudget()
    let notify = chance(10)
    context.ledger.reserve()
    defer { context.ledger.release() }
    counts[.playRequests] += 1
    guard let reply = try ask(wire, .play(playParameters(notify: notify)), as: PlayReply.self) else { return }
    counts[.plays] += 1
    if notify { counts[.notifyPlays] += 1 }
    started(reply)
    // Now and then stop it again: it may have ended already (unknown-voice).
    if chance(2) {
      counts[.stops] += 1
      _ = try ask(wire, .stop(.voice(reply.voice), fadeSeconds: 0.005), expected: [.unknownVoice])
    }
  }

  // MARK: - Players

  private func playerSession(_ wire: Wire) throws(WireError) {
    counts[.playerSessions] += 1
    let enableRate = chance(25)
    let creation = PlayerCreation(
      source: source(), enableRate: enableRate, meteringEnabled: chance(25),
      settings: PlayerSettings(
        volume: unit(), pan: panValue(), numberOfLoops: chance(20) ? -1 : random(0..<2), rate: enableRate ? 1.25 : nil))
    guard let player = try ask(wire, Request(PlayerCreateRequest(creation)), as: PlayerCreateReply.self)?.player else { return }
    counts[.playersCreated] += 1
    _ = try ask(wire, Request(PlayerPlayRequest(player: player, atDeviceTime: nil)))
    for _ in 0..<random(0..<4) {
      switch random(0..<6) {
      case 0: _ = try ask(wire, Request(PlayerSetRequest(player: player, PlayerSettings(volume: unit(), fade: 0.02))))
      case 1: _ = try ask(wire, Request(PlayerSetRequest(player: player, PlayerSettings(currentTime: unit() * 0.05))))
      case 2: _ = try ask(wire, Request(PlayerGetRequest(player: player)))
      case 3:
        _ = try ask(wire, Request(PlayerPauseRequest(player: player)))
        _ = try ask(wire, Request(PlayerPlayRequest(player: player, atDeviceTime: nil)))
      case 4:
        _ = try ask(wire, Request(PlayerStopRequest(player: player)))
        _ = try ask(wire, Request(PlayerPlayRequest(player: player, atDeviceTime: nil)))
      default:
        if enableRate {
          _ = try ask(wire, Request(PlayerSetRequest(player: player, PlayerSettings(rate: 0.5 + unit() * 1.5))))
        } else {
          _ = try ask(wire, Request(PlayerSetRequest(player: player, PlayerSettings(pan: panValue(), fade: 0.01))))
        }
      }
    }
    switch random(0..<3) {
    case 0: _ = try ask(wire, Request(PlayerPauseRequest(player: player)))
    case 1: _ = try ask(wire, Request(PlayerStopRequest(player: player)))
    default: break
    }
    if try ask(wire, Request(PlayerDestroyRequest(player: player))) != nil { counts[.playersDestroyed] += 1 }
  }

  // MARK: - System sounds

  private func soundSession(_ wire: Wire) throws(WireError) {
    counts[.soundSessions] += 1
    guard let sound = try ask(wire, Request(SoundCreateRequest(source(), detached: false)), as: SoundCreateReply.self)?.sound else { return }
    counts[.soundsCreated] += 1
    if chance(50) { _ = try ask(wire, Request(SoundCompletionRequest(sound: sound, enabled: true))) }
    for _ in 0..<(2 + random(0..<3)) {
      try playSound(sound, on: wire)
    }
    // Disposed of right after the last play: by default what plays finishes; `now` fades it out.
    if try ask(wire, Request(SoundDisposeRequest(sound: sound, now: chance(30)))) != nil { counts[.soundsDisposed] += 1 }
  }

  // MARK: - Connect/disconnect cycles

  private static let cycleKinds: [(String, Int)] = [
    ("ping", 20), ("play", 15), ("play-unread", 15), ("mid-line", 10), ("pipelined-unread", 10),
    ("player-left", 10), ("sound-left", 10), ("notify-close", 5), ("half-close", 5), ("detached", 5),
  ]

  /// One connect/disconnect cycle; `own` is the worker's lasting connection.
  private func cycle(_ own: Wire) {
    var pick = random(0..<Self.cycleKinds.reduce(0) { $0 + $1.1 })
    var kind = Self.cycleKinds[0].0
    for (name, weight) in Self.cycleKinds {
      if pick < weight {
        kind = name
        break
      }
      pick -= weight
    }
    counts[.cycles] += 1
    counts.cycleKinds[kind, default: 0] += 1
    do {
      try cycle(kind, own: own)
    } catch {
      fail("cycle \(kind): \(error)")
    }
  }

  private func cycle(_ kind: String, own: Wire) throws(WireError) {
    switch kind {
    case "ping":
      let wire = try connect()
      _ = try ask(wire, .ping)
      wire.close()
    case "play":
      waitForBudget()
      context.ledger.reserve()
      defer { context.ledger.release() }
      let wire = try connect()
      counts[.playRequests] += 1
      if let reply = try ask(wire, .play(playParameters()), as: PlayReply.self) {
        counts[.plays] += 1
        started(reply)
      }
      wire.close()
    case "play-unread":
      // Closed before the reply is read; the daemon still carries the complete line out. Its voice
      // is known to the ledger from its `started` event.
      waitForBudget()
      let wire = try connect()
      try wire.send(.play(PlayParameters(cue: cue().name, volume: unit(), pan: panValue())))
      counts[.unread] += 1
      wire.close()
    case "mid-line":
      // A final line without its "\n" is discarded.
      let wire = try connect()
      let line = Request.play(PlayParameters(cue: cue().name)).line(id: .number(1))
      try wire.write(Array(line.prefix(random(1..<line.count))))
      wire.close()
    case "pipelined-unread":
      let wire = try connect()
      var bytes: [UInt8] = []
      for (i, request) in [Request.hello(client: "cued-soak"), .status, .list, .ping].enumerated() {
        bytes += request.line(id: .number(i + 1))
      }
      try wire.write(bytes)
      counts[.unread] += 4
      wire.close()
    case "player-left":
      // The player (playing, sometimes looping until stopped) goes with the connection.
      let wire = try connect()
      let creation = PlayerCreation(
        source: .cue(cue().name), settings: PlayerSettings(volume: unit(), numberOfLoops: chance(50) ? -1 : 0))
      if let id = try ask(wire, Request(PlayerCreateRequest(creation)), as: PlayerCreateReply.self)?.player {
        counts[.playersCreated] += 1
        counts[.leftToClose] += 1
        _ = try ask(wire, Request(PlayerPlayRequest(player: id, atDeviceTime: nil)))
      }
      wire.close()
    case "sound-left":
      // The sound is disposed of with the connection; its plays finish.
      let wire = try connect()
      if let id = try ask(wire, Request(SoundCreateRequest(.cue(cue().name), detached: false)), as: SoundCreateReply.self)?.sound {
        counts[.soundsCreated] += 1
        counts[.leftToClose] += 1
        if chance(50) { _ = try ask(wire, Request(SoundCompletionRequest(sound: id, enabled: true))) }
        for _ in 0..<2 { try playSound(id, on: wire) }
      }
      wire.close()
    case "notify-close":
      // The voice owes this connection a `finished` event; the connection is gone before it ends.
      waitForBudget()
      context.ledger.reserve()
      defer { context.ledger.release() }
      let wire = try connect()
      counts[.playRequests] += 1
      if let reply = try ask(wire, .play(playParameters(notify: true)), as: PlayReply.self) {
        counts[.plays] += 1
        counts[.notifyPlays] += 1
        started(reply)
      }
      wire.close()
    case "detached":
      // A detached player and sound outlive the connection that made them; the worker's own
      // connection then destroys and disposes of them (the sound while it may still be playing).
      let wire = try connect()
      var player: UInt64? = nil
      var sound: UInt64? = nil
      let creation = PlayerCreation(source: .cue(cue().name), detached: true, settings: PlayerSettings(volume: unit()))
      if let id = try ask(wire, Request(PlayerCreateRequest(creation)), as: PlayerCreateReply.self)?.player {
        counts[.playersCreated] += 1
        player = id
        _ = try ask(wire, Request(PlayerPlayRequest(player: id, atDeviceTime: nil)))
      }
      if let id = try ask(wire, Request(SoundCreateRequest(.cue(cue().name), detached: true)), as: SoundCreateReply.self)?.sound {
        counts[.soundsCreated] += 1
        sound = id
        try playSound(id, on: wire)
      }
      wire.close()
      if let player, try ask(own, Request(PlayerDestroyRequest(player: player))) != nil { counts[.playersDestroyed] += 1 }
      if let sound, try ask(own, Request(SoundDisposeRequest(sound: sound, now: chance(50)))) != nil { counts[.soundsDisposed] += 1 }
    default:  // "half-close"
      // shutdown(SHUT_WR): the daemon answers, sends the owed `finished`, then closes.
      waitForBudget()
      context.ledger.reserve()
      defer { context.ledger.release() }
      let wire = try connect()
      let shortest = context.cues.min { $0.duration < $1.duration }!
      let id = try wire.send(.play(PlayParameters(cue: shortest.name, notify: true)))
      wire.shutdownWrite()
      counts[.requests] += 1
      counts[.playRequests] += 1
      let before = tally.events[EventKind.finished.rawValue, default: 0]
      let body = counts.record(PlayRequest.op.rawValue, try wire.reply(to: id))
      if let body, let reply = counts.decode(PlayReply.self, body, PlayRequest.op.rawValue) {
        counts[.plays] += 1
        counts[.notifyPlays] += 1
        started(reply)
      }
      try wire.readToEnd(timeout: 10)
      if body != nil && tally.events[EventKind.finished.rawValue, default: 0] == before {
        counts[.unexpectedErrors] += 1
        counts.problem("half-close: the daemon closed without the owed finished event")
      }
      wire.close()
    }
  }
}
