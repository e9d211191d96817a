import CueProtocol
import Synchronization

/// Every voice the soak caused, from the replies the workers read and the events the monitor reads.
///
/// A voice is *known* once a reply named it (`play`, `sound.play`) or a `started` event did (plays
/// whose reply nobody read); it is *live* until its `finished` event. At the end no voice may be
/// live: each must have ended and been reported. Player voices are left out, since `player.pause`,
/// `player.stop` and `player.destroy` end a voice without a `finished` event (docs/PROTOCOL.md);
/// the `players` and `voices` fields of `status` cover them.
///
/// The live count, plus the requests in flight, bounds the voices the workers keep sounding.
final class Ledger: Sendable {
  private struct State {
    var voices: [UInt64: UInt8] = [:]
    var live = 0
    var reserved = 0
    var started = 0
    var finished = 0
    var playerStarted = 0
    var playerFinished = 0
    var reasons: [String: Int] = [:]
    var eventsDropped = 0
    var deviceEvents: [String: Int] = [:]
  }

  private static let replied: UInt8 = 1
  private static let startedBit: UInt8 = 2
  private static let finishedBit: UInt8 = 4
  /// A reply's `stole` named it.
  private static let stolenBit: UInt8 = 8
  /// The high nibble: the `finished` reason, as an index into `FinishReason.allCases` plus one.

  private let state = Mutex(State())

  /// Voices sounding (as far as the soak knows) plus requests that may start one.
  var inFlight: Int { state.withLock { $0.live + $0.reserved } }
  var live: Int { state.withLock { $0.live } }

  /// Before sending a request that may start a voice.
  func reserve() { state.withLock { $0.reserved += 1 } }
  /// When its reply has come (or will never be read).
  func release() { state.withLock { $0.reserved -= 1 } }

  func replied(voice: UInt64) { mark(voice, Self.replied) }
  func stole(voice: UInt64) { mark(voice, Self.stolenBit) }

  private func mark(_ voice: UInt64, _ bit: UInt8) {
    state.withLock { s in
      let old = s.voices[voice] ?? 0
      let new = old | bit
      s.voices[voice] = new
      let wasLive = old & (Self.replied | Self.startedBit) != 0 && old & Self.finishedBit == 0
      let isLive = new & (Self.replied | Self.startedBit) != 0 && new & Self.finishedBit == 0
      if isLive && !wasLive { s.live += 1 }
      if wasLive && !isLive { s.live -= 1 }
    }
  }

  /// An event read by the monitor, which subscribes to `started`, `finished` and `device`.
  func event(_ event: Event) {
    switch event {
    case .started(let started):
      if case .player = started.origin {
        state.withLock { $0.playerStarted += 1 }
      } else {
        state.withLock { $0.started += 1 }
        mark(started.voice, Self.startedBit)
      }
    case .finished(let finished):
      state.withLock { $0.reasons[finished.reason.rawValue, default: 0] += 1 }
      if case .player = finished.origin {
        state.withLock { $0.playerFinished += 1 }
      } else if let voice = finished.voice {
        state.withLock { $0.finished += 1 }
        let code = UInt8(FinishReason.allCases.firstIndex(of: finished.reason)! + 1)
        mark(voice, Self.finishedBit | code << 4)
      }
    case .eventsDropped(let dropped):
      state.withLock { $0.eventsDropped += dropped.count }
    case .device(let device):
      state.withLock { $0.deviceEvents[device.state.rawValue, default: 0] += 1 }
    case .completion, .reloaded, .decodeError, .paging, .level, .meters, .unknown:
      break
    }
  }

  struct Summary: Sendable {
    /// Voices known and never reported finished, with a few of their ids.
    var unfinished: Int
    var unfinishedSample: [UInt64]
    /// `finished` events for voices nobody saw start or named in a read reply (refused voices of unread plays).
    var unclaimedFinished: Int
    var known: Int
    var started: Int
    var finished: Int
    var playerStarted: Int
    var playerFinished: Int
    var reasons: [String: Int]
    /// How the voices that replies said were stolen ended ("unseen": a player's voice, whose end is not tracked).
    var stolenEnds: [String: Int]
    var eventsDropped: Int
    var deviceEvents: [String: Int]
  }

