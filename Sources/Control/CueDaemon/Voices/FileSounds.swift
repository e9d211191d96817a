import CueDecoding
import CueProtocol

/// Sound files played by path, each decoded once on a worker and kept: a theme event's file
/// (`ThemeSounds` finds it) and `play` with a `file`, or decoded ahead by `prepare`. Plays that come while a file decodes wait
/// for it, and their replies come when it has (a deferred reply, as for `sound.create` with a path).
///
/// A decode is kept under its path and the file's identity (device, inode, size, modification
/// time, as `fstat` said of the descriptor it was read through), and every play `stat`s the file
/// afresh (following symlinks). So a file replaced, rewritten in place or reached through a
/// re-pointed symlink is decoded afresh at its next play, and an unchanged one never twice. One
/// cache serves both kinds of play, so a theme file also played by its path is decoded once.
final class FileSounds {
  /// The most decoded files kept; past it the one played least recently is let go.
  var cacheLimit = 64
  /// The most decoded memory kept, in bytes: any client may name any file, and each may be as long
  /// as `max-cue-seconds`. Past it the least recent go (what plays keeps its audio).
  var byteLimit = 64 << 20

  /// A decoded file: its path and what `stat` said of the file behind it.
  private struct Key: Hashable {
    let path: String
    let stamp: FileStamp
  }
  private var cache: [Key: Cue] = [:]
  private var lastUsed: [Key: UInt64] = [:]
  private var uses: UInt64 = 0
  /// A play (or a `prepare`: no parameters) waiting for its file's decode.
  private struct Waiting {
    let parameters: PlayParameters?
    let rule: String
    let waiter: Waiter
    let client: String?
    /// The error its reply gets when the file does not decode.
    let failure: (DecodeError) -> ProtocolError
  }
  private var pending: [String: [Waiting]] = [:]
  private var tokens: [UInt64: String] = [:]
  private let gate: VoiceGate
  private let files: PathDecoder
  private let events: EventRouter
  private let ids: IDAllocator

  init(gate: VoiceGate, files: PathDecoder, events: EventRouter, ids: IDAllocator) {
    self.gate = gate
    self.files = files
    self.events = events
    self.ids = ids
  }

  /// Files decoded and kept.
  var count: Int { cache.count }

  /// The decodes kept for the file at `path` (at most one: a newer version lets the older go).
  func kept(_ path: String) -> [Cue] { cache.filter { $0.key.path == path }.map(\.value) }

  /// Plays the file at `path` under the rules of `rule` (`[cues.RULE]`: the level, its group, …);
  /// nil when the reply comes once the file is decoded, or as `failure` says if it does not decode.
  /// `confined`: the decoder checks again that the file it opens is inside the sound directories.
  func play(
    _ p: PlayParameters, path: String, rule: String, waiter: Waiter, client: String?, arrival: UInt64, confined: Bool,
    failure: @escaping (DecodeError) -> ProtocolError
  ) throws(ProtocolError) -> PlayReply? {
    if let cue = keptDecode(path) {
      return try start(p, rule: rule, cue: cue, file: path, owner: waiter.client, client: client, arrival: arrival)
    }
    wait(Waiting(parameters: p, rule: rule, waiter: waiter, client: client, failure: failure), path: path, confined: confined)
    return nil
  }

  /// Decodes the file at `path` and keeps it, playing nothing (`prepare`); nil when the reply comes
  /// once the file is decoded, or as `failure` says if it does not decode.
  func prepare(path: String, waiter: Waiter, confined: Bool, failure: @escaping (DecodeError) -> ProtocolError) -> PrepareReply? {
    if let cue = keptDecode(path) { return PrepareReply(file: path, bytes: cue.byteCount) }
    wait(Waiting(parameters: nil, rule: path, waiter: waiter, client: nil, failure: failure), path: path, confined: confined)
    return nil
  }

  /// The decode kept for the file at `path` as it is now, marked as used.
  private func keptDecode(_ path: String) -> Cue? {
    guard let stamp = FileStamp.of(path), case let key = Key(path: path, stamp: stamp), let cue = cache[key] else { return nil }
    touch(key)
    return cue
  }

  /// `waiting` until the file at `path` is decoded; the first to wait starts the decode.
  private func wait(_ waiting: Waiting, path: String, confined: Bool) {
    let first = pending[path] == nil
    pending[path, default: []].append(waiting)
    if first {
      let token = ids.make()
      tokens[token] = path
      files.decode(path: path, token: token, confined: confined)
    }
  }

  /// A play that is silent for `reason` before any file is looked at (the desktop's event sounds
  /// are off): a voice id, the reply and the `finished` that say why.
  func silent(_ p: PlayParameters, cue: String, reason: SilenceReason, owner: UInt64) -> PlayReply {
    gate.silentOneShot(p, cue: cue, reason: reason, owner: owner, events: events)
  }

  private func start(
    _ p: PlayParameters, rule: String, cue: Cue, file: String, owner: UInt64, client: String?, arrival: UInt64
  ) throws(ProtocolError) -> PlayReply {
    let choice = CueRules.Choice(cue: cue, variation: nil, gainFactor: 1, rateFactor: 1, rule: gate.rules.rule(for: rule))
    return try gate.playOneShot(p, choice: choice, rule: rule, file: file, owner: owner, client: client, arrival: arrival, events: events)
  }

  /// A file finished decoding: start the plays that waited for it. False when `token` is not ours.
  func decoded(token: UInt64, _ outcome: Result<Cue, DecodeError>) -> Bool {
    guard let path = tokens.removeValue(forKey: token) else { return false }
    let waiting = pending.removeValue(forKey: path) ?? []
    switch outcome {
    case .success(let cue):
      store(cue, at: Key(path: path, stamp: cue.fileStamp))
      for play in waiting {
        guard let parameters = play.parameters else {
          events.reply(to: play.waiter, PrepareReply(file: path, bytes: cue.byteCount))
          continue
        }
        // Arrival unknown (0): the wait for the decode is not trigger latency.
        do throws(ProtocolError) {
          let reply = try start(
            parameters, rule: play.rule, cue: cue, file: path, owner: play.waiter.client, client: play.client, arrival: 0)
          events.reply(to: play.waiter, reply)
        } catch {
          events.fail(play.waiter, error)
        }
      }
    case .failure(let error):
      for play in waiting { events.fail(play.waiter, play.failure(error)) }
    }
    return true
  }

  /// True while `client` waits for a play's reply.
  func owes(_ client: UInt64) -> Bool {
    pending.values.contains { $0.contains { $0.waiter.client == client } }
  }

  private func touch(_ key: Key) {
    uses += 1
    lastUsed[key] = uses
  }

  private func store(_ cue: Cue, at key: Key) {
    // The file's earlier versions under this path are gone for good (and this one is stored anew).
    for stale in cache.keys where stale.path == key.path {
      cache[stale] = nil
      lastUsed[stale] = nil
    }
    var bytes = cache.values.reduce(cue.byteCount) { $0 + $1.byteCount }
    while !cache.isEmpty, cache.count >= cacheLimit || bytes > byteLimit,
      let oldest = lastUsed.min(by: { $0.value < $1.value })?.key
    {
      bytes -= cache[oldest]?.byteCount ?? 0
      cache[oldest] = nil
      lastUsed[oldest] = nil
    }
    cache[key] = cue
    touch(key)
  }
}
