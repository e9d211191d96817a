import ArgumentParser
import CueClient
import CuePosix
import CueProtocol

#if canImport(Glibc)
import Glibc
#endif

/// Prints a reply's fields as `key: value` lines (or nothing with --json, which printed the raw reply).
func printFields(_ reply: JSONValue, global: GlobalOptions, skipping: Set<String> = ["id", "ok"]) {
  guard !global.json, let members = reply.objectValue else { return }
  var lines: [String] = []
  for (key, value) in members where !skipping.contains(key) {
    let text: String
    switch value {
    case .string(let s): text = s
    default: text = JSONWriter.write(value)
    }
    lines.append("\(key): \(text)")
  }
  writeToStandardOutput(lines.joined(separator: "\n") + "\n")
}

/// Waits for the event that says `matches`; returns it.
func waitForEvent<Found>(_ session: Session, _ matches: (Event) -> Found?) throws -> Found {
  while true {
    let event: CueEvent
    do {
      event = try session.connection.nextEvent()
    } catch {
      throw session.fail(error)
    }
    if let daemonEvent = event.daemonEvent, let found = matches(daemonEvent) {
      if session.json { writeToStandardOutput(JSONWriter.write(event.body) + "\n") }
      return found
    }
  }
}

/// Waits for the event that ends a play (`ended` says whether it played to its end, and else why);
/// exits with `refused` when it did not.
func waitForEnd(_ session: Session, of what: String, _ ended: (Event) -> (played: Bool, reason: String)?) throws {
  let (played, reason) = try waitForEvent(session, ended)
  if !played {
    writeToStandardError("cuectl: \(what) did not play to the end: \(reason)\n")
    throw ExitCode(ExitStatus.refused.rawValue)
  }
}

