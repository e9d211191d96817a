/// What the backend rows read of the daemon's settings, and what the ALSA row may adjust: the
/// control side fills it from its configuration and takes the adjusted value back
/// (`DaemonConfiguration.outputSettings`).
public struct OutputSettings: Sendable, Equatable {
  /// The output sample rate (`rate`).
  public var sampleRate: Int
  /// node.latency asked of PipeWire, and the most it rises to after xruns (`pipewire-latency`, `pipewire-latency-max`).
  public var pipeWireLatency: Int
  public var pipeWireLatencyMax: Int
  /// The queue a native PulseAudio stream asks for, and the most it rises to (`pulseaudio-latency`, `pulseaudio-latency-max`).
  public var pulseAudioLatency: Int
  public var pulseAudioLatencyMax: Int
  /// Seconds without an xrun that cut sound after which a raised latency halves again (`latency-decay`).
  public var latencyDecaySeconds: Double
  /// The real-time policy for whichever thread mixes.
  public var realtime: RealtimePolicy
  /// The control thread's nice level, for a client library's own threads that did not inherit it.
  public var control: ControlPriority = .none
  /// The ALSA (and null device) layout: `period-frames`, `buffer-frames`, `fill-target`.
  public var periodFrames: Int
  public var bufferFrames: Int
  public var fillTargetFrames: Int
  /// Whether any of the three was given (flag or config file): then the ALSA output uses exactly
  /// what was given, whatever the PCM turns out to be.
  public var alsaLayoutGiven: Bool

  public init(
    sampleRate: Int, pipeWireLatency: Int, pipeWireLatencyMax: Int, pulseAudioLatency: Int, pulseAudioLatencyMax: Int,
    latencyDecaySeconds: Double, realtime: RealtimePolicy, periodFrames: Int, bufferFrames: Int, fillTargetFrames: Int,
    alsaLayoutGiven: Bool
  ) {
    (self.sampleRate, self.pipeWireLatency, self.pipeWireLatencyMax) = (sampleRate, pipeWireLatency, pipeWireLatencyMax)
    (self.pulseAudioLatency, self.pulseAudioLatencyMax) = (pulseAudioLatency, pulseAudioLatencyMax)
    (self.latencyDecaySeconds, self.realtime) = (latencyDecaySeconds, realtime)
    (self.periodFrames, self.bufferFrames, self.fillTargetFrames) = (periodFrames, bufferFrames, fillTargetFrames)
    self.alsaLayoutGiven = alsaLayoutGiven
  }

