import ArgumentParser
import CueClient
import CuePosix
import CueProtocol

#if canImport(Glibc)
import Glibc
#endif

/// Exit statuses, as documented in the README: scripts branch on them.
enum ExitStatus: Int32 {
  case ok = 0
  /// The daemon refused the request (unknown cue, value out of range).
  case refused = 1
  /// Bad command line.
  case usage = 2
  /// The daemon is not reachable.
  case unreachable = 3
}

/// Options every subcommand takes.
struct GlobalOptions: ParsableArguments {
  @Option(help: ArgumentHelp("The daemon's socket (default: $CUED_SOCKET, else $XDG_RUNTIME_DIR/cued/cued.sock).", valueName: "path"))
  var socket: String?

  @Flag(help: "Print the daemon's raw JSON replies, one per line.")
  var json = false
}

struct Cuectl: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "cuectl",
    abstract: "Controls cued, the audio cue daemon.",
    discussion: """
      Every command takes --socket PATH and --json, after the command or before it \
      (cuectl --socket /run/user/1000/cued/cued.sock status).
      Exit status: 0 ok; 1 the daemon refused the request; 2 usage error; 3 the daemon is not reachable.
      """,
    version: cuedVersion,
    subcommands: [
      Play.self, Stop.self, List.self, Voices.self, Status.self, Ping.self, Reload.self, Monitor.self, PlayerCommand.self,
      SoundCommand.self, SystemCommand.self, LevelCommand.self, GroupCommand.self, PageCommand.self, CarouselCommand.self, Top.self,
    ])
}

struct Play: ParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Plays a cue, a desktop sound-theme event or a sound file, and prints its voice id.",
    discussion: """
      --event plays the sound the desktop's sound theme has for that name (the freedesktop \
      Sound Naming Specification's names, as libcanberra's event.id: bell, complete, \
      message-new-instant, dialog-warning…), looked up as libcanberra does; cued decodes it the \
      first time and keeps it.

      --file plays a sound file that is not a cue (MP3, Ogg Vorbis or Opus, WAV, FLAC); a relative \
      path is taken from the current directory. cued decodes it the first time and keeps it, until \
      the file changes.

      Examples:
        cuectl play pico
        cuectl play --event message-new-instant
        cuectl play --file ~/Downloads/ding.ogg --wait
        cuectl play page-next --volume 0.5 --pan 0.8
        cuectl play tick --loops 2 --wait      # three ticks, back to back; returns when done
        cuectl play hum --loops -1             # until `cuectl stop hum`
      """)

  @OptionGroup var global: GlobalOptions

  @Argument(help: "The cue's name (its file name without .mp3; `cuectl list` shows them).", completion: .custom(completeCueNames))
  var cue: String?

  @Option(help: ArgumentHelp("A sound-theme event name to play instead of a cue.", valueName: "name"))
  var event: String?

  @Option(help: ArgumentHelp("A sound file to play instead of a cue.", valueName: "path"), completion: .file())
  var file: String?

  // `.unconditional`: the value may start with '-' (`--pan -1`, `--loops -1`).
  @Option(parsing: .unconditional, help: ArgumentHelp("Linear volume, 0 to 1.", valueName: "v"))
  var volume: Double = 1

  @Option(parsing: .unconditional, help: ArgumentHelp("Stereo position, -1 (left) to 1 (right).", valueName: "p"))
  var pan: Double = 0

  @Option(
    parsing: .unconditional,
    help: ArgumentHelp("Repeats after the first play: 0 once, n for n+1 plays, negative until stopped.", valueName: "n"))
  var loops: Int = 0

  @Flag(help: "Wait until the voice ends; exit 0 only if it played to the end.")
  var wait = false

  func validate() throws {
    guard [cue, event, file].compactMap({ $0 }).count == 1 else {
      throw ValidationError("give a cue name, --event NAME or --file PATH (one of them)")
    }
    if let file, file.isEmpty { throw ValidationError("--file needs a path") }
    if let event, !PlayParameters.isEventName(event) {
      throw ValidationError("--event must be a sound-theme name of letters, digits, '-', '_' and '.', not starting with '.', like bell or message-new-instant")
    }
    guard volume.isFinite, (0...1).contains(volume) else { throw ValidationError("--volume must be between 0 and 1") }
    guard pan.isFinite, (-1...1).contains(pan) else { throw ValidationError("--pan must be between -1 and 1") }
    guard !(wait && loops < 0) else { throw ValidationError("--wait with negative --loops would never return") }
  }

  func run() throws {
    var parameters = PlayParameters(cue: cue ?? "", volume: volume, pan: pan, loops: loops, notify: wait)
    if let event { parameters = PlayParameters(event: event, volume: volume, pan: pan, loops: loops, notify: wait) }
    if let file {
      // The daemon has its own working directory: it takes only absolute paths.
      guard let absolute = Files.absolutePath(file) else {
        throw ValidationError("cannot read the current directory to make \(file) absolute; give an absolute path")
      }
      parameters = PlayParameters(file: absolute, volume: volume, pan: pan, loops: loops, notify: wait)
    }
    try Self.play(Session(global), parameters)
  }

  /// Plays and prints the voice id; with `notify` (--wait), waits for the voice's end.
  static func play(_ session: Session, _ parameters: PlayParameters) throws {
    let cue = parameters.event ?? parameters.file ?? parameters.cue
    let reply = try session.send(.play(parameters), as: PlayReply.self)
    let voice = reply.voice
    if !session.json {
      writeToStandardOutput("\(voice)\n")
      if let reason = reply.silenced { reportSilent(cue, reason) }
    }
    guard parameters.notify else { return }
    // Built on events: the `finished` event this play asked for (notify).
    let finished = try waitForEvent(session) { event -> Event.Finished? in
      if case .finished(let finished) = event, finished.voice == voice { return finished }
      return nil
    }
    if finished.successfully { return }
    let reason = finished.reason.rawValue
    writeToStandardError("cuectl: voice \(voice) (\(cue)) did not play to the end: \(reason)\n")
    throw ExitCode(ExitStatus.refused.rawValue)
  }
}

