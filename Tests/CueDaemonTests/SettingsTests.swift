@testable import CueDaemon
import CueOutput
import CuePosix
import CueProtocol
import Foundation
import Testing

/// The settings table (Sources/Control/CueDaemon/Config/Settings.swift) and what it drives: the command line, the
/// config file, `--help`, the completion scripts, the man page, the defaults and the reload rules.
/// Every test runs over the whole table, so a new setting is checked without a new test.
@Suite("The settings table")
struct SettingsTests {
  static let options = Settings.all.filter(\.isOption)

  /// A value each setting accepts that is not its default, as the config file writes it.
  static func sample(_ setting: Setting) -> JSONValue {
    switch setting.type {
    case .integer(let range):
      let n = setting.defaultValue == .integer(range.upperBound) ? range.lowerBound : range.upperBound
      return .number(Double(n))
    case .number(let range, _):
      let x = setting.defaultValue.map { $0.double == range.upperBound } == true ? range.lowerBound : range.upperBound
      return .number(x)
    case .boolean: return .bool(setting.defaultValue != .bool(true))
    case .text: return .string("settings-test")
    case .path: return .string("/tmp/settings-test.sock")
    case .choice(let words, _): return .string(words.first { .string($0) != setting.defaultValue }!)
    case .group: return .string("0")
    case .directories: return .array([.string("/settings/one"), .string("/settings/two")])
    case .numberAbove, .name, .timeOfDay, .structured:
      Issue.record("no setting takes \(setting.type) yet: give it a sample here")
      return .null
    }
  }

  /// The same value on the command line.
  static func arguments(_ setting: Setting, _ value: JSONValue) -> [String] {
    let flag = setting.flag
    switch value {
    case .bool: return [flag]
    case .array(let items): return items.flatMap { [flag, $0.stringValue ?? ""] }
    case .number(let x): return [flag, x == x.rounded() ? "\(Int(x))" : "\(x)"]
    default: return [flag, value.stringValue ?? ""]
    }
  }

  /// Values each setting refuses, as the config file writes them.
  static func refused(_ setting: Setting) -> [JSONValue] {
    switch setting.type {
    case .integer(let range): return [.number(Double(range.lowerBound - 1)), .number(Double(range.upperBound + 1)), .string("x")]
    case .number(let range, _): return [.number(range.lowerBound - 1), .number(range.upperBound + 1), .string("x")]
    case .boolean: return []  // a flag has no value on the command line
    case .text, .path: return [.string("")]
    case .choice: return [.string("not-a-choice"), .string("")]
    case .group: return [.string("no-such-group-settings-test"), .string("")]
    case .directories: return [.array([.string("")])]
    case .numberAbove, .name, .timeOfDay, .structured: return []
    }
  }

  static func fromFile(_ members: [(String, JSONValue)]) throws(ConfigError) -> ConfigValues {
    try ConfigFile.interpret(.object(members), path: "test.toml")
  }

  @Test("every option reads the same from the command line and the config file", arguments: options.map(\.key))
  func sameValueBothWays(_ key: String) throws {
    let setting = try #require(Settings.setting(key))
    let value = Self.sample(setting)
    let file = try Self.fromFile([(key, value)])
    let commandLine = try DaemonCommandLine(arguments: Self.arguments(setting, value))
    #expect(file[setting] != nil)
    #expect(commandLine.values[setting] == file[setting], "\(key): \(String(describing: commandLine.values[setting]))")
    // And it reaches its field: not the default any more, the same through both.
    let fromFile = DaemonConfiguration(file)
    let fromCommandLine = DaemonConfiguration(commandLine.values)
    #expect(!setting.differs(fromFile, fromCommandLine), "\(key)")
    #expect(setting.differs(fromFile, DaemonConfiguration(ConfigValues())), "\(key) = \(value) did not change the configuration")
  }