  /// The ALSA layout for a PCM that is PipeWire's ALSA plugin, unless one was given. The plugin's
  /// stream asks the graph for one period per cycle (node.latency) and takes what the ALSA buffer
  /// holds into its own queue, so what is heard late is about the whole buffer plus a quantum,
  /// whatever the fill target: the buffer has to be small. Measured (docs/PERFORMANCE.md): period
  /// 64, buffer 256, kept 128 full is heard 1.7x the native floor, with no underrun beside
  /// `stress-ng --cpu 2`; 128/256 is 2.3-2.5x, 128/512 3.5x, and buffers of 1024 underran at every
  /// start. The period is half of `pipewire-latency` (the plugin queues about two more), the buffer
  /// four periods (room for the fill target to rise after an underrun), the target two.
  public func forPipeWirePlugin() -> OutputSettings {
    guard !alsaLayoutGiven else { return self }
    var adapted = self
    adapted.periodFrames = max(16, pipeWireLatency / 2)
    adapted.bufferFrames = adapted.periodFrames * 4
    adapted.fillTargetFrames = adapted.periodFrames * 2
    return adapted
  }
}

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
  /// The settings only this backend reads (keys of the daemon's settings table).
  public let settings: [String]
  /// Makes the device for `target` from the settings, which it may adjust (ALSA through PipeWire's
  /// plugin, said through `log`); throws when the backend cannot be used at all (its client
  /// library is missing).
  public let make: @Sendable (_ target: String?, _ settings: OutputSettings, _ log: (String) -> Void) throws(AudioDeviceError) -> Made

  /// A device and the settings it was made with.
  public struct Made {
    public var device: any OutputDevice
    public var settings: OutputSettings
  }

  /// Every backend, in the order `--device auto` probes them.
  public static let table: [OutputBackend] = [pipeWire, pulseAudio, alsa, null]

  /// What `--device auto` plays through when no probe answers: ALSA's `default`.
  static let autoFallback = (backend: alsa, target: "default")

  /// The row named `name`.
  public static func named(_ name: String) -> OutputBackend? { table.first { $0.name == name } }

  /// The backend and target `choice` means; for `auto`, the first row whose probe answers, else
  /// ALSA's `default`, said through `log` either way.
  public static func resolve(_ choice: OutputChoice, log: (String) -> Void) -> (OutputBackend, String?) {
    if let backend = named(choice.backend) { return (backend, choice.target) }
    var silent: [String] = []
    for backend in table {
      guard let probe = backend.probe else { continue }
      if probe() {
        log("device auto: \(backend.pickedByAuto)")
        return (backend, nil)
      }
      silent.append(silent.isEmpty ? "no \(backend.title) server answers" : "nor a \(backend.title) server")
    }
    log("device auto: \(silent.joined(separator: ", ")); playing through ALSA '\(autoFallback.target)'")
    return (autoFallback.backend, autoFallback.target)
  }

  // MARK: - The rows

  public static let pipeWire = OutputBackend(
    name: "pipewire", target: "a sink node (node.name or serial)", title: "PipeWire",
    pickedByAuto: "a PipeWire server answers; playing through it", probe: { PipeWireSink.serverAnswers() },
    settings: ["pipewire-latency", "pipewire-latency-max", "pipewire-pause-after"]
  ) { target, settings, _ throws(AudioDeviceError) in
    let sink = PipeWireSink(
      target: target, rate: settings.sampleRate, quantumFrames: settings.pipeWireLatency,
      adaptiveLatency: (maximumFrames: settings.pipeWireLatencyMax, decaySeconds: settings.latencyDecaySeconds),
      realtime: settings.realtime, control: settings.control)
    // The client library is loaded now that PipeWire is chosen: missing, it stops cued here, with
    // what to install, rather than at the first cue.
    try PipeWireSink.loadClientLibrary(device: sink.name)
    return Made(device: sink, settings: settings)
  }

  public static let pulseAudio = OutputBackend(
    name: "pulseaudio", target: "a sink", title: "PulseAudio",
    pickedByAuto: "no PipeWire server answers, a PulseAudio server does; playing through a native PulseAudio stream",
    probe: { PulseSink.serverAnswers() }, settings: ["pulseaudio-latency", "pulseaudio-latency-max"]
  ) { target, settings, _ throws(AudioDeviceError) in
    let sink = PulseSink(
      sink: target, rate: settings.sampleRate, targetFrames: settings.pulseAudioLatency,
      adaptiveLatency: (maximumFrames: settings.pulseAudioLatencyMax, decaySeconds: settings.latencyDecaySeconds),
      realtime: settings.realtime)
    try PulseSink.loadClientLibrary(device: sink.name)  // as for PipeWire
    return Made(device: sink, settings: settings)
  }

  public static let alsa = OutputBackend(
    name: "alsa", target: "an ALSA PCM", title: "ALSA", pickedByAuto: "", probe: nil,
    settings: ["period-frames", "buffer-frames", "fill-target"]
  ) { target, settings, log throws(AudioDeviceError) in
    let name = target ?? "default"
    var settings = settings
    if !settings.alsaLayoutGiven, AlsaSink.soundServerPlugin(device: name) == .pipeWire {
      settings = settings.forPipeWirePlugin()
      log(
        "ALSA '\(name)' is PipeWire's ALSA plugin: period \(settings.periodFrames), buffer \(settings.bufferFrames), kept \(settings.fillTargetFrames) frames full (period-frames, buffer-frames and fill-target choose otherwise)")
    }
    let sink = AlsaSink(device: name, rate: settings.sampleRate, periodFrames: settings.periodFrames, bufferFrames: settings.bufferFrames)
    return Made(device: sink, settings: settings)
  }

  public static let null = OutputBackend(name: "null", target: nil, title: "the null device", pickedByAuto: "", probe: nil, settings: []) {
    _, settings, _ throws(AudioDeviceError) in
    let sink = NullSink(rate: settings.sampleRate, periodFrames: settings.periodFrames, bufferFrames: settings.bufferFrames)
    return Made(device: sink, settings: settings)
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

  /// What `--device` takes for each row of the table, for messages: `pipewire[:TARGET]` (TARGET: a
  /// sink node (node.name or serial)), …, `null`.
  public static var forms: String {
    OutputBackend.table.map { backend in backend.target.map { "\(backend.name)[:TARGET] (TARGET: \($0))" } ?? backend.name }
      .joined(separator: ", ")
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
