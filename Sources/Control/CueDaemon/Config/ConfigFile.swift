import CuePosix
import CueProtocol
import CueTOML

#if canImport(Glibc)
import Glibc
#endif

/// A problem in the config file: where, and what to do about it.
public struct ConfigError: Error, Sendable, CustomStringConvertible {
  public var path: String
  /// 1-based; 0 when the problem is not on one line.
  public var line: Int
  public var message: String
  public var description: String { line > 0 ? "\(path):\(line): \(message)" : "\(path): \(message)" }
}

/// The settings a config file (or the command line) gives, checked; what it does not say is absent.
public struct ConfigValues: Sendable, Equatable {
  /// By `Setting.id` (`rate`, `system-sounds.volume`), in the config file's units.
  public var settings: [String: SettingValue] = [:]
  /// `[carousel.NAME]` tables: the cue bindings of each carousel ("default" for any other).
  public var carousels: [String: CarouselBindings]?
  /// `[cues.NAME]` tables: each cue's variations, spreads and repeat rules.
  public var cueRules: [String: CueRule]?
  /// `[groups.NAME]`, `[clients.NAME]` and `[quiet-hours]`.
  public var groups: [String: GroupSettings]?
  public var clients: [String: ClientSettings]?
  public var quietHours: QuietHours?

  public init() {}

  /// The value given for `setting`, if any.
  public subscript(setting: Setting) -> SettingValue? {
    get { settings[setting.id] }
    set { settings[setting.id] = newValue }
  }

  /// The value given for the setting `id` (`max-voices`, `system-sounds.volume`), if any. Setting it
  /// here skips the checks (for tests and programs that build values themselves).
  public subscript(id: String) -> SettingValue? {
    get { settings[id] }
    set { settings[id] = newValue }
  }

  /// `[system-sounds]`: the system-sound volume and mute switch, when given (the daemon applies
  /// them on reload only then: `cuectl system` may have changed them).
  public var systemVolume: Double? {
    get { settings["system-sounds.volume"]?.double }
    set { settings["system-sounds.volume"] = newValue.map(SettingValue.number) }
  }
  public var systemMuted: Bool? {
    get { settings["system-sounds.muted"]?.bool }
    set { settings["system-sounds.muted"] = newValue.map(SettingValue.bool) }
  }
  public var logLevel: String? {
    get { settings["log-level"]?.string }
    set { settings["log-level"] = newValue.map(SettingValue.string) }
  }

  /// These values, with `other`'s filling whatever these leave out (flags over the file).
  public func overriding(_ other: ConfigValues) -> ConfigValues {
    var merged = self
    merged.settings.merge(other.settings) { mine, _ in mine }
    merged.carousels = carousels ?? other.carousels
    merged.cueRules = cueRules ?? other.cueRules
    merged.groups = groups ?? other.groups
    merged.clients = clients ?? other.clients
    merged.quietHours = quietHours ?? other.quietHours
    return merged
  }
}

/// Reads `cued.toml`: `TOMLParser` (CueTOML) reads the TOML, and this checks what it means.
public enum ConfigFile {
  /// `$XDG_CONFIG_HOME/cued/cued.toml` (or `~/.config/cued/cued.toml`) when it exists, else
  /// `/etc/cued/cued.toml` when that exists, else nil.
  public static func defaultPath() -> String? {
    var candidates: [String] = []
    if let config = ProcessInfo.environment("XDG_CONFIG_HOME"), config.hasPrefix("/") {
      candidates.append(config + "/cued/cued.toml")
    } else if let home = ProcessInfo.environment("HOME"), home.hasPrefix("/") {
      candidates.append(home + "/.config/cued/cued.toml")
    }
    candidates.append("/etc/cued/cued.toml")
    return candidates.first { Files.kind(of: $0) == .regular }
  }

  /// The largest config file read.
  static let sizeLimit = 4 << 20

  /// Reads, parses and checks the file at `path`.
  public static func load(path: String) throws(ConfigError) -> ConfigValues {
    let bytes: [UInt8]
    do {
      bytes = try Files.read(path: path, limit: sizeLimit)
    } catch {
      let reason = error.code == EFBIG ? "it is larger than \(sizeLimit >> 20) MiB" : error.reason
      throw ConfigError(path: path, line: 0, message: "cannot read it: \(reason)")
    }
    return try read(bytes, path: path)
  }

  /// Parses and checks `bytes`, the text of the file at `path` (which only names it in errors).
  public static func read(_ bytes: [UInt8], path: String) throws(ConfigError) -> ConfigValues {
    let document: TOMLDocument
    do {
      document = try TOMLParser.parseDocument(bytes)
    } catch {
      throw ConfigError(path: path, line: error.line, message: "TOML syntax (column \(error.column)): \(error.message)")
    }
    return try interpret(JSONValue(toml: .table(document.root)), path: path, positions: document.positions)
  }