struct Stop: ParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Stops a voice, every voice of a cue, or everything, with a short fade.",
    discussion: """
      Examples:
        cuectl stop 17          # voice 17
        cuectl stop hum         # every voice playing the cue 'hum'
        cuectl stop --all
      """)

  @OptionGroup var global: GlobalOptions

  @Argument(help: "A voice id (a number) or a cue name.", completion: .custom(completeCueNames))
  var target: String?

  @Flag(help: "Stop every voice.")
  var all = false

  @Option(help: ArgumentHelp("Fade-out length in seconds (default: a few milliseconds).", valueName: "seconds"))
  var fade: Double?

  func validate() throws {
    guard (target != nil) != all else { throw ValidationError("give a voice id or cue name, or --all (one of them)") }
    if let fade { guard fade.isFinite, fade >= 0, fade <= Request.maximumFadeSeconds else { throw ValidationError("--fade must be between 0 and 60 seconds") } }
  }

  func run() throws {
    let session = try Session(global)
    let stopTarget: StopTarget
    if all {
      stopTarget = .all
    } else if let target, let voice = UInt64(target) {
      stopTarget = .voice(voice)
    } else {
      stopTarget = .cue(target ?? "")
    }
    let reply = try session.send(.stop(stopTarget, fadeSeconds: fade), as: StopReply.self)
    if !global.json { writeToStandardOutput("stopped \(reply.stopped)\n") }
  }
}