  @Test("settings in tables are read from their table", arguments: Settings.all.filter { !$0.isOption }.map(\.id))
  func tableSettings(_ id: String) throws {
    let setting = try #require(Settings.all.first { $0.id == id })
    let values = try Self.fromFile([(setting.table, .object([(setting.key, Self.sample(setting))]))])
    #expect(values[setting] != nil)
    #expect(setting.differs(DaemonConfiguration(values), DaemonConfiguration(ConfigValues())), "\(id)")
    // Not an option.
    #expect(throws: DaemonCommandLine.UsageError.self) { try DaemonCommandLine(arguments: ["--" + setting.key, "1"]) }
  }

  @Test("a value out of range is refused with the same message from both", arguments: options.map(\.key))
  func sameRefusalBothWays(_ key: String) throws {
    let setting = try #require(Settings.setting(key))
    for value in Self.refused(setting) {
      var fileMessage = ""
      do {
        _ = try Self.fromFile([(key, value)])
        Issue.record("\(key) = \(value) was accepted from the file")
      } catch {
        fileMessage = error.message
      }
      #expect(fileMessage.hasPrefix(key + " "), "\(fileMessage)")
      // A range's message ends with the default as --help states it (one checker for every key).
      switch setting.type {
      case .integer, .number: #expect(fileMessage.hasSuffix(" (default \(setting.shownDefault ?? "?"))"), "\(fileMessage)")
      default: break
      }
      do {
        _ = try DaemonCommandLine(arguments: Self.arguments(setting, value))
        Issue.record("--\(key) \(value) was accepted from the command line")
      } catch {
        #expect(error.message == "--" + fileMessage + "\nSee 'cued --help'.", "\(key) = \(value)")
      }
    }
  }

  /// A switch that is on by default has a flag that turns it off, and only that one.
  @Test func aSwitchOnByDefaultIsTurnedOffByItsNoFlag() throws {
    #expect(DaemonConfiguration(ConfigValues()).watchSounds)
    let setting = try #require(Settings.setting("watch-sounds"))
    #expect(setting.flag == "--no-watch-sounds")
    #expect(try !DaemonConfiguration(DaemonCommandLine(arguments: ["--no-watch-sounds"]).values).watchSounds)
    #expect(throws: DaemonCommandLine.UsageError.self) { try DaemonCommandLine(arguments: ["--watch-sounds"]) }
    #expect(throws: DaemonCommandLine.UsageError.self) { try DaemonCommandLine(arguments: ["--no-watch-sounds=1"]) }
    #expect(DaemonCommandLine.helpText.contains("--no-watch-sounds"))
    // A switch off by default keeps its name: --no-rtkit is the setting no-rtkit.
    #expect(try DaemonCommandLine(arguments: ["--no-rtkit"]).values[try #require(Settings.setting("no-rtkit"))] == .bool(true))
  }

  @Test func unknownKeysNameEveryKeyAndTable() throws {
    do {
      _ = try Self.fromFile([("bogus", .number(1))])
      Issue.record("bogus was accepted")
    } catch {
      let keys = Self.options.map(\.key).joined(separator: ", ")
      #expect(error.message == "unknown key bogus; the keys are \(keys) and the tables [system-sounds], [carousel.NAME], [cues.NAME], [groups.NAME], [clients.NAME] and [quiet-hours] (docs/CONFIG.md)")
    }
    do {
      _ = try Self.fromFile([("system-sounds", .object([("loud", .number(1))]))])
      Issue.record("loud was accepted")
    } catch {
      #expect(error.message == "unknown key loud in [system-sounds]; it takes volume and muted")
    }
  }

