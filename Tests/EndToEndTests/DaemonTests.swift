import CuePosix
import CueProtocol
import DaemonTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("The daemon and cuectl", .serialized)
struct DaemonTests {
  static func start(_ extra: [String] = [], sounds: [String: String] = ["pico": "tone-48000-mono.mp3", "loop": "loop-48000-stereo.mp3"]) throws -> (DaemonProcess, String) {
    let dir = Harness.temporaryDirectory()
    let soundDir = try Harness.soundDirectory(in: dir, sounds)
    let output = Harness.sharedOutput
    let daemon = try DaemonProcess(
      socket: dir + "/cued.sock", arguments: ["--sounds", soundDir, "--device", output.device, "--idle-timeout", "0.3"] + extra,
      environment: output.environment, logPath: dir + "/cued.log")
    return (daemon, dir)
  }

  @Test func statusSaysTheBackendAndWhatTheSchedulerGrantedTheAudioThread() throws {
    let (asking, _) = try Self.start(["--realtime-priority", "20", "--no-rtkit"])  // RTKit: RealtimeKitDaemonTests
    defer { asking.stop() }
    let status = try asking.status()
    let output = Harness.sharedOutput.device  // null, or pipewire in make test's second pass; name and backend alike
    #expect((status["device"] as? [String: Any])?["backend"] as? String == output)
    let scheduling = try #require(status["scheduling"] as? [String: Any])
    // Root gets SCHED_FIFO at the priority asked for; anyone else normal scheduling and the reason.
    if scheduling["policy"] as? String == "fifo" {
      #expect(scheduling["priority"] as? Int == 20)
      #expect(try asking.cuectl(["status"]).stdout.contains("audio:     SCHED_FIFO, priority 20"))
    } else {
      #expect(scheduling["policy"] as? String == "other")
      #expect((scheduling["refused"] as? String)?.isEmpty == false)
      #expect(try asking.cuectl(["status"]).stdout.contains("real-time refused"))
    }
    let (notAsking, _) = try Self.start()  // the harness's --realtime-priority 0
    defer { notAsking.stop() }
    #expect(try notAsking.status()["scheduling"] as? [String: String] == ["policy": "other"])
    let text = try notAsking.cuectl(["status"]).stdout
    #expect(text.contains("device:    \(output) via \(output) (closed)"))
    #expect(text.contains("audio:     normal scheduling\n"))
  }

  /// The control thread is set to nice -11 before it starts any other thread, so every thread of
  /// the daemon has it (the audio thread, and the sound server's client threads on a server); as
  /// root cued sets it itself. `--nice-level 0` asks for nothing.
  @Test func theControlThreadAndEveryThreadItStartsRunAtTheNiceLevelAskedFor() throws {
    let (daemon, _) = try Self.start()
    defer { daemon.stop() }
    #expect(try daemon.cuectl(["play", "pico", "--wait"]).status == 0)
    let control = try #require(daemon.status()["controlThread"] as? [String: Any])
    if getuid() == 0 {
      #expect(control["nice"] as? Int == -11 && control["via"] as? String == "setpriority", "\(control)")
      let threads = try Harness.niceLevels(daemon.pid)
      #expect(threads.count >= 2 && threads.allSatisfy { $0.nice == -11 }, "\(threads)")
      #expect(try daemon.cuectl(["status"]).stdout.contains("control:   nice -11\n"))
    } else {
      #expect(control["refused"] as? String == "Permission denied", "\(control)")
    }
    let (left, _) = try Self.start(["--nice-level", "0"])
    defer { left.stop() }
    #expect(try left.status()["controlThread"] == nil)
    #expect(try Harness.niceLevels(left.pid).allSatisfy { $0.nice == 0 })
    #expect(try !left.cuectl(["status"]).stdout.contains("control:"))
  }

  @Test func playingAnUnknownCueExits1AndNamesIt() throws {
    let (daemon, _) = try Self.start()
    defer { daemon.stop() }
    let result = try daemon.cuectl(["play", "nosuch"])
    #expect(result.status == 1)
    #expect(result.stderr.contains("nosuch"))
    #expect(result.stderr.contains("pico"))  // and says what there is
  }

