import CuePosix
import CueProtocol
import DaemonTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Hostile sound files and hostile paths, through the real `cued` and `cuectl`: every file loads or
/// is skipped with a log line naming it and the reason, and a client cannot make cued read outside
/// the sound directories unless cued was started with `--allow-any-path`.
@Suite("Hostile sound files and paths", .serialized)
struct HostileInputTests {
  /// Sends one request on a raw connection and returns its reply (events are skipped).
  static func request(_ client: RawClient, id: Int, _ op: String, _ fields: [(String, JSONValue)]) throws -> JSONValue {
    try client.send(JSONWriter.write(.object([("id", .number(Double(id))), ("op", .string(op))] + fields)) + "\n")
    while true {
      let message = try client.receive()
      if message["event"] == nil && message["id"]?.intValue == id { return message }
    }
  }

  /// The log's lines that mention `text`.
  static func lines(_ log: String, containing text: String) -> [Substring] {
    log.split(separator: "\n").filter { $0.contains(text) }
  }

  // MARK: - Paths

  /// A daemon whose sound directory holds `pico`, with `outside.mp3` next to (not in) it, a
  /// symlink inside pointing at it, and a subdirectory for `..` that stays inside.
  static func startWithAnOutsideFile(_ extra: [String]) throws -> (DaemonProcess, String) {
    let (daemon, dir) = try DaemonTests.start(extra)
    try FileManager.default.copyItem(atPath: Harness.fixture("tone-44100-stereo.mp3"), toPath: dir + "/outside.mp3")
    try FileManager.default.createSymbolicLink(atPath: dir + "/sounds/escape.mp3", withDestinationPath: dir + "/outside.mp3")
    try FileManager.default.createDirectory(atPath: dir + "/sounds/sub", withIntermediateDirectories: false)
    return (daemon, dir)
  }

  static func escapingPaths(_ dir: String) -> [String] {
    [dir + "/outside.mp3", dir + "/sounds/../outside.mp3", dir + "/sounds/sub/../../outside.mp3", dir + "/sounds/escape.mp3"]
  }

  @Test func pathsOutsideTheSoundDirectoriesAreRefusedWithBadPathNamingThePath() throws {
    let (daemon, dir) = try Self.startWithAnOutsideFile([])
    defer { daemon.stop() }
    let client = try RawClient(socket: daemon.socket)
    var id = 0
    for path in Self.escapingPaths(dir) + ["/etc/passwd"] {
      for op in ["sound.create", "player.create"] {
        id += 1
        let reply = try Self.request(client, id: id, op, [("path", .string(path))])
        #expect(reply["ok"] == false, "\(op) \(path) was accepted")
        #expect(reply["error"]?["code"] == "bad-path", "\(op) \(path): \(reply)")
        let message = reply["error"]?["message"]?.stringValue ?? ""
        #expect(message.contains(path), "\(message)")
        #expect(message.contains("is not a file inside the sound directories (\(dir)/sounds)"), "\(message)")
        #expect(message.contains("cued reads only files inside them. Move it into one of them, or start cued with --allow-any-path"), "\(message)")
      }
    }
    // A path that does not exist gets the same message as one outside: no probing which files exist.
    for absent in [dir + "/absent.mp3", dir + "/sounds/absent.mp3"] {
      id += 1
      let missing = try Self.request(client, id: id, "sound.create", [("path", .string(absent))])
      #expect(missing["error"]?["code"] == "bad-path")
      #expect(missing["error"]?["message"]?.stringValue?.contains(absent + " is not a file inside the sound directories") == true, "\(missing)")
    }
    // `..` that stays inside is fine, and so is a symlink inside pointing inside.
    try FileManager.default.createSymbolicLink(atPath: dir + "/sounds/alias.mp3", withDestinationPath: "pico.mp3")
    for path in [dir + "/sounds/sub/../pico.mp3", dir + "/sounds/alias.mp3"] {
      id += 1
      let reply = try Self.request(client, id: id, "sound.create", [("path", .string(path))])
      #expect(reply["ok"] == true, "\(path): \(reply)")
    }
    // cuectl says the same, and exits 1 (the daemon refused).
    let result = try daemon.cuectl(["sound", "create", "--path", dir + "/sounds/escape.mp3"])
    #expect(result.status == 1)
    #expect(result.stderr.contains("is not a file inside the sound directories"), "\(result.stderr)")
    #expect(result.stderr.contains(dir + "/sounds/escape.mp3"))
    #expect(!daemon.log.contains("outside.mp3: "))  // never decoded, so never logged as skipped
  }

