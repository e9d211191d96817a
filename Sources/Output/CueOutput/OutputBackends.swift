/// One output backend, a row of `OutputBackend.table`: how `--device` names it and what its help
/// says of it, whether and how `--device auto` probes it, the settings only it reads (declared
/// here, in full: the control side makes its flags, help, config keys and checks from them), and
/// how its device is made. A backend is its C face (Sources/Output/NAME), its sink (one Swift file
/// in CueOutput) and one row here; the engine, the latency adapter, the real-time policy and the
/// control side are shared and name no backend.
public struct OutputBackend: Sendable {
  /// `--device NAME`, or `--device NAME:TARGET` when it takes a target.
  public let name: String
  /// What a target names, for messages; nil when the backend takes none.
  public let target: String?
  /// Its name for people ("PipeWire").
  public let title: String
  /// How the `device` setting's help writes it (`pipewire[:TARGET]`).
  public let form: String
  /// What the `device` setting's details say of it: what its target means.
  public let about: String
  /// How the `device` setting's details say what `auto` plays through when it picks this row
  /// ("through PipeWire when its server answers at start"; for the fallback, "through ALSA 'default'").
  public let autoPlays: String
  /// What `--device auto` says when it picks this backend.
  public let pickedByAuto: String
  /// Asked in table order by `--device auto`; nil: auto never probes it.
  public let probe: (@Sendable () -> Bool)?
  /// Whether its client library is loaded only when it is chosen or probed (dlopen).
  public let loadsClientLibrary: Bool
  /// The settings only this backend reads.
  public let options: [BackendOption]
  /// What is wrong with its options together, if anything (each value alone was checked against
  /// its range); every row's check runs, whatever the device.
  public let check: @Sendable (OutputSettings.Options) -> String?
  /// Command lines `cued --help` shows as examples of its options.
  public let examples: [String]
  /// Makes the device for `target` from the settings, which it may adjust (ALSA through PipeWire's
  /// plugin, said through `log`); throws when the backend cannot be used at all (its client
  /// library is missing).
  public let make: @Sendable (_ target: String?, _ settings: OutputSettings, _ log: (String) -> Void) throws(AudioDeviceError) -> Made

  public init(
    name: String, target: String?, title: String, form: String, about: String, autoPlays: String, pickedByAuto: String = "",
    probe: (@Sendable () -> Bool)? = nil, loadsClientLibrary: Bool = false, options: [BackendOption] = [],
    check: @escaping @Sendable (OutputSettings.Options) -> String? = { _ in nil }, examples: [String] = [],
    make: @escaping @Sendable (_ target: String?, _ settings: OutputSettings, _ log: (String) -> Void) throws(AudioDeviceError) -> Made
  ) {
    (self.name, self.target, self.title, self.form, self.about, self.autoPlays) = (name, target, title, form, about, autoPlays)
    (self.pickedByAuto, self.probe, self.loadsClientLibrary, self.options) = (pickedByAuto, probe, loadsClientLibrary, options)
    (self.check, self.examples, self.make) = (check, examples, make)
  }

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

  /// Every row's options, in table order.
  public static var options: [BackendOption] { table.flatMap(\.options) }

  /// What is wrong with the rows' options together (the first row's problem), if anything.
  public static func problem(in options: OutputSettings.Options) -> String? {
    table.lazy.compactMap { $0.check(options) }.first
  }

  /// The names for people of the rows that play somewhere ("PipeWire, PulseAudio or ALSA"): each
  /// that takes a target.
  public static var playsThrough: String {
    let titles = table.filter { $0.target != nil }.map(\.title)
    return titles.dropLast().joined(separator: ", ") + (titles.count > 1 ? " or " : "") + (titles.last ?? "")
  }

  /// The `device` setting's help: every row's form.
  public static var deviceHelp: String {
    let forms = table.map(\.form)
    return "Where to play: auto, " + forms.dropLast().joined(separator: ", ") + (forms.count > 1 ? " or " : "") + (forms.last ?? "")
  }

