import CueOutput
import CueDaemon
import CuePosix
import CueProtocol
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// `cued`: the audio cue daemon. Every option has a key of the same name in the config file
/// (docs/CONFIG.md); an option given here wins over the file (CueDaemon's DaemonCommandLine.swift,
/// from the settings table in Settings.swift).
struct Cued {
  let options: DaemonCommandLine
  var commandLineValues: ConfigValues { options.values }
  var noConfig: Bool { options.noConfig }
  var config: String? { options.configPath }
  var checkConfig: Bool { options.checkConfig }

  /// Ends the process with `status`.
  struct ExitCode: Error { var status: Int32; init(_ status: Int32) { self.status = status } }

  static func main() {
    let options: DaemonCommandLine
    do {
      options = try DaemonCommandLine(arguments: Array(CommandLine.arguments.dropFirst()))
    } catch {
      writeToStandardError("cued: \(error.message)\n")
      exit(2)
    }
    switch options.action {
    case .help:
      writeToStandardOutput(DaemonCommandLine.helpText)
    case .version:
      writeToStandardOutput(cuedVersion + "\n")
    case .completionScript(let shell):
      guard let script = DaemonCommandLine.completionScript(for: shell) else {
        writeToStandardError("cued: no completion script for '\(shell)'; choose bash, zsh or fish\n")
        exit(2)
      }
      writeToStandardOutput(script)
    case .manualOptions:
      writeToStandardOutput(DaemonCommandLine.manualOptions)
    case .run:
      do {
        try Cued(options: options).run()
      } catch let error as ExitCode {
        exit(error.status)
      } catch {
        writeToStandardError("cued: \(error)\n")
        exit(1)
      }
    }
  }

  func run() throws {
    Daemon<NullSink>.blockSignals()
    let configPath = noConfig ? nil : (config ?? ConfigFile.defaultPath())
    var file = ConfigValues()
    if let configPath {
      do {
        file = try ConfigFile.load(path: configPath)
      } catch {
        writeToStandardError("cued: \(error)\n")
        throw ExitCode(1)
      }
    }
    if checkConfig {
      writeToStandardOutput(configPath.map { "\($0): good\n" } ?? "no config file (looked for $XDG_CONFIG_HOME/cued/cued.toml and /etc/cued/cued.toml)\n")
      return
    }
    let values = commandLineValues.overriding(file)
    let configuration = DaemonConfiguration(values)
    if let problem = configuration.problem {
      writeToStandardError("cued: \(problem)\n")
      throw ExitCode(2)
    }
    let level = Logger.Level(rawValue: configuration.logLevel) ?? .info
    let journald = StandardErrorLogHandler.standardErrorIsJournal
    LoggingSystem.bootstrap { label in StandardErrorLogHandler(label: label, level: level, journald: journald) }
    let logger = Logger(label: "cued")
    signal(SIGPIPE, SIG_IGN)
    if let configPath { logger.info("config: \(configPath)") }
    // glibc gives each thread that mallocs under contention an arena of its own (up to 8 per core),
    // so short-lived decoding threads leave arenas behind: RSS steps up and stays (the soak test saw
    // +500 KiB). Two are plenty: the control thread and a decoder; the audio thread never mallocs.
    ResourceLimits.limitMallocArenas(to: 2)
    // systemd's soft limit is 1024 descriptors: not enough for --max-clients 1024 plus cued's own.
    let openFiles = ResourceLimits.raiseOpenFileLimit()
    if openFiles >= 0 && openFiles < configuration.maximumClients + 64 {
      logger.warning(
        "the open-file limit (\(openFiles)) is below --max-clients (\(configuration.maximumClients)) plus 64 for cued itself; clients past it are refused. Raise LimitNOFILE or lower --max-clients")
    }

    var reader: (@Sendable () throws(ConfigError) -> ConfigValues)? = nil
    if let path = configPath {
      reader = { () throws(ConfigError) -> ConfigValues in try ConfigFile.load(path: path) }
    }
    do {
      switch configuration.output ?? .null {
      case .null:
        let sink = NullSink(rate: configuration.sampleRate, periodFrames: configuration.periodFrames, bufferFrames: configuration.bufferFrames)
        try serve(configuration, device: sink, logger: logger, reader: reader, configPathInUse: configPath, values: values)
      case .pipeWire(let target):
        try servePipeWire(configuration, target: target, logger: logger, reader: reader, configPath: configPath, values: values)
      case .pulseAudio(let sink):
        try servePulseAudio(configuration, sink: sink, logger: logger, reader: reader, configPath: configPath, values: values)
      case .auto where PipeWireSink.serverAnswers():
        logger.info("device auto: a PipeWire server answers; playing through it")
        try servePipeWire(configuration, target: nil, logger: logger, reader: reader, configPath: configPath, values: values)
      case .auto where PulseSink.serverAnswers():
        logger.info("device auto: no PipeWire server answers, a PulseAudio server does; playing through a native PulseAudio stream")
        try servePulseAudio(configuration, sink: nil, logger: logger, reader: reader, configPath: configPath, values: values)
      case .auto, .alsa:
        var name = "default"
        if case .alsa(let given) = configuration.output {
          name = given
        } else {
          logger.info("device auto: no PipeWire server answers, nor a PulseAudio server; playing through ALSA 'default'")
        }
        var configuration = configuration
        if !configuration.alsaLayoutGiven, AlsaSink.soundServerPlugin(device: name) == .pipeWire {
          configuration = configuration.forPipeWirePlugin()
          logger.info(
            "ALSA '\(name)' is PipeWire's ALSA plugin: period \(configuration.periodFrames), buffer \(configuration.bufferFrames), kept \(configuration.fillTargetFrames) frames full (period-frames, buffer-frames and fill-target choose otherwise)")
        }
        let sink = AlsaSink(
          device: name, rate: configuration.sampleRate, periodFrames: configuration.periodFrames,
          bufferFrames: configuration.bufferFrames)
        try serve(configuration, device: sink, logger: logger, reader: reader, configPathInUse: configPath, values: values)
      }
    } catch {
      logger.critical("\(error)")
      throw ExitCode(1)
    }
  }

