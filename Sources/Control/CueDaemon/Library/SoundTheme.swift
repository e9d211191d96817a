import CuePosix

/// What a sound-theme lookup needs of the file system: whether a path exists (following
/// symlinks, as access(F_OK) does) and a small text file's contents. A protocol so that the
/// lookup order is tested on a tree in memory as well as on the real theme.
protocol SoundThemeFiles {
  func exists(_ path: String) -> Bool
  func text(_ path: String) -> String?
}

/// The real file system, through CuePosix.
struct PosixSoundThemeFiles: SoundThemeFiles {
  func exists(_ path: String) -> Bool { Files.kind(of: path) != .missing }

  func text(_ path: String) -> String? {
    guard let bytes = try? Files.read(path: path, limit: 64 * 1024) else { return nil }
    return String(decoding: bytes, as: UTF8.self)
  }
}

/// One `index.theme`, read as libcanberra reads it (docs/notes/THEME-LOOKUP.md): the
/// `[Sound Theme]` section's `Inherits=` and `Directories=` (comma- or space-separated, several
/// `Directories=` lines add up), and each listed directory's `OutputProfile=`. Everything after a
/// `#`, `\r` or `\n` on a line is ignored, keys must start the line, and other keys are ignored.
struct SoundThemeIndex: Sendable {
  enum Failure: Error, Equatable {
    /// A second `Inherits=`, or a directory with two different output profiles.
    case corrupt(String)
  }

  var inherits: [String] = []
  /// The theme's directories in order, each with its output profile (nil: every profile).
  var directories: [(name: String, profile: String?)] = []

  init(parsing text: String) throws(Failure) {
    var section: String? = nil
    var sawInherits = false
    var profiles: [String: String] = [:]
    var names: [String] = []
    // By Unicode scalars: as Characters, "\r\n" is one grapheme and would not split at "\n".
    for rawLine in text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false) {
      var scalars = rawLine
      if let cut = scalars.firstIndex(where: { $0 == "#" || $0 == "\r" }) { scalars = scalars[..<cut] }
      let line = Substring(scalars)
      if line.hasPrefix("[") {
        section = line.hasSuffix("]") ? String(line.dropFirst().dropLast()) : nil
        continue
      }
      guard let section else { continue }
      if section == "Sound Theme" {
        if line.hasPrefix("Inherits=") {
          guard !sawInherits else { throw .corrupt("a second Inherits=") }
          sawInherits = true
          inherits = Self.list(line.dropFirst("Inherits=".count))
        } else if line.hasPrefix("Directories=") {
          for name in Self.list(line.dropFirst("Directories=".count)) where !names.contains(name) {
            names.append(name)
          }
        }
      } else if names.contains(section), line.hasPrefix("OutputProfile=") {
        let profile = String(line.dropFirst("OutputProfile=".count))
        if let earlier = profiles[section], earlier != profile {
          throw .corrupt("[\(section)] has two output profiles, \(earlier) and \(profile)")
        }
        profiles[section] = profile
      }
    }
    directories = names.map { ($0, profiles[$0]) }
  }

  private static func list(_ value: Substring) -> [String] {
    value.split(whereSeparator: { $0 == "," || $0 == " " }).map(String.init)
  }
}

/// Resolves freedesktop sound-theme event names (`message-new-instant`) to files the way
/// libcanberra does, so that a desktop's sounds are the ones it would hear from libcanberra
/// (docs/notes/THEME-LOOKUP.md has the order, read from its source).
///
/// The search runs over passes (directories of the requested output profile; of `stereo`; the top
/// theme's own directory; the sound directories without a theme), then each theme directory in
/// the flattened inheritance list (the theme, its parents depth-first, `freedesktop` last), then
/// each base directory (`$XDG_DATA_HOME`, then `$XDG_DATA_DIRS`, each with `sounds`), then the name
/// and its shorter forms (`message-new-instant`, `message-new`, `message`), then the locale and its
/// fallbacks (`de_DE.UTF-8@euro`, `de_DE.UTF-8`, `de`, `C`, none), then the suffixes `.disabled`,
/// `.oga`, `.ogg`, `.wav`. The first path that exists decides: a `.disabled` file silences the
/// name. Reads the file system only through `SoundThemeFiles`; keeps nothing between calls.
struct SoundThemeResolver {
  enum Resolution: Equatable, Sendable {
    /// The sound file to play.
    case file(String)
    /// A `.disabled` file silences this name (the path of that file).
    case disabled(String)
    /// Nothing of that name anywhere.
    case notFound
  }