  /// The `device` setting's details: what `auto` tries, what each row's target means, and which
  /// client libraries are loaded only when chosen.
  public static var deviceDetails: String {
    let probed = table.filter { $0.probe != nil }.map(\.autoPlays)
    let loaded = table.filter(\.loadsClientLibrary).map(\.title)
    var text = "auto plays " + probed.joined(separator: ", else ") + ", otherwise " + autoFallback.backend.autoPlays + ". "
    text += table.map(\.about).joined(separator: " ")
    guard !loaded.isEmpty else { return text }
    return text + " The " + loaded.joined(separator: " and ") + " client libraries are loaded only when their output is chosen or probed."
  }

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
    log("device auto: \(silent.joined(separator: ", ")); playing through \(autoFallback.backend.title) '\(autoFallback.target)'")
    return (autoFallback.backend, autoFallback.target)
  }

  // MARK: - The rows

  public static let pipeWire: OutputBackend = OutputBackend(
    name: "pipewire", target: "a sink node (node.name or serial)", title: "PipeWire", form: "pipewire[:TARGET]",
    about: "pipewire:TARGET names a sink node (node.name or serial); without it the session manager chooses.",
    autoPlays: "through PipeWire when its server answers at start", pickedByAuto: "a PipeWire server answers; playing through it",
    probe: { PipeWireSink.serverAnswers() }, loadsClientLibrary: true,
    options: [
      BackendOption(
        "pipewire-latency", .integer(16...8192, default: 128, field: \.pipeWireLatency), shown: "128, 2.7 ms at 48 kHz", valueName: "frames",
        help: "Frames PipeWire is asked for per graph cycle (node.latency) while cued plays",
        details: "PipeWire rounds it down to a power of two; the graph runs at the smallest latency any of its streams asks for."),
      BackendOption(
        "pipewire-latency-max", .integer(16...8192, default: 1024, field: \.pipeWireLatencyMax), shown: "1024, 21 ms at 48 kHz",
        valueName: "frames", help: "The most the PipeWire node.latency rises to after the graph skips cycles (xruns)",
        details:
          "An xrun that cut sound says this machine did not keep up with the quantum: cued then asks for twice the latency, up to this, and halves it again after each latency-decay seconds without one, down to pipewire-latency (as PulseAudio's watermark rises and decays). A skipped cycle during trailing silence, the first cycle after a resume or a connect, and a stall of the whole graph do not count. At or below pipewire-latency the latency stays fixed."),
    ]
  ) { target, settings, _ throws(AudioDeviceError) in
    let sink = PipeWireSink(
      target: target, rate: settings.sampleRate, quantumFrames: settings.options.pipeWireLatency,
      adaptiveLatency: (maximumFrames: settings.options.pipeWireLatencyMax, decaySeconds: settings.latencyDecaySeconds),
      realtime: settings.realtime, control: settings.control)
    // The client library is loaded now that PipeWire is chosen: missing, it stops cued here, with
    // what to install, rather than at the first cue.
    try PipeWireSink.loadClientLibrary(device: sink.name)
    return Made(device: sink, settings: settings)
  }

  public static let pulseAudio: OutputBackend = OutputBackend(
    name: "pulseaudio", target: "a sink", title: "PulseAudio", form: "pulseaudio[:SINK]",
    about: "pulseaudio:SINK names a PulseAudio sink; without it the server's default.",
    autoPlays: "through a native PulseAudio stream when a PulseAudio server answers",
    pickedByAuto: "no PipeWire server answers, a PulseAudio server does; playing through a native PulseAudio stream",
    probe: { PulseSink.serverAnswers() }, loadsClientLibrary: true,
    options: [
      BackendOption(
        "pulseaudio-latency", .integer(64...48000, default: 480, field: \.pulseAudioLatency), shown: "480, 10 ms at 48 kHz",
        valueName: "frames", help: "Frames a native PulseAudio stream keeps queued on the server (tlength) while cued plays",
        details: "The server asks for a quarter of it at a time (minreq) and lowers the sink's latency to match (PA_STREAM_ADJUST_LATENCY)."),
      BackendOption(
        "pulseaudio-latency-max", .integer(64...192_000, default: 3840, field: \.pulseAudioLatencyMax), shown: "3840, 80 ms at 48 kHz",
        valueName: "frames", help: "The most a native PulseAudio stream's queue (tlength) rises to after the server underflows",
        details:
          "An underflow that cut sound says this machine did not answer the server in time: cued then asks for twice the queue, up to this, and halves it again after each latency-decay seconds without one, down to pulseaudio-latency. An underflow in trailing silence or right after a connect or a resume does not count. At or below pulseaudio-latency the queue stays fixed."),
    ]
  ) { target, settings, _ throws(AudioDeviceError) in
    let sink = PulseSink(
      sink: target, rate: settings.sampleRate, targetFrames: settings.options.pulseAudioLatency,
      adaptiveLatency: (maximumFrames: settings.options.pulseAudioLatencyMax, decaySeconds: settings.latencyDecaySeconds),
      realtime: settings.realtime)
    try PulseSink.loadClientLibrary(device: sink.name)  // as for PipeWire
    return Made(device: sink, settings: settings)
  }

  public static let alsa: OutputBackend = OutputBackend(
    name: "alsa", target: "an ALSA PCM", title: "ALSA", form: "alsa[:NAME] (a bare ALSA PCM name works too)",
    about: "alsa:NAME names an ALSA PCM; alsa alone is 'default'. 'pulse' stays ALSA's pulse plugin PCM.", autoPlays: "through ALSA 'default'",
    options: [
      BackendOption(
        "period-frames", .integer(16...16384, default: 240, field: \.periodFrames), shown: "240, 5 ms", valueName: "frames",
        help: "Frames per ALSA period"),
      BackendOption(
        "buffer-frames", .integer(32...65536, default: 960, field: \.bufferFrames), valueName: "frames", help: "Frames in the ALSA buffer",
        details: "It must hold at least two periods."),
      BackendOption(
        "fill-target", .integer(0...65536, default: 0, field: \.fillTargetFrames), valueName: "frames",
        help: "Frames kept queued in the device ahead of a new cue; 0 keeps the whole buffer full",
        details:
          "Between period-frames and buffer-frames. After an underrun that cut sound it doubles (up to the buffer) and halves again after each latency-decay seconds without one, as the PipeWire and PulseAudio latencies do; cuectl status shows the target in force and each raise."),
    ],
    check: { options in
      let (period, buffer, fill) = (options.periodFrames, options.bufferFrames, options.fillTargetFrames)
      if buffer < period * 2 { return "buffer-frames (\(buffer)) must hold at least two periods (\(period * 2) frames)" }
      if fill != 0 && !(period...buffer).contains(fill) {
        return "fill-target (\(fill)) must be 0 or between period-frames (\(period)) and buffer-frames (\(buffer))"
      }
      return nil
    },
    examples: ["cued --device pulse --period-frames 128 --buffer-frames 512"]
  ) { target, settings, log throws(AudioDeviceError) in
    let name = target ?? "default"
    var settings = settings
    if !settings.given(.alsa), AlsaSink.soundServerPlugin(device: name) == .pipeWire {
      settings = settings.forPipeWirePlugin()
      let options = settings.options
      log(
        "ALSA '\(name)' is PipeWire's ALSA plugin: period \(options.periodFrames), buffer \(options.bufferFrames), kept \(options.fillTargetFrames) frames full (period-frames, buffer-frames and fill-target choose otherwise)")
    }
    let sink = AlsaSink(device: name, rate: settings.sampleRate, periodFrames: settings.options.periodFrames, bufferFrames: settings.options.bufferFrames)
    return Made(device: sink, settings: settings)
  }

  public static let null: OutputBackend = OutputBackend(
    name: "null", target: nil, title: "the null device", form: "null", about: "null is a silent clock-paced sink.", autoPlays: "through the null device"
  ) { _, settings, _ throws(AudioDeviceError) in
    let sink = NullSink(rate: settings.sampleRate, periodFrames: settings.options.periodFrames, bufferFrames: settings.options.bufferFrames)
    return Made(device: sink, settings: settings)
  }
}