struct List: ParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Lists the loaded cues: duration, source rate, channels, memory, loudness, peak, format.",
    discussion: "LOUDNESS is the EBU R128 integrated loudness (LUFS) and PEAK the sample peak (dBFS); '-' for a silent cue.")

  @OptionGroup var global: GlobalOptions

  func run() throws {
    let session = try Session(global)
    let cues = try session.send(.list, as: ListReply.self).cues
    guard !global.json else { return }
    var rows = [["NAME", "DURATION", "RATE", "CH", "MEMORY", "LOUDNESS", "PEAK", "FORMAT"]]
    for cue in cues {
      rows.append([
        cue.name, formatSeconds(cue.duration), "\(cue.sourceRate) Hz", "\(cue.channels)", formatBytes(cue.bytes),
        formatDecibels(cue.loudness, unit: "LUFS"), formatDecibels(cue.peak, unit: "dBFS"), cue.format ?? "-",
      ])
    }
    writeToStandardOutput(table(rows))
    if cues.isEmpty { writeToStandardError("cuectl: no cues are loaded\n") }
  }
}

struct Voices: ParsableCommand {
  static let configuration = CommandConfiguration(abstract: "Lists the voices sounding now: cue, what played it, loops, age.")

  @OptionGroup var global: GlobalOptions

  func run() throws {
    let session = try Session(global)
    let voices = try session.send(.voices, as: VoicesReply.self).voices
    guard !global.json else { return }
    var rows = [["VOICE", "CUE", "FROM", "LOOPS", "AGE", ""]]
    for voice in voices {
      let from: String
      switch voice.origin {
      case .oneShot: from = "play"
      case .player(let id): from = "player \(id)"
      case .sound(let id): from = "sound \(id)"
      }
      let loops = voice.loops < 0 ? "forever" : "\(voice.loops)"
      rows.append(["\(voice.voice)", voice.cue, from, loops, formatSeconds(voice.seconds), voice.stopping ? "stopping" : ""])
    }
    writeToStandardOutput(table(rows))
  }
}

struct Status: ParsableCommand {
  static let configuration = CommandConfiguration(abstract: "Shows the device and its state, voices, underruns, uptime and cues.")

  @OptionGroup var global: GlobalOptions