  /// What went wrong with the theme itself (the lookup then goes on without themes, as libcanberra's does).
  enum ThemeProblem: Equatable, Sendable {
    case corrupt(theme: String, reason: String)
    case tooDeep(theme: String)
  }

  static let fallbackTheme = "freedesktop"
  static let defaultProfile = "stereo"
  /// libcanberra reads at most this many index.theme files for one theme.
  static let maximumThemes = 8
  static let suffixes = [".disabled", ".oga", ".ogg", ".wav"]

  /// The `sounds` directories' parents, in search order.
  let baseDirectories: [String]
  let theme: String
  let locale: String
  let profile: String
  let files: any SoundThemeFiles
  /// The (theme, directory, profile) list the passes walk; empty when the theme could not be loaded.
  private(set) var entries: [(theme: String, directory: String, profile: String?)] = []
  /// The theme that was loaded (the requested one, or `freedesktop` when it was not found); nil: none.
  private(set) var loadedTheme: String? = nil
  private(set) var problem: ThemeProblem? = nil

  init(baseDirectories: [String], theme: String = fallbackTheme, locale: String = "C", profile: String = defaultProfile, files: any SoundThemeFiles) {
    self.baseDirectories = baseDirectories
    self.theme = theme
    self.locale = locale.isEmpty ? "C" : locale
    self.profile = profile
    self.files = files
    load()
  }

  /// The base directories libcanberra searches: `$XDG_DATA_HOME` (if absolute; else
  /// `$HOME/.local/share` if HOME is absolute), then each absolute entry of `$XDG_DATA_DIRS`
  /// (unset or empty: `/usr/local/share:/usr/share`).
  static func baseDirectories(environment: (String) -> String?) -> [String] {
    var directories: [String] = []
    if let home = environment("XDG_DATA_HOME"), home.hasPrefix("/") {
      directories.append(home)
    } else if let home = environment("HOME"), home.hasPrefix("/") {
      directories.append(home + "/.local/share")
    }
    var dataDirs = environment("XDG_DATA_DIRS") ?? ""
    if dataDirs.isEmpty { dataDirs = "/usr/local/share:/usr/share" }
    directories += dataDirs.split(separator: ":").map(String.init).filter { $0.hasPrefix("/") }
    return directories
  }

  /// The locale libcanberra uses when the program set none of its own: LC_ALL, LC_MESSAGES, LANG, else C.
  static func locale(environment: (String) -> String?) -> String {
    for name in ["LC_ALL", "LC_MESSAGES", "LANG"] {
      if let value = environment(name), !value.isEmpty { return value }
    }
    return "C"
  }

  // MARK: - Lookup

  func resolve(_ name: String) -> Resolution {
    guard !name.isEmpty, !name.contains("/") else { return .notFound }
    // (a) the requested profile, (b) stereo, over the theme's directories.
    var profiles = [profile]
    if profile != Self.defaultProfile { profiles.append(Self.defaultProfile) }
    for wanted in profiles {
      for entry in entries where entry.profile == nil || entry.profile == wanted {
        if let found = search(name, under: "sounds/\(entry.theme)/\(entry.directory)") { return found }
      }
    }
    // (c) the top theme's own directory, without a profile; (d) no theme at all.
    if let loadedTheme, let found = search(name, under: "sounds/\(loadedTheme)") { return found }
    return search(name, under: "sounds") ?? .notFound
  }

