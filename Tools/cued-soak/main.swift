// cued-soak: a soak test that drives a running cued over its socket (`make soak`,
// Tests/EndToEndTests/SoakTests.swift, docs/RELIABILITY.md).
//
//   cued-soak [--socket PATH] [--pid PID] [--plays N] [--cycles N] [--clients K] [--quick] [--json] …
//
// K client threads interleave one-shot plays, connect/disconnect cycles, player sessions and system
// sound sessions, with the voices they keep sounding bounded below the daemon's voice limit. The
// first part of the work (--warmup, 10%, with a floor) is a warm-up; once the daemon is idle again its
// RSS (VmRSS), open descriptors (/proc/PID/fd), threads and `status` are the baseline. After the rest,
// once every voice has ended and every player and sound has gone, they are taken again. A monitor
// connection subscribed to `started` and `finished` checks that every voice the soak caused ended.
// It passes when RSS grew by less than --rss-limit KiB, the descriptors and threads are back to the
// baseline, no voice, player, sound or client is left over, every request was answered without an
// unexpected error (`busy` and `limit-reached` are counted, not failures), and the daemon is still
// alive. Exit status: 0 pass, 1 fail, 2 usage or no daemon.
import CuePosix
import CueProtocol
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

enum Soak {
  static func main() -> Int32 {
    let options: Options
    switch Options.parse(Array(CommandLine.arguments.dropFirst())) {
    case .success(let parsed): options = parsed
    case .failure(let usage):
      if usage.message.isEmpty {
        writeToStandardOutput(Options.usage)
        return 0
      }
      writeToStandardError("cued-soak: \(usage.message)\n\n" + Options.usage)
      return 2
    }
    let socket = DefaultPaths.socket(explicit: options.socket)
    let run = Run(options: options, socket: socket)
    do {
      return try run.run()
    } catch {
      // Before the soak began: no daemon to soak (2). After: the daemon failed it (1).
      guard run.began else {
        writeToStandardError("cued-soak: \(error)\n")
        return 2
      }
      writeToStandardError("cued-soak: FAIL: \(error)\n")
      if options.json {
        let failure = JSONValue.object([("pass", false), ("failures", .array([.string("\(error)")]))])
        writeToStandardOutput(JSONWriter.write(failure) + "\n")
      }
      return 1
    }
  }
}

struct UsageError: Error {
  var message: String
  init(_ message: String) { self.message = message }
}

struct SetupError: Error, CustomStringConvertible {
  var description: String
  init(_ description: String) { self.description = description }
}

/// One soak run.
final class Run {
  let options: Options
  let socket: String
  let ledger = Ledger()
  let abort = Flag()
  let progress = Progress()
  private var failures: [String] = []
  /// Set once the warm-up starts: a failure from then on is the daemon's.
  private(set) var began = false
  private var log: (String) -> Void

  init(options: Options, socket: String) {
    self.options = options
    self.socket = socket
    let json = options.json
    // With --json, stdout holds the JSON alone and everything for people goes to stderr.
    log = { json ? writeToStandardError($0 + "\n") : writeToStandardOutput($0 + "\n") }
  }

  private func fail(_ text: String) { failures.append(text) }

  private func status(_ control: Wire) throws -> (StatusReply, StatusFigures) {
    switch try control.request(.status) {
    case .success(let body):
      do {
        let status = try StatusReply(reply: body)
        return (status, StatusFigures(status))
      } catch {
        throw SetupError("the status reply cannot be read (\(error.message)): \(body)")
      }
    case .failure(let error): throw SetupError("status: \(error)")
    }
  }

  private func snapshot(_ control: Wire, pid: Int32) throws -> Snapshot {
    let (_, figures) = try status(control)
    guard let process = ProcessFigures.read(pid: pid) else { throw SetupError("the daemon (pid \(pid)) is gone") }
    return Snapshot(process: process, status: figures)
  }

