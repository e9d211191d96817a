import CueDecoding
import CueCore
import CuePosix
import CueProtocol

/// `play` with an `event`: freedesktop sound-theme names (`message-new-instant`) resolved to files
/// exactly as libcanberra resolves them (`SoundThemeResolver`), each file played through
/// `FileSounds`: decoded once on a worker and kept, so that the second play of a name starts at
/// once, and plays that come while the file decodes are answered when it has.
///
/// Every play looks the name up afresh, and `FileSounds` knows each decode by its file's path and
/// identity, so a file replaced, rewritten in place or reached through a re-pointed symlink is
/// decoded afresh at its next play, with or without a reload, and an unchanged one never twice. A
/// reload reads the theme's `index.theme` files again (the theme may be another), and so does each
/// change of the desktop's settings while cued follows them (`follow`).
///
/// While the desktop's event sounds are off (`SoundThemeChoice.eventSounds`), a play is silent with
/// the reason `event-sounds-off` before any lookup: nothing is looked up or decoded.
final class ThemeSounds {
  /// The theme in force, where it came from, and the event-sounds switch.
  private(set) var choice: SoundThemeChoice
  var theme: String { choice.name }
  private var resolver: SoundThemeResolver
  /// The decoded files, shared with `play` of a `file`.
  let files: FileSounds
  private let environment: (String) -> String?

  init(theme: String, files: FileSounds, environment: @escaping (String) -> String? = { ProcessInfo.environment($0) }) {
    choice = SoundThemeChoice(configured: theme, desktop: nil)
    self.files = files
    self.environment = environment
    resolver = Self.resolver(theme: choice.name, environment: environment)
  }

  static func resolver(theme: String, environment: (String) -> String?) -> SoundThemeResolver {
    SoundThemeResolver(
      baseDirectories: SoundThemeResolver.baseDirectories(environment: environment), theme: theme,
      locale: SoundThemeResolver.locale(environment: environment), files: PosixSoundThemeFiles())
  }

  /// A reload, or a change of the desktop's settings: the theme may be another, its index.theme
  /// files may have changed, event sounds may be on or off. What was decoded stays: each play
  /// checks its file's identity, and past `FileSounds.cacheLimit` the least recent goes.
  func follow(_ choice: SoundThemeChoice) {
    self.choice = choice
    resolver = Self.resolver(theme: choice.name, environment: environment)
  }

  /// Plays the theme's sound for `event`; nil when the reply comes once its file is decoded. The
  /// play goes through the gate under the rules of `[cues.EVENT]` (the level, its group, …), after
  /// the desktop's event-sounds switch.
  func play(_ p: PlayParameters, event: String, waiter: Waiter, client: String?, arrival: UInt64) throws(ProtocolError) -> PlayReply? {
    guard choice.eventSounds else {
      return files.silent(p, cue: event, reason: .eventSoundsOff, owner: waiter.client)
    }
    // The theme's directories are not the sound directories: the path came from the lookup, not a client.
    return try files.play(
      p, path: try file(for: event), rule: event, waiter: waiter, client: client, arrival: arrival, confined: false,
      failure: Self.failure(event))
  }

  /// `prepare` of `event`: its file decoded and kept, whether event sounds are on or not (they may
  /// be turned on); nil when the reply comes once it is decoded.
  func prepare(event: String, waiter: Waiter) throws(ProtocolError) -> PrepareReply? {
    files.prepare(path: try file(for: event), waiter: waiter, confined: false, failure: Self.failure(event))
  }

  /// The theme's file for `event`, or why there is none.
  private func file(for event: String) throws(ProtocolError) -> String {
    switch resolver.resolve(event) {
    case .notFound:
      let places = resolver.baseDirectories.map { $0 + "/sounds" }.joined(separator: ", ")
      throw ProtocolError(
        .unknownEvent,
        "no sound for the event '\(event)' in the sound theme '\(theme)' (its parents, freedesktop, or without a theme) under \(places); install a sound theme (Debian: sound-theme-freedesktop) or choose one with sound-theme")
    case .disabled(let path):
      throw ProtocolError(.eventDisabled, "the sound theme silences '\(event)' with \(path); remove that file to hear it")
    case .file(let path):
      return path
    }
  }

  private static func failure(_ event: String) -> (DecodeError) -> ProtocolError {
    { error in ProtocolError(.badPath, "the sound theme's file for '\(event)' does not load: \(error.path): \(error.reason)") }
  }
}
