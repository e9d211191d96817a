@testable import CueDaemon
@testable import CueOutput
import CuePosix
import Testing

/// The backend table (Sources/Output/CueOutput/OutputBackends.swift): what `--device` means, and
/// that each row's settings and name are the ones the settings table and the docs speak of.
@Suite("The output backend table")
struct OutputBackendTests {
  @Test(arguments: [
    ("auto", OutputChoice(backend: "auto")),
    ("null", OutputChoice(backend: "null")),
    ("pipewire", OutputChoice(backend: "pipewire")),
    ("pipewire:alsa_output.pci", OutputChoice(backend: "pipewire", target: "alsa_output.pci")),
    ("pulseaudio", OutputChoice(backend: "pulseaudio")),
    ("pulseaudio:t", OutputChoice(backend: "pulseaudio", target: "t")),
    ("alsa", OutputChoice(backend: "alsa")),
    ("alsa:hw:0", OutputChoice(backend: "alsa", target: "hw:0")),
    // A bare ALSA PCM name, as before --device knew backends; `pulse` is ALSA's pulse plugin.
    ("default", OutputChoice(backend: "alsa", target: "default")),
    ("hw:0", OutputChoice(backend: "alsa", target: "hw:0")),
    ("plughw:1,0", OutputChoice(backend: "alsa", target: "plughw:1,0")),
    ("pulse", OutputChoice(backend: "alsa", target: "pulse")),
    ("pulse:t", OutputChoice(backend: "alsa", target: "pulse:t")),
  ])
  func deviceNamesABackendAndATarget(_ text: String, _ expected: OutputChoice) {
    #expect(OutputChoice(text) == expected)
  }