struct PlayerCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "player",
    abstract: "AVAudioPlayer-style players: create, play, pause, stop, seek, fade.",
    discussion: """
      A player lives as long as the connection that made it: one made by `cuectl player create` \
      ends when cuectl exits, unless it is made with --detach (then `cuectl player destroy ID` ends it).

      Examples:
        id=$(cuectl player create wrap --detach --loops -1)
        cuectl player play $id
        cuectl player set $id --volume 0.2 --fade 1.5
        cuectl player pause $id; cuectl player get $id
        cuectl player create tick --play --wait      # plays once, returns when it is done
      """,
    subcommands: [Create.self, Prepare.self, PlayAction.self, Pause.self, StopAction.self, SetProperties.self, Get.self, Destroy.self])

  struct Create: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Makes a player for a cue (or an MP3 file) and prints its id.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The cue's name.", completion: .custom(completeCueNames)) var cue: String?
    @Option(help: ArgumentHelp("An MP3 file inside the sound directories, instead of a cue.", valueName: "path")) var path: String?
    @Flag(help: "Keep the player after cuectl exits.") var detach = false
    @Flag(help: "Allow rate changes (AVAudioPlayer's enableRate).") var enableRate = false
    @Flag(help: "Report averagePower and peakPower.") var metering = false
    @Option(parsing: .unconditional, help: ArgumentHelp("Linear volume, 0 to 1.", valueName: "v")) var volume: Double?
    @Option(parsing: .unconditional, help: ArgumentHelp("-1 (left) to 1 (right).", valueName: "p")) var pan: Double?
    @Option(parsing: .unconditional, help: ArgumentHelp("numberOfLoops: 0 once, n for n+1 plays, negative until stopped.", valueName: "n")) var loops: Int?
    @Option(help: ArgumentHelp("Rate, 0.5 to 2 (needs --enable-rate).", valueName: "r")) var rate: Double?
    @Flag(help: "Start playing at once.") var play = false
    @Flag(help: "With --play: wait until it finishes; exit 0 only if it played to the end.") var wait = false

    func validate() throws {
      guard (cue != nil) != (path != nil) else { throw ValidationError("give a cue name or --path (one of them)") }
      guard !wait || play else { throw ValidationError("--wait goes with --play") }
      guard !(wait && (loops ?? 0) < 0) else { throw ValidationError("--wait with negative --loops would never return") }
    }

    func run() throws {
      let session = try Session(global)
      let source: SoundSource = cue.map { .cue($0) } ?? .path(path!)
      let settings = PlayerSettings(volume: volume, pan: pan, numberOfLoops: loops, rate: rate)
      let creation = PlayerCreation(source: source, detached: detach, enableRate: enableRate, meteringEnabled: metering, settings: settings)
      let id = try session.send(PlayerCreateRequest(creation)).player
      if !global.json { writeToStandardOutput("\(id)\n") }
      guard play else { return }
      let reply = try session.send(PlayerPlayRequest(player: id, atDeviceTime: nil))
      if let reason = reply.silenced, !global.json { reportSilent("player \(id)", reason) }
      guard wait else { return }
      try waitForEnd(session, of: "player \(id)") { event in
        guard case .finished(let finished) = event, finished.origin == .player(id) else { return nil }
        return (finished.successfully, finished.reason.rawValue)
      }
    }
  }

  struct Prepare: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "prepareToPlay: decode and open the device so play starts within a period.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The player's id.") var player: UInt64
    func run() throws { printFields(try Session(global).send(Request(PlayerPrepareRequest(player: player))), global: global) }
  }

  struct PlayAction: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "play", abstract: "Plays (or resumes) a player.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The player's id.") var player: UInt64
    @Option(help: ArgumentHelp("Start when the device clock (deviceCurrentTime) reaches this many seconds.", valueName: "seconds")) var at: Double?
    func run() throws {
      let reply = try Session(global).send(PlayerPlayRequest(player: player, atDeviceTime: at))
      if let reason = reply.silenced, !global.json { reportSilent("player \(player)", reason) }
    }
  }

  struct Pause: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Pauses a player; play resumes where it paused.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The player's id.") var player: UInt64
    func run() throws { printFields(try Session(global).send(Request(PlayerPauseRequest(player: player))), global: global) }
  }

  struct StopAction: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "stop", abstract: "Stops a player with a short fade; it keeps currentTime, and play resumes there.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The player's id.") var player: UInt64
    func run() throws { printFields(try Session(global).send(Request(PlayerStopRequest(player: player))), global: global) }
  }

  struct SetProperties: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "set", abstract: "Changes a player's volume (optionally with a fade), pan, loops, position or rate.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The player's id.") var player: UInt64
    @Option(parsing: .unconditional, help: ArgumentHelp("Linear volume, 0 to 1.", valueName: "v")) var volume: Double?
    @Option(help: ArgumentHelp("Seconds over which the volume changes.", valueName: "seconds")) var fade: Double?
    @Option(parsing: .unconditional, help: ArgumentHelp("-1 (left) to 1 (right).", valueName: "p")) var pan: Double?
    @Option(parsing: .unconditional, help: ArgumentHelp("numberOfLoops.", valueName: "n")) var loops: Int?
    @Option(help: ArgumentHelp("currentTime: seek to this many seconds.", valueName: "seconds")) var currentTime: Double?
    @Option(help: ArgumentHelp("Rate, 0.5 to 2.", valueName: "r")) var rate: Double?
    func run() throws {
      let settings = PlayerSettings(volume: volume, pan: pan, numberOfLoops: loops, currentTime: currentTime, rate: rate, fade: fade)
      printFields(try Session(global).send(Request(PlayerSetRequest(player: player, settings))), global: global)
    }
  }

  struct Get: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Shows a player's properties (currentTime, isPlaying, duration, meters…).")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The player's id.") var player: UInt64
    func run() throws { printFields(try Session(global).send(Request(PlayerGetRequest(player: player))), global: global) }
  }

  struct Destroy: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Ends a player (fading out what it plays).")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The player's id.") var player: UInt64
    func run() throws { _ = try Session(global).send(Request(PlayerDestroyRequest(player: player))) }
  }
}