  /// Polls `status` until nothing the soak made is left: no voice, player or sound, `clients`
  /// connections, and every voice the ledger knows reported finished.
  private func waitUntilIdle(_ control: Wire, clients: Int, timeout: Double) throws -> (Bool, StatusFigures, Double) {
    let began = MonotonicClock.seconds()
    var last = StatusFigures()
    while true {
      last = try status(control).1
      if last.voices == 0 && last.players == 0 && last.sounds == 0 && last.clients == clients && ledger.inFlight == 0 {
        return (true, last, MonotonicClock.seconds() - began)
      }
      if MonotonicClock.seconds() - began > timeout { return (false, last, timeout) }
      sleep(seconds: 0.02)
    }
  }

  func run() throws -> Int32 {
    let runBegan = MonotonicClock.seconds()
    let control = try Wire.connect(socket)
    guard case .success(let helloBody) = try control.request(.hello(client: "cued-soak")) else {
      throw SetupError("hello was refused")
    }
    let hello = try? HelloReply(reply: helloBody)
    guard hello?.protocolVersion == protocolVersion else {
      throw SetupError("the daemon speaks protocol \(hello.map { "\($0.protocolVersion)" } ?? "?"); cued-soak knows \(protocolVersion)")
    }
    let (daemonStatus, _) = try status(control)
    let pid = options.pid ?? Int32(daemonStatus.pid)
    guard ProcessFigures.read(pid: pid) != nil else { throw SetupError("cannot read /proc/\(pid): is --pid the daemon's?") }
    let voiceLimit = daemonStatus.voiceLimit
    guard case .success(let listBody) = try control.request(.list), let list = try? ListReply(reply: listBody), !list.cues.isEmpty
    else { throw SetupError("the daemon has no cues to play") }
    let cues = list.cues
    // Player voices (one per client at a time, plus those of closing connections) come on top.
    let budget = options.budget ?? max(2, voiceLimit * 3 / 4 - options.clients)

    // The monitor sees every voice start and end, whoever started it.
    let monitorReady = Flag()
    let stopMonitor = Flag()
    let monitorFailure = Mutex<String?>(nil)
    let ledger = self.ledger
    let socket = self.socket
    // No thread means no soak test: failing to start one ends the run.
    let monitor = try! Threads.Joinable(name: "soak-monitor") {
      do {
        let wire = try Wire.connect(socket)
        wire.onEvent = { event in ledger.event(event) }
        guard case .success = try wire.request(.subscribe(EventFilter(kinds: [.started, .finished, .device]))) else {
          throw SetupError("subscribe was refused")
        }
        monitorReady.set()
        while !stopMonitor.isSet {
          if !(try wire.pump(milliseconds: 20)) { throw WireError.disconnected }
        }
        wire.close()
      } catch {
        monitorFailure.withLock { $0 = "monitor: \(error)" }
        monitorReady.set()
      }
    }
    while !monitorReady.isSet { sleep(seconds: 0.005) }
    if let failure = monitorFailure.withLock({ $0 }) { throw SetupError(failure) }
    let ownClients = 2  // this control connection and the monitor

    let total = Quota(
      plays: options.plays, cycles: options.cycles, playerSessions: options.playerSessions ?? options.plays / 100,
      soundSessions: options.soundSessions ?? options.plays / 100)
    // The warm-up is --warmup of the work, but at least enough of each kind to reach the daemon's
    // high-water marks (table capacities, malloc arenas of decode threads), and at most half of it.
    func warmShare(_ n: Int, floor: Int) -> Int {
      options.warmup == 0 ? 0 : min(max(Int(Double(n) * options.warmup), floor), n / 2)
    }
    let warm = Quota(
      plays: warmShare(total.plays, floor: 2_000), cycles: warmShare(total.cycles, floor: 200),
      playerSessions: warmShare(total.playerSessions, floor: 30), soundSessions: warmShare(total.soundSessions, floor: 30))
    let main = total - warm
    log(
      "cued-soak: daemon pid \(pid) at \(socket), \(cues.count) cues, voice limit \(voiceLimit), budget \(budget) voices, "
        + "\(options.clients) clients; \(total.plays) plays, \(total.cycles) cycles, \(total.playerSessions) player and "
        + "\(total.soundSessions) sound sessions; warm-up \(warm.plays) plays, \(warm.cycles) cycles, "
        + "\(warm.playerSessions) player and \(warm.soundSessions) sound sessions")
    let context = WorkerContext(socket: socket, cues: cues, ledger: ledger, budget: budget, abort: abort, progress: progress)
    let start = try snapshot(control, pid: pid)
    began = true

    // Warm-up.
    var counts = Counts()
    let warmResult = phase("warm-up", warm, context: context, pid: pid, seed: options.seed)
    counts.merge(warmResult.counts)
    let (warmIdle, _, _) = try waitUntilIdle(control, clients: ownClients, timeout: options.drainTimeout)
    if !warmIdle { fail("after the warm-up, the daemon did not become idle within \(options.drainTimeout) s") }
    let baseline = try snapshot(control, pid: pid)

    // The soak proper.
    let mainResult = phase("soak", main, context: context, pid: pid, seed: options.seed &+ 0x5EED)
    counts.merge(mainResult.counts)
    let (idle, drained, drainSeconds) = try waitUntilIdle(control, clients: ownClients, timeout: options.drainTimeout)
    if !idle {
      fail(
        "the daemon did not become idle within \(options.drainTimeout) s: voices \(drained.voices), players \(drained.players), "
          + "sounds \(drained.sounds), clients \(drained.clients) (expected \(ownClients)), voices the soak saw start "
          + "and not end \(ledger.live)")
    }
    // A decode thread may still be on its way out: give the descriptors and threads a moment.
    var final = try snapshot(control, pid: pid)
    for _ in 0..<20 where final.process.fds != baseline.process.fds || final.process.threads != baseline.process.threads {
      sleep(seconds: 0.05)
      final = try snapshot(control, pid: pid)
    }

    // The monitor goes: the daemon must be back to this one connection.
    stopMonitor.set()
    monitor.join()
    if let failure = monitorFailure.withLock({ $0 }) { fail(failure) }
    let (alone, afterMonitor, _) = try waitUntilIdle(control, clients: 1, timeout: 5)
    if !alone { fail("after the monitor closed, status shows \(afterMonitor.clients) clients, expected 1") }
    let alive = ProcessFigures.isAlive(pid: pid) && (try? control.request(.ping)).map { if case .success = $0 { true } else { false } } == true
    control.close()

    // Verdict.
    let summary = ledger.summary()
    let rssGrowth = final.process.rssKiB - baseline.process.rssKiB
    if counts[.transportFailures] > 0 { fail("\(counts[.transportFailures]) connection failures") }
    if counts[.unexpectedErrors] > 0 { fail("\(counts[.unexpectedErrors]) unexpected error replies") }
    if counts[.replies] != counts[.requests] { fail("\(counts[.requests] - counts[.replies]) requests were not answered") }
    if counts[.budgetStalls] > 0 { fail("voices stopped ending (\(counts[.budgetStalls]) stalls)") }
    if abort.isSet { fail("the run was cut short") }
    if rssGrowth >= options.rssLimitKiB {
      fail("RSS grew by \(rssGrowth) KiB after the warm-up (limit \(options.rssLimitKiB) KiB)")
    }
    if final.process.fds != baseline.process.fds {
      fail("open descriptors: \(final.process.fds), baseline \(baseline.process.fds)")
    }
    if final.process.threads != baseline.process.threads {
      fail("threads: \(final.process.threads), baseline \(baseline.process.threads)")
    }
    if final.status.voices != 0 || final.status.players != 0 || final.status.sounds != 0 {
      fail("left over: \(final.status.voices) voices, \(final.status.players) players, \(final.status.sounds) sounds")
    }
    if summary.unfinished > 0 {
      fail("\(summary.unfinished) voices never reported finished (e.g. \(summary.unfinishedSample.map(String.init).joined(separator: ", ")))")
    }
    if summary.eventsDropped > 0 || final.status.eventsDropped > 0 {
      fail("events were dropped (monitor \(summary.eventsDropped), daemon \(final.status.eventsDropped)): the voice ledger is incomplete")
    }
    if !alive { fail("the daemon is not alive at the end") }
    let pass = failures.isEmpty

    let mainSeconds = mainResult.seconds
    let mainPlays = mainResult.counts[.plays]
    let mainRequests = mainResult.counts[.requests] + mainResult.counts[.unread]
    let report = Report(
      pass: pass, failures: failures, options: options, pid: pid, voiceLimit: voiceLimit, budget: budget, counts: counts,
      total: total, warm: warm, warmSeconds: warmResult.seconds, mainSeconds: mainSeconds,
      totalSeconds: MonotonicClock.seconds() - runBegan, drainSeconds: drainSeconds,
      playsPerSecond: mainSeconds > 0 ? Double(mainPlays) / mainSeconds : 0,
      requestsPerSecond: mainSeconds > 0 ? Double(mainRequests) / mainSeconds : 0,
      cyclesPerSecond: mainSeconds > 0 ? Double(mainResult.counts[.cycles]) / mainSeconds : 0,
      start: start, baseline: baseline, final: final, peakRSSKiB: max(warmResult.peakRSSKiB, mainResult.peakRSSKiB),
      clientsAfterMonitor: afterMonitor.clients, ledger: summary, alive: alive)
    log(report.text)
    if options.json { writeToStandardOutput(JSONWriter.write(report.json) + "\n") }
    return pass ? 0 : 1
  }