  func run() throws {
    let session = try Session(global)
    let status = try session.send(.status, as: StatusReply.self)
    guard !global.json else { return }
    let device = status.device
    var lines: [String] = []
    var deviceLine = "device:    \(device.name) via \(device.backend) (\(device.state.rawValue))"
    if let format = device.format {
      let milliseconds = { (frames: Int) in formatMilliseconds(frames, rate: format.rate) }
      if let asked = device.latencyFrames {
        // A server's latency: the frames it asks for at a time, and what cued asks of it.
        let quantum = device.quantumFrames ?? format.periodFrames
        deviceLine += ", \(format.sampleFormat) \(format.rate) Hz, quantum \(quantum) frames (\(milliseconds(quantum)))"
        if asked != quantum { deviceLine += ", asks \(asked) (\(milliseconds(asked)))" }
      } else {
        deviceLine += ", \(format.sampleFormat) \(format.rate) Hz, period \(format.periodFrames), buffer \(format.bufferFrames) frames"
        if let target = device.fillTargetFrames { deviceLine += ", filled to \(target) (\(milliseconds(target)))" }
      }
      if let raises = device.latencyRaises, raises > 0 { deviceLine += ", raised \(raises)× after xruns" }
      if device.state == .open { deviceLine += "; output delay \(milliseconds(device.delayFrames))" }
      if device.state == .open && device.paused == true { deviceLine += "; paused until the next cue" }
    }
    lines.append(deviceLine)
    if let mixing = device.mixingThread {
      lines.append("mixing:    \(device.mixingThreadName ?? "cued's audio thread"), \(mixing.summary)")
    }
    if let error = device.error { lines.append("error:     \(error)") }
    if let raises = device.latencyRaises, raises > 0 || (device.ignoredXruns?.total ?? 0) > 0 {
      var line = "latency:   raised \(raises)×"
      if let last = device.recentRaises?.last { line += ", last \(last.summary)" }
      if let ignored = device.ignoredXruns, ignored.total > 0 {
        line += "; not raised for \(ignored.silent) in silence, \(ignored.afterResume) after a resume, \(ignored.graphWide) graph-wide"
      }
      lines.append(line)
    }
    lines.append("voices:    \(status.voices) playing (limit \(status.voiceLimit))")
    lines.append("underruns: \(status.underruns)")
    lines.append("audio:     \(status.scheduling.summary)")
    if let control = status.controlThread { lines.append("control:   \(control.summary)") }
    lines.append(
      "device:    opened \(device.opens) time\(device.opens == 1 ? "" : "s"), lost \(device.losses)"
        + (device.pauses.map { ", paused \($0) time\($0 == 1 ? "" : "s")" } ?? "")
        + "; clock \(formatSeconds(status.deviceCurrentTime)), \(status.framesWritten) frames mixed")
    let latency = status.triggerLatency
    lines.append(
      "plays:     \(status.plays) started"
        + (latency.count > 0
          ? "; request to first frame p50 \(formatMicroseconds(latency.p50Us)), p99 \(formatMicroseconds(latency.p99Us)), max \(formatMicroseconds(latency.maxUs))"
          : ""))
    lines.append(
      "objects:   \(status.players) player\(status.players == 1 ? "" : "s"), \(status.sounds) system sound\(status.sounds == 1 ? "" : "s")"
        + " (system volume \(String(format3: status.systemVolume))\(status.systemMuted ? ", muted" : ""))")
    let decisions = PagingDecision.allCases.map { "\($0.rawValue) \(status.paging[$0])" }
    lines.append("paging:    \(decisions.joined(separator: ", "))")
    let silent = SilenceReason.allCases.map { "\($0.rawValue) \(status.silenced[$0])" }
    lines.append("silent:    \(silent.joined(separator: ", ")) (plays that did not sound, by reason)")
    if let theme = status.soundTheme { lines.append("theme:     \(theme.summary)") }
    lines.append("uptime:    \(formatSeconds(status.uptime))")
    lines.append("cues:      \(status.cues) (\(formatBytes(status.cueBytes)))")
    lines.append(
      "clients:   \(status.clients) connected, \(status.refusedConnections) refused, \(status.eventsDropped) event\(status.eventsDropped == 1 ? "" : "s") dropped for slow readers")
    lines.append("daemon:    cued \(status.version), pid \(status.pid), \(session.connection.socketPath)")
    writeToStandardOutput(lines.joined(separator: "\n") + "\n")
  }
}

/// `2100.5` µs → `2.10 ms`; under a millisecond in µs.
func formatMicroseconds(_ microseconds: Double) -> String {
  microseconds < 1000 ? "\(Int(microseconds.rounded())) µs" : "\(String(format3: microseconds / 1000)) ms"
}

extension String {
  /// `x` with at most three decimals, trailing zeros dropped (`0.25`, `12.5`, `3`).
  init(format3 x: Double) {
    var text = String((x * 1000).rounded() / 1000)
    if text.hasSuffix(".0") { text.removeLast(2) }
    self = text
  }
}

/// `256` frames at 48000 Hz → `5.3 ms`.
func formatMilliseconds(_ frames: Int, rate: Int) -> String {
  let tenths = (frames * 10_000 + rate / 2) / max(rate, 1)
  return "\(tenths / 10).\(tenths % 10) ms"
}

struct Ping: ParsableCommand {
  static let configuration = CommandConfiguration(abstract: "Checks that the daemon answers.")

  @OptionGroup var global: GlobalOptions

  func run() throws {
    let session = try Session(global)
    let began = MonotonicClock.nanoseconds()
    _ = try session.send(.ping)
    let micros = (MonotonicClock.nanoseconds() - began) / 1000
    if !global.json { writeToStandardOutput("pong from \(session.connection.socketPath) in \(micros) µs\n") }
  }
}

struct Reload: ParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Rescans the sound directories; what is playing is not cut.")