  @Test func statusWithoutADaemonExits3AndNamesTheSocket() throws {
    let path = Harness.temporaryDirectory() + "/absent.sock"
    let result = try run(Harness.cuectl, ["status", "--socket", path])
    #expect(result.status == 3)
    #expect(result.stderr.contains(path))
    #expect(result.stderr.contains("cued"))
  }

  @Test func socketAndJsonWorkBeforeTheCommandAsAfterIt() throws {
    let (daemon, _) = try Self.start()
    defer { daemon.stop() }
    // Before the command (as `pactl -s`, `git -C`), after it, and both forms of the value.
    let before = try run(Harness.cuectl, ["--socket", daemon.socket, "play", "pico"])
    #expect(before.status == 0, "\(before.stderr)")
    #expect(Int(before.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) != nil, "prints the voice id: \(before.stdout)")
    let after = try run(Harness.cuectl, ["play", "pico", "--socket", daemon.socket])
    #expect(after.status == 0, "\(after.stderr)")
    let json = try run(Harness.cuectl, ["--json", "--socket=\(daemon.socket)", "status"])
    #expect(json.status == 0, "\(json.stderr)")
    let reply = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
    #expect(reply?["device"] != nil, "\(json.stdout)")
    // Through the full parser too (another command, and play with --wait).
    let nested = try run(Harness.cuectl, ["--socket", daemon.socket, "system"])
    #expect(nested.status == 0, "\(nested.stderr)")
    let waited = try run(Harness.cuectl, ["--socket", daemon.socket, "play", "pico", "--wait"])
    #expect(waited.status == 0, "\(waited.stderr)")
    // A leading option and no command is still a usage error, and a refused request still exits 1.
    #expect(try run(Harness.cuectl, ["--socket", daemon.socket]).status == 2)
    let unknown = try run(Harness.cuectl, ["--socket", daemon.socket, "play", "nosuch"])
    #expect(unknown.status == 1 && unknown.stderr.contains("nosuch"))
  }

  @Test func statusShowsWhatItsJsonHasIncludingThePagingCounters() throws {
    let (daemon, _) = try Self.start()
    defer { daemon.stop() }
    #expect(try daemon.cuectl(["play", "pico", "--wait"]).status == 0)
    // Built-in bindings, but this directory has no page-next: the decision is unbound.
    #expect(try daemon.cuectl(["page", "--from", "0", "--to", "1", "--count", "3"]).status == 0)
    #expect(try daemon.cuectl(["play", "nosuch"]).status != 0)
    let json = try daemon.status()
    let text = try daemon.cuectl(["status"]).stdout
    #expect(text.contains("plays:     \(json["plays"] as? Int ?? -1) started; request to first frame p50 "), "\(text)")
    #expect(text.contains("paging:    played 0, ignored 0, too-soon 0, late 0, unbound 1,"), "\(text)")
    #expect(text.contains("silent:    unknown 1, cooldown 0, cap 0, level 0, muted 0, group-muted 0, too-late 0"), "\(text)")
    #expect((json["silenced"] as? [String: Any])?["unknown"] as? Int == 1)
    #expect(text.contains("objects:   0 players, 0 system sounds (system volume 1)"), "\(text)")
    #expect(text.contains(" connected, 0 refused, 0 events dropped for slow readers"), "\(text)")
    #expect(text.contains("frames mixed") && text.contains("opened 1 time"), "\(text)")
    // monitor's help names every kind a subscription may ask for, paging included.
    let help = try run(Harness.cuectl, ["monitor", "--help"]).stdout
    for kind in ["started", "finished", "completion", "device", "reloaded", "decode-error", "paging"] {
      #expect(help.contains(kind), "monitor --help lacks \(kind)")
    }
  }