  @Test(arguments: ["", "pipewire:", "pulseaudio:", "alsa:", "null:x"])
  func aMalformedDeviceIsRefused(_ text: String) {
    #expect(OutputChoice(text) == nil)
    var configuration = DaemonConfiguration(soundDirectories: [], socketPath: "/tmp/x.sock", device: text)
    configuration.device = text
    #expect(configuration.problem?.hasPrefix("device '\(text)' names no device") == true)
    // The remedy names every backend of the table, and what a target is for each that takes one.
    for backend in OutputBackend.table {
      #expect(configuration.problem?.contains(backend.name) == true, "\(configuration.problem ?? "")")
      if let target = backend.target { #expect(configuration.problem?.contains(target) == true, "\(configuration.problem ?? "")") }
    }
  }

  /// Each row's options are settings of the daemon, with their key, range, default, help and
  /// reload rule as the row declares them, and no key is declared twice.
  @Test func everyRowsOptionsAreSettingsAsDeclared() throws {
    let keys = OutputBackend.options.map(\.key)
    #expect(Set(keys).count == keys.count, "an option declared by two rows")
    for option in OutputBackend.options {
      let setting = try #require(Settings.setting(option.key), "\(option.key) is no setting")
      #expect(setting.isOption && setting.help == option.help && setting.valueName == option.valueName)
      #expect(setting.reload == (option.reload == .reloadable ? .reloadable : .restartOnly))
      switch option.value {
      case .integer(let range, let value, _): #expect(setting.type == .integer(range) && setting.defaultValue == .integer(value))
      case .number(let range, let value, _): #expect(setting.type == .number(range) && setting.defaultValue == .number(value))
      }
      if let shown = option.shownDefault { #expect(setting.shownDefault == shown) }
    }
    // The settings' keys that no row declares are the control side's own: none names a row's option twice.
    #expect(Settings.all.filter { keys.contains($0.key) }.count == keys.count)
  }

  /// Each row's option reaches `cued --help` (its flag, value name, help and default) and the man page.
  @Test(arguments: OutputBackend.options.map(\.key))
  func eachRowsOptionIsInTheHelpAndTheManPage(_ key: String) throws {
    let option = try #require(OutputBackend.options.first { $0.key == key })
    let help = DaemonCommandLine.helpText.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    #expect(help.contains("--\(key) <\(option.valueName)> \(option.help)"), "cued --help does not describe \(key)")
    let shown = option.shownDefault ?? { if case .integer(_, let value, _) = option.value { "\(value)" } else { "" } }()
    #expect(help.contains("(default: \(shown))."), "cued --help does not give \(key)'s default")
    #expect(DaemonCommandLine.manualOptions.contains(".It Fl -\(key) Ar \(option.valueName)\n\(option.help)."))
  }

  /// A value outside an option's range is refused by the config file's checks, naming the key and
  /// the range; a value inside it reaches `OutputSettings` at the field the row names.
  @Test(arguments: OutputBackend.options.map(\.key))
  func eachRowsOptionIsCheckedAndReachesTheOutputSettings(_ key: String) throws {
    let option = try #require(OutputBackend.options.first { $0.key == key })
    let (range, inside, outside): (String, Double, Double) =
      switch option.value {
      case .integer(let range, let value, _):
        ("from \(range.lowerBound) to \(range.upperBound)", Double(value == range.upperBound ? range.lowerBound : range.upperBound), Double(range.upperBound) + 1)
      case .number(let range, let value, _):
        ("from \(range.lowerBound) to \(range.upperBound)", value == range.upperBound ? range.lowerBound : range.upperBound, range.upperBound + 1)
      }
    do {
      _ = try ConfigFile.interpret(.object([(key, .number(outside))]), path: "cued.toml")
      Issue.record("\(key) = \(outside) was accepted")
    } catch {
      #expect(error.description.contains(key) && error.description.contains(range), "\(error.description)")
    }
    let configuration = DaemonConfiguration(try ConfigFile.interpret(.object([(key, .number(inside))]), path: "cued.toml"))
    let settings = configuration.outputSettings
    #expect(option.read(settings.options) == inside, "\(key) = \(inside) did not reach OutputSettings")
    #expect(settings.options.given == [key])
    #expect(option.read(DaemonConfiguration(ConfigValues()).outputSettings.options) == option.read(OutputSettings.Options()))
  }

  /// `OutputSettings.Options()` holds each option at its declared default.
  @Test func theOptionsStartAtTheirDeclaredDefaults() {
    for option in OutputBackend.options {
      switch option.value {
      case .integer(_, let value, let field): #expect(OutputSettings.Options()[keyPath: field] == value, "\(option.key)")
      case .number(_, let value, let field): #expect(OutputSettings.Options()[keyPath: field] == value, "\(option.key)")
      }
    }
  }

  /// The rule of issue 31: a new backend is its C face, its sink and its row, with no edit in the
  /// engine, the control side or cuectl. None of them names a backend (a string literal that is a
  /// row's name) or a row's option key, so nothing there has to change when a row comes or goes.
  @Test func theEngineTheControlSideAndCuectlNameNoBackendAndNoBackendOption() throws {
    let directories = ["Control/CueDaemon", "Engine", "Programs/cuectl"].map { SourceSizeTests.sources + "/" + $0 }
    var scanned = 0
    for directory in directories {
      for path in try SourceSizeTests.sourceFiles(under: directory) {
        let text = String(decoding: try Files.read(path: path, limit: 1 << 20), as: UTF8.self)
        scanned += 1
        let file = path.dropFirst(SourceSizeTests.sources.count - 7)
        let backends = OutputBackend.table.map(\.name).filter { text.contains("\"\($0)\"") }
        #expect(backends.isEmpty, "\(file) names the backend \(backends) in a string")
        let keys = OutputBackend.options.map(\.key).filter { text.contains($0) }
        #expect(keys.isEmpty, "\(file) names \(keys), options of a backend row")
      }
    }
    #expect(scanned > 50, "the sources were not found under \(SourceSizeTests.sources)")
  }

  /// The configuration problems of a row's options come from its row (the ALSA layout's).
  @Test func aRowsCheckNamesItsOptions() {
    var configuration = DaemonConfiguration(ConfigValues())
    configuration.backendOptions.bufferFrames = configuration.backendOptions.periodFrames
    #expect(configuration.problem?.hasPrefix("buffer-frames (240) must hold at least two periods") == true, "\(configuration.problem ?? "")")
    configuration.backendOptions.bufferFrames = 960
    configuration.backendOptions.fillTargetFrames = 100
    #expect(configuration.problem?.hasPrefix("fill-target (100) must be 0 or between period-frames (240)") == true)
  }

  @Test func theDeviceHelpAndConfigDocNameEveryBackend() throws {
    let device = try #require(Settings.setting("device"))
    let config = String(decoding: try Files.read(path: Self.repositoryRoot + "/docs/CONFIG.md", limit: 1 << 20), as: UTF8.self)
    for backend in OutputBackend.table {
      #expect(device.manualText.contains(backend.name), "cued --help's device text does not name \(backend.name)")
      #expect(config.contains("`\(backend.name)"), "docs/CONFIG.md does not name \(backend.name)")
    }
  }

  /// The daemon's configuration carries every field of `OutputSettings` there and back, so what a
  /// row adjusts (the ALSA layout) reaches the daemon and nothing else changes on the way.
  @Test func theOutputSettingsGoThroughTheConfigurationAndBack() {
    var configuration = DaemonConfiguration(ConfigValues())
    var options = OutputSettings.Options()
    (options.pipeWireLatency, options.pipeWireLatencyMax, options.pulseAudioLatency, options.pulseAudioLatencyMax) = (256, 2048, 960, 7680)
    (options.periodFrames, options.bufferFrames, options.fillTargetFrames, options.given) = (64, 512, 128, ["period-frames"])
    var settings = OutputSettings(
      sampleRate: 44100, latencyDecaySeconds: 3, realtime: RealtimePolicy(priority: 7, asksRealtimeKit: false), options: options)
    settings.control = ControlPriority(nice: -5, asksRealtimeKit: false)
    #expect(configuration.outputSettings != settings)
    configuration.outputSettings = settings
    #expect(configuration.outputSettings == settings)
    #expect(configuration.sampleRate == 44100 && configuration.backendOptions.periodFrames == 64 && configuration.realtimePriority == 7)
  }

  /// Auto probes only rows with a probe, in table order, and the fallback is ALSA's default.
  @Test func autoProbesTheServersInOrderThenFallsBackToAlsa() {
    #expect(OutputBackend.table.filter { $0.probe != nil }.map(\.name) == ["pipewire", "pulseaudio"])
    #expect(OutputBackend.autoFallback.backend.name == "alsa" && OutputBackend.autoFallback.target == "default")
  }

  static var repositoryRoot: String {
    var path = #filePath
    for _ in 0..<3 { path = DefaultPaths.directory(of: path) }
    return path
  }
}