  struct PhaseResult {
    var counts: Counts
    var seconds: Double
    var peakRSSKiB: Int
  }

  /// Runs `quota` over the client threads; samples the daemon's RSS while they work.
  private func phase(_ name: String, _ quota: Quota, context: WorkerContext, pid: Int32, seed: UInt64) -> PhaseResult {
    let results = Mutex<[Counts]>([])
    let done = Atomic<Int>(0)
    let quotas = quota.split(options.clients)
    let began = MonotonicClock.seconds()
    let playsBefore = progress.plays.load(ordering: .relaxed)
    let cyclesBefore = progress.cycles.load(ordering: .relaxed)
    let threads = quotas.enumerated().map { index, share in
      let workerSeed = seed &* 0x9E37_79B9_7F4A_7C15 &+ UInt64(index)
      return try! Threads.Joinable(name: "soak-\(index)") {
        let counts = Worker(context: context, seed: workerSeed).run(share)
        results.withLock { $0.append(counts) }
        done.add(1, ordering: .releasing)
      }
    }
    var peak = 0
    var nextReport = began + options.progressSeconds
    while done.load(ordering: .acquiring) < threads.count {
      sleep(seconds: 0.1)
      if let figures = ProcessFigures.read(pid: pid) {
        peak = max(peak, figures.rssKiB)
        let now = MonotonicClock.seconds()
        if options.progressSeconds > 0 && now >= nextReport {
          nextReport = now + options.progressSeconds
          let plays = progress.plays.load(ordering: .relaxed) - playsBefore
          let cycles = progress.cycles.load(ordering: .relaxed) - cyclesBefore
          writeToStandardError(
            "[\(name) \(Int(now - began)) s] plays \(plays)/\(quota.plays), cycles \(cycles)/\(quota.cycles), "
              + "\(Int(Double(plays) / (now - began))) plays/s, RSS \(figures.rssKiB) KiB, fds \(figures.fds), "
              + "voices in flight \(ledger.inFlight)\n")
        }
      } else if !abort.isSet {
        writeToStandardError("cued-soak: the daemon (pid \(pid)) is gone\n")
        abort.set()
      }
    }
    threads.forEach { $0.join() }
    var counts = Counts()
    for c in results.withLock({ $0 }) { counts.merge(c) }
    return PhaseResult(counts: counts, seconds: MonotonicClock.seconds() - began, peakRSSKiB: peak)
  }
}

exit(Soak.main())