  @Test func bashCompletionOffersTheCueNamesOfTheDaemonTheCommandLineNames() throws {
    let (daemon, _) = try Self.start()
    defer { daemon.stop() }
    let script = Harness.temporaryDirectory() + "/cuectl.bash"
    try run(Harness.cuectl, ["--generate-completion-script", "bash"]).stdout.write(toFile: script, atomically: true, encoding: .utf8)
    // What bash does on TAB: the words so far, then the completion function; COMPREPLY is the offer.
    func complete(_ words: [String]) throws -> [String] {
      let line = words.joined(separator: " ")
      let quoted = words.map { "'\($0)'" }.joined(separator: " ")
      let shell = """
        source '\(script)'; COMP_WORDS=(\(quoted)); COMP_CWORD=\(words.count - 1); COMP_LINE='\(line)'; \
        COMP_POINT=${#COMP_LINE}; _cuectl; printf '%s\\n' "${COMPREPLY[@]}"
        """
      let directory = (Harness.cuectl as NSString).deletingLastPathComponent
      let result = try run("/bin/bash", ["-c", shell], environment: ["PATH": directory + ":/usr/bin:/bin"])
      return result.stdout.split(separator: "\n").map(String.init).sorted()
    }
    #expect(try complete(["cuectl", "play", "--socket", daemon.socket, ""]) == ["loop", "pico"])
    #expect(try complete(["cuectl", "play", "--socket", daemon.socket, "p"]) == ["pico"])
    #expect(try complete(["cuectl", "stop", "--socket", daemon.socket, "l"]) == ["loop"])
    // No daemon there: nothing offered, and no error printed into the shell.
    #expect(try complete(["cuectl", "play", "--socket", "/nonexistent/cued.sock", ""]).isEmpty)
  }

  @Test("usage errors exit 2", arguments: [["play"], ["play", "pico", "--volume", "2"], ["stop"], ["bogus"]])
  func usageErrorsExit2(_ arguments: [String]) throws {
    let result = try run(Harness.cuectl, arguments + ["--socket", "/tmp/unused.sock"])
    #expect(result.status == 2, "\(result.stderr)")
  }

  @Test func playPrintsTheVoiceIdAndWaitReportsTheEnd() throws {
    let (daemon, _) = try Self.start()
    defer { daemon.stop() }
    let first = try daemon.cuectl(["play", "pico"])
    #expect(first.status == 0)
    #expect(Int(first.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) == 1)
    let waited = try daemon.cuectl(["play", "loop", "--loops", "2", "--wait", "--json"])
    #expect(waited.status == 0)
    #expect(waited.stdout.contains(#""event":"finished""#))
    #expect(waited.stdout.contains(#""successfully":true"#))
  }

