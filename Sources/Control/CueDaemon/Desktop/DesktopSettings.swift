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
///   libcanberra's. Without a desktop setting to read (no desktop session, no schema installed,
///   no GLib) it is `freedesktop`, source `default`.
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
  /// With `desktop`: why the desktop is followed, or why not (`DesktopSession`), when that was decided.
  var reason: String? = nil

  init(configured: String, desktop: DesktopSoundSettings?, reason: String? = nil) {
    if configured != Self.followDesktop {
      (name, source, eventSounds) = (configured, .config, true)
      return
    }
    self.reason = reason
    if let desktop {
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
    StatusReply.SoundTheme(name: name, source: source, eventSounds: eventSounds, schema: schema, reason: reason)
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

/// Whether this process lives in a desktop session whose sound settings are worth loading GLib for,
/// decided without GLib from the environment and a few file tests (pure: the tests give both).
///
/// A desktop session has two things a server or a container has not: a **session bus** (dconf's
/// writer announces each change on it, and the desktop's settings daemon lives there) and **a
/// desktop's settings** (the desktop named in `$XDG_CURRENT_DESKTOP`, which the session sets and
/// imports into the user's systemd and D-Bus activation environments, or dconf's user database,
/// `$XDG_CONFIG_HOME/dconf/user`, which a desktop writes at its first login and which outlives it,
/// so a user service started before the session's environment is imported still finds it). Either
/// alone is not enough: a lingering user manager on a server has a session bus
/// (dbus-user-session) and no desktop, and a shell with `XDG_CURRENT_DESKTOP` inherited through
/// `sudo`/`ssh` may have no bus. `$GSETTINGS_BACKEND` names GLib's settings backend outright
/// (`keyfile`, `dconf`, `memory`): whoever set it asked for GSettings, bus or not.
enum DesktopSession {
  /// Followed or not, and why, in words for the log and `status` (`soundTheme.reason`).
  enum Verdict: Equatable, Sendable {
    case present(String)
    case absent(String)
  }

  /// The file tests it needs: whether a path is a socket (or another special file), and a regular file.
  struct Probe: Sendable {
    var isSocket: @Sendable (String) -> Bool
    var isFile: @Sendable (String) -> Bool

    static let system = Probe(isSocket: { Files.kind(of: $0) == .other }, isFile: { Files.kind(of: $0) == .regular })
  }

  static func verdict(environment: (String) -> String?, probe: Probe = .system) -> Verdict {
    if let backend = environment("GSETTINGS_BACKEND"), !backend.isEmpty {
      return .present("GSETTINGS_BACKEND=\(backend) names GLib's settings backend")
    }
    guard let bus = sessionBus(environment: environment, probe: probe) else {
      let address = environment("DBUS_SESSION_BUS_ADDRESS") ?? ""
      let looked =
        address.isEmpty
        ? "DBUS_SESSION_BUS_ADDRESS is unset and " + (runtimeBus(environment).map { "there is no socket \($0)" } ?? "XDG_RUNTIME_DIR is unset")
        : "no socket at DBUS_SESSION_BUS_ADDRESS=\(address)"
      return .absent("no desktop session: no session bus (\(looked))")
    }
    if let desktop = environment("XDG_CURRENT_DESKTOP"), !desktop.isEmpty {
      return .present("a desktop session: XDG_CURRENT_DESKTOP=\(desktop), session bus \(bus)")
    }
    let database = dconfUserDatabase(environment)
    if let database, probe.isFile(database) {
      return .present("a desktop session: dconf's user database \(database), session bus \(bus)")
    }
    return .absent(
      "no desktop session: a session bus (\(bus)) but no desktop's settings (XDG_CURRENT_DESKTOP is unset"
        + (database.map { " and there is no \($0)" } ?? "") + "); follow-desktop = \"always\" follows them anyway")
  }

  /// The session bus, as GLib and sd-bus find it: each `unix:path=` of `$DBUS_SESSION_BUS_ADDRESS`
  /// (`;`-separated) that is a socket, or an address of another kind (abstract sockets, TCP: taken
  /// as given, they cannot be tested without connecting); unset or empty, `$XDG_RUNTIME_DIR/bus`.
  static func sessionBus(environment: (String) -> String?, probe: Probe) -> String? {
    let address = environment("DBUS_SESSION_BUS_ADDRESS") ?? ""
    if address.isEmpty {
      return runtimeBus(environment).flatMap { probe.isSocket($0) ? $0 : nil }
    }
    for entry in address.split(separator: ";") {
      guard entry.hasPrefix("unix:") else { return String(entry) }
      let keys = entry.dropFirst("unix:".count).split(separator: ",")
      guard let path = keys.first(where: { $0.hasPrefix("path=") }) else { return String(entry) }
      let file = unescape(path.dropFirst("path=".count))
      if probe.isSocket(file) { return file }
    }
    return nil
  }

  static func runtimeBus(_ environment: (String) -> String?) -> String? {
    guard let runtime = environment("XDG_RUNTIME_DIR"), runtime.hasPrefix("/") else { return nil }
    return runtime + "/bus"
  }

  /// `$XDG_CONFIG_HOME/dconf/user`, else `~/.config/dconf/user` (where dconf keeps a user's settings).
  static func dconfUserDatabase(_ environment: (String) -> String?) -> String? {
    if let config = environment("XDG_CONFIG_HOME"), config.hasPrefix("/") { return config + "/dconf/user" }
    if let home = environment("HOME"), home.hasPrefix("/") { return home + "/.config/dconf/user" }
    return nil
  }

  /// A D-Bus address value with its `%XX` escapes decoded.
  static func unescape(_ value: Substring) -> String {
    var bytes: [UInt8] = []
    var rest = value.utf8[...]
    while let byte = rest.first {
      rest = rest.dropFirst()
      if byte == UInt8(ascii: "%"), rest.count >= 2, let code = UInt8(String(decoding: rest.prefix(2), as: UTF8.self), radix: 16) {
        bytes.append(code)
        rest = rest.dropFirst(2)
      } else {
        bytes.append(byte)
      }
    }
    return String(decoding: bytes, as: UTF8.self)
  }
}
