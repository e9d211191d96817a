import ArgumentParser
import CueAudio
import CueDaemon
import CuePosix
import CueProtocol
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// `cued`: the audio cue daemon.
///
/// Every option has a key of the same name in the config file (docs/CONFIG.md); an option given
/// here wins over the file. Options without a value here take the file's, then the default shown.
struct Cued: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "cued",
    abstract: "Plays short pre-decoded sound cues through ALSA on request.",
    discussion: """
      cued decodes every *.mp3 in its sound directories once, at start, and plays them on request \
      from clients on a Unix socket (see `cuectl`, and docs/PROTOCOL.md). When nothing plays it \
      closes the audio device and sleeps. SIGHUP reloads the config and the sounds; SIGTERM fades \
      out and exits.

      Settings come from the command line, then the config file ($XDG_CONFIG_HOME/cued/cued.toml, \
      else /etc/cued/cued.toml; docs/CONFIG.md), then the defaults shown here.

      Examples:
        cued                               # default sound directories, ALSA 'default'
        cued --sounds ./sounds --device null
        cued --device pulse --period-frames 128 --buffer-frames 512
        cued --check-config                # check the config file and exit
      """,
    version: cuedVersion)

  @Option(name: .customLong("sounds"), help: ArgumentHelp("A sound directory; repeat for more (earlier wins).", valueName: "dir"))
  var soundDirectories: [String] = []

  @Option(help: ArgumentHelp("The Unix socket to listen on (default: $CUED_SOCKET, else $XDG_RUNTIME_DIR/cued/cued.sock).", valueName: "path"))
  var socket: String?

  @Option(help: ArgumentHelp("The ALSA PCM to play through, or 'null' for a silent clock-paced sink (default: default).", valueName: "name"))
  var device: String?

  @Option(help: ArgumentHelp("The output sample rate; every cue is converted to it (default: 48000).", valueName: "hz"))
  var rate: Int?

  @Option(help: ArgumentHelp("Frames per ALSA period (default: 240, 5 ms).", valueName: "frames"))
  var periodFrames: Int?

  @Option(help: ArgumentHelp("Frames in the ALSA buffer (default: 960).", valueName: "frames"))
  var bufferFrames: Int?

  @Option(help: ArgumentHelp("Seconds of silence before the device is closed (default: 2).", valueName: "seconds"))
  var idleTimeout: Double?

  @Option(help: ArgumentHelp("Voices sounding at once; past it the oldest is stolen with a fade (default: 32).", valueName: "n"))
  var maxVoices: Int?

  @Option(help: ArgumentHelp("The longest cue accepted (default: 60).", valueName: "seconds"))
  var maxCueSeconds: Double?

  @Option(help: ArgumentHelp("The most decoded memory all cues may take (default: 256).", valueName: "MiB"))
  var maxMemory: Int?

  @Option(help: ArgumentHelp("The most cues loaded (default: 4096).", valueName: "n"))
  var maxCues: Int?

  @Option(help: ArgumentHelp("The most clients connected at once (default: 1024).", valueName: "n"))
  var maxClients: Int?

  @Option(help: ArgumentHelp("The most players at once (default: 1024).", valueName: "n"))
  var maxPlayers: Int?

  @Option(help: ArgumentHelp("The most system sounds at once (default: 1024).", valueName: "n"))
  var maxSounds: Int?

  @Flag(help: "Let clients name MP3 files outside the sound directories (player.create / sound.create with a path).")
  var allowAnyPath = false

  @Option(help: ArgumentHelp("SCHED_FIFO priority for the audio thread, 0 for normal scheduling (default: 20).", valueName: "n"))
  var realtimePriority: Int?

  @Option(help: ArgumentHelp("trace, debug, info, notice, warning, error or critical (default: info).", valueName: "level"))
  var logLevel: String?

  @Option(help: ArgumentHelp("The config file (default: $XDG_CONFIG_HOME/cued/cued.toml, else /etc/cued/cued.toml, if present).", valueName: "path"))
  var config: String?

  @Flag(help: "Read no config file.")
  var noConfig = false

  @Flag(help: "Check the config file, print what is wrong (file:line: message) and exit: 0 when it is good.")
  var checkConfig = false

  /// The command line's settings, as config values (nil where an option was not given).
  var commandLineValues: ConfigValues {
    var values = ConfigValues()
    values.sounds = soundDirectories.isEmpty ? nil : soundDirectories
    values.socket = socket
    values.device = device
    values.rate = rate
    values.periodFrames = periodFrames
    values.bufferFrames = bufferFrames
    values.idleTimeout = idleTimeout
    values.maxVoices = maxVoices
    values.maxCueSeconds = maxCueSeconds
    values.maxMemory = maxMemory
    values.maxCues = maxCues
    values.maxClients = maxClients
    values.maxPlayers = maxPlayers
    values.maxSounds = maxSounds
    values.allowAnyPath = allowAnyPath ? true : nil
    values.realtimePriority = realtimePriority
    values.logLevel = logLevel
    return values
  }

  func validate() throws {
    // The same checks the config file gets, so a flag and a key mean the same thing.
    do {
      _ = try ConfigFile.interpret(commandLineValues.asDocument, path: "command line", text: "")
    } catch {
      throw ValidationError(error.message.replacingKeysWithFlags())
    }
    guard !(noConfig && config != nil) else { throw ValidationError("--config and --no-config contradict each other") }
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
    let level = values.logLevel.flatMap(Logger.Level.init(rawValue:)) ?? .info
    let journald = StandardErrorLogHandler.standardErrorIsJournal
    LoggingSystem.bootstrap { label in StandardErrorLogHandler(label: label, level: level, journald: journald) }
    let logger = Logger(label: "cued")
    signal(SIGPIPE, SIG_IGN)
    if let configPath { logger.info("config: \(configPath)") }

    var reader: (@Sendable () throws(ConfigError) -> ConfigValues)? = nil
    if let path = configPath {
      reader = { () throws(ConfigError) -> ConfigValues in try ConfigFile.load(path: path) }
    }
    do {
      if configuration.device == "null" {
        let sink = NullSink(rate: configuration.sampleRate, periodFrames: configuration.periodFrames, bufferFrames: configuration.bufferFrames)
        try serve(configuration, device: sink, logger: logger, reader: reader, configPathInUse: configPath, carousels: values.carousels)
      } else {
        let sink = AlsaSink(
          device: configuration.device, rate: configuration.sampleRate, periodFrames: configuration.periodFrames,
          bufferFrames: configuration.bufferFrames)
        try serve(configuration, device: sink, logger: logger, reader: reader, configPathInUse: configPath, carousels: values.carousels)
      }
    } catch {
      logger.critical("\(error)")
      throw ExitCode(1)
    }
  }

  private func serve<Device: OutputDevice>(
    _ configuration: DaemonConfiguration, device: Device, logger: Logger,
    reader: (@Sendable () throws(ConfigError) -> ConfigValues)?, configPathInUse: String?,
    carousels: [String: CarouselBindings]?
  ) throws(StartupError) {
    let daemon = try Daemon(configuration: configuration, device: device, logger: logger)
    daemon.configReader = reader
    daemon.commandLine = commandLineValues
    daemon.configPath = configPathInUse
    daemon.setCarousels(carousels)
    try daemon.bindSocket()
    daemon.loadCues()
    try daemon.startAudio()
    try daemon.run()
  }
}

extension String {
  /// A config-file message about `key` rewritten for the command line (`--key`).
  func replacingKeysWithFlags() -> String {
    var text = self
    for key in ConfigFile.flagKeys where text.hasPrefix(key + " ") { text = "--" + text }
    return text
  }
}

Cued.main()
