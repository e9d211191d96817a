import CuePosix
import CueProtocol
import DaemonTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Who may connect (SO_PEERCRED, --allow-group), and every configurable limit with its flag and error.
@Suite("Access and limits", .serialized)
struct AccessAndLimitTests {
  /// cuectl, copied where another user can run it (the checkout may sit under a private home).
  static func cuectlForOthers(in dir: String) throws -> String {
    let copy = dir + "/cuectl"
    if !FileManager.default.fileExists(atPath: copy) { try FileManager.default.copyItem(atPath: Harness.cuectl, toPath: copy) }
    chmod(copy, 0o755)
    chmod(dir, 0o755)
    return copy
  }

  /// `cuectl ping` against `daemon` as uid 65534 with the given primary group and supplementary groups.
  static func pingAsAnotherUser(_ daemon: DaemonProcess, dir: String, gid: Int = 65534, groups: [Int] = []) throws -> CommandResult {
    let cuectl = try cuectlForOthers(in: dir)
    let groupOption = groups.isEmpty ? "--clear-groups" : "--groups=" + groups.map(String.init).joined(separator: ",")
    return try run("/usr/bin/setpriv", ["--reuid=65534", "--regid=\(gid)", groupOption, cuectl, "ping", "--json", "--socket", daemon.socket])
  }

  static func mode(_ path: String) throws -> Int {
    try #require(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
  }

  @Test func theSocketIs0600InADirectoryTightenedTo0700() throws {
    let dir = Harness.temporaryDirectory()
    let soundDir = try Harness.soundDirectory(in: dir, ["pico": "tone-48000-mono.mp3"])
    // A runtime directory someone left world-writable: cued takes it back to 0700.
    try FileManager.default.createDirectory(atPath: dir + "/run/cued", withIntermediateDirectories: true)
    chmod(dir + "/run/cued", 0o777)
    let daemon = try DaemonProcess(
      socket: dir + "/run/cued/cued.sock", arguments: ["--sounds", soundDir, "--device", "null"], logPath: dir + "/cued.log")
    defer { daemon.stop() }
    #expect(try Self.mode(dir + "/run/cued") == 0o700)
    #expect(try Self.mode(daemon.socket) == 0o600)
  }

  @Test func anotherUserIsRefusedEvenWhenTheModesAreLoosened() throws {
    let (daemon, dir) = try DaemonTests.start()
    defer { daemon.stop() }
    chmod(daemon.socket, 0o666)
    let refused = try Self.pingAsAnotherUser(daemon, dir: dir)
    #expect(refused.status == 1, "\(refused.stdout) \(refused.stderr)")
    let reply = try JSONParser.parse(Array(refused.stdout.utf8))
    #expect(reply["error"]?["code"] == "access-denied", "\(refused.stdout)")
    let message = reply["error"]?["message"]?.stringValue ?? ""
    #expect(message.contains("uid 65534 is refused") && message.contains("--allow-group"), "\(message)")
    // Logged with who it was, counted, and the daemon's own user is still served.
    #expect(daemon.log.contains("refused a connection from another user"), "\(daemon.log)")
    #expect(daemon.log.contains("uid=65534"), "\(daemon.log)")
    #expect((try daemon.status()["refusedConnections"] as? Int) == 1)
    #expect(try daemon.cuectl(["play", "pico", "--wait"]).status == 0)
  }

  @Test func membersOfTheAllowedGroupMayConnectAndNobodyElse() throws {
    let (daemon, dir) = try DaemonTests.start(["--allow-group", "4242"])
    defer { daemon.stop() }
    chmod(daemon.socket, 0o666)
    let supplementary = try Self.pingAsAnotherUser(daemon, dir: dir, groups: [4242])
    #expect(supplementary.status == 0, "\(supplementary.stdout) \(supplementary.stderr)")
    let primary = try Self.pingAsAnotherUser(daemon, dir: dir, gid: 4242)
    #expect(primary.status == 0, "\(primary.stdout) \(primary.stderr)")
    let outsider = try Self.pingAsAnotherUser(daemon, dir: dir, groups: [4243])
    #expect(outsider.status == 1)
    #expect(outsider.stdout.contains("access-denied"), "\(outsider.stdout)")
    #expect(outsider.stdout.contains("members of group 4242"), "\(outsider.stdout)")
  }

