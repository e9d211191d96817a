import CueClient
import CueProtocol

/// What `cuectl top` knows of the daemon: the replies it asked for once (status, level, groups,
/// voices, the cues' lengths) kept up to date by events (started, finished, device, level, paging,
/// meters). Pure: the loop feeds it, the screen reads it, `--json` writes it.
struct TopModel {
  /// One voice sounding now.
  struct Voice: Equatable {
    var voice: UInt64
    var cue: String
    /// play, player N, sound N, paging
    var origin: String
    var loops: Int
    /// Seconds it had sounded when `seenAt` (monotonic seconds) was read.
    var seconds: Double
    var seenAt: Double
    var stopping: Bool
    var peak: Double = 0
    /// After the chain (from `voices`; nil until it has been asked, or from an older daemon).
    var mix: VoiceMix? = nil
  }

  /// One play in the recent list: sounded, or silent and why.
  struct Play: Equatable {
    var at: Double
    var cue: String
    var voice: UInt64?
    /// nil: it sounded; else why it was silent (`level`, `cooldown`, …).
    var silentBecause: String?
  }

  /// One paging decision.
  struct Page: Equatable {
    var at: Double
    var carousel: String
    var message: String
    var from: Int?
    var to: Int?
    var decision: String
    var cue: String?
  }

  var socket: String
  var reachable = false
  /// Why not, when not reachable.
  var problem: String? = nil
  /// `status`'s reply as it arrived (fields a newer daemon adds are shown when known here).
  var status: JSONValue? = nil
  var level: LevelReply? = nil
  var groups: [GroupReply.Group] = []
  /// The connections (`clients`), kept as fresh as `status`'s count of them.
  var clients: [ClientsReply.Client] = []
  var voices: [Voice] = []
  var durations: [String: Double] = [:]
  var mix: Event.Meters.Level? = nil
  var recent: [Play] = []
  var pages: [Page] = []
  /// Voices started by a paging decision (their origin is shown as paging).
  var pagingVoices: Set<UInt64> = []

  static let keptPlays = 50
  static let keptPages = 20

  init(socket: String) { self.socket = socket }

  // MARK: Replies

  mutating func apply(voices reply: VoicesReply, at now: Double) {
    let peaks = Dictionary(voices.map { ($0.voice, $0.peak) }, uniquingKeysWith: { a, _ in a })
    voices = reply.voices.map { v in
      Voice(
        voice: v.voice, cue: v.cue, origin: origin(v.origin, voice: v.voice), loops: v.loops, seconds: v.seconds, seenAt: now,
        stopping: v.stopping, peak: peaks[v.voice] ?? 0, mix: v.mix)
    }
  }

  private func origin(_ origin: Event.Origin, voice: UInt64) -> String {
    switch origin {
    case .player(let id): "player \(id)"
    case .sound(let id): "sound \(id)"
    case .oneShot: pagingVoices.contains(voice) ? "paging" : "play"
    }
  }

  // MARK: Events

  /// What an event changes; returns the requests the loop should send to refresh what it cannot
  /// know from the event alone (ducking after a start, counters after a device change).
  mutating func apply(_ event: Event, at now: Double) -> Set<Refresh> {
    switch event {
    case .started(let e):
      if !voices.contains(where: { $0.voice == e.voice }) {
        voices.append(Voice(voice: e.voice, cue: e.cue, origin: origin(e.origin, voice: e.voice), loops: 0, seconds: 0, seenAt: now, stopping: false))
      }
      note(Play(at: now, cue: e.cue, voice: e.voice, silentBecause: nil))
      return [.voices, .groups, .status]
    case .finished(let e):
      voices.removeAll { $0.voice == e.voice }
      if let voice = e.voice { pagingVoices.remove(voice) }
      if SilenceReason(rawValue: e.reason.rawValue) != nil, let voice = e.voice {
        if let index = recent.firstIndex(where: { $0.voice == voice }) {
          // A level change faded it out: it sounded, then was silenced.
          recent[index].silentBecause = e.reason.rawValue
        } else {
          note(Play(at: now, cue: e.cue ?? "?", voice: voice, silentBecause: e.reason.rawValue))
        }
      }
      return [.groups, .status]
    case .completion(let e):
      if e.voice == nil, SilenceReason(rawValue: e.reason.rawValue) != nil {
        note(Play(at: now, cue: "sound \(e.sound)", voice: nil, silentBecause: e.reason.rawValue))
      }
      return []
    case .device:
      return [.status, .voices]
    case .level(let e):
      level?.level = e.level
      level?.setBy = e.setBy
      return [.level, .status]
    case .paging(let e):
      if let voice = e.outcome.voice { pagingVoices.insert(voice) }
      pages.append(
        Page(at: now, carousel: e.carousel, message: e.message, from: e.from, to: e.to, decision: e.outcome.decision.rawValue, cue: e.outcome.cue))
      if pages.count > Self.keptPages { pages.removeFirst(pages.count - Self.keptPages) }
      if e.outcome.voice == nil, let reason = e.outcome.reason {
        note(Play(at: now, cue: e.outcome.cue ?? e.carousel, voice: nil, silentBecause: reason.rawValue))
      }
      return []
    case .meters(let m):
      mix = m.mix
      let levels = Dictionary(m.voices.map { ($0.voice, $0.level.peak) }, uniquingKeysWith: { a, _ in a })
      for index in voices.indices { voices[index].peak = levels[voices[index].voice] ?? 0 }
      // A voice listed that no longer sounds, and whose end no event told (a player stopped or
      // paused ends without `finished`): the list is asked for again.
      return voices.contains { levels[$0.voice] == nil && now - $0.seenAt > 0.2 } ? [.voices] : []
    case .reloaded:
      return [.cues]
    case .decodeError, .eventsDropped, .unknown:
      return []
    }
  }

