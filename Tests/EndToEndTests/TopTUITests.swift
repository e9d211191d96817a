import CueProtocol
import DaemonTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `cuectl top` in a real terminal (tmux) against a real cued: what it shows, what its keys do,
/// and that it gives the terminal back.
@Suite("cuectl top, through a terminal", .serialized)
struct TopTUITests {
  /// cued on the silent sink with the shipped sounds (pico: a blip whose level moves as it loops).
  static func daemon(in dir: String) throws -> DaemonProcess {
    try DaemonProcess(
      socket: dir + "/cued.sock", arguments: ["--sounds", Harness.repositoryRoot + "/sounds", "--device", "null"],
      logPath: dir + "/cued.log")
  }

  /// `cuectl top` under a shell that marks the screen before, and after it says how it ended and
  /// whether the terminal is back in cooked mode with echo.
  static func command(socket: String, _ extra: String = "") -> String {
    let top = CarouselTUITests.quoted(Harness.cuectl) + " top --socket " + CarouselTUITests.quoted(socket) + extra
    return "echo BEFORE-TOP; " + top + "; echo EXIT=$?; stty -a | tr ' ;' '\\n\\n' | grep -x -e echo -e -echo -e icanon -e -icanon | tr '\\n' ' '; echo; sleep 60"
  }

  /// The line of `screen` that holds `text`.
  static func line(_ screen: String, containing text: String) -> String? {
    screen.split(separator: "\n").first { $0.contains(text) }.map(String.init)
  }

  /// The dB figure at the end of a voice's line (its peak meter).
  static func peak(of cue: String, _ screen: String) -> String? {
    guard let line = line(screen, containing: " \(cue) ") else { return nil }
    return line.split(separator: " ").dropLast().last.map(String.init)
  }

  @Test func aLoopingPlayersVoiceShowsAMovingMeterAndGoesWhenStopped() throws {
    let dir = Harness.temporaryDirectory()
    let daemon = try Self.daemon(in: dir)
    defer { daemon.stop() }
    let tmux = try TmuxSession(command: Self.command(socket: daemon.socket), in: dir, columns: 80, rows: 24)
    defer { tmux.kill() }
    try tmux.waitForScreen("the view") { $0.contains("device null") && $0.contains("nothing sounding") }
    let client = try ProtocolClient(socket: daemon.socket)
    let player = try #require(try client.request("player.create", [("cue", .string("pico")), ("numberOfLoops", .number(-1))])["player"]?.intValue)
    try client.request("player.play", [("player", .number(Double(player)))])
    let first = try tmux.waitForScreen("the player's voice with a level") {
      Self.line($0, containing: "player \(player)") != nil && Self.peak(of: "pico", $0).map { $0 != "-inf" } == true
    }
    #expect(Self.line(first, containing: "pico")?.contains("#") == true, "a looping voice counts its passes: \(first)")
    // The clients: the test's connection (no hello name: its number) and this view.
    #expect(Self.line(first, containing: "clients:").map { $0.contains("(this view)") && $0.contains("#") } == true, "\(first)")
    let before = Self.peak(of: "pico", first)
    try tmux.waitForScreen("the meter moving") { Self.peak(of: "pico", $0).map { $0 != before && $0 != "-inf" } == true }
    // The master meter shows the mix.
    #expect(Self.line(first, containing: "master")?.contains("peak -inf") == false)
    try client.request("player.stop", [("player", .number(Double(player)))])
    try tmux.waitForScreen("the voice gone") { $0.contains("nothing sounding") && !$0.contains("player \(player)") }
  }

  @Test func aPlayAtLevelSilentShowsWithItsReason() throws {
    let dir = Harness.temporaryDirectory()
    let daemon = try Self.daemon(in: dir)
    defer { daemon.stop() }
    let tmux = try TmuxSession(command: Self.command(socket: daemon.socket), in: dir, columns: 80, rows: 24)
    defer { tmux.kill() }
    try tmux.waitForScreen("the view at level full") { $0.contains("level full") }
    #expect(try daemon.cuectl(["level", "silent"]).status == 0)
    try tmux.waitForScreen("the level silent") { $0.contains("level silent") }
    #expect(try daemon.cuectl(["play", "tick"]).status == 0)
    let screen = try tmux.waitForScreen("tick, silent: level") { Self.line($0, containing: "tick")?.contains("silent: level") == true }
    #expect(screen.contains("silent plays since start: level 1"))
    // The level key cycles: silent, then full.
    try tmux.send("l")
    try tmux.waitForScreen("the level full again") { $0.contains("level full") }
    #expect(try daemon.cuectl(["level"]).stdout.contains("full"))
  }

