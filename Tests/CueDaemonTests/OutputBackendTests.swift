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

  @Test func everyRowsSettingsExistAndBelongToOneRow() {
    let owned = OutputBackend.table.flatMap(\.settings)
    #expect(Set(owned).count == owned.count, "a setting claimed by two backends")
    for key in owned { #expect(Settings.setting(key) != nil, "\(key) is no setting") }
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
    let settings = OutputSettings(
      sampleRate: 44100, pipeWireLatency: 256, pipeWireLatencyMax: 2048, pulseAudioLatency: 960, pulseAudioLatencyMax: 7680,
      latencyDecaySeconds: 3, realtime: RealtimePolicy(priority: 7, asksRealtimeKit: false), periodFrames: 64, bufferFrames: 512,
      fillTargetFrames: 128, alsaLayoutGiven: true)
    #expect(configuration.outputSettings != settings)
    configuration.outputSettings = settings
    #expect(configuration.outputSettings == settings)
    #expect(configuration.sampleRate == 44100 && configuration.periodFrames == 64 && configuration.realtimePriority == 7)
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