  /// Checks the document's keys, types and ranges (Settings.all, and for the other tables their
  /// declared keys, Settings.configTables); the first problem found is thrown, on the line of the
  /// key it is about (`positions`, as the parser gives them; none for the command line's values).
  public static func interpret(
    _ document: JSONValue, path: String, positions: [TOMLKeyPath: TOMLPosition] = [:]
  ) throws(ConfigError) -> ConfigValues {
    var values = ConfigValues()
    let locator = KeyLocator(positions: positions)
    func fail(_ key: String, table: String = "", _ message: String) -> ConfigError {
      ConfigError(path: path, line: locator.line(of: key, in: table), message: message)
    }
    func check(_ setting: Setting, _ value: JSONValue) throws(ConfigError) {
      do {
        values[setting] = try setting.check(value)
      } catch {
        throw fail(setting.key, table: setting.table, error.message)
      }
    }
    for (key, value) in document.objectValue ?? [] {
      if let setting = Settings.setting(key) {
        try check(setting, value)
      } else if let table = Settings.configTables.first(where: { $0.key == key }) {
        try table.read(value, &values, path, locator)
      } else if Settings.tables.contains(key) {
        guard let table = value.objectValue else { throw fail(key, "\(key) must be a table: [\(key)]") }
        for (inner, innerValue) in table {
          guard let setting = Settings.setting(inner, in: key) else {
            let keys = Settings.all.filter { $0.table == key }.map(\.key)
            throw fail(inner, table: key, "unknown key \(inner) in [\(key)]; it takes \(keys.spoken())")
          }
          try check(setting, innerValue)
        }
      } else {
        let tables = (Settings.tables.map { "[\($0)]" } + Settings.configTables.map(\.header)).spoken()
        throw fail(
          key, "unknown key \(key); the keys are \(Settings.topLevelKeys.joined(separator: ", ")) and the tables \(tables) (docs/CONFIG.md)")
      }
    }
    // A cue's group must be one the file defines (or `default`).
    for (name, rule) in values.cueRules ?? [:] where !CueRule.builtInGroups.contains(rule.group) && values.groups?[rule.group] == nil {
      throw ConfigError(
        path: path, line: locator.line(of: "group", in: "cues." + name),
        message: "[cues.\(name)] plays in the group '\(rule.group)', which has no [groups.\(rule.group)] table")
    }
    return values
  }
}

extension JSONValue {
  /// The tree the checks read: tables become objects with their keys sorted, integers and floats
  /// numbers, dates and times their RFC 3339 text. JSON has no infinity or NaN: those become null,
  /// so the check of a numeric key refuses them by name.
  init(toml: TOMLValue) {
    switch toml {
    case .string(let text): self = .string(text)
    case .integer(let value): self = .number(Double(value))
    case .float(let value): self = value.isFinite ? .number(value) : .null
    case .boolean(let value): self = .bool(value)
    case .dateTime(let value): self = .string(value.text)
    case .array(let elements): self = .array(elements.map(JSONValue.init(toml:)))
    case .table(let members): self = .object(members.sorted { $0.key < $1.key }.map { ($0.key, JSONValue(toml: $0.value)) })
    }
  }
}

extension ConfigFile {
  /// Reads each `[kind.NAME]` table of `value` by its declared keys.
  static func namedTables<T>(
    _ value: JSONValue, kind: String, path: String, locator: KeyLocator, _ keys: TableKeys<T>
  ) throws(ConfigError) -> [String: T] {
    guard let tables = value.objectValue else {
      throw ConfigError(path: path, line: locator.line(of: kind, in: ""), message: "\(kind) must hold tables: [\(kind).NAME]")
    }
    var result: [String: T] = [:]
    for (name, table) in tables {
      let context = TableContext(path: path, locator: locator, section: kind + "." + name, name: name)
      guard let members = table.objectValue else {
        // `name = 1` under `[kind]`.
        let line = locator.line(of: name, in: kind)
        throw ConfigError(
          path: path, line: line > 0 ? line : locator.line(of: kind, in: ""), message: "[\(context.section)] must be a table: \(keys.keyList)")
      }
      result[name] = try keys.read(members, context)
    }
    return result
  }
}

/// The line a key is set on, from the positions the parser gave (the checks see values, not positions).
struct KeyLocator {
  let positions: [TOMLKeyPath: TOMLPosition]

  /// The 1-based line of `key` inside the table `table` (`cues.tick`, `system-sounds`; the top level
  /// when empty), or of the table itself when `key` is `table`; 0 when it is not in the file.
  func line(of key: String, in table: String) -> Int {
    let section = Self.path(of: table)
    return positions[key == table ? section : section + [.key(key)]]?.line ?? 0
  }

  /// `cues.tick` as keys: the kind, then the NAME (which may hold dots of its own, quoted in the file).
  static func path(of table: String) -> TOMLKeyPath {
    guard !table.isEmpty else { return [] }
    guard let dot = table.firstIndex(of: ".") else { return [.key(table)] }
    return [.key(String(table[..<dot])), .key(String(table[table.index(after: dot)...]))]
  }
}