  @Test func keysChangeAGroupsVolumeAndMuteAsCuectlGroupSees() throws {
    let dir = Harness.temporaryDirectory()
    let daemon = try Self.daemon(in: dir)
    defer { daemon.stop() }
    let tmux = try TmuxSession(command: Self.command(socket: daemon.socket), in: dir, columns: 80, rows: 24)
    defer { tmux.kill() }
    try tmux.waitForScreen("the default group selected") { Self.line($0, containing: "> default")?.contains("1.00") == true }
    try tmux.send("-")
    try tmux.send("-")
    try tmux.waitForScreen("the volume down two steps") { Self.line($0, containing: "> default")?.contains("0.90") == true }
    try tmux.send("m")
    try tmux.waitForScreen("the group muted") { Self.line($0, containing: "> default")?.contains("muted") == true }
    let groups = try daemon.cuectl(["group", "--json"]).stdout
    let reply = try JSONParser.parse(Array(groups.utf8))
    let group = try #require(reply["groups"]?.arrayValue?.first { $0["name"] == "default" })
    #expect(group["volume"] == .number(0.9))
    #expect(group["muted"] == .bool(true))
    // A click on the system group's line selects it; + then changes that one.
    let screen = try tmux.screen()
    let row = try #require(screen.split(separator: "\n", omittingEmptySubsequences: false).firstIndex { $0.contains("system") })
    try tmux.type("\u{1b}[<0;5;\(row + 1)M\u{1b}[<0;5;\(row + 1)m")
    try tmux.waitForScreen("system selected") { Self.line($0, containing: "> system") != nil }
  }

  @Test func resizingRedrawsAtTheNewSize() throws {
    let dir = Harness.temporaryDirectory()
    let daemon = try Self.daemon(in: dir)
    defer { daemon.stop() }
    let tmux = try TmuxSession(command: Self.command(socket: daemon.socket), in: dir, columns: 80, rows: 24)
    defer { tmux.kill() }
    let small = try tmux.waitForScreen("the view at 80 x 24") { $0.contains("q quit") }
    let smallLines = small.split(separator: "\n", omittingEmptySubsequences: false)
    #expect(smallLines.filter { $0.contains("q quit") }.count == 1)
    #expect(smallLines.allSatisfy { $0.count <= 80 })
    try tmux.resize(columns: 120, rows: 40)
    let large = try tmux.waitForScreen("the view redrawn at 120 x 40") { screen in
      let lines = screen.split(separator: "\n", omittingEmptySubsequences: false)
      return lines.count >= 40 && lines[39].contains("q quit")
    }
    // The master meter grows with the width? No: the voice meter takes the rest of a line; the
    // footer moved to the new last row, and nothing of the old frame is left above it.
    #expect(large.split(separator: "\n").filter { $0.contains("q quit") }.count == 1)
    #expect(large.split(separator: "\n").filter { $0.contains("GROUP") }.count == 1)
  }

  @Test func quittingAndSignalsRestoreTheTerminal() throws {
    let dir = Harness.temporaryDirectory()
    let daemon = try Self.daemon(in: dir)
    defer { daemon.stop() }
    for (how, status) in [("q", "EXIT=0"), ("SIGTERM", "EXIT=143")] {
      let tmux = try TmuxSession(command: Self.command(socket: daemon.socket), in: dir, columns: 80, rows: 24)
      defer { tmux.kill() }
      let view = try tmux.waitForScreen("the view") { $0.contains("q quit") }
      #expect(!view.contains("BEFORE-TOP"), "the view is on the alternate screen")
      if how == "q" {
        try tmux.send("q")
      } else {
        let top = try Self.topProcess(under: tmux)
        kill(top, SIGTERM)
      }
      let after = try tmux.waitForScreen("the shell after top (\(how))") { $0.contains("EXIT=") && $0.contains("echo") }
      #expect(after.contains(status), "\(how): \(after)")
      // The primary screen is back, as it was, with the terminal cooked and echoing.
      #expect(after.contains("BEFORE-TOP"))
      #expect(!after.contains("q quit"))
      #expect(after.contains("icanon") && !after.contains("-icanon") && !after.contains("-echo"), "\(how): \(after)")
    }
  }

  /// The pid of `cuectl top` in the session: the child of the pane's shell.
  static func topProcess(under tmux: TmuxSession) throws -> pid_t {
    let shell = try tmux.panePID()
    let children = try String(contentsOfFile: "/proc/\(shell)/task/\(shell)/children", encoding: .utf8)
    guard let pid = children.split(separator: " ").first.flatMap({ pid_t($0) }) else { throw HarnessError("no child of the pane's shell") }
    return pid
  }

  @Test func withoutCuedItSaysNotReachableAndConnectsWhenItComes() throws {
    let dir = Harness.temporaryDirectory()
    let socket = dir + "/cued.sock"
    let tmux = try TmuxSession(command: Self.command(socket: socket), in: dir, columns: 80, rows: 24)
    defer { tmux.kill() }
    try tmux.waitForScreen("not reachable") { $0.contains("cued is not reachable at") }
    let daemon = try Self.daemon(in: dir)
    defer { daemon.stop() }
    try tmux.waitForScreen("the view once cued is there", timeout: 10) { $0.contains("device null") }
    // And when it goes away again.
    daemon.stop()
    try tmux.waitForScreen("not reachable again") { $0.contains("cued is not reachable at") }
  }

