import CueProtocol

/// The outcome of a run, for people (`text`) and for tests (`json`).
struct Report {
  var pass: Bool
  var failures: [String]
  var options: Options
  var pid: Int32
  var voiceLimit: Int
  var budget: Int
  var counts: Counts
  var total: Quota
  var warm: Quota
  var warmSeconds: Double
  var mainSeconds: Double
  var totalSeconds: Double
  var drainSeconds: Double
  var playsPerSecond: Double
  var requestsPerSecond: Double
  var cyclesPerSecond: Double
  var start: Snapshot
  var baseline: Snapshot
  var final: Snapshot
  var peakRSSKiB: Int
  var clientsAfterMonitor: Int
  var ledger: Ledger.Summary
  var alive: Bool

  var rssGrowthKiB: Int { final.process.rssKiB - baseline.process.rssKiB }

  private static func fixed(_ x: Double, _ digits: Int = 1) -> String {
    var scale = 1.0
    for _ in 0..<digits { scale *= 10 }
    let rounded = (x * scale).rounded() / scale
    var text = String(rounded)
    if let dot = text.firstIndex(of: ".") {
      let decimals = text.distance(from: dot, to: text.endIndex) - 1
      if decimals < digits { text += String(repeating: "0", count: digits - decimals) }
    }
    return text
  }

  private static func mib(_ kib: Int) -> String { fixed(Double(kib) / 1024, 2) + " MiB" }

  private static func sorted(_ d: [String: Int]) -> String {
    d.isEmpty ? "none" : d.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
  }

  var text: String {
    let c = counts
    var lines: [String] = []
    lines.append("cued-soak: \(pass ? "PASS" : "FAIL")")
    lines.append(
      "  work       \(c[.plays]) plays (\(c[.playRequests]) requests, \(c[.notifyPlays]) with notify, \(c[.stops]) stopped early), "
        + "\(c[.cycles]) connect/disconnect cycles, \(c[.playerSessions]) player sessions, \(c[.soundSessions]) sound sessions "
        + "(\(c[.soundPlays]) sound plays), \(c[.playersCreated]) players and \(c[.soundsCreated]) sounds made, "
        + "\(c[.leftToClose]) left for their connection's close")
    lines.append(
      "  time       \(Self.fixed(totalSeconds)) s in all: warm-up \(Self.fixed(warmSeconds)) s, soak \(Self.fixed(mainSeconds)) s, "
        + "drain \(Self.fixed(drainSeconds, 2)) s")
    lines.append(
      "  throughput \(Self.fixed(playsPerSecond, 0)) plays/s, \(Self.fixed(cyclesPerSecond, 0)) cycles/s, "
        + "\(Self.fixed(requestsPerSecond, 0)) requests/s (after warm-up; voices bounded at \(budget) of \(voiceLimit))")
    lines.append(
      "  RSS        start \(Self.mib(start.process.rssKiB)), baseline \(Self.mib(baseline.process.rssKiB)), "
        + "final \(Self.mib(final.process.rssKiB)): growth \(rssGrowthKiB) KiB (limit \(options.rssLimitKiB) KiB); "
        + "peak while soaking \(Self.mib(peakRSSKiB)); anonymous \(Self.mib(baseline.process.anonymousKiB)) → "
        + "\(Self.mib(final.process.anonymousKiB)), file-backed \(Self.mib(baseline.process.fileKiB)) → "
        + "\(Self.mib(final.process.fileKiB))")
    lines.append(
      "  fds        start \(start.process.fds), baseline \(baseline.process.fds), final \(final.process.fds); "
        + "threads \(baseline.process.threads) → \(final.process.threads)")
    lines.append(
      "  status     final voices \(final.status.voices), players \(final.status.players), sounds \(final.status.sounds), "
        + "clients \(final.status.clients) (then \(clientsAfterMonitor) after the monitor left); "
        + "plays counter +\(final.status.plays - baseline.status.plays) during the soak; "
        + "underruns \(final.status.underruns - start.status.underruns)")
    lines.append(
      "  voices     \(ledger.known) seen (\(ledger.started) started, \(ledger.finished) finished, \(ledger.unfinished) unfinished, "
        + "\(ledger.unclaimedFinished) refused before a read reply); player voices \(ledger.playerStarted) started; "
        + "\(c[.steals]) steals (their ends: \(Self.sorted(ledger.stolenEnds))); end reasons: \(Self.sorted(ledger.reasons))")
    lines.append(
      "  requests   \(c[.requests]) answered \(c[.replies]), \(c[.unread]) sent unread; errors: \(Self.sorted(c.errors)) "
        + "(\(c[.unexpectedErrors]) unexpected); events on client connections: \(Self.sorted(c.events))")
    lines.append("  cycles     \(Self.sorted(c.cycleKinds))")
    lines.append("  waited     \(c[.budgetWaitMilliseconds]) ms for voices to end (all clients); device: \(Self.sorted(ledger.deviceEvents))")
    for problem in c.problems { lines.append("  problem    \(problem)") }
    for failure in failures { lines.append("  FAIL       \(failure)") }
    return lines.joined(separator: "\n")
  }