  /// `cuectl play`'s common forms are parsed without swift-argument-parser (QuickPlay.swift); the
  /// `--opt=value` spellings go through it. Both must send the same request and print the same.
  @Test func theQuickAndTheFullPlayParsersAgree() throws {
    let (daemon, _) = try Self.start()
    defer { daemon.stop() }
    let quick = try daemon.cuectl(["play", "pico", "--volume", "0.25", "--pan", "-1", "--loops", "1", "--json"])
    let full = try daemon.cuectl(["play", "pico", "--volume=0.25", "--pan=-1", "--loops=1", "--json"])
    for result in [quick, full] {
      #expect(result.status == 0, "\(result.stderr)")
      let reply = try JSONParser.parse(Array(result.stdout.utf8))
      #expect(reply["ok"] == true && reply["voice"]?.intValue != nil, "\(result.stdout)")
    }
    let voices = try daemon.cuectl(["play", "pico"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    #expect(Int(voices) == 3)
    // Errors read the same either way: the daemon's message, exit 1; no daemon, exit 3.
    let quickMissing = try daemon.cuectl(["play", "nosuch", "--json"])
    let fullMissing = try daemon.cuectl(["play", "nosuch", "--json", "--volume=1"])
    #expect(quickMissing.status == 1 && fullMissing.status == 1)
    #expect(quickMissing.stdout.contains("unknown-cue") && fullMissing.stdout.contains("unknown-cue"))
    #expect(quickMissing.stderr.contains("nosuch") && fullMissing.stderr.contains("nosuch"))
    let absent = Harness.temporaryDirectory() + "/absent.sock"
    #expect(try run(Harness.cuectl, ["play", "pico", "--socket", absent]).status == 3)
    #expect(try run(Harness.cuectl, ["play", "pico", "--socket=" + absent]).status == 3)
  }

  /// What cuectl says of a stop; the stop itself, and what its owner hears, are the body
  /// DaemonBehaviours/Connections.swift.
  @Test func cuectlStopSaysHowManyItStoppedAndExits1ForAVoiceThatIsGone() throws {
    let (daemon, _) = try Self.start()
    defer { daemon.stop() }
    let client = try RawClient(socket: daemon.socket)
    try client.send(#"{"id":"a","op":"play","cue":"loop","loops":-1,"notify":true}"# + "\n")
    let voice = try #require(try client.receive()["voice"]?.intValue)
    let stopped = try daemon.cuectl(["stop", "loop"])
    #expect(stopped.status == 0)
    #expect(stopped.stdout.contains("stopped 1"))
    #expect(try client.receive()["event"] == "finished")  // the voice is gone
    #expect(try daemon.cuectl(["stop", "\(voice)"]).status == 1)
  }

  @Test func aStaleSocketIsReclaimedAndALiveDaemonIsNotDisplaced() throws {
    let (first, dir) = try Self.start()
    // A second daemon on the same path refuses to start, with a clear message.
    let second = try run(Harness.cued, ["--socket", first.socket, "--device", "null", "--sounds", dir + "/sounds"], timeout: 10)
    #expect(second.status != 0)
    #expect(second.stderr.contains("already serving"))
    #expect(try first.cuectl(["ping"]).status == 0)
    // Killed outright, the first leaves its socket file; the next start reclaims it.
    first.signal(SIGKILL)
    first.child.wait(timeout: 5)
    #expect(FileManager.default.fileExists(atPath: first.socket))
    let third = try DaemonProcess(
      socket: first.socket, arguments: ["--sounds", dir + "/sounds", "--device", "null"], logPath: dir + "/third.log")
    defer { third.stop() }
    #expect(try third.cuectl(["ping"]).status == 0)
    #expect(third.log.contains("stale"))
  }

  @Test func theSocketIsPrivate() throws {
    let (daemon, _) = try Self.start()
    defer { daemon.stop() }
    let attributes = try FileManager.default.attributesOfItem(atPath: daemon.socket)
    #expect((attributes[.posixPermissions] as? Int) == 0o600)
  }

  @Test func sigtermExits0AndRemovesTheSocket() throws {
    let (daemon, _) = try Self.start()
    _ = try daemon.cuectl(["play", "loop", "--loops", "-1"])
    #expect(daemon.stop() == 0)
    #expect(!FileManager.default.fileExists(atPath: daemon.socket))
  }

  /// What cuectl prints of a reload, and SIGHUP reloading too; a reload's reply and the voice it
  /// leaves playing are the body DaemonBehaviours/SoundLibrary.swift (in process and live).
  @Test func cuectlReloadSaysWhatChangedAndSIGHUPReloadsWithoutCuttingWhatPlays() throws {
    let (daemon, dir) = try Self.start()
    defer { daemon.stop() }
    #expect(try daemon.cuectl(["play", "loop", "--loops", "-1"]).status == 0)
    try FileManager.default.copyItem(atPath: Harness.fixture("tone-44100-stereo.mp3"), toPath: dir + "/sounds/fresh.mp3")
    try "not audio".write(toFile: dir + "/sounds/broken.mp3", atomically: true, encoding: .utf8)
    let reload = try daemon.cuectl(["reload", "--json"])
    #expect(reload.status == 0)
    #expect(reload.stdout.contains(#""added":["fresh"]"#))
    #expect(reload.stdout.contains("broken.mp3"))
    #expect(try daemon.cuectl(["play", "fresh"]).status == 0)
    // SIGHUP reloads too.
    try FileManager.default.removeItem(atPath: dir + "/sounds/fresh.mp3")
    daemon.signal(SIGHUP)
    let deadline = Date().addingTimeInterval(5)
    while Date() < deadline, (try daemon.status())["cues"] as? Int != 2 { usleep(20_000) }
    #expect((try daemon.status())["cues"] as? Int == 2)
    // The looping voice was never cut.
    #expect((try daemon.status())["voices"] as? Int ?? 0 >= 1)
  }

  /// The log names each file skipped at start; what a client sees of them is the body
  /// DaemonBehaviours/SoundLibrary.swift.
  @Test func aBrokenFileIsSkippedAndTheLogNamesIt() throws {
    let (daemon, dir) = try Self.start(sounds: ["pico": "tone-48000-mono.mp3", "junk": "random.mp3", "empty": "empty.mp3"])
    defer { daemon.stop() }
    let list = try daemon.cuectl(["list"])
    #expect(list.stdout.contains("pico"))
    #expect(!list.stdout.contains("junk"))
    #expect(daemon.log.contains("\(dir)/sounds/junk.mp3"))
    #expect(daemon.log.contains("\(dir)/sounds/empty.mp3: the file is empty") || daemon.log.contains("empty.mp3"))
  }

  /// cuectl list's LOUDNESS and PEAK columns: what `list` says (checked against a measurement in
  /// DaemonBehaviours/SoundLibrary.swift), to a tenth; silence has a dash in both.
  @Test func cuectlListShowsLoudnessAndPeak() throws {
    let (daemon, _) = try Self.start(sounds: ["sine": "sine-1k-20dbfs-48000.mp3", "silence": "silence-8000-mono.wav"])
    defer { daemon.stop() }
    let result = try daemon.cuectl(["list", "--json"])
    let cues = try #require(try JSONParser.parse(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines))["cues"]?.arrayValue)
    let sine = try #require(cues.first { $0["name"] == "sine" })
    let loudness = try #require(sine["loudness"]?.doubleValue)
    let peak = try #require(sine["peak"]?.doubleValue)
    let table = try daemon.cuectl(["list"]).stdout.split(separator: "\n").map(String.init)
    #expect(table.first?.contains("LOUDNESS") == true && table.first?.contains("PEAK") == true, "\(table)")
    let sineRow = try #require(table.first { $0.hasPrefix("sine ") })
    #expect(sineRow.contains(String(format: "%.1f LUFS", loudness)) && sineRow.contains(String(format: "%.1f dBFS", peak)), "\(sineRow)")
    let silenceRow = try #require(table.first { $0.hasPrefix("silence ") })
    #expect(silenceRow.split(separator: " ").filter { $0 == "-" }.count == 2, "\(silenceRow)")
  }

  @Test func onceIdleTheDaemonUsesNoCPU() throws {
    let (daemon, _) = try Self.start()
    defer { daemon.stop() }
    #expect(try daemon.cuectl(["play", "pico", "--wait"]).status == 0)
    try Harness.waitUntilQuiet(daemon)
    usleep(200_000)
    try Harness.expectIdle(daemon.pid, for: 5)
  }

  @Test func aStoppedDaemonRecoversTheUnderrunAndCountsIt() throws {
    let (daemon, _) = try Self.start()
    defer { daemon.stop() }
    #expect(try daemon.cuectl(["play", "loop", "--loops", "-1"]).status == 0)
    usleep(200_000)
    daemon.signal(SIGSTOP)
    usleep(300_000)
    daemon.signal(SIGCONT)
    usleep(200_000)
    let status = try daemon.status()
    #expect(status["underruns"] as? Int ?? 0 >= 1)
    #expect(status["voices"] as? Int == 1)
    #expect((status["device"] as? [String: Any])?["state"] as? String == "open")
  }

  @Test func aClientThatNeverReadsDoesNotDelayOthers() throws {
    let (daemon, _) = try Self.start()
    defer { daemon.stop() }
    let greedy = try RawClient(socket: daemon.socket)
    try greedy.fd.setNonBlocking(true)
    let request = Array((#"{"id":1,"op":"status"}"# + "\n").utf8)
    var batch: [UInt8] = []
    for _ in 0..<2000 { batch += request }
    // Push requests until the socket is full; never read a reply.
    var sent = 0
    pushing: for _ in 0..<100 {
      var offset = 0
      while offset < batch.count {
        let result = try batch.withUnsafeBytes { try greedy.fd.write(UnsafeRawBufferPointer(rebasing: $0[offset...])) }
        guard case .bytes(let n) = result else { break pushing }
        offset += n
        sent += n
      }
    }
    #expect(sent > 0)
    let bystander = try RawClient(socket: daemon.socket)
    let began = Date()
    try bystander.send(#"{"id":1,"op":"ping"}"# + "\n")
    #expect(try bystander.receive()["ok"] == true)
    #expect(Date().timeIntervalSince(began) < 10)  // answered at all, not stuck behind the greedy client
    #expect(try daemon.cuectl(["play", "pico", "--wait"]).status == 0)
  }

  @Test func cuectlDrivesPlayersSoundsAndTheMonitor() throws {
    let (daemon, _) = try Self.start()
    defer { daemon.stop() }
    // A monitor in the background, waiting for two finished events.
    let monitorOut = Harness.temporaryDirectory() + "/monitor.txt"
    let monitor = try ChildProcess(
      Harness.cuectl, ["monitor", "--kind", "finished", "--count", "2", "--json", "--socket", daemon.socket],
      standardOutput: .file(monitorOut), standardError: .null)
    usleep(200_000)
    let once = try daemon.cuectl(["player", "create", "pico", "--play", "--wait"])
    #expect(once.status == 0, "\(once.stderr)")
    let kept = try daemon.cuectl(["player", "create", "loop", "--detach", "--loops", "-1"])
    let player = try #require(Int(kept.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
    #expect(try daemon.cuectl(["player", "play", "\(player)"]).status == 0)
    #expect(try daemon.cuectl(["player", "get", "\(player)"]).stdout.contains("isPlaying: true"))
    #expect(try daemon.cuectl(["player", "set", "\(player)", "--volume", "0.5", "--fade", "0.1"]).status == 0)
    #expect(try daemon.cuectl(["player", "pause", "\(player)"]).stdout.contains("isPlaying: false"))
    #expect(try daemon.cuectl(["player", "destroy", "\(player)"]).status == 0)
    #expect(try daemon.cuectl(["player", "get", "\(player)"]).status == 1)
    let sound = try daemon.cuectl(["sound", "create", "pico", "--detach"])
    let soundID = sound.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    #expect(try daemon.cuectl(["sound", "play", soundID, "--wait"]).status == 0)
    #expect(try daemon.cuectl(["sound", "dispose", soundID]).status == 0)
    #expect(try daemon.cuectl(["sound", "play", soundID]).status == 1)
    #expect(try daemon.cuectl(["system", "--volume", "0.3", "--mute"]).stdout.contains("muted: true"))
    #expect(try daemon.cuectl(["play", "pico", "--wait"]).status == 0)
    #expect(monitor.wait(timeout: 5) == 0)
    let lines = try String(contentsOfFile: monitorOut, encoding: .utf8).split(separator: "\n")
    #expect(lines.count == 2)
    #expect(lines.allSatisfy { $0.contains(#""event":"finished""#) })
  }

  @Test func whilePlayingTheDeviceHoldsNoMoreThanTheFillTarget() throws {
    // The clock-paced null sink keeps the engine's fill target as a card would: status's delay,
    // read after each write, stays near the target asked for (256 frames), far below the 2048-frame buffer
    // a blocking write would fill. The bound leaves room for the target rising after an underrun
    // or two on a busy machine (256 → 384 → 576 → 864).
    let (daemon, _) = try Self.start(["--fill-target", "256", "--buffer-frames", "2048"])
    defer { daemon.stop() }
    #expect(try daemon.cuectl(["play", "loop", "--loops", "-1", "--volume", "0"]).status == 0)
    usleep(100_000)
    for _ in 0..<5 {
      let device = try #require(try daemon.status()["device"] as? [String: Any])
      let delay = try #require(device["delayFrames"] as? Int)
      #expect(delay < 1024, "delay \(delay) frames")
      usleep(20_000)
    }
  }

  @Test func statusReportsTheTriggerLatency() throws {
    let (daemon, _) = try Self.start()
    defer { daemon.stop() }
    for _ in 0..<5 { #expect(try daemon.cuectl(["play", "pico", "--volume", "0"]).status == 0) }
    usleep(200_000)
    let latency = try #require(try daemon.status()["triggerLatency"] as? [String: Any])
    #expect(latency["count"] as? Int == 5)
    let p50 = try #require(latency["p50Us"] as? Double)
    let maximum = try #require(latency["maxUs"] as? Double)
    #expect(p50 > 0 && p50 <= maximum + 1)
  }
}