  @Test func onceAndJsonPrintTheSnapshot() throws {
    let dir = Harness.temporaryDirectory()
    let daemon = try Self.daemon(in: dir)
    defer { daemon.stop() }
    let played = try daemon.cuectl(["play", "pico", "--loops", "-1", "--volume", "0.5", "--pan", "-1"])
    #expect(played.status == 0)
    let id = played.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    let frame = try daemon.cuectl(["top", "--once"])
    #expect(frame.status == 0, "\(frame.stderr)")
    #expect(frame.stdout.contains("device null (null) open"))
    #expect(frame.stdout.contains("level full"))
    // Its gain after the chain in dB and its pan: -6 dB (volume 0.5), hard left.
    #expect(Self.line(frame.stdout, containing: "pico")?.split(separator: " ").prefix(5).map(String.init) == [id, "pico", "play", "-6", "L1"], "\(frame.stdout)")
    #expect(Self.line(frame.stdout, containing: "default")?.contains("1.00") == true)
    #expect(!frame.stdout.contains("\u{1b}"), "plain text: no escape sequences")
    #expect(!frame.stdout.contains("q quit"), "no keys in a printed frame")
    let json = try daemon.cuectl(["top", "--once", "--json"])
    #expect(json.status == 0)
    let snapshot = try JSONParser.parse(Array(json.stdout.utf8))
    #expect(snapshot["reachable"] == .bool(true))
    #expect(snapshot["status"]?["device"]?["backend"] == .string("null"))
    #expect(snapshot["level"]?["level"] == .string("full"))
    let voice = try #require(snapshot["voices"]?.arrayValue?.first)
    #expect(voice["cue"] == .string("pico"))
    #expect(voice["origin"] == .string("play"))
    #expect(voice["group"] == .string("default"))
    #expect(voice["gain"] == .number(0.5))
    #expect(voice["pan"] == .number(-1))
    #expect((voice["peak"]?.doubleValue ?? 0) > 0)
    #expect((snapshot["mix"]?["peak"]?.doubleValue ?? 0) > 0)
    #expect(snapshot["groups"]?.arrayValue?.map { $0["name"] } == [.string("default"), .string("system")])
    #expect(snapshot["clients"]?.arrayValue?.filter { $0["asking"] == .bool(true) }.count == 1)
    // Nobody there: exit status 3, as every command.
    let absent = try run(Harness.cuectl, ["top", "--once", "--socket", dir + "/absent.sock"])
    #expect(absent.status == 3)
    #expect(absent.stderr.contains("cannot reach cued"))
  }
}

extension TopTUITests {
  @Test func aCarouselsPageEventsShow() throws {
    let dir = Harness.temporaryDirectory()
    let daemon = try Self.daemon(in: dir)
    defer { daemon.stop() }
    let tmux = try TmuxSession(command: Self.command(socket: daemon.socket), in: dir, columns: 80, rows: 24)
    defer { tmux.kill() }
    try tmux.waitForScreen("the view") { $0.contains("PAGING") }
    let carousel = try RawClient(socket: daemon.socket)
    try carousel.send(#"{"carousel":"demo","event":"page-changed","from":0,"to":1,"count":5}"# + "\n")
    // The decision in the paging column, the cue it played among the last plays.
    let screen = try tmux.waitForScreen("the page change and its sound") { $0.contains("demo page-changed 0>1") && $0.contains("page-next") }
    #expect(Self.line(screen, containing: "demo page-changed")?.hasSuffix("played") == true, "\(screen)")
    #expect(screen.split(separator: "\n").contains { $0.contains("page-next") && $0.contains("played") }, "\(screen)")
  }
}

extension TopTUITests {
  @Test func coloursUnlessNO_COLORSaysNot() throws {
    let dir = Harness.temporaryDirectory()
    let daemon = try Self.daemon(in: dir)
    defer { daemon.stop() }
    for noColour in [false, true] {
      // (swift test runs the tests with NO_COLOR=1 in their environment.)
      let prefix = noColour ? "export NO_COLOR=1; " : "unset NO_COLOR; "
      let tmux = try TmuxSession(command: prefix + Self.command(socket: daemon.socket), in: dir, columns: 80, rows: 24)
      defer { tmux.kill() }
      try tmux.waitForScreen("the view") { $0.contains("level full") }
      let attributed = try tmux.screenWithAttributes()
      // The level's name is green, the volume bars too; under NO_COLOR nothing has a colour.
      let coloured = attributed.contains("\u{1b}[32m") || attributed.contains("\u{1b}[1m\u{1b}[32m") || attributed.contains(";32m")
      #expect(coloured == !noColour, "NO_COLOR=\(noColour): \(attributed.debugDescription.prefix(600))")
    }
  }
}
