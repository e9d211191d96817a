import CuePosix
import CueProtocol

/// A problem in the config file: where, and what to do about it.
public struct ConfigError: Error, Sendable, CustomStringConvertible {
  public var path: String
  /// 1-based; 0 when the problem is not on one line.
  public var line: Int
  public var message: String
  public var description: String { line > 0 ? "\(path):\(line): \(message)" : "\(path): \(message)" }
}

/// The settings a config file gives; nil where it says nothing. Keys are the flags' long names.
public struct ConfigValues: Sendable, Equatable {
  public var sounds: [String]?
  public var socket: String?
  public var device: String?
  public var rate: Int?
  public var periodFrames: Int?
  public var bufferFrames: Int?
  public var idleTimeout: Double?
  public var maxVoices: Int?
  public var maxCueSeconds: Double?
  public var maxMemory: Int?
  public var maxCues: Int?
  public var maxClients: Int?
  public var maxPlayers: Int?
  public var maxSounds: Int?
  public var maxClientQueue: Int?
  public var allowAnyPath: Bool?
  /// A group whose members may connect besides cued's own user (the system-wide mode).
  public var allowGroup: String?
  public var realtimePriority: Int?
  public var logLevel: String?
  /// `[system-sounds]`: the system-sound volume and mute switch at start.
  public var systemVolume: Double?
  public var systemMuted: Bool?
  /// `[carousel.NAME]` tables: the cue bindings of each carousel ("default" for any other).
  public var carousels: [String: CarouselBindings]?

  public init() {}

  /// These values, with `other`'s filling whatever these leave out (flags over the file).
  public func overriding(_ other: ConfigValues) -> ConfigValues {
    var merged = ConfigValues()
    merged.sounds = sounds ?? other.sounds
    merged.socket = socket ?? other.socket
    merged.device = device ?? other.device
    merged.rate = rate ?? other.rate
    merged.periodFrames = periodFrames ?? other.periodFrames
    merged.bufferFrames = bufferFrames ?? other.bufferFrames
    merged.idleTimeout = idleTimeout ?? other.idleTimeout
    merged.maxVoices = maxVoices ?? other.maxVoices
    merged.maxCueSeconds = maxCueSeconds ?? other.maxCueSeconds
    merged.maxMemory = maxMemory ?? other.maxMemory
    merged.maxCues = maxCues ?? other.maxCues
    merged.maxClients = maxClients ?? other.maxClients
    merged.maxPlayers = maxPlayers ?? other.maxPlayers
    merged.maxSounds = maxSounds ?? other.maxSounds
    merged.maxClientQueue = maxClientQueue ?? other.maxClientQueue
    merged.allowAnyPath = allowAnyPath ?? other.allowAnyPath
    merged.allowGroup = allowGroup ?? other.allowGroup
    merged.realtimePriority = realtimePriority ?? other.realtimePriority
    merged.logLevel = logLevel ?? other.logLevel
    merged.systemVolume = systemVolume ?? other.systemVolume
    merged.systemMuted = systemMuted ?? other.systemMuted
    merged.carousels = carousels ?? other.carousels
    return merged
  }
}

extension ConfigValues {
  /// These values as the document a config file would give (to check flags with the same rules).
  public var asDocument: JSONValue {
    var members: [(String, JSONValue)] = []
    if let sounds { members.append(("sounds", .array(sounds.map { .string($0) }))) }
    if let socket { members.append(("socket", .string(socket))) }
    if let device { members.append(("device", .string(device))) }
    if let rate { members.append(("rate", .number(Double(rate)))) }
    if let periodFrames { members.append(("period-frames", .number(Double(periodFrames)))) }
    if let bufferFrames { members.append(("buffer-frames", .number(Double(bufferFrames)))) }
    if let idleTimeout { members.append(("idle-timeout", .number(idleTimeout))) }
    if let maxVoices { members.append(("max-voices", .number(Double(maxVoices)))) }
    if let maxCueSeconds { members.append(("max-cue-seconds", .number(maxCueSeconds))) }
    if let maxMemory { members.append(("max-memory", .number(Double(maxMemory)))) }
    if let maxCues { members.append(("max-cues", .number(Double(maxCues)))) }
    if let maxClients { members.append(("max-clients", .number(Double(maxClients)))) }
    if let maxPlayers { members.append(("max-players", .number(Double(maxPlayers)))) }
    if let maxSounds { members.append(("max-sounds", .number(Double(maxSounds)))) }
    if let maxClientQueue { members.append(("max-client-queue", .number(Double(maxClientQueue)))) }
    if let allowAnyPath { members.append(("allow-any-path", .bool(allowAnyPath))) }
    if let allowGroup { members.append(("allow-group", .string(allowGroup))) }
    if let realtimePriority { members.append(("realtime-priority", .number(Double(realtimePriority)))) }
    if let logLevel { members.append(("log-level", .string(logLevel))) }
    return .object(members)
  }
}

