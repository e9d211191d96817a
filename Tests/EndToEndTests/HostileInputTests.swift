import CuePosix
import CueProtocol
import DaemonBehaviours
import DaemonTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Hostile sound files and hostile paths, through the real `cued` and `cuectl`: every file loads or
/// is skipped with a log line naming it and the reason, and cuectl says what cued refused. What a
/// client sees of them (replies, list, plays, reload) is written once in
/// DaemonBehaviours/HostilePaths.swift, run in process (CueDaemonTests) and live (LiveHostilePathsTests).
@Suite("Hostile sound files and paths", .serialized)
struct HostileInputTests {
  /// The log's lines that mention `text`.
  static func lines(_ log: String, containing text: String) -> [Substring] {
    log.split(separator: "\n").filter { $0.contains(text) }
  }

  // MARK: - Paths

  @Test func cuectlSaysAPathOutsideTheSoundDirectoriesIsRefusedAndCuedNeverReadsIt() throws {
    let (daemon, root) = try DaemonTests.start()
    defer { daemon.stop() }
    let dir = try HostilePaths.placeAnOutsideFile(beside: root + "/sounds")
    // cuectl says what cued said, and exits 1 (the daemon refused).
    for path in HostilePaths.escapingPaths(dir) + ["/etc/passwd"] {
      let result = try daemon.cuectl(["sound", "create", "--path", path])
      #expect(result.status == 1, "\(path): \(result.stderr)")
      #expect(result.stderr.contains("is not a file inside the sound directories"), "\(result.stderr)")
      #expect(result.stderr.contains(path), "\(result.stderr)")
    }
    #expect(!daemon.log.contains("outside.mp3: "))  // never decoded, so never logged as skipped
  }

  // MARK: - Sound files

  @Test func aHostileSoundDirectoryLogsOneLineForEachSkippedFile() throws {
    let dir = Harness.temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }  // after the daemon stops
    let sounds = dir + "/sounds"
    try FileManager.default.createDirectory(atPath: sounds, withIntermediateDirectories: false)
    try HostilePaths.fillHostileDirectory(sounds)
    // Starting at all shows the FIFO did not block the scan.
    let daemon = try DaemonProcess(
      socket: dir + "/cued.sock", arguments: ["--sounds", sounds, "--device", "null", "--idle-timeout", "0.3"], logPath: dir + "/cued.log")
    defer { daemon.stop() }
    let log = daemon.log
    // One line each, the name's newline escaped.
    for (file, reason) in HostilePaths.hostileSkips {
      let logged = file.replacingOccurrences(of: "\n", with: "\\n")
      let matching = Self.lines(log, containing: "skipped \(sounds)/\(logged): ")
      #expect(matching.count == 1, "\(file): \(matching)\n\(log)")
      #expect(matching.first?.contains(reason) == true, "\(file): \(matching)")
    }
    // The newline in the name is escaped: no line of the log starts with the forged text.
    #expect(!log.split(separator: "\n").contains { $0.hasPrefix("cued: critical: forged") || $0.hasPrefix("forged") }, "\(log)")
    #expect(Self.lines(log, containing: "\(sounds)/truncated.mp3: the file is truncated").count == 1, "\(log)")
    #expect(log.contains("loaded \(HostilePaths.hostileLoads.count) cues"), "\(log)")

    // cuectl's `list --json` prints each name exactly (the JSON escapes the newline), and plays by them.
    let list = try daemon.cuectl(["list", "--json"])
    let reply = try JSONParser.parse(Array(list.stdout.trimmingCharacters(in: .whitespacesAndNewlines).utf8))
    let names = Set((reply["cues"]?.arrayValue ?? []).compactMap { $0["name"]?.stringValue })
    #expect(names == Set(HostilePaths.hostileLoads))
    #expect(list.stdout.contains(#""a\nb""#))
    for name in ["ding dong", "ピコ", "good"] {
      let played = try daemon.cuectl(["play", name])
      #expect(played.status == 0, "play \(name): \(played.stderr)")
    }
    // What cuectl prints for a person keeps a name with a newline on its one line, escaped: the
    // table has one line per cue, and the unknown-cue error (which lists the cues) is one line.
    let table = try daemon.cuectl(["list"]).stdout
    #expect(table.split(separator: "\n").count == HostilePaths.hostileLoads.count + 1, "\(table)")
    #expect(table.split(separator: "\n").contains { $0.hasPrefix(#"a\nb "#) }, "\(table)")
    let unknown = try daemon.cuectl(["play", "nosuch"])
    #expect(unknown.status == 1 && unknown.stderr.hasPrefix("cuectl: no cue named 'nosuch'"), "\(unknown.stderr)")
    #expect(unknown.stderr.split(separator: "\n").count == 1 && unknown.stderr.contains(#"a\nb"#), "\(unknown.stderr)")
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