  @Test func helpListsEverySettingWithItsHelpAndDefault() {
    let help = DaemonCommandLine.helpText
    let words = help.split(whitespaces: true)
    for setting in Self.options {
      let usage = setting.type == .boolean ? "  \(setting.flag) " : "  \(setting.flag) <\(setting.valueName)>"
      #expect(help.contains(usage), "--help lacks \(usage)")
      #expect(words.contains(setting.helpText.split(whitespaces: true)), "--help lacks the help of --\(setting.key)")
      if let shown = setting.shownDefault { #expect(setting.helpText.contains("(default: \(shown))")) }
    }
  }

  @Test("each completion script offers every option", arguments: ["bash", "zsh", "fish"])
  func completionsOfferEverySetting(_ shell: String) throws {
    let script = try #require(DaemonCommandLine.completionScript(for: shell))
    for setting in Self.options {
      let offered: Bool
      switch shell {
      case "bash":
        // The words offered: the last `compgen -W '…'` list.
        let words = script.split(separator: "compgen -W '").last?.prefix { $0 != "'" }.split(separator: " ") ?? []
        offered = words.contains(Substring(setting.flag))
      case "zsh": offered = script.contains("'\(setting.flag)[")
      default: offered = script.contains("complete -c cued -l \(setting.flag.dropFirst(2)) ")
      }
      #expect(offered, "\(shell) completion lacks \(setting.flag)")
    }
    if shell == "bash" {
      #expect(script.contains("--sounds) COMPREPLY=($(compgen -d"), "--sounds completes directories")
      #expect(script.contains("--log-level) COMPREPLY=($(compgen -W 'trace debug info notice warning error critical'"))
    }
  }

  @Test func manPageDescribesEverySetting() throws {
    let list = DaemonCommandLine.manualOptions
    for setting in Self.options {
      let item = ".It Fl \(setting.flag.dropFirst())" + (setting.type == .boolean ? "\n" : " Ar \(setting.valueName)\n")
      #expect(list.contains(item), "the man page lacks \(item)")
      #expect(list.contains(DaemonCommandLine.mdocText(setting.manualText)))
      if let shown = setting.shownDefault { #expect(setting.manualText.contains("Default: \(shown).")) }
    }
    for line in list.split(separator: "\n") { #expect(!line.isEmpty && !line.hasPrefix("'"), "\(line)") }
    // The page the list goes into (packaging/install.sh man-page) has the line it replaces.
    let page = try String(contentsOfFile: Self.repositoryRoot + "/packaging/man/cued.1", encoding: .utf8)
    #expect(page.split(separator: "\n").contains { $0.hasPrefix(".\\\" @OPTIONS@") })
  }

  /// A default is written once, in the declaration: a fresh configuration, made any way, holds
  /// each setting's declared default (storing it again changes nothing).
  @Test func aFreshConfigurationHoldsEveryDeclaredDefault() {
    let fresh = [
      ("init()", DaemonConfiguration()), ("init(values)", DaemonConfiguration(ConfigValues())),
      ("init(soundDirectories:socketPath:device:)", DaemonConfiguration(soundDirectories: [], socketPath: "", device: "auto")),
    ]
    for (made, configuration) in fresh {
      for setting in Settings.all {
        guard let value = setting.defaultValue else { continue }
        var set = configuration
        setting.apply(value, &set)
        #expect(!setting.differs(configuration, set), "\(made) does not hold \(setting.id)'s default, \(value)")
      }
    }
    // The defaults worked out at start, and a few as docs/CONFIG.md states them.
    let defaults = DaemonConfiguration()
    #expect(defaults.socketPath == DefaultPaths.socket())
    #expect(defaults.soundDirectories == DaemonConfiguration.defaultSoundDirectories())
    #expect(defaults.allowedGroup == nil && defaults.device == "auto")
    #expect(defaults.sampleRate == 48000 && defaults.maximumDecodedBytes == 256 << 20 && defaults.clientQueueBytes == 1024 << 10)
    #expect(defaults.watchSounds && defaults.realtimeKit && defaults.niceLevel == -11 && defaults.logLevel == "info")
  }

  /// A configuration with every setting changed from its default.
  static var everythingChanged: DaemonConfiguration {
    var values = ConfigValues()
    for setting in Settings.all {
      let document: JSONValue =
        setting.isOption ? .object([(setting.key, sample(setting))]) : .object([(setting.table, .object([(setting.key, sample(setting))]))])
      values[setting] = try! ConfigFile.interpret(document, path: "t")[setting]
    }
    return DaemonConfiguration(values)
  }

  @Test func reloadTakesReloadableSettingsAndKeepsAndListsRestartOnlyOnes() {
    var current = DaemonConfiguration(ConfigValues())
    current.shutdownFadeSeconds = 0.01
    var next = Self.everythingChanged
    next.shutdownFadeSeconds = 0.02
    let (reloaded, restartOnly) = current.reloading(to: next)
    for setting in Settings.all {
      #expect(setting.differs(current, next), "the test changes \(setting.id)")
      switch setting.reload {
      case .reloadable:
        #expect(!setting.differs(reloaded, next), "\(setting.id) was not reloaded")
      case .restartOnly:
        #expect(!setting.differs(reloaded, current), "\(setting.id) was reloaded")
      }
    }
    #expect(restartOnly == Settings.all.filter { $0.reload == .restartOnly }.map(\.key))
    // The rules as cued has always had them (the backend rows' options after the device).
    #expect(restartOnly == ["socket", "device", "pipewire-latency", "pipewire-latency-max", "pulseaudio-latency", "pulseaudio-latency-max", "period-frames", "buffer-frames", "fill-target", "pipewire-pause-after", "latency-decay", "rate", "idle-timeout", "realtime-priority", "nice-level", "no-rtkit"])
    #expect(reloaded.shutdownFadeSeconds == 0.01, "a field that is no setting is kept")
    #expect(reloaded.maximumDecodedBytes == next.maximumDecodedBytes && reloaded.sampleRate == current.sampleRate)

    let (same, nothing) = current.reloading(to: current)
    #expect(nothing.isEmpty)
    for setting in Settings.all { #expect(!setting.differs(same, current)) }
  }

  /// Each setting's row in docs/CONFIG.md: its type cell states the declared type as a table key's
  /// does (`ValueType.documented`: the range, the words), its *restart* mark the reload rule.
  @Test func configDocumentationHasARowForEveryKeyWithItsTypeAndReloadRule() throws {
    let doc = try String(contentsOfFile: Self.repositoryRoot + "/docs/CONFIG.md", encoding: .utf8)
    // | `key` | type | default | meaning | on reload |
    var rows: [String: (type: String, onReload: String)] = [:]
    for line in doc.split(separator: "\n") where line.hasPrefix("| `") {
      let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
      if cells.count == 5 { rows[cells[0].trimmingCharacters(in: ["`"])] = (cells[1], cells[4]) }
    }
    for setting in Self.options {
      let row = try #require(rows[setting.key], "docs/CONFIG.md has no row for \(setting.key)")
      #expect(row.type.contains(setting.type.documented), "docs/CONFIG.md: \(setting.key) is '\(row.type)', the declaration says \(setting.type.documented)")
      #expect((row.onReload == "restart") == (setting.reload == .restartOnly), "docs/CONFIG.md says \(setting.key) is '\(row.onReload)' on reload")
    }
    let tables = try TableKeysTests.documentedTables()
    for setting in Settings.all where !setting.isOption {
      let cells = try #require(tables["[\(setting.table)]"]?[setting.key], "docs/CONFIG.md's [\(setting.table)] table has no row for \(setting.key)")
      #expect(cells.type.contains(setting.type.documented), "docs/CONFIG.md: [\(setting.table)] \(setting.key) is '\(cells.type)'")
    }
  }

  /// The configuration with the layout the ALSA row chooses for PipeWire's ALSA plugin, taken
  /// through `outputSettings` both ways as `cued` takes it.
  static func forPipeWirePlugin(_ configuration: DaemonConfiguration) -> DaemonConfiguration {
    var adapted = configuration
    adapted.outputSettings = configuration.outputSettings.forPipeWirePlugin()
    return adapted
  }

  @Test func pipeWiresALSAPluginGetsAQuantumSizedLayoutUnlessOneWasGiven() throws {
    let plugin = Self.forPipeWirePlugin(DaemonConfiguration(ConfigValues()))
    #expect(plugin.backendOptions.periodFrames == 64 && plugin.backendOptions.bufferFrames == 256 && plugin.backendOptions.fillTargetFrames == 128)
    #expect(plugin.problem == nil)
    let wider = Self.forPipeWirePlugin(DaemonConfiguration(try DaemonCommandLine(arguments: ["--pipewire-latency", "256"]).values))
    #expect(wider.backendOptions.periodFrames == 128 && wider.backendOptions.bufferFrames == 512 && wider.backendOptions.fillTargetFrames == 256)
    // Any of the three given, on the command line or in the file: exactly what was given is used.
    let given = [
      DaemonConfiguration(try DaemonCommandLine(arguments: ["--period-frames", "240"]).values),
      DaemonConfiguration(try DaemonCommandLine(arguments: ["--buffer-frames", "1920"]).values),
      DaemonConfiguration(try DaemonCommandLine(arguments: ["--fill-target", "0"]).values),
      DaemonConfiguration(try Self.fromFile([("fill-target", .number(480))])),
    ]
    for configuration in given {
      #expect(configuration.outputSettings.given(.alsa))
      let kept = Self.forPipeWirePlugin(configuration)
      #expect(kept.backendOptions == configuration.backendOptions)
    }
    #expect(!DaemonConfiguration(ConfigValues()).outputSettings.given(.alsa))
  }

  @Test func aPulledStreamPausesAfterTheGivenSilenceOrAtTheEndOfTheIdleWindowAndStaysConnected() throws {
    let defaults = try #require(DaemonConfiguration(ConfigValues()).pullPausePolicy)
    #expect(defaults.afterFrames == 72_000, "1.5 s at 48 kHz")
    #expect(defaults.releaseAfterNanoseconds == nil, "paused until the next cue, however long")
    let never = DaemonConfiguration(try DaemonCommandLine(arguments: ["--pipewire-pause-after", "0"]).values)
    #expect(never.pullPausePolicy == nil)
    let pastIdle = DaemonConfiguration(try DaemonCommandLine(arguments: ["--pipewire-pause-after", "3"]).values)
    #expect(pastIdle.pullPausePolicy?.afterFrames == 96_000, "paused at the end of the 2 s idle window, not closed")
    let shortIdle = DaemonConfiguration(try DaemonCommandLine(arguments: ["--idle-timeout", "0.5"]).values)
    #expect(shortIdle.pullPausePolicy?.afterFrames == 24_000, "paused at the end of a shorter idle window")
  }

  @Test func commandLineOverridesTheFile() throws {
    let file = try Self.fromFile([("rate", .number(44100)), ("max-voices", .number(8)), ("system-sounds", .object([("volume", .number(0.5))]))])
    let flags = try DaemonCommandLine(arguments: ["--rate", "96000"]).values
    let merged = flags.overriding(file)
    let configuration = DaemonConfiguration(merged)
    #expect(configuration.sampleRate == 96000)
    #expect(configuration.voiceLimit == 8)
    #expect(configuration.systemVolume == 0.5 && merged.systemVolume == 0.5)
    #expect(merged.systemMuted == nil && merged.logLevel == nil)
  }

  static let repositoryRoot: String = {
    var url = URL(fileURLWithPath: #filePath)
    while url.path != "/" && !FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) {
      url.deleteLastPathComponent()
    }
    return url.path
  }()
}

extension String {
  fileprivate func split(whitespaces: Bool) -> [Substring] { split(whereSeparator: { $0 == " " || $0 == "\n" }) }
}

extension Array where Element == Substring {
  /// Whether `other` is a run of this array.
  fileprivate func contains(_ other: [Substring]) -> Bool {
    guard !other.isEmpty, other.count <= count else { return other.isEmpty }
    return (0...(count - other.count)).contains { Array(self[$0..<($0 + other.count)]) == other }
  }
}