  @Test func anUnknownAllowedGroupStopsTheStartWithAUsageError() throws {
    let result = try run(Harness.cued, ["--allow-group", "no-such-group-here", "--no-config", "--device", "null"])
    #expect(result.status == 2)
    #expect(result.stderr.contains("--allow-group names no group on this system: no-such-group-here"), "\(result.stderr)")
  }

  /// The error a request gets, as "code: message".
  static func failure(_ client: ProtocolClient, _ op: String, _ fields: [(String, JSONValue)]) -> String {
    do {
      try client.request(op, fields)
      return "ok"
    } catch {
      return "\(error)"
    }
  }

  @Test func thePlayerAndSoundLimitsAreFlagsWithClearErrors() throws {
    let (daemon, _) = try DaemonTests.start(["--max-players", "2", "--max-sounds", "2"])
    defer { daemon.stop() }
    let client = try ProtocolClient(socket: daemon.socket)
    for _ in 0..<2 {
      try client.request("player.create", [("cue", "pico")])
      try client.request("sound.create", [("cue", "pico")])
    }
    let players = Self.failure(client, "player.create", [("cue", "pico")])
    #expect(players.contains("limit-reached") && players.contains("2 players (--max-players)"), "\(players)")
    let sounds = Self.failure(client, "sound.create", [("cue", "pico")])
    #expect(sounds.contains("limit-reached") && sounds.contains("2 system sounds (--max-sounds)"), "\(sounds)")
    // The limits are on what exists at once: destroying one makes room.
    try client.request("player.destroy", [("player", 1)])
    try client.request("player.create", [("cue", "pico")])
    #expect(try client.request("ping")["pong"] == true)
  }

