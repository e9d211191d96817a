import CuePosix
import CueProtocol

/// What the desktop says about event sounds: the keys `theme-name` and `event-sounds` of its sound
/// schema (`org.gnome.desktop.sound` on GNOME), as GSettings read them.
struct DesktopSoundSettings: Equatable, Sendable {
  var themeName: String
  var eventSounds: Bool
  /// The schema they were read from.
  var schema: String
}

/// The sound theme `play` with an `event` uses, and whether event sounds are on: the policy that
/// turns `sound-theme` and the desktop's settings into one choice (pure: tested without GLib).
///
/// - `sound-theme = "desktop"` (the default) follows the desktop: its `theme-name`, and its
///   `event-sounds` switch, which silences theme events (`event-sounds-off`) as it silences
///   libcanberra's. Without a desktop setting to read (no schema installed, no GLib) it is
///   `freedesktop`, source `default`.
/// - Any other name pins that theme (source `config`) and reads nothing from the desktop: event
///   sounds are on. One setting, one source: a theme of cued's own is cued's whole choice.
///
/// The switch governs theme events only: cues are the program's own sounds (libcanberra's switch,
/// likewise, governs event sounds and leaves a program's own playback alone).
struct SoundThemeChoice: Equatable, Sendable {
  /// The `sound-theme` value that follows the desktop.
  static let followDesktop = "desktop"

  var name: String
  var source: StatusReply.SoundTheme.Source
  var eventSounds: Bool
  /// With `desktop`: the schema read.
  var schema: String? = nil
  /// A desktop theme name cued would not use (empty, or not a plain name), when one was given.
  var refusedName: String? = nil

  init(configured: String, desktop: DesktopSoundSettings?) {
    if configured != Self.followDesktop {
      (name, source, eventSounds) = (configured, .config, true)
    } else if let desktop {
      (source, eventSounds, schema) = (.desktop, desktop.eventSounds, desktop.schema)
      if Self.isThemeName(desktop.themeName) {
        name = desktop.themeName
      } else {
        name = SoundThemeResolver.fallbackTheme
        refusedName = desktop.themeName
      }
    } else {
      (name, source, eventSounds) = (SoundThemeResolver.fallbackTheme, .default, true)
    }
  }

  /// A name the theme lookup can take as one directory of `sounds`: not empty, no `/`, not `.` or `..`.
  static func isThemeName(_ name: String) -> Bool {
    !name.isEmpty && !name.contains("/") && name != "." && name != ".." && name.utf8.count <= 255
  }

  var status: StatusReply.SoundTheme {
    StatusReply.SoundTheme(name: name, source: source, eventSounds: eventSounds, schema: schema)
  }

  /// For the log: `Yaru (the desktop's, org.gnome.desktop.sound), event sounds on`.
  var summary: String {
    let origin =
      switch source {
      case .desktop: "the desktop's" + (schema.map { ", \($0)" } ?? "")
      case .config: "sound-theme"
      case .default: "no desktop setting to follow"
      }
    return "\(name) (\(origin)), event sounds \(eventSounds ? "on" : "off")"
  }
}

/// Which GSettings schema holds the desktop's sound settings, and whether one may be installed,
/// decided without GLib (so that a machine without the schema never loads it).
enum DesktopSoundSchemas {
  static let gnome = "org.gnome.desktop.sound"
  static let cinnamon = "org.cinnamon.desktop.sound"
  static let mate = "org.mate.sound"

  /// The schemas to try, in order, for `$XDG_CURRENT_DESKTOP` (a colon-separated list: `ubuntu:GNOME`,
  /// `X-Cinnamon`, `MATE`): Cinnamon's and MATE's settings dialogs write schemas of their own (the
  /// same two keys), so on those desktops theirs comes first; GNOME's is always tried (last), as
  /// every other desktop that has one of these schemas uses it.
  static func candidates(currentDesktop: String?) -> [String] {
    var schemas: [String] = []
    for desktop in (currentDesktop ?? "").split(separator: ":").map({ $0.lowercased() }) {
      let schema: String? =
        switch desktop {
        case "x-cinnamon", "cinnamon": cinnamon
        case "mate": mate
        default: nil
        }
      if let schema, !schemas.contains(schema) { schemas.append(schema) }
    }
    return schemas + [gnome]
  }

  /// The directories GLib reads compiled schemas from (`gschemas.compiled` in each), as its default
  /// schema source orders them: each of `$GSETTINGS_SCHEMA_DIR` (colon-separated), then
  /// `glib-2.0/schemas` under `$XDG_DATA_HOME` (else `~/.local/share`) and under each of
  /// `$XDG_DATA_DIRS` (unset or empty: `/usr/local/share:/usr/share`).
  static func directories(environment: (String) -> String?) -> [String] {
    var directories = (environment("GSETTINGS_SCHEMA_DIR") ?? "").split(separator: ":").map(String.init)
    directories += SoundThemeResolver.baseDirectories(environment: environment).map { $0 + "/glib-2.0/schemas" }
    return directories
  }

  /// The first of `schemas` that a `gschemas.compiled` of `directories` names (GLib's compiled
  /// schemas hold each schema id whole); nil when none does. A cheap test before loading GLib,
  /// whose lookup then decides. `read` gives a file's bytes, nil when it cannot be read.
  static func firstNamed(_ schemas: [String], in directories: [String], read: (String) -> [UInt8]?) -> String? {
    let files = directories.compactMap { read($0 + "/gschemas.compiled") }
    return schemas.first { schema in files.contains { contains($0, Array(schema.utf8)) } }
  }

  static func contains(_ bytes: [UInt8], _ pattern: [UInt8]) -> Bool {
    guard let first = pattern.first, pattern.count <= bytes.count else { return pattern.isEmpty }
    var index = 0
    let last = bytes.count - pattern.count
    while index <= last {
      if bytes[index] == first && bytes[index..<index + pattern.count].elementsEqual(pattern) { return true }
      index += 1
    }
    return false
  }

  /// A compiled schema file's bytes (nil when absent or larger than 64 MiB).
  static func readCompiled(_ path: String) -> [UInt8]? {
    try? Files.read(path: path, limit: 64 << 20)
  }
}