  @Test func withAllowAnyPathTheSamePathsLoadAndPlay() throws {
    let (daemon, dir) = try Self.startWithAnOutsideFile(["--allow-any-path"])
    defer { daemon.stop() }
    let client = try RawClient(socket: daemon.socket)
    var id = 0
    for path in Self.escapingPaths(dir) {
      id += 1
      let sound = try Self.request(client, id: id, "sound.create", [("path", .string(path))])
      #expect(sound["ok"] == true, "\(path): \(sound)")
      let soundID = try #require(sound["sound"])
      id += 1
      let played = try Self.request(client, id: id, "sound.play", [("sound", soundID)])
      #expect(played["ok"] == true, "\(path): \(played)")
      id += 1
      let player = try Self.request(client, id: id, "player.create", [("path", .string(path))])
      #expect(player["ok"] == true, "\(path): \(player)")
    }
    // Any path, but still only MP3 files: /etc/passwd is read and refused for what it is.
    id += 1
    let passwd = try Self.request(client, id: id, "sound.create", [("path", "/etc/passwd")])
    #expect(passwd["error"]?["code"] == "bad-path")
    #expect(passwd["error"]?["message"]?.stringValue?.contains("/etc/passwd: no MPEG audio frame found") == true, "\(passwd)")
  }