// MARK: - The rows' options' values

extension OutputSettings {
  /// The values of the rows' options, one field per option (its `BackendOption.Value` names the
  /// field), and which were given. A row with options of its own adds their fields here, beside
  /// the rows. A default is written once, in the option's declaration: `init()` stores each, so the
  /// placeholder a field is declared with is never seen.
  public struct Options: Sendable, Equatable {
    /// node.latency asked of PipeWire, and the most it rises to after xruns (`pipewire-latency`, `pipewire-latency-max`).
    public var pipeWireLatency = 0
    public var pipeWireLatencyMax = 0
    /// The queue a native PulseAudio stream asks for, and the most it rises to (`pulseaudio-latency`, `pulseaudio-latency-max`).
    public var pulseAudioLatency = 0
    public var pulseAudioLatencyMax = 0
    /// The ALSA (and null device) layout: `period-frames`, `buffer-frames`, `fill-target`.
    public var periodFrames = 0
    public var bufferFrames = 0
    public var fillTargetFrames = 0
    /// The keys of the options given (flag or config file), rather than left at their defaults.
    public var given: Set<String> = []

    /// Every option at its declared default, none given.
    public init() {
      for option in OutputBackend.options { option.store(option.defaultNumber, into: &self) }
    }
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

  /// Why `text` names no device, and what to give instead.
  public static func refusal(_ text: String) -> String {
    "device '\(text)' names no device: give auto, \(forms) or an ALSA PCM name"
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