struct SoundCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "sound",
    abstract: "System sounds: create an id, play it fire-and-forget, dispose of it.",
    discussion: """
      A system sound lives as long as the connection that made it unless made with --detach.
      It plays at the system-sound volume (`cuectl system`).

      Examples:
        id=$(cuectl sound create pico --detach)
        cuectl sound play $id --wait      # returns when that play completes
        cuectl sound dispose $id          # what plays finishes first
      """,
    subcommands: [Create.self, PlayAction.self, Dispose.self])

  struct Create: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Makes a system sound id from a cue (or an MP3 file) and prints it.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The cue's name.", completion: .custom(completeCueNames)) var cue: String?
    @Option(help: ArgumentHelp("An MP3 file inside the sound directories, instead of a cue.", valueName: "path")) var path: String?
    @Flag(help: "Keep the sound after cuectl exits (until `cuectl sound dispose`).") var detach = false
    func validate() throws {
      guard (cue != nil) != (path != nil) else { throw ValidationError("give a cue name or --path (one of them)") }
    }
    func run() throws {
      let session = try Session(global)
      let reply = try session.send(SoundCreateRequest(cue.map { .cue($0) } ?? .path(path!), detached: detach))
      if !global.json { writeToStandardOutput("\(reply.sound)\n") }
    }
  }

  struct PlayAction: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "play", abstract: "Plays a system sound (fire-and-forget).")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The sound's id.") var sound: UInt64
    @Flag(help: "Wait for this play's completion; exit 0 only if it played to the end.") var wait = false
    func run() throws {
      let session = try Session(global)
      if wait { _ = try session.send(Request(SoundCompletionRequest(sound: sound, enabled: true))) }
      let reply = try session.send(SoundPlayRequest(sound: sound))
      if case .silent(let reason) = reply, !global.json { reportSilent("system sound \(sound)", reason) }
      let voice = reply.voice
      guard wait else { return }
      try waitForEnd(session, of: "sound \(sound)") { event in
        guard case .completion(let completion) = event, completion.sound == sound, voice == nil || completion.voice == voice else {
          return nil
        }
        return (completion.played, completion.reason.rawValue)
      }
    }
  }

  struct Dispose: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Disposes of a system sound; what plays finishes unless --now.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The sound's id.") var sound: UInt64
    @Flag(help: "Cut what plays now, with a short fade.") var now = false
    func run() throws { _ = try Session(global).send(Request(SoundDisposeRequest(sound: sound, now: now))) }
  }
}

struct SystemCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "system", abstract: "Shows or sets the system-sound volume and mute switch.")
  @OptionGroup var global: GlobalOptions
  @Option(help: ArgumentHelp("System-sound volume, 0 to 1.", valueName: "v")) var volume: Double?
  @Flag(inversion: .prefixedNo, help: "Mute system sounds (like a \"sound effects\" switch).") var mute: Bool?
  func run() throws { printFields(try Session(global).send(.system(volume: volume, muted: mute)), global: global) }
}

struct LevelCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "level", abstract: "Shows or sets the level: full, quiet (important cues and quiet groups) or silent.",
    discussion: """
      What the level no longer allows fades out at once. Quiet hours in the config set it too.

      Examples:
        cuectl level            # level: full, set by: start
        cuectl level quiet
      """)
  @OptionGroup var global: GlobalOptions
  @Argument(help: ArgumentHelp("full, quiet or silent.", valueName: "level")) var level: String?

  func validate() throws {
    if let level, SoundLevel(rawValue: level) == nil { throw ValidationError("the level must be full, quiet or silent") }
  }

  func run() throws {
    let reply = try Session(global).send(.level(level.flatMap(SoundLevel.init(rawValue:))), as: LevelReply.self)
    guard !global.json else { return }
    var text = "level: \(reply.level.rawValue) (set by \(reply.setBy))"
    if let hours = reply.quietHours { text += "\nquiet hours: \(hours)\(reply.inQuietHours ? ", now" : "")" }
    writeToStandardOutput(text + "\n")
  }
}