/// Reads `cued.toml`: `cued-config` turns the TOML into JSON, and this checks what it means.
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

  /// Where `cued-config` is: next to the running binary, else on PATH.
  public static func toolPath() -> String? {
    if let exe = ProcessInfo.executablePath {
      let candidate = DefaultPaths.directory(of: exe) + "/cued-config"
      if Files.kind(of: candidate) == .regular { return candidate }
    }
    for directory in (ProcessInfo.environment("PATH") ?? "/usr/local/bin:/usr/bin").split(separator: ":") {
      let candidate = String(directory) + "/cued-config"
      if Files.kind(of: candidate) == .regular { return candidate }
    }
    return nil
  }

  /// Parses and checks the file at `path`.
  public static func load(path: String, tool: String? = toolPath()) throws(ConfigError) -> ConfigValues {
    guard let tool else {
      throw ConfigError(path: path, line: 0, message: "cannot read it: the cued-config program (installed next to cued) is missing")
    }
    let result: Spawn.Result
    do {
      result = try Spawn.run(tool, [path])
    } catch {
      throw ConfigError(path: path, line: 0, message: "cannot run \(tool): \(error.reason)")
    }
    let reply: JSONValue
    do {
      reply = try JSONParser.parse(result.output.filter { $0 != 0x0A })
    } catch {
      throw ConfigError(path: path, line: 0, message: "cued-config gave no answer (exit status \(result.status))")
    }
    guard reply["ok"]?.boolValue == true, let document = reply["document"] else {
      let line = reply["line"]?.intValue ?? 0
      let message = reply["message"]?.stringValue ?? "unreadable"
      throw ConfigError(path: path, line: line, message: line > 0 ? "TOML syntax: \(message)" : message)
    }
    var text = ""
    if let bytes = try? Files.read(path: path, limit: 4 << 20) { text = String(decoding: bytes, as: UTF8.self) }
    return try interpret(document, path: path, text: text)
  }

  /// Checks the document's keys, types and ranges; the first problem found is thrown.
  public static func interpret(_ document: JSONValue, path: String, text: String) throws(ConfigError) -> ConfigValues {
    var values = ConfigValues()
    let locator = KeyLocator(text: text)
    func fail(_ key: String, table: String = "", _ message: String) -> ConfigError {
      ConfigError(path: path, line: locator.line(of: key, in: table), message: message)
    }
    func integer(_ key: String, _ value: JSONValue, _ range: ClosedRange<Int>, table: String = "") throws(ConfigError) -> Int {
      guard let n = value.intValue, range.contains(n) else {
        throw fail(key, table: table, "\(key) must be a whole number from \(range.lowerBound) to \(range.upperBound), e.g. \(key) = \(range.lowerBound)")
      }
      return n
    }
    func number(_ key: String, _ value: JSONValue, _ range: ClosedRange<Double>, table: String = "") throws(ConfigError) -> Double {
      guard let x = value.doubleValue, x.isFinite, range.contains(x) else {
        throw fail(key, table: table, "\(key) must be a number from \(range.lowerBound) to \(range.upperBound)")
      }
      return x
    }
    func string(_ key: String, _ value: JSONValue) throws(ConfigError) -> String {
      guard let s = value.stringValue, !s.isEmpty else { throw fail(key, "\(key) must be a non-empty string in quotes, e.g. \(key) = \"…\"") }
      return s
    }
    func bool(_ key: String, _ value: JSONValue, table: String = "") throws(ConfigError) -> Bool {
      guard let b = value.boolValue else { throw fail(key, table: table, "\(key) must be true or false") }
      return b
    }
    for (key, value) in document.objectValue ?? [] {
      switch key {
      case "sounds":
        guard let list = value.arrayValue, list.allSatisfy({ $0.stringValue?.isEmpty == false }) else {
          throw fail(key, "sounds must be a list of directories, e.g. sounds = [\"~/.local/share/cued/sounds\"]")
        }
        values.sounds = list.compactMap(\.stringValue).map(expandHome)
      case "socket": values.socket = expandHome(try string(key, value))
      case "device": values.device = try string(key, value)
      case "rate": values.rate = try integer(key, value, 8000...192_000)
      case "period-frames": values.periodFrames = try integer(key, value, 16...16384)
      case "buffer-frames": values.bufferFrames = try integer(key, value, 32...65536)
      case "idle-timeout": values.idleTimeout = try number(key, value, 0...86_400)
      case "max-voices": values.maxVoices = try integer(key, value, 1...4096)
      case "max-cue-seconds": values.maxCueSeconds = try number(key, value, 0.001...3600)
      case "max-memory": values.maxMemory = try integer(key, value, 1...65536)
      case "max-cues": values.maxCues = try integer(key, value, 1...1_000_000)
      case "max-clients": values.maxClients = try integer(key, value, 1...65536)
      case "max-players": values.maxPlayers = try integer(key, value, 1...1_000_000)
      case "max-sounds": values.maxSounds = try integer(key, value, 1...1_000_000)
      case "max-client-queue": values.maxClientQueue = try integer(key, value, 16...1_048_576)
      case "allow-any-path": values.allowAnyPath = try bool(key, value)
      case "allow-group":
        let group = try string(key, value)
        guard Users.groupID(named: group) != nil else {
          throw fail(key, "allow-group names no group on this system: \(group); give a group name from /etc/group or a number")
        }
        values.allowGroup = group
      case "realtime-priority": values.realtimePriority = try integer(key, value, 0...99)
      case "log-level":
        let level = try string(key, value)
        guard ["trace", "debug", "info", "notice", "warning", "error", "critical"].contains(level) else {
          throw fail(key, "log-level must be one of trace, debug, info, notice, warning, error, critical")
        }
        values.logLevel = level
      case "system-sounds":
        guard let table = value.objectValue else { throw fail(key, "system-sounds must be a table: [system-sounds]") }
        for (inner, innerValue) in table {
          switch inner {
          case "volume": values.systemVolume = try number(inner, innerValue, 0...1, table: key)
          case "muted": values.systemMuted = try bool(inner, innerValue, table: key)
          default: throw fail(inner, table: key, "unknown key \(inner) in [system-sounds]; it takes volume and muted")
          }
        }
      case "carousel":
        values.carousels = try interpretCarousels(value, path: path, locator: locator)
      default:
        throw fail(
          key,
          "unknown key \(key); the keys are \(knownKeys.joined(separator: ", ")) and the tables [system-sounds] and [carousel.NAME] (docs/CONFIG.md)")
      }
    }
    return values
  }

  static let knownKeys = [
    "sounds", "socket", "device", "rate", "period-frames", "buffer-frames", "idle-timeout", "max-voices",
    "max-cue-seconds", "max-memory", "max-cues", "max-clients", "max-players", "max-sounds", "max-client-queue",
    "allow-any-path", "allow-group", "realtime-priority", "log-level",
  ]

  /// The keys that are also flags (`--key`).
  public static var flagKeys: [String] { knownKeys }

  /// `~/x` → `$HOME/x`.
  static func expandHome(_ path: String) -> String {
    guard path.hasPrefix("~/"), let home = ProcessInfo.environment("HOME") else { return path }
    return home + path.dropFirst(1)
  }
}

