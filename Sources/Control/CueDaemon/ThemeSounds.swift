import CueDecoding
import CueCore
import CuePosix
import CueProtocol

/// `play` with an `event`: freedesktop sound-theme names (`message-new-instant`) resolved to files
/// exactly as libcanberra resolves them (`SoundThemeResolver`), each file decoded once on a worker
/// and kept, so that the second play of a name starts at once. Plays that come while the file
/// decodes wait for it, and their replies come when it has (a deferred reply, as for
/// `sound.create` with a path).
///
/// Every play looks the name up afresh and `stat`s the file it finds (following symlinks); a
/// decode is kept under that path and the file's identity (device, inode, size, modification
/// time, as `fstat` said of the descriptor it was read through). So a file replaced, rewritten in
/// place or reached through a re-pointed symlink is decoded afresh at its next play, with or
/// without a reload, and an unchanged one never twice. A reload reads the theme's `index.theme`
/// files again (the theme may be another), and so does each change of the desktop's settings
/// while cued follows them (`follow`).
///
/// While the desktop's event sounds are off (`SoundThemeChoice.eventSounds`), a play is silent with
/// the reason `event-sounds-off` before any lookup: nothing is looked up or decoded.
final class ThemeSounds {
  /// The most decoded theme files kept; past it the one played least recently is let go.
  var cacheLimit = 64

  /// The theme in force, where it came from, and the event-sounds switch.
  private(set) var choice: SoundThemeChoice
  var theme: String { choice.name }
  private var resolver: SoundThemeResolver
  /// A decoded file: the path the lookup found and what `stat` said of the file behind it.
  private struct Key: Hashable {
    let path: String
    let stamp: FileStamp
  }
  private var cache: [Key: Cue] = [:]
  private var lastUsed: [Key: UInt64] = [:]
  private var uses: UInt64 = 0
  private struct Waiting {
    let parameters: PlayParameters
    let event: String
    let waiter: Waiter
    let client: String?
  }
  private var pending: [String: [Waiting]] = [:]
  private var tokens: [UInt64: String] = [:]
  private let gate: VoiceGate
  private let files: PathDecoder
  private let events: EventRouter
  private let ids: IDAllocator
  private let environment: (String) -> String?

  init(
    theme: String, gate: VoiceGate, files: PathDecoder, events: EventRouter, ids: IDAllocator,
    environment: @escaping (String) -> String? = { ProcessInfo.environment($0) }
  ) {
    choice = SoundThemeChoice(configured: theme, desktop: nil)
    self.gate = gate
    self.files = files
    self.events = events
    self.ids = ids
    self.environment = environment
    resolver = Self.resolver(theme: choice.name, environment: environment)
  }

  static func resolver(theme: String, environment: (String) -> String?) -> SoundThemeResolver {
    SoundThemeResolver(
      baseDirectories: SoundThemeResolver.baseDirectories(environment: environment), theme: theme,
      locale: SoundThemeResolver.locale(environment: environment), files: PosixSoundThemeFiles())
  }

  /// Theme files decoded and kept.
  var count: Int { cache.count }

  /// The decodes kept for the file at `path` (at most one: a newer version lets the older go).
  func kept(_ path: String) -> [Cue] { cache.filter { $0.key.path == path }.map(\.value) }

  /// A reload, or a change of the desktop's settings: the theme may be another, its index.theme
  /// files may have changed, event sounds may be on or off. What was decoded stays: each play
  /// checks its file's identity, and past `cacheLimit` the least recent goes.
  func follow(_ choice: SoundThemeChoice) {
    self.choice = choice
    resolver = Self.resolver(theme: choice.name, environment: environment)
  }

  /// Plays the theme's sound for `event`; nil when the reply comes once its file is decoded. The
  /// play goes through the gate under the rules of `[cues.EVENT]` (the level, its group, …), after
  /// the desktop's event-sounds switch.
  func play(_ p: PlayParameters, event: String, waiter: Waiter, client: String?, arrival: UInt64) throws(ProtocolError) -> PlayReply? {
    guard choice.eventSounds else {
      return gate.silentOneShot(p, cue: event, reason: .eventSoundsOff, owner: waiter.client, events: events)
    }
    switch resolver.resolve(event) {
    case .notFound:
      let places = resolver.baseDirectories.map { $0 + "/sounds" }.joined(separator: ", ")
      throw ProtocolError(
        .unknownEvent,
        "no sound for the event '\(event)' in the sound theme '\(theme)' (its parents, freedesktop, or without a theme) under \(places); install a sound theme (Debian: sound-theme-freedesktop) or choose one with sound-theme")
    case .disabled(let path):
      throw ProtocolError(.eventDisabled, "the sound theme silences '\(event)' with \(path); remove that file to hear it")
    case .file(let path):
      if let stamp = FileStamp.of(path), case let key = Key(path: path, stamp: stamp), let cue = cache[key] {
        touch(key)
        return try start(p, event: event, cue: cue, file: path, owner: waiter.client, client: client, arrival: arrival)
      }
      let first = pending[path] == nil
      pending[path, default: []].append(Waiting(parameters: p, event: event, waiter: waiter, client: client))
      if first {
        let token = ids.make()
        tokens[token] = path
        // The theme's directories are not the sound directories: the path came from the lookup, not a client.
        files.decode(path: path, token: token, confined: false)
      }
      return nil
    }
  }

  private func start(
    _ p: PlayParameters, event: String, cue: Cue, file: String, owner: UInt64, client: String?, arrival: UInt64
  ) throws(ProtocolError) -> PlayReply {
    let choice = CueRules.Choice(cue: cue, variation: nil, gainFactor: 1, rateFactor: 1, rule: gate.rules.rule(for: event))
    return try gate.playOneShot(p, choice: choice, rule: event, file: file, owner: owner, client: client, arrival: arrival, events: events)
  }

  /// A theme file finished decoding: start the plays that waited for it. False when `token` is not ours.
  func decoded(token: UInt64, _ outcome: Result<Cue, DecodeError>) -> Bool {
    guard let path = tokens.removeValue(forKey: token) else { return false }
    let waiting = pending.removeValue(forKey: path) ?? []
    switch outcome {
    case .success(let cue):
      store(cue, at: Key(path: path, stamp: cue.fileStamp))
      for play in waiting {
        // Arrival unknown (0): the wait for the decode is not trigger latency.
        do throws(ProtocolError) {
          let reply = try start(
            play.parameters, event: play.event, cue: cue, file: path, owner: play.waiter.client, client: play.client, arrival: 0)
          events.reply(to: play.waiter, reply)
        } catch {
          events.fail(play.waiter, error)
        }
      }
    case .failure(let error):
      for play in waiting {
        events.fail(
          play.waiter, ProtocolError(.badPath, "the sound theme's file for '\(play.event)' does not load: \(error.path): \(error.reason)"))
      }
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
    // The file's earlier versions under this path are gone for good.
    for stale in cache.keys where stale.path == key.path && stale != key {
      cache[stale] = nil
      lastUsed[stale] = nil
    }
    if cache[key] == nil, cache.count >= cacheLimit, let oldest = lastUsed.min(by: { $0.value < $1.value })?.key {
      cache[oldest] = nil
      lastUsed[oldest] = nil
    }
    cache[key] = cue
    touch(key)
  }
}