  private static func number(_ x: Int) -> JSONValue { .number(Double(x)) }
  private static func object(_ d: [String: Int]) -> JSONValue {
    .object(d.sorted { $0.key < $1.key }.map { ($0.key, number($0.value)) })
  }

  private static func figures(_ s: Snapshot) -> JSONValue {
    .object([
      ("rssKiB", number(s.process.rssKiB)), ("fds", number(s.process.fds)), ("threads", number(s.process.threads)),
      ("status", s.status.json),
    ])
  }

  var json: JSONValue {
    let c = counts
    return .object([
      ("pass", .bool(pass)),
      ("failures", .array(failures.map { .string($0) })),
      ("mode", .string(options.quick ? "quick" : "full")),
      ("pid", Self.number(Int(pid))),
      ("clients", Self.number(options.clients)),
      ("voiceLimit", Self.number(voiceLimit)),
      ("voiceBudget", Self.number(budget)),
      ("seconds", .object([
        ("total", .number(totalSeconds)), ("warmup", .number(warmSeconds)), ("soak", .number(mainSeconds)),
        ("drain", .number(drainSeconds)),
      ])),
      ("throughput", .object([
        ("playsPerSecond", .number(playsPerSecond)), ("cyclesPerSecond", .number(cyclesPerSecond)),
        ("requestsPerSecond", .number(requestsPerSecond)),
      ])),
      ("work", .object([
        ("plays", Self.number(c[.plays])), ("playRequests", Self.number(c[.playRequests])),
        ("notifyPlays", Self.number(c[.notifyPlays])), ("stops", Self.number(c[.stops])),
        ("cycles", Self.number(c[.cycles])), ("cycleKinds", Self.object(c.cycleKinds)),
        ("playerSessions", Self.number(c[.playerSessions])), ("playersCreated", Self.number(c[.playersCreated])),
        ("playersDestroyed", Self.number(c[.playersDestroyed])), ("soundSessions", Self.number(c[.soundSessions])),
        ("soundsCreated", Self.number(c[.soundsCreated])), ("soundPlays", Self.number(c[.soundPlays])),
        ("soundsDisposed", Self.number(c[.soundsDisposed])), ("leftToClose", Self.number(c[.leftToClose])),
        ("plannedPlays", Self.number(total.plays)), ("plannedCycles", Self.number(total.cycles)),
      ])),
      ("requests", .object([
        ("sent", Self.number(c[.requests])), ("answered", Self.number(c[.replies])), ("unread", Self.number(c[.unread])),
        ("errors", Self.object(c.errors)), ("unexpectedErrors", Self.number(c[.unexpectedErrors])),
        ("transportFailures", Self.number(c[.transportFailures])),
        ("problems", .array(c.problems.map { .string($0) })),
      ])),
      ("steals", Self.number(c[.steals])),
      ("rss", .object([
        ("startKiB", Self.number(start.process.rssKiB)), ("baselineKiB", Self.number(baseline.process.rssKiB)),
        ("finalKiB", Self.number(final.process.rssKiB)), ("growthKiB", Self.number(rssGrowthKiB)),
        ("limitKiB", Self.number(options.rssLimitKiB)), ("peakKiB", Self.number(peakRSSKiB)),
        ("baselineAnonKiB", Self.number(baseline.process.anonymousKiB)),
        ("finalAnonKiB", Self.number(final.process.anonymousKiB)),
        ("baselineFileKiB", Self.number(baseline.process.fileKiB)), ("finalFileKiB", Self.number(final.process.fileKiB)),
      ])),
      ("fds", .object([
        ("start", Self.number(start.process.fds)), ("baseline", Self.number(baseline.process.fds)),
        ("final", Self.number(final.process.fds)),
      ])),
      ("start", Self.figures(start)),
      ("baseline", Self.figures(baseline)),
      ("final", Self.figures(final)),
      ("leaks", .object([
        ("voices", Self.number(final.status.voices)), ("players", Self.number(final.status.players)),
        ("sounds", Self.number(final.status.sounds)), ("clients", Self.number(clientsAfterMonitor - 1)),
        ("unfinishedVoices", Self.number(ledger.unfinished)),
        ("fds", Self.number(final.process.fds - baseline.process.fds)),
      ])),
      ("voices", .object([
        ("seen", Self.number(ledger.known)), (EventKind.started.rawValue, Self.number(ledger.started)),
        (EventKind.finished.rawValue, Self.number(ledger.finished)), ("unfinished", Self.number(ledger.unfinished)),
        ("unclaimedFinished", Self.number(ledger.unclaimedFinished)), ("playerStarted", Self.number(ledger.playerStarted)),
        ("playerFinished", Self.number(ledger.playerFinished)), ("reasons", Self.object(ledger.reasons)),
        ("stolenEnds", Self.object(ledger.stolenEnds)),
        ("eventsDropped", Self.number(ledger.eventsDropped)),
      ])),
      ("underruns", Self.number(final.status.underruns - start.status.underruns)),
      ("daemonAlive", .bool(alive)),
    ])
  }
}
