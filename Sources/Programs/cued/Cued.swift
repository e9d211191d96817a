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

  static func main() -> Never {
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
    exit(0)
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
      let log = { (line: String) in logger.info("\(line)") }
      let (backend, target) = OutputBackend.resolve(configuration.output ?? OutputChoice(backend: OutputBackend.null.name), log: log)
      let made = try backend.make(target, configuration.outputSettings, log)
      var configuration = configuration
      configuration.outputSettings = made.settings
      try serve(configuration, device: made.device, logger: logger, reader: reader, configPathInUse: configPath, values: values)
    } catch {
      logger.critical("\(error)")
      throw ExitCode(1)
    }
  }

  private func serve<Device: OutputDevice>(
    _ configuration: DaemonConfiguration, device: Device, logger: Logger,
    reader: (@Sendable () throws(ConfigError) -> ConfigValues)?, configPathInUse: String?,
    values: ConfigValues
  ) throws(StartupError) {
    // First, on this thread, before any other starts: the threads started later inherit it.
    let priority = configuration.controlPriority.apply(toThread: Threads.currentThreadID)
    if case .refused = priority, let line = StatusReply.ControlThread(priority)?.summary {
      logger.notice("control thread left at normal priority: \(line)")
    }
    let daemon = try Daemon(configuration: configuration, device: device, logger: logger)
    daemon.controlPriority = priority
    daemon.configReader = reader
    daemon.commandLine = commandLineValues
    daemon.configPath = configPathInUse
    daemon.applyTables(values)
    try daemon.bindSocket()
    // After the socket: GLib's dconf backend makes $XDG_RUNTIME_DIR/dconf, so the runtime directory
    // is checked (and a missing or foreign one refused) before anything of GLib's runs.
    daemon.followDesktopSettings()
    daemon.loadCues()
    try daemon.startAudio()
    try daemon.run()
  }
}

