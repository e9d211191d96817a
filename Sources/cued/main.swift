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
struct Cued: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "cued",
    abstract: "Plays short pre-decoded sound cues through ALSA on request.",
    discussion: """
      cued decodes every *.mp3 in its sound directories once, at start, and plays them on request \
      from clients on a Unix socket (see `cuectl`, and docs/PROTOCOL.md). When nothing plays it \
      closes the audio device and sleeps. SIGHUP reloads the sounds; SIGTERM fades out and exits.

      Examples:
        cued                               # default sound directories, ALSA 'default'
        cued --sounds ./sounds --device null
        cued --device pulse --period-frames 128 --buffer-frames 512
      """,
    version: cuedVersion)

  @Option(
    name: .customLong("sounds"), help: ArgumentHelp("A sound directory; repeat for more (earlier wins).", valueName: "dir"))
  var soundDirectories: [String] = []

  @Option(help: ArgumentHelp("The Unix socket to listen on (default: $CUED_SOCKET, else $XDG_RUNTIME_DIR/cued/cued.sock).", valueName: "path"))
  var socket: String?

  @Option(help: ArgumentHelp("The ALSA PCM to play through, or 'null' for a silent clock-paced sink.", valueName: "name"))
  var device: String = "default"

  @Option(help: ArgumentHelp("The output sample rate; every cue is converted to it.", valueName: "hz"))
  var rate: Int = 48000

  @Option(help: ArgumentHelp("Frames per ALSA period (about 5 ms at 240).", valueName: "frames"))
  var periodFrames: Int = 240

  @Option(help: ArgumentHelp("Frames in the ALSA buffer (a few periods).", valueName: "frames"))
  var bufferFrames: Int = 960

  @Option(help: ArgumentHelp("Seconds of silence before the device is closed.", valueName: "seconds"))
  var idleTimeout: Double = 2

  @Option(help: ArgumentHelp("Voices sounding at once; past it the oldest is stolen with a fade.", valueName: "n"))
  var maxVoices: Int = 32

  @Option(help: ArgumentHelp("The longest cue accepted.", valueName: "seconds"))
  var maxCueSeconds: Double = 60

  @Option(help: ArgumentHelp("The most decoded memory all cues may take.", valueName: "MiB"))
  var maxMemory: Int = 256

  @Option(help: ArgumentHelp("The most cues loaded.", valueName: "n"))
  var maxCues: Int = 4096

  @Option(help: ArgumentHelp("The most clients connected at once.", valueName: "n"))
  var maxClients: Int = 1024

  @Option(help: ArgumentHelp("The most players at once.", valueName: "n"))
  var maxPlayers: Int = 1024

  @Option(help: ArgumentHelp("The most system sounds at once.", valueName: "n"))
  var maxSounds: Int = 1024

  @Flag(help: "Let clients name MP3 files outside the sound directories (player.create / sound.create with a path).")
  var allowAnyPath = false

  @Option(help: ArgumentHelp("SCHED_FIFO priority for the audio thread (0: normal scheduling).", valueName: "n"))
  var realtimePriority: Int32 = 20

  @Option(help: ArgumentHelp("trace, debug, info, notice, warning, error or critical.", valueName: "level"))
  var logLevel: String = "info"

  func validate() throws {
    guard Logger.Level(rawValue: logLevel) != nil else {
      throw ValidationError("--log-level must be one of trace, debug, info, notice, warning, error, critical")
    }
    guard (8000...192_000).contains(rate) else { throw ValidationError("--rate must be between 8000 and 192000 Hz") }
    guard (16...16384).contains(periodFrames) else { throw ValidationError("--period-frames must be between 16 and 16384") }
    guard bufferFrames >= periodFrames * 2 else {
      throw ValidationError("--buffer-frames must hold at least two periods (\(periodFrames * 2) frames)")
    }
    guard idleTimeout >= 0 && idleTimeout.isFinite else { throw ValidationError("--idle-timeout must be 0 or more seconds") }
    guard (1...4096).contains(maxVoices) else { throw ValidationError("--max-voices must be between 1 and 4096") }
    guard maxCueSeconds > 0 && maxCueSeconds <= 3600 else { throw ValidationError("--max-cue-seconds must be between 0 and 3600") }
    guard maxMemory >= 1 else { throw ValidationError("--max-memory must be at least 1 MiB") }
    guard maxCues >= 1 else { throw ValidationError("--max-cues must be at least 1") }
    guard (1...65536).contains(maxClients) else { throw ValidationError("--max-clients must be between 1 and 65536") }
    guard maxPlayers >= 1, maxSounds >= 1 else { throw ValidationError("--max-players and --max-sounds must be at least 1") }
    guard (0...99).contains(realtimePriority) else { throw ValidationError("--realtime-priority must be between 0 and 99") }
  }

  func run() throws {
    Daemon<NullSink>.blockSignals()
    let level = Logger.Level(rawValue: logLevel) ?? .info
    let journald = StandardErrorLogHandler.standardErrorIsJournal
    LoggingSystem.bootstrap { label in StandardErrorLogHandler(label: label, level: level, journald: journald) }
    let logger = Logger(label: "cued")
    signal(SIGPIPE, SIG_IGN)

    var configuration = DaemonConfiguration(
      soundDirectories: soundDirectories.isEmpty ? DaemonConfiguration.defaultSoundDirectories() : soundDirectories,
      socketPath: DefaultPaths.socket(explicit: socket), device: device)
    configuration.sampleRate = rate
    configuration.periodFrames = periodFrames
    configuration.bufferFrames = bufferFrames
    configuration.idleSeconds = idleTimeout
    configuration.voiceLimit = maxVoices
    configuration.maximumCueSeconds = maxCueSeconds
    configuration.maximumDecodedBytes = maxMemory << 20
    configuration.maximumCues = maxCues
    configuration.maximumClients = maxClients
    configuration.maximumPlayers = maxPlayers
    configuration.maximumSounds = maxSounds
    configuration.allowAnyPath = allowAnyPath
    configuration.realtimePriority = realtimePriority

    do {
      if device == "null" {
        let sink = NullSink(rate: rate, periodFrames: periodFrames, bufferFrames: bufferFrames)
        try serve(configuration, device: sink, logger: logger)
      } else {
        let sink = AlsaSink(device: device, rate: rate, periodFrames: periodFrames, bufferFrames: bufferFrames)
        try serve(configuration, device: sink, logger: logger)
      }
    } catch {
      logger.critical("\(error)")
      throw ExitCode(1)
    }
  }

  private func serve<Device: OutputDevice>(_ configuration: DaemonConfiguration, device: Device, logger: Logger) throws(StartupError) {
    let daemon = try Daemon(configuration: configuration, device: device, logger: logger)
    try daemon.bindSocket()
    daemon.loadCues()
    try daemon.startAudio()
    try daemon.run()
  }
}

Cued.main()