  @Test func theClientLimitRefusesTheNextConnectionAndKeepsServingTheOthers() throws {
    let (daemon, _) = try DaemonTests.start(["--max-clients", "3"])
    defer { daemon.stop() }
    let held = try (0..<3).map { _ in try ProtocolClient(socket: daemon.socket) }
    for client in held { #expect(try client.request("ping")["pong"] == true) }
    let extra = try RawClient(socket: daemon.socket)
    let refusal = try extra.receive()
    #expect(refusal["error"]?["code"] == "limit-reached")
    #expect(refusal["error"]?["message"]?.stringValue?.contains("3 clients (--max-clients)") == true)
    #expect(try held[0].request("ping")["pong"] == true)
  }

  @Test func theCueAndMemoryLimitsSkipWhatDoesNotFitAndSaySo() throws {
    let (daemon, _) = try DaemonTests.start(
      ["--max-cues", "1"], sounds: ["a": "tone-48000-mono.mp3", "b": "tone-48000-mono.mp3"])
    defer { daemon.stop() }
    #expect((try daemon.status()["cues"] as? Int) == 1)
    #expect(daemon.log.contains("the cue limit (1) is reached; raise --max-cues"), "\(daemon.log)")

    // 40 copies of a file with no Info tag decode to about 4.8 s: 1.8 MiB, past a 1 MiB limit.
    let dir = Harness.temporaryDirectory()
    let sounds = try Harness.soundDirectory(in: dir, ["pico": "tone-48000-mono.mp3"])
    let frames = try Data(contentsOf: URL(fileURLWithPath: Harness.fixture("tone-44100-notag.mp3")))
    try Data((0..<40).flatMap { _ in frames }).write(to: URL(fileURLWithPath: sounds + "/long.mp3"))
    let small = try DaemonProcess(
      socket: dir + "/cued.sock", arguments: ["--sounds", sounds, "--device", "null", "--max-memory", "1"], logPath: dir + "/cued.log")
    defer { small.stop() }
    let status = try small.status()
    #expect(status["cues"] as? Int == 1)
    #expect((status["cueBytes"] as? Int ?? .max) <= 1 << 20)
    #expect(small.log.contains("long.mp3") && small.log.contains("the decoded-memory limit (1 MiB) is reached; raise --max-memory"), "\(small.log)")
  }

  @Test func thePerClientQueueIsAFlag() throws {
    let (daemon, _) = try DaemonTests.start(["--max-client-queue", "16", "--max-voices", "4"])
    defer { daemon.stop() }
    let stalled = try ProtocolClient(socket: daemon.socket)
    try stalled.request("subscribe")
    let busy = try ProtocolClient(socket: daemon.socket)
    // 16 KiB holds about a hundred events: a few hundred plays overflow it (1 MiB would take 25 batches).
    let (batches, _) = try SoundAndEventTests.playUntilEventsAreDropped(busy, batchSize: 200, maximumBatches: 50)
    #expect(batches <= 10, "a 16 KiB queue took \(batches) batches of 200 plays to overflow")
    #expect((try SoundAndEventTests.eventsDroppedNotice(stalled)?["count"]?.intValue ?? 0) > 0)
  }

  @Test func aThousandConnectionsAtOnceAreAllServed() throws {
    var limit = rlimit()
    getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    // This process needs a thousand descriptors too.
    if limit.rlim_cur < 1200 && limit.rlim_max >= 1200 {
      limit.rlim_cur = 1200
      setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }
    try #require(ResourceLimits.openFileLimit >= 1100, "the test needs 1,100 descriptors")
    let (daemon, _) = try DaemonTests.start()
    defer { daemon.stop() }
    var connections: [CuePosix.FileDescriptor] = []
    defer { for fd in connections { fd.close() } }
    for _ in 0..<1000 { connections.append(try UnixSocket.connect(path: daemon.socket)) }
    let ping = Array((#"{"id":7,"op":"ping"}"# + "\n").utf8)
    for fd in connections { try fd.writeAll(ping) }
    var answered = 0
    var buffer = [UInt8](repeating: 0, count: 4096)
    for fd in connections {
      var framer = LineFramer(maxLineBytes: 1 << 16)
      let deadline = Date().addingTimeInterval(10)
      reading: while Date() < deadline {
        if case .line(let bytes)? = framer.next() {
          if (try? JSONParser.parse(bytes))?["ok"] == true { answered += 1 }
          break reading
        }
        let ready = try Poll.wait([PollRequest(fd: fd, events: .readable)], timeoutMilliseconds: 100)
        if ready[0].isEmpty { continue }
        guard case .bytes(let n) = try buffer.withUnsafeMutableBytes({ try fd.read(into: $0) }) else { break }
        framer.append(buffer[0..<n])
      }
    }
    #expect(answered == 1000)
    #expect((try daemon.status()["clients"] as? Int) ?? 0 >= 1000)
    for fd in connections { fd.close() }
    connections.removeAll()
    #expect(try daemon.cuectl(["play", "pico", "--wait"]).status == 0)
  }

  @Test func outOfDescriptorsNewClientsAreToldWhyAndTheDaemonDoesNotSpin() throws {
    // prlimit caps the running daemon at 64 descriptors; the 65th client is refused, not left hanging.
    let (daemon, _) = try DaemonTests.start()
    defer { daemon.stop() }
    let capped = try run("/usr/bin/prlimit", ["--pid", String(daemon.pid), "--nofile=64:64"])
    try #require(capped.status == 0, "\(capped.stderr)")
    var connections: [CuePosix.FileDescriptor] = []
    defer { for fd in connections { fd.close() } }
    var refusal: JSONValue? = nil
    for _ in 0..<80 where refusal == nil {
      let fd = try UnixSocket.connect(path: daemon.socket)
      connections.append(fd)
      // A refused client may be told why and closed before its request is written (EPIPE): its
      // refusal is read all the same.
      _ = try? fd.writeAll(Array((#"{"id":1,"op":"ping"}"# + "\n").utf8))
      var framer = LineFramer(maxLineBytes: 1 << 16)
      var buffer = [UInt8](repeating: 0, count: 4096)
      let deadline = Date().addingTimeInterval(5)
      while Date() < deadline {
        if case .line(let bytes)? = framer.next() {
          let reply = try JSONParser.parse(bytes)
          if reply["ok"] == false { refusal = reply }
          break
        }
        let ready = try Poll.wait([PollRequest(fd: fd, events: .readable)], timeoutMilliseconds: 100)
        if ready[0].isEmpty { continue }
        guard case .bytes(let n) = try buffer.withUnsafeMutableBytes({ try fd.read(into: $0) }) else { break }
        framer.append(buffer[0..<n])
      }
    }
    let message = try #require(refusal?["error"]?["message"]?.stringValue)
    #expect(message.contains("out of file descriptors"), "\(message)")
    #expect(daemon.log.contains("out of file descriptors"), "\(daemon.log)")
    // Idle again once they go: no spinning on a listener it cannot accept from.
    for fd in connections { fd.close() }
    connections.removeAll()
    usleep(300_000)
    try Harness.expectIdle(daemon.pid, for: 1, allowance: 2)
    #expect(try daemon.cuectl(["ping"]).status == 0)
  }

}

@Suite("cued's command line")
struct DaemonCommandLineTests {
  @Test("usage errors exit 2 and name the option", arguments: [
    (["--bogus"], "unknown option '--bogus'"),
    (["--rate", "abc"], "--rate must be a whole number"),
    (["--max-voices=0"], "--max-voices must be a whole number from 1"),
    (["--sounds"], "--sounds needs a value"),
    (["--allow-any-path=yes"], "--allow-any-path takes no value"),
    (["--config", "/x", "--no-config"], "contradict"),
    (["stray"], "cued takes no arguments"),
  ])
  func usageErrors(_ arguments: [String], _ message: String) throws {
    let result = try run(Harness.cued, arguments)
    #expect(result.status == 2)
    #expect(result.stderr.contains(message), "\(result.stderr)")
    #expect(result.stderr.contains("cued --help"))
  }

  /// The options `cued --help` lists.
  static func helpFlags() throws -> [String] {
    let help = try run(Harness.cued, ["--help"])
    #expect(help.status == 0)
    return help.stdout.split(separator: "\n").compactMap { line in
      let trimmed = line.drop { $0 == " " }
      guard line.hasPrefix("  -"), let flag = trimmed.split(separator: " ").first else { return nil }
      return String(flag.hasSuffix(",") ? flag.dropLast() : flag)
    }
  }

  @Test func helpListsEveryConfigKeyAsAFlagAndTheManPageNamesEveryOption() throws {
    let flags = try Self.helpFlags()
    for key in ["sounds", "socket", "device", "max-client-queue", "allow-group", "allow-any-path", "log-level"] {
      #expect(flags.contains("--" + key), "--\(key) missing from cued --help")
    }
    // The page as `make install` stages it: packaging/man/cued.1 with the binary's options list.
    let made = try run(Harness.repositoryRoot + "/packaging/install.sh", ["man-page", Harness.cued])
    #expect(made.status == 0, "\(made.stderr)")
    let page = made.stdout
    for flag in flags {
      let mdoc = flag.hasPrefix("--") ? "Fl -" + flag.dropFirst(2) : "Fl " + flag.dropFirst()
      #expect(page.contains(".It " + mdoc), "cued's man page does not describe \(flag)")
    }
    let config = try String(contentsOfFile: Harness.repositoryRoot + "/docs/CONFIG.md", encoding: .utf8)
    for flag in flags where !["--config", "--no-config", "--check-config", "--version", "-h", "--help", "--generate-completion-script"].contains(flag) {
      // A switch that is on by default is turned off by `--no-KEY`: the document describes `KEY`.
      let key = flag.dropFirst(2)
      let described = config.contains("`\(key)`") || (key.hasPrefix("no-") && config.contains("`\(key.dropFirst(3))`"))
      #expect(described, "docs/CONFIG.md does not describe \(key)")
    }
  }

  @Test func completionScriptsOfferEveryOption() throws {
    let flags = try Self.helpFlags()
    for shell in ["bash", "zsh", "fish"] {
      let script = try run(Harness.cued, ["--generate-completion-script", shell])
      #expect(script.status == 0)
      for flag in flags where flag != "-h" {
        let offered = shell == "fish" ? script.stdout.contains("-l \(flag.dropFirst(2)) ") : script.stdout.contains(flag)
        #expect(offered, "\(shell) completion lacks \(flag)")
      }
    }
    let bash = try run("/bin/bash", ["-n", "-c", try run(Harness.cued, ["--generate-completion-script", "bash"]).stdout])
    #expect(bash.status == 0, "\(bash.stderr)")
    #expect(try run(Harness.cued, ["--generate-completion-script", "tcsh"]).status == 2)
  }
}