  func summary() -> Summary {
    state.withLock { s in
      var unfinished: [UInt64] = []
      var unclaimed = 0
      var known = 0
      var stolenEnds: [String: Int] = [:]
      for (voice, bits) in s.voices {
        if bits & Self.stolenBit != 0 {
          let code = Int(bits >> 4)
          let name = bits & Self.finishedBit == 0 ? "unseen" : code >= 1 && code <= FinishReason.allCases.count ? FinishReason.allCases[code - 1].rawValue : "other"
          stolenEnds[name, default: 0] += 1
        }
        if bits & ~(Self.stolenBit | 0xF0) == 0 { continue }  // only named by a `stole`: a player's voice
        let isKnown = bits & (Self.replied | Self.startedBit) != 0
        if isKnown { known += 1 }
        if isKnown && bits & Self.finishedBit == 0 { unfinished.append(voice) }
        if !isKnown { unclaimed += 1 }
      }
      unfinished.sort()
      return Summary(
        unfinished: unfinished.count, unfinishedSample: Array(unfinished.prefix(10)), unclaimedFinished: unclaimed,
        known: known, started: s.started, finished: s.finished, playerStarted: s.playerStarted,
        playerFinished: s.playerFinished, reasons: s.reasons, stolenEnds: stolenEnds, eventsDropped: s.eventsDropped, deviceEvents: s.deviceEvents)
    }
  }
}

/// What one worker did; merged over all of them.
struct Counts: Sendable {
  /// The plain counters, merged by adding them up.
  enum Tally: Int, CaseIterable, Sendable {
    /// One-shot `play` requests whose reply was read, and those answered with a voice.
    case playRequests, plays, notifyPlays
    /// Replies (`play`, `sound.play`) that stole a voice.
    case steals, stops, cycles
    case playerSessions, playersCreated, playersDestroyed
    case soundSessions, soundsCreated, soundPlays, soundsDisposed
    /// Players and sounds left for a closing connection to clean up.
    case leftToClose
    /// Requests whose reply was awaited, replies received (ok or error), and requests written on
    /// connections closed without reading the replies.
    case requests, replies, unread
    case unexpectedErrors, transportFailures
    /// Milliseconds workers waited for voices to end (the voice budget).
    case budgetWaitMilliseconds, budgetStalls
  }

  private var tallies = [Int](repeating: 0, count: Tally.allCases.count)
  var cycleKinds: [String: Int] = [:]
  var errors: [String: Int] = [:]
  var problems: [String] = []
  var events: [String: Int] = [:]

  subscript(_ tally: Tally) -> Int {
    get { tallies[tally.rawValue] }
    set { tallies[tally.rawValue] = newValue }
  }

  mutating func problem(_ text: String) {
    if problems.count < 20 { problems.append(text) }
  }

  /// Counts a reply; returns the body of a success. Errors in `expected` are counted, not failures.
  mutating func record(
    _ op: String, _ result: Result<JSONValue, ProtocolError>, expected: Set<ErrorCode> = []
  ) -> JSONValue? {
    self[.replies] += 1
    switch result {
    case .success(let body):
      return body
    case .failure(let error):
      errors[error.code.rawValue, default: 0] += 1
      // A full command queue and a configured limit are the daemon protecting itself: counted, not failures.
      if !expected.contains(error.code) && error.code != .busy && error.code != .limitReached {
        self[.unexpectedErrors] += 1
        problem("\(op): \(error.code.rawValue): \(error.message)")
      }
      return nil
    }
  }

  /// Reads a reply body as `type`; one that cannot be read is an unexpected error, named in the problems.
  mutating func decode<T: ReplyFields>(_ type: T.Type, _ body: JSONValue, _ op: String) -> T? {
    do {
      return try T(reply: body)
    } catch {
      self[.unexpectedErrors] += 1
      problem("\(op): the reply cannot be read (\(error.message)): \(body)")
      return nil
    }
  }

  mutating func merge(_ o: Counts) {
    for tally in Tally.allCases { self[tally] += o[tally] }
    cycleKinds.merge(o.cycleKinds, uniquingKeysWith: +)
    errors.merge(o.errors, uniquingKeysWith: +)
    for p in o.problems { problem(p) }
    events.merge(o.events, uniquingKeysWith: +)
  }
}