  private func servePipeWire(
    _ configuration: DaemonConfiguration, target: String?, logger: Logger,
    reader: (@Sendable () throws(ConfigError) -> ConfigValues)?, configPath: String?, values: ConfigValues
  ) throws(StartupError) {
    let sink = PipeWireSink(
      target: target, rate: configuration.sampleRate, quantumFrames: configuration.pipeWireLatency,
      adaptiveLatency: (maximumFrames: configuration.pipeWireLatencyMax, decaySeconds: configuration.latencyDecaySeconds),
      realtime: configuration.realtimePolicy)
    // The client library is loaded now that PipeWire is chosen: missing, it stops cued here, with
    // what to install, rather than at the first cue.
    do { try PipeWireSink.loadClientLibrary(device: sink.name) } catch { throw StartupError("\(error)") }
    try serve(configuration, device: sink, logger: logger, reader: reader, configPathInUse: configPath, values: values)
  }

  private func servePulseAudio(
    _ configuration: DaemonConfiguration, sink name: String?, logger: Logger,
    reader: (@Sendable () throws(ConfigError) -> ConfigValues)?, configPath: String?, values: ConfigValues
  ) throws(StartupError) {
    let sink = PulseSink(
      sink: name, rate: configuration.sampleRate, targetFrames: configuration.pulseAudioLatency,
      adaptiveLatency: (maximumFrames: configuration.pulseAudioLatencyMax, decaySeconds: configuration.latencyDecaySeconds),
      realtime: configuration.realtimePolicy)
    do { try PulseSink.loadClientLibrary(device: sink.name) } catch { throw StartupError("\(error)") }  // as for PipeWire
    try serve(configuration, device: sink, logger: logger, reader: reader, configPathInUse: configPath, values: values)
  }

  private func serve<Device: OutputDevice>(
    _ configuration: DaemonConfiguration, device: Device, logger: Logger,
    reader: (@Sendable () throws(ConfigError) -> ConfigValues)?, configPathInUse: String?,
    values: ConfigValues
  ) throws(StartupError) {
    let daemon = try Daemon(configuration: configuration, device: device, logger: logger)
    daemon.configReader = reader
    daemon.commandLine = commandLineValues
    daemon.configPath = configPathInUse
    daemon.applyTables(values)
    try daemon.bindSocket()
    daemon.loadCues()
    try daemon.startAudio()
    try daemon.run()
  }
}

Cued.main()