  @OptionGroup var global: GlobalOptions

  func run() throws {
    let session = try Session(global)
    let reply = try session.send(.reload, as: ReloadReply.self)
    guard !global.json else { return }
    func names(_ list: [String]) -> String { list.isEmpty ? "none" : list.map(\.controlCharactersEscaped).joined(separator: ", ") }
    let library = reply.library
    var text = "reloaded: \(library.cues) cues; added: \(names(library.added)); changed: \(names(library.changed)); removed: \(names(library.removed))\n"
    for failure in reply.failed {
      text += "skipped \(failure.path): \(failure.reason)\n"
    }
    writeToStandardOutput(text)
  }
}

func formatSeconds(_ seconds: Double) -> String {
  if seconds < 10 {
    let milliseconds = Int(seconds * 1000 + 0.5)
    return "\(milliseconds / 1000).\(String(milliseconds % 1000 + 1000).dropFirst()) s"
  }
  let whole = Int(seconds)
  if whole < 3600 { return "\(whole / 60)m\(whole % 60)s" }
  return "\(whole / 3600)h\((whole % 3600) / 60)m"
}

/// `-18.3 LUFS`, `-1.2 dBFS`: one decimal; `-` when there is no value.
func formatDecibels(_ value: Double?, unit: String) -> String {
  guard let value, value.isFinite else { return "-" }
  let tenths = Int((value * 10).rounded())
  return "\(tenths < 0 ? "-" : "")\(abs(tenths) / 10).\(abs(tenths) % 10) \(unit)"
}

func formatBytes(_ bytes: Int) -> String {
  if bytes < 1024 { return "\(bytes) B" }
  if bytes < 1 << 20 { return "\((bytes + 512) / 1024) KiB" }
  return "\((bytes + (1 << 19)) >> 20) MiB"
}

func table(_ rows: [[String]]) -> String {
  // A cell may hold a name the daemon sent (a cue named after a file `a\nb.mp3`): one row, one line.
  let rows = rows.map { $0.map(\.controlCharactersEscaped) }
  guard let first = rows.first else { return "" }
  var widths = first.map(\.count)
  for row in rows { for (i, cell) in row.enumerated() { widths[i] = max(widths[i], cell.count) } }
  return rows.map { row in
    row.enumerated().map { i, cell in
      i == row.count - 1 ? cell : cell + String(repeating: " ", count: widths[i] - cell.count)
    }.joined(separator: "  ")
  }.joined(separator: "\n") + "\n"
}

/// `cuectl`'s whole run, on this process's command line: the entry point of the `cuectl` executable
/// and of the multi-call `cued` run as `cuectl` (Sources/Programs/cued/main.swift).
public func cuectlMain() -> Never {
  // `--socket` and `--json` may come before the command (GlobalArguments.swift).
  let arguments = GlobalArguments.hoisted(Array(CommandLine.arguments.dropFirst()))

  // The common `cuectl play` forms skip swift-argument-parser (QuickPlay.swift says why).
  if let status = QuickPlay.run(arguments[...]) { exit(status.rawValue) }

  // Usage errors exit 2 (swift-argument-parser's default is 64); help and --version exit 0.
  do {
    var command = try Cuectl.parseAsRoot(arguments)
    try command.run()
  } catch {
    let code = Cuectl.exitCode(for: error)
    if code == .validationFailure {
      writeToStandardError(Cuectl.fullMessage(for: error) + "\n")
      exit(ExitStatus.usage.rawValue)
    }
    if code == .success {
      writeToStandardOutput(Cuectl.fullMessage(for: error) + "\n")
      exit(0)
    }
    let message = Cuectl.fullMessage(for: error)
    if !message.isEmpty { writeToStandardError(message + "\n") }
    exit(code.rawValue)
  }
  exit(ExitStatus.ok.rawValue)
}
