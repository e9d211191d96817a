import CueOutput
import Logging

/// One output backend, a row of `OutputBackend.table`: how `--device` names it, whether and how
/// `--device auto` probes it, the settings only it reads, and how its device is made. A backend is
/// its C face (Sources/Output/NAME), its sink (one Swift file in CueOutput) and one row here; the
/// engine, the latency adapter and the real-time policy are shared.
public struct OutputBackend: Sendable {
  /// `--device NAME`, or `--device NAME:TARGET` when it takes a target.
  public let name: String
  /// What a target names, for messages; nil when the backend takes none.
  public let target: String?
  /// Its name for people ("PipeWire").
  public let title: String
  /// What `--device auto` says when it picks this backend.
  public let pickedByAuto: String
  /// Asked in table order by `--device auto`; nil: auto never probes it.
  public let probe: (@Sendable () -> Bool)?
  /// The settings only this backend reads (keys of `Settings`).
  public let settings: [String]
  /// Makes the device for `target` from the settings, which it may adjust (ALSA through PipeWire's
  /// plugin); throws when the backend cannot be used at all (its client library is missing).
  public let make: @Sendable (_ target: String?, _ configuration: DaemonConfiguration, _ logger: Logger) throws(StartupError) -> Made

  /// A device and the settings it was made with.
  public struct Made {
    public var device: any OutputDevice
    public var configuration: DaemonConfiguration
  }

  /// Every backend, in the order `--device auto` probes them.
  public static let table: [OutputBackend] = [pipeWire, pulseAudio, alsa, null]

  /// What `--device auto` plays through when no probe answers: ALSA's `default`.
  static let autoFallback = (backend: alsa, target: "default")

  /// The row named `name`.
  public static func named(_ name: String) -> OutputBackend? { table.first { $0.name == name } }

  /// The backend and target `choice` means; for `auto`, the first row whose probe answers, else
  /// ALSA's `default`, said in the log either way.
  public static func resolve(_ choice: OutputChoice, logger: Logger) -> (OutputBackend, String?) {
    if let backend = named(choice.backend) { return (backend, choice.target) }
    var silent: [String] = []
    for backend in table {
      guard let probe = backend.probe else { continue }
      if probe() {
        logger.info("device auto: \(backend.pickedByAuto)")
        return (backend, nil)
      }
      silent.append(silent.isEmpty ? "no \(backend.title) server answers" : "nor a \(backend.title) server")
    }
    logger.info("device auto: \(silent.joined(separator: ", ")); playing through ALSA '\(autoFallback.target)'")
    return (autoFallback.backend, autoFallback.target)
  }

  // MARK: - The rows

  static let pipeWire = OutputBackend(
    name: "pipewire", target: "a sink node (node.name or serial)", title: "PipeWire",
    pickedByAuto: "a PipeWire server answers; playing through it", probe: { PipeWireSink.serverAnswers() },
    settings: ["pipewire-latency", "pipewire-latency-max", "pipewire-pause-after"]
  ) { target, configuration, _ throws(StartupError) in
    let sink = PipeWireSink(
      target: target, rate: configuration.sampleRate, quantumFrames: configuration.pipeWireLatency,
      adaptiveLatency: (maximumFrames: configuration.pipeWireLatencyMax, decaySeconds: configuration.latencyDecaySeconds),
      realtime: configuration.realtimePolicy)
    // The client library is loaded now that PipeWire is chosen: missing, it stops cued here, with
    // what to install, rather than at the first cue.
    do { try PipeWireSink.loadClientLibrary(device: sink.name) } catch { throw StartupError("\(error)") }
    return Made(device: sink, configuration: configuration)
  }

  static let pulseAudio = OutputBackend(
    name: "pulseaudio", target: "a sink", title: "PulseAudio",
    pickedByAuto: "no PipeWire server answers, a PulseAudio server does; playing through a native PulseAudio stream",
    probe: { PulseSink.serverAnswers() }, settings: ["pulseaudio-latency", "pulseaudio-latency-max"]
  ) { target, configuration, _ throws(StartupError) in
    let sink = PulseSink(
      sink: target, rate: configuration.sampleRate, targetFrames: configuration.pulseAudioLatency,
      adaptiveLatency: (maximumFrames: configuration.pulseAudioLatencyMax, decaySeconds: configuration.latencyDecaySeconds),
      realtime: configuration.realtimePolicy)
    do { try PulseSink.loadClientLibrary(device: sink.name) } catch { throw StartupError("\(error)") }  // as for PipeWire
    return Made(device: sink, configuration: configuration)
  }

  static let alsa = OutputBackend(
    name: "alsa", target: "an ALSA PCM", title: "ALSA", pickedByAuto: "", probe: nil,
    settings: ["period-frames", "buffer-frames", "fill-target"]
  ) { target, configuration, logger throws(StartupError) in
    let name = target ?? "default"
    var configuration = configuration
    if !configuration.alsaLayoutGiven, AlsaSink.soundServerPlugin(device: name) == .pipeWire {
      configuration = configuration.forPipeWirePlugin()
      logger.info(
        "ALSA '\(name)' is PipeWire's ALSA plugin: period \(configuration.periodFrames), buffer \(configuration.bufferFrames), kept \(configuration.fillTargetFrames) frames full (period-frames, buffer-frames and fill-target choose otherwise)")
    }
    let sink = AlsaSink(
      device: name, rate: configuration.sampleRate, periodFrames: configuration.periodFrames, bufferFrames: configuration.bufferFrames)
    return Made(device: sink, configuration: configuration)
  }

  static let null = OutputBackend(name: "null", target: nil, title: "the null device", pickedByAuto: "", probe: nil, settings: []) {
    _, configuration, _ throws(StartupError) in
    let sink = NullSink(rate: configuration.sampleRate, periodFrames: configuration.periodFrames, bufferFrames: configuration.bufferFrames)
    return Made(device: sink, configuration: configuration)
  }
}

/// Where the daemon plays, from `--device`: a backend of `OutputBackend.table` and its target, or `auto`.
public struct OutputChoice: Equatable, Sendable {
  /// A backend's name, or `auto`.
  public var backend: String
  /// The backend's target (a sink node, a sink, an ALSA PCM); nil: the backend's default.
  public var target: String?

  public init(backend: String, target: String? = nil) {
    (self.backend, self.target) = (backend, target)
  }

  /// `auto`, `NAME` or `NAME:TARGET` for a backend of the table (`pipewire`, `pulseaudio`, `alsa`,
  /// `null`), or a bare ALSA PCM name (as before `--device` knew backends: `default`, `hw:0`,
  /// `plughw:1,0`, and `pulse`, ALSA's pulse plugin). Nil for an empty name, an empty target, or a
  /// target for a backend that takes none (`null:x`).
  public init?(_ text: String) {
    guard !text.isEmpty else { return nil }
    if text == "auto" {
      self.init(backend: "auto")
      return
    }
    let colon = text.firstIndex(of: ":")
    let prefix = colon.map { String(text[..<$0]) } ?? text
    guard let backend = OutputBackend.named(prefix) else {
      self.init(backend: OutputBackend.alsa.name, target: text)
      return
    }
    guard let colon else {
      self.init(backend: backend.name)
      return
    }
    let target = String(text[text.index(after: colon)...])
    guard !target.isEmpty, backend.target != nil else { return nil }
    self.init(backend: backend.name, target: target)
  }
}
