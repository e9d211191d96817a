/// What the backend rows read of the daemon's settings, and what a row may adjust: the control
/// side fills it from its configuration and takes the adjusted value back
/// (`DaemonConfiguration.outputSettings`).
///
/// The shared part (rate, latency decay, real-time policy, control priority) is the control side's
/// own settings; `options` holds the values of the settings only the rows read, each declared once,
/// in its row (`BackendOption`, `OutputBackend.options`).
public struct OutputSettings: Sendable, Equatable {
  /// The output sample rate (`rate`).
  public var sampleRate: Int
  /// Seconds without an xrun that cut sound after which a raised latency halves again (`latency-decay`).
  public var latencyDecaySeconds: Double
  /// The real-time policy for whichever thread mixes.
  public var realtime: RealtimePolicy
  /// The control thread's nice level, for a client library's own threads that did not inherit it.
  public var control: ControlPriority = .none
  /// The backends' own settings.
  public var options = Options()

  public init(sampleRate: Int, latencyDecaySeconds: Double, realtime: RealtimePolicy = .none, options: Options = Options()) {
    (self.sampleRate, self.latencyDecaySeconds, self.realtime, self.options) = (sampleRate, latencyDecaySeconds, realtime, options)
  }

  /// Whether any option of `backend` was given: then it uses exactly what was given (the ALSA
  /// layout, whatever the PCM turns out to be).
  public func given(_ backend: OutputBackend) -> Bool {
    backend.options.contains { options.given.contains($0.key) }
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
    guard !given(.alsa) else { return self }
    var adapted = self
    adapted.options.periodFrames = max(16, options.pipeWireLatency / 2)
    adapted.options.bufferFrames = adapted.options.periodFrames * 4
    adapted.options.fillTargetFrames = adapted.options.periodFrames * 2
    return adapted
  }
}

/// One setting only a backend reads, declared in its row (`OutputBackend.options`): its key, what it
/// takes (a whole number or a number, within a range), its default and how `--help` shows it, its
/// value's name, help and details, whether a reload applies it, and the field of
/// `OutputSettings.Options` it sets. The control side makes of each a setting like its own (the
/// flag, `--help`, the man page, the completions, the config file's key and check, the reload rule:
/// CueDaemon's `Settings.all`), so a backend's settings are written here and nowhere else.
public struct BackendOption: Sendable {
  /// What the option takes, its default, and where the value goes.
  public enum Value: Sendable {
    /// A whole number in the range.
    case integer(ClosedRange<Int>, default: Int, field: WritableKeyPath<OutputSettings.Options, Int> & Sendable)
    /// A number in the range.
    case number(ClosedRange<Double>, default: Double, field: WritableKeyPath<OutputSettings.Options, Double> & Sendable)
  }

  /// Whether a reload applies a change (the device is made once, at start: so far every option is `restartOnly`).
  public enum Reload: Sendable, Equatable {
    case reloadable
    case restartOnly
  }

  /// The key in the config file, and the flag (`--KEY`).
  public let key: String
  public let value: Value
  /// How `--help` and the man page state the default, when not just the number ("128, 2.7 ms at 48 kHz").
  public let shownDefault: String?
  /// The value's name in `--help` (`--pipewire-latency <frames>`).
  public let valueName: String
  /// What it does, for `--help` and the completions (no final period; the default is added).
  public let help: String
  /// More for the man page, after the help.
  public let details: String
  public let reload: Reload

  public init(
    _ key: String, _ value: Value, shown shownDefault: String? = nil, valueName: String, _ reload: Reload = .restartOnly, help: String,
    details: String = ""
  ) {
    (self.key, self.value, self.shownDefault, self.valueName) = (key, value, shownDefault, valueName)
    (self.help, self.details, self.reload) = (help, details, reload)
  }

  /// The declared default, as a number.
  public var defaultNumber: Double {
    switch value {
    case .integer(_, let value, _): Double(value)
    case .number(_, let value, _): value
    }
  }

  /// The option's value in `options`, as a number.
  public func read(_ options: OutputSettings.Options) -> Double {
    switch value {
    case .integer(_, _, let field): Double(options[keyPath: field])
    case .number(_, _, let field): options[keyPath: field]
    }
  }

  /// Stores `number` (checked against the range by the caller) into `options`.
  public func store(_ number: Double, into options: inout OutputSettings.Options) {
    switch value {
    case .integer(_, _, let field): options[keyPath: field] = Int(number)
    case .number(_, _, let field): options[keyPath: field] = number
    }
  }
}