  @Test func aDirectoryWhoseNameIsOnlyCanonicallyEquivalentToTheSoundDirectoryIsOutside() throws {
    // The sound directory is ".../snd-café" spelled NFD (e + U+0301); ".../snd-café" spelled NFC
    // (U+00E9) is another directory on disk, outside it.
    let dir = Harness.temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }  // after the daemon stops
    let sounds = dir + "/snd-cafe\u{301}"
    let lookalike = dir + "/snd-caf\u{E9}"
    for directory in [sounds, lookalike] {
      try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
      try FileManager.default.copyItem(atPath: Harness.fixture("tone-48000-mono.mp3"), toPath: directory + "/x.mp3")
    }
    #expect(try FileManager.default.contentsOfDirectory(atPath: dir).count == 2)
    let daemon = try DaemonProcess(
      socket: dir + "/cued.sock", arguments: ["--sounds", sounds, "--device", "null"], logPath: dir + "/cued.log")
    defer { daemon.stop() }
    let client = try RawClient(socket: daemon.socket)
    let inside = try Self.request(client, id: 1, "sound.create", [("path", .string(sounds + "/x.mp3"))])
    #expect(inside["ok"] == true, "\(inside)")
    let outside = try Self.request(client, id: 2, "sound.create", [("path", .string(lookalike + "/x.mp3"))])
    #expect(outside["error"]?["code"] == "bad-path", "\(outside)")
  }

  // MARK: - Sound files

  @Test func aHostileSoundDirectoryLoadsWhatItCanAndLogsOneLineForEachSkippedFile() throws {
    let dir = Harness.temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }  // after the daemon stops
    let sounds = dir + "/sounds"
    try FileManager.default.createDirectory(atPath: sounds, withIntermediateDirectories: false)
    let good = try Data(contentsOf: URL(fileURLWithPath: Harness.fixture("tone-48000-mono.mp3")))
    let random = try Data(contentsOf: URL(fileURLWithPath: Harness.fixture("random.mp3")))
    let tag = Data("ID3".utf8) + Data([3, 0, 0, 0, 0, 0, 16]) + Data("TIT2".utf8) + Data([0, 0, 0, 6, 0, 0, 0]) + Data("title".utf8)
    let glued = try Data(contentsOf: URL(fileURLWithPath: Harness.fixture("tone-44100-stereo.mp3")))
      + Data(contentsOf: URL(fileURLWithPath: Harness.fixture("loop-48000-stereo.mp3")))
    let loads = ["good", "ding dong", "ピコ", "a\nb", "truncated"]
    for name in loads where name != "truncated" { try good.write(to: URL(fileURLWithPath: sounds + "/" + name + ".mp3")) }
    try FileManager.default.copyItem(atPath: Harness.fixture("truncated.mp3"), toPath: sounds + "/truncated.mp3")
    try Data().write(to: URL(fileURLWithPath: sounds + "/empty.mp3"))
    try random.write(to: URL(fileURLWithPath: sounds + "/junk.mp3"))
    // A broken file whose name tries to forge a log line of its own.
    try random.write(to: URL(fileURLWithPath: sounds + "/x\ncued: critical: forged.mp3"))
    try tag.write(to: URL(fileURLWithPath: sounds + "/tag-only.mp3"))
    try glued.write(to: URL(fileURLWithPath: sounds + "/glued.mp3"))
    try FileManager.default.createDirectory(atPath: sounds + "/folder.mp3", withIntermediateDirectories: false)
    #expect(mkfifo(sounds + "/pipe.mp3", 0o644) == 0)
    try FileManager.default.createSymbolicLink(atPath: sounds + "/loop-a.mp3", withDestinationPath: "loop-b.mp3")
    try FileManager.default.createSymbolicLink(atPath: sounds + "/loop-b.mp3", withDestinationPath: "loop-a.mp3")
    try FileManager.default.createSymbolicLink(atPath: sounds + "/dangling.mp3", withDestinationPath: "nowhere.mp3")

    // Starting at all shows the FIFO did not block the scan.
    let daemon = try DaemonProcess(
      socket: dir + "/cued.sock", arguments: ["--sounds", sounds, "--device", "null", "--idle-timeout", "0.3"], logPath: dir + "/cued.log")
    defer { daemon.stop() }
    let log = daemon.log
    let skipped: [(String, String)] = [
      ("empty.mp3", "the file is empty"),
      ("junk.mp3", "it is not an MP3, Ogg, WAV or FLAC file"),
      ("x\\ncued: critical: forged.mp3", "it is not an MP3, Ogg, WAV or FLAC file"),
      ("tag-only.mp3", "no MPEG audio after it"),
      ("glued.mp3", "its sample rate changes mid-file (44100 Hz, then 48000 Hz); re-encode it at one rate"),
      ("folder.mp3", "it is a directory, not a file"),
      ("pipe.mp3", "it is a FIFO (named pipe), not a regular file"),
      ("loop-a.mp3", "it is a symlink loop"),
      ("loop-b.mp3", "it is a symlink loop"),
      ("dangling.mp3", "it is a dangling symlink: its target nowhere.mp3 does not exist"),
    ]
    for (file, reason) in skipped {
      let matching = Self.lines(log, containing: "skipped \(sounds)/\(file): ")
      #expect(matching.count == 1, "\(file): \(matching)\n\(log)")
      #expect(matching.first?.contains(reason) == true, "\(file): \(matching)")
    }
    // The newline in the name is escaped: no line of the log starts with the forged text.
    #expect(!log.split(separator: "\n").contains { $0.hasPrefix("cued: critical: forged") || $0.hasPrefix("forged") }, "\(log)")
    #expect(Self.lines(log, containing: "\(sounds)/truncated.mp3: the file is truncated").count == 1, "\(log)")
    #expect(log.contains("loaded \(loads.count) cues"), "\(log)")

    // `list` names each cue exactly (the JSON escapes the newline), and each plays.
    let list = try daemon.cuectl(["list", "--json"])
    let reply = try JSONParser.parse(Array(list.stdout.trimmingCharacters(in: .whitespacesAndNewlines).utf8))
    let names = Set((reply["cues"]?.arrayValue ?? []).compactMap { $0["name"]?.stringValue })
    #expect(names == Set(loads))
    #expect(list.stdout.contains(#""a\nb""#))
    for name in ["ding dong", "ピコ", "good"] {
      let played = try daemon.cuectl(["play", name])
      #expect(played.status == 0, "play \(name): \(played.stderr)")
    }
    let client = try RawClient(socket: daemon.socket)
    let played = try Self.request(client, id: 1, "play", [("cue", "a\nb")])
    #expect(played["ok"] == true, "\(played)")
  }

  @Test func aFileReplacedOnDiskIsPickedUpByReload() throws {
    let (daemon, dir) = try DaemonTests.start(sounds: ["swap": "tone-48000-mono.mp3", "steady": "loop-48000-stereo.mp3"])
    defer { daemon.stop() }
    try FileManager.default.copyItem(atPath: Harness.fixture("tone-44100-vbr.mp3"), toPath: dir + "/new.mp3")
    #expect(rename(dir + "/new.mp3", dir + "/sounds/swap.mp3") == 0)
    let reload = try daemon.cuectl(["reload", "--json"])
    let reply = try JSONParser.parse(Array(reload.stdout.trimmingCharacters(in: .whitespacesAndNewlines).utf8))
    #expect(reply["changed"] == ["swap"], "\(reload.stdout)")
    let list = try daemon.cuectl(["list", "--json"])
    let cues = try JSONParser.parse(Array(list.stdout.trimmingCharacters(in: .whitespacesAndNewlines).utf8))["cues"]?.arrayValue ?? []
    #expect(cues.first { $0["name"] == "swap" }?["sourceRate"]?.intValue == 44100)
  }

  // MARK: - Another user

  /// The uid tests run cued as when they need a user that file permissions apply to.
  static let nobody = "65534"

  /// Runs `executable` as nobody (setpriv), like `run`.
  static func runAsNobody(_ executable: String, _ arguments: [String], timeout: Double = 20) throws -> CommandResult {
    try run("/usr/bin/setpriv", ["--reuid=" + nobody, "--regid=" + nobody, "--clear-groups", executable] + arguments, timeout: timeout)
  }

  @Test(.enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"), "needs root and setpriv"))
  func anUnreadableFileIsSkippedWithPermissionDeniedAndTheOthersLoad() throws {
    let dir = Harness.temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }  // after the daemon stops
    let sounds = try Harness.soundDirectory(in: dir, ["pico": "tone-48000-mono.mp3", "secret": "loop-48000-stereo.mp3"])
    #expect(chmod(sounds + "/secret.mp3", 0o000) == 0)
    for path in [dir, sounds, sounds + "/pico.mp3", sounds + "/secret.mp3"] { #expect(chown(path, 65534, 65534) == 0) }
    // Owned by nobody but mode 000: nobody cannot read it (root could, whatever the mode).
    let socket = dir + "/cued.sock"
    let daemon = try ChildProcess(
      "/usr/bin/setpriv",
      [
        "--reuid=" + Self.nobody, "--regid=" + Self.nobody, "--clear-groups", Harness.cued, "--socket", socket, "--sounds", sounds,
        "--device", "null", "--realtime-priority", "0",
      ], environment: ["XDG_CONFIG_HOME": "/nonexistent/cued-tests", "CUED_SOCKET": socket],
      standardOutput: .file(dir + "/cued.log"), standardError: .sameAsStandardOutput)
    defer { daemon.terminate(grace: 5) }
    let deadline = Date().addingTimeInterval(10)
    var answered = false
    while Date() < deadline && daemon.isRunning && !answered {
      answered = (try? Self.runAsNobody(Harness.cuectl, ["ping", "--socket", socket]).status) == 0
      if !answered { usleep(20_000) }
    }
    let log = (try? String(contentsOfFile: dir + "/cued.log", encoding: .utf8)) ?? ""
    try #require(answered, "cued (as nobody) did not answer: \(log)")
    let lines = Self.lines(log, containing: "skipped \(sounds)/secret.mp3: ")
    #expect(lines.count == 1, "\(log)")
    #expect(lines.first?.contains("permission denied") == true, "\(log)")
    let list = try Self.runAsNobody(Harness.cuectl, ["list", "--json", "--socket", socket])
    let reply = try JSONParser.parse(Array(list.stdout.trimmingCharacters(in: .whitespacesAndNewlines).utf8))
    #expect((reply["cues"]?.arrayValue ?? []).compactMap { $0["name"]?.stringValue } == ["pico"], "\(list.stdout) \(list.stderr)")
  }
}