/// Finds the line a key is set on, by reading the TOML text (the parser keeps no positions).
struct KeyLocator {
  let lines: [Substring]
  init(text: String) { lines = text.split(separator: "\n", omittingEmptySubsequences: false) }

  /// The 1-based line of `key = …` inside `[table]` (top level when empty), or 0.
  func line(of key: String, in table: String) -> Int {
    var current = ""
    for (index, raw) in lines.enumerated() {
      let line = raw.drop { $0 == " " || $0 == "\t" }
      if line.hasPrefix("[") {
        current = String(line.dropFirst().prefix { $0 != "]" }).trimmingSpaces()
        if table.isEmpty == false && current == table && key == table { return index + 1 }
        continue
      }
      guard current == table else { continue }
      let name = line.prefix { $0 != "=" }.trimmingSpaces().trimmingCharacters(["\"", "'"])
      if name == key && line.contains("=") { return index + 1 }
    }
    // A table given as a header ([key]) rather than key = …
    if table.isEmpty, let header = lines.firstIndex(where: { $0.drop { $0 == " " }.hasPrefix("[\(key)]") }) { return header + 1 }
    return 0
  }
}

extension StringProtocol {
  func trimmingSpaces() -> String {
    String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
  }
  func trimmingCharacters(_ set: Set<Character>) -> String {
    String(drop { set.contains($0) }.reversed().drop { set.contains($0) }.reversed())
  }
}