  /// What the loop asks the daemon again after an event.
  enum Refresh: Hashable { case status, level, groups, voices, cues, clients }

  private mutating func note(_ play: Play) {
    recent.append(play)
    if recent.count > Self.keptPlays { recent.removeFirst(recent.count - Self.keptPlays) }
  }

  // MARK: Reading

  /// How far through its cue a voice is now (0…1), and the pass it is on; nil when the cue's length is unknown.
  func progress(of voice: Voice, at now: Double) -> (fraction: Double, pass: Int)? {
    guard let duration = durations[voice.cue], duration > 0 else { return nil }
    let elapsed = voice.seconds + max(0, now - voice.seenAt)
    let pass = Int(elapsed / duration)
    if voice.loops >= 0 && pass > voice.loops { return (1, voice.loops) }
    return ((elapsed - Double(pass) * duration) / duration, pass)
  }

  /// A field of `status`'s reply (`device.backend`), if the daemon sent it.
  func status(_ path: String) -> JSONValue? {
    var value = status
    for key in path.split(separator: ".") { value = value?[String(key)] }
    return value
  }

  private static func json(_ client: ClientsReply.Client) -> JSONValue {
    var fields: [(String, JSONValue)] = [("connection", .number(Double(client.connection)))]
    if let name = client.name { fields.append(("name", .string(name))) }
    fields.append(("subscribed", .bool(client.subscribed)))
    if let meters = client.meters { fields.append(("meters", .number(meters))) }
    fields.append(("asking", .bool(client.asking)))
    return .object(fields)
  }

  /// The snapshot `--json` prints.
  func json(at now: Double) -> JSONValue {
    func level(_ l: Event.Meters.Level?) -> JSONValue {
      l.map { .object([("peak", .number($0.peak)), ("rms", .number($0.rms))]) } ?? .null
    }
    var members: [(String, JSONValue)] = [("socket", .string(socket)), ("reachable", .bool(reachable))]
    if let problem { members.append(("problem", .string(problem))) }
    members.append(("status", status ?? .null))
    members.append(("level", self.level.map { .object($0.fields) } ?? .null))
    members.append(("clients", .array(clients.map(Self.json))))
    members.append(("groups", .array(groups.map { g in
      .object([
        ("name", .string(g.name)), ("volume", .number(g.volume)), ("muted", .bool(g.muted)), ("ducked", .number(g.ducked)),
        ("atQuiet", .bool(g.atQuiet)),
      ])
    })))
    members.append(("voices", .array(voices.map { v in
      var fields: [(String, JSONValue)] = [
        ("voice", .number(Double(v.voice))), ("cue", .string(v.cue)), ("origin", .string(v.origin)), ("loops", .number(Double(v.loops))),
        ("stopping", .bool(v.stopping)), ("peak", .number(v.peak)),
      ]
      if let mix = v.mix {
        fields += [("group", .string(mix.group)), ("gain", .number(mix.gain)), ("pan", .number(mix.pan))]
        if let client = mix.client { fields.append(("client", .string(client))) }
      }
      if let p = progress(of: v, at: now) { fields += [("progress", .number(p.fraction)), ("pass", .number(Double(p.pass)))] }
      return .object(fields)
    })))
    members.append(("mix", level(mix)))
    members.append(("recent", .array(recent.map { p in
      .object(
        [("cue", .string(p.cue))] + (p.voice.map { [("voice", JSONValue.number(Double($0)))] } ?? [])
          + [("played", .bool(p.silentBecause == nil))] + (p.silentBecause.map { [("reason", JSONValue.string($0))] } ?? []))
    })))
    members.append(("paging", .array(pages.map { p in
      var fields: [(String, JSONValue)] = [("carousel", .string(p.carousel)), ("message", .string(p.message))]
      if let from = p.from { fields.append(("from", .number(Double(from)))) }
      if let to = p.to { fields.append(("to", .number(Double(to)))) }
      fields.append(("decision", .string(p.decision)))
      if let cue = p.cue { fields.append(("cue", .string(cue))) }
      return .object(fields)
    })))
    return .object(members)
  }
}