  /// Every base directory, every shorter form of the name, every locale, every suffix, under `relative`.
  private func search(_ name: String, under relative: String) -> Resolution? {
    for base in baseDirectories {
      for form in Self.nameForms(name) {
        for localeDirectory in Self.localeForms(locale) {
          let directory = base + "/" + relative + (localeDirectory.map { "/" + $0 } ?? "")
          for suffix in Self.suffixes {
            let path = directory + "/" + form + suffix
            guard files.exists(path) else { continue }
            return suffix == ".disabled" ? .disabled(path) : .file(path)
          }
        }
      }
    }
    return nil
  }

  /// `message-new-instant`, `message-new`, `message`: cut at the last dash while one is left (not at position 0).
  static func nameForms(_ name: String) -> [String] {
    var forms = [name]
    var current = Substring(name)
    while let dash = current.lastIndex(of: "-"), dash != current.startIndex {
      current = current[..<dash]
      forms.append(String(current))
    }
    return forms
  }

  /// `de_DE.UTF-8@euro` → `de_DE.UTF-8@euro`, `de_DE.UTF-8`, `de`, `C`, none (nil); `C` → `C`, none.
  static func localeForms(_ locale: String) -> [String?] {
    var forms: [String] = [locale]
    if let at = locale.firstIndex(of: "@") { forms.append(String(locale[..<at])) }
    if let underscore = locale.firstIndex(of: "_") { forms.append(String(locale[..<underscore])) }
    if locale != "C" { forms.append("C") }
    var unique: [String] = []
    for form in forms where !unique.contains(form) { unique.append(form) }
    return unique.map { $0 } + [nil]
  }

  // MARK: - Loading the theme

  private mutating func load() {
    var loaded: [String] = []
    var list: [(theme: String, directory: String, profile: String?)] = []
    switch loadTheme(theme, loaded: &loaded, into: &list) {
    case .ok:
      loadedTheme = theme
      // freedesktop last, if the chain did not bring it; a failure there is ignored, as libcanberra does.
      var withFallback = list
      if case .ok = loadTheme(Self.fallbackTheme, loaded: &loaded, into: &withFallback) { list = withFallback }
    case .notFound:
      // The theme (or a theme it inherits) is missing: freedesktop instead.
      loaded = []
      list = []
      if theme != Self.fallbackTheme, case .ok = loadTheme(Self.fallbackTheme, loaded: &loaded, into: &list) {
        loadedTheme = Self.fallbackTheme
      } else {
        list = []
      }
    case .failed(let problem):
      self.problem = problem
      list = []
    }
    entries = list
  }

  private enum LoadResult {
    case ok
    case notFound
    case failed(ThemeProblem)
  }

  /// Loads `name` and, depth-first, what it inherits, appending its directories to `list`.
  private func loadTheme(_ name: String, loaded: inout [String], into list: inout [(theme: String, directory: String, profile: String?)])
    -> LoadResult
  {
    if loaded.contains(name) { return .ok }
    guard loaded.count < Self.maximumThemes else { return .failed(.tooDeep(theme: theme)) }
    guard let text = baseDirectories.lazy.compactMap({ files.text($0 + "/sounds/" + name + "/index.theme") }).first else {
      return .notFound
    }
    let index: SoundThemeIndex
    do {
      index = try SoundThemeIndex(parsing: text)
    } catch {
      guard case .corrupt(let reason) = error else { return .failed(.corrupt(theme: name, reason: "\(error)")) }
      return .failed(.corrupt(theme: name, reason: reason))
    }
    loaded.append(name)
    for directory in index.directories where !list.contains(where: { $0.theme == name && $0.directory == directory.name }) {
      list.append((name, directory.name, directory.profile))
    }
    for parent in index.inherits {
      let result = loadTheme(parent, loaded: &loaded, into: &list)
      guard case .ok = result else { return result }
    }
    return .ok
  }
}