struct GroupCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "group", abstract: "Shows the groups (buses), or sets one's volume and mute.",
    discussion: """
      Examples:
        cuectl group                 # every group: volume, muted, ducking now
        cuectl group ui --volume 0.5
        cuectl group alerts --mute
      """)
  @OptionGroup var global: GlobalOptions
  @Argument(help: ArgumentHelp("A group's name ([groups.NAME] in the config, or default).", valueName: "name")) var name: String?
  @Option(help: ArgumentHelp("The group's volume, 0 to 1.", valueName: "v")) var volume: Double?
  @Flag(inversion: .prefixedNo, help: "Mute the group (its voices fade to silence and keep their place).") var mute: Bool?

  func validate() throws {
    if let volume { guard volume.isFinite, (0...1).contains(volume) else { throw ValidationError("--volume must be between 0 and 1") } }
    if name == nil && (volume != nil || mute != nil) { throw ValidationError("name the group to change") }
  }

  func run() throws {
    let reply = try Session(global).send(.group(name: name, volume: volume, muted: mute), as: GroupReply.self)
    guard !global.json else { return }
    var rows = [["GROUP", "VOLUME", "MUTED", "DUCKED", "AT QUIET"]]
    for group in reply.groups {
      rows.append([
        group.name, String(format3: group.volume), group.muted ? "yes" : "no",
        group.ducked < 1 ? String(format3: 20 * log10(group.ducked)) + " dB" : "-", group.atQuiet ? "yes" : "no",
      ])
    }
    writeToStandardOutput(table(rows))
  }
}

struct Monitor: ParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Prints events as they arrive (until interrupted).",
    discussion: """
      Examples:
        cuectl monitor                         # everything
        cuectl monitor --kind finished --json  # one JSON object per line
        cuectl monitor --id 12 --count 2       # two events about 12, then exit
      """)
  @OptionGroup var global: GlobalOptions
  @Option(help: ArgumentHelp("Only this kind (\(EventKind.allCases.filter(\.isSubscribable).map(\.rawValue).joined(separator: ", "))); repeatable.", valueName: "kind"))
  var kind: [String] = []
  @Option(help: ArgumentHelp("Only events about this voice, player or sound id; repeatable.", valueName: "id")) var id: [UInt64] = []
  @Option(help: ArgumentHelp("Exit after this many events.", valueName: "n")) var count: Int?

  func validate() throws {
    if let unknown = kind.first(where: { !EventFilter.knownKinds.contains($0) }) {
      throw ValidationError("unknown event kind '\(unknown)'; the kinds are \(EventFilter.knownKinds.sorted().joined(separator: ", "))")
    }
  }

  func run() throws {
    let session = try Session(global)
    let filter = EventFilter(kinds: kind.isEmpty ? nil : Set(kind), ids: id.isEmpty ? nil : Set(id))
    _ = try Session.send(session.connection, .subscribe(filter), json: false)
    var seen = 0
    while count.map({ seen < $0 }) ?? true {
      let event: CueEvent
      do {
        event = try session.connection.nextEvent()
      } catch {
        throw session.fail(error)
      }
      seen += 1
      if global.json {
        writeToStandardOutput(JSONWriter.write(event.body) + "\n")
      } else {
        let details = (event.body.objectValue ?? []).filter { $0.0 != "event" }.map { key, value in
          "\(key)=\(value.stringValue ?? JSONWriter.write(value))"
        }
        writeToStandardOutput("\(clockStamp()) \(event.kind) \(details.joined(separator: " "))\n")
      }
    }
  }
}

/// The wall-clock time of day, HH:MM:SS.mmm, for monitor lines.
func clockStamp() -> String {
  let now = RealtimeClock.localTimeOfDay()
  func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
  let millis = now.millisecond
  let m = millis < 10 ? "00\(millis)" : millis < 100 ? "0\(millis)" : "\(millis)"
  return "\(two(now.hour)):\(two(now.minute)):\(two(now.second)).\(m)"
}

/// Says on standard error that a play is silent and why, as `cuectl play` does.
func reportSilent(_ what: String, _ reason: SilenceReason) {
  writeToStandardError("cuectl: \(what) is silent: \(reason.rawValue) (docs/PROTOCOL.md, \"Silent plays\")\n")
}
