import CueProtocol
import Foundation
import Testing

@testable import cued_carousel

#if canImport(Glibc)
import Glibc
#endif

/// A tmux server of its own, running one full-screen program in a session of a fixed size.
///
/// Keys go in with `send-keys`, the screen comes out with `capture-pane -p` (text only, no
/// colours). The server is private to the test (`-L`, no config file, its socket in the test's
/// directory rather than /tmp/tmux-UID, where tmux would leave it behind), and `kill()` ends it.
private final class TmuxSession {
  static let tmux = "/usr/bin/tmux"
  let server: String
  let session = "carousel"
  private let environment: [String: String]

  /// Starts `command` (run by the shell) in a detached session of `columns` × `rows`; tmux's
  /// socket goes under `directory`.
  init(command: String, in directory: String, columns: Int = 120, rows: Int = 30) throws {
    guard FileManager.default.isExecutableFile(atPath: Self.tmux) else {
      throw HarnessError("tmux is not installed (scripts/install-deps.sh installs it)")
    }
    server = "carousel-\(UUID().uuidString.prefix(8))"
    environment = ["TMUX_TMPDIR": directory, "TMUX": ""]
    try tmux(["new-session", "-d", "-s", session, "-x", String(columns), "-y", String(rows), command])
  }

  private func run(_ arguments: [String]) throws -> CommandResult {
    try EndToEndTests.run(Self.tmux, ["-u", "-f", "/dev/null", "-L", server] + arguments, environment: environment, timeout: 10)
  }

  @discardableResult
  private func tmux(_ arguments: [String]) throws -> CommandResult {
    let result = try run(arguments)
    guard result.status == 0 else {
      throw HarnessError("tmux \(arguments.joined(separator: " ")) failed (\(result.status)): \(result.stderr)")
    }
    return result
  }

  /// Presses keys, in tmux's names (`Right`, `Left`, `q`, `C-c`).
  func send(_ keys: String...) throws { try tmux(["send-keys", "-t", session] + keys) }

  /// Types bytes as they are (escape sequences a terminal would send, e.g. a mouse report).
  func type(_ text: String) throws { try tmux(["send-keys", "-t", session, "-l", text]) }

  /// The screen's text now.
  func screen() throws -> String { try tmux(["capture-pane", "-p", "-t", session]).stdout }

  /// Waits until the screen satisfies `condition` (checked every 50 ms); returns that screen.
  @discardableResult
  func waitForScreen(_ what: String, timeout: Double = 5, _ condition: (String) -> Bool) throws -> String {
    let deadline = Date().addingTimeInterval(timeout)
    var last = ""
    while Date() < deadline {
      last = try screen()
      if condition(last) { return last }
      usleep(50_000)
    }
    throw HarnessError("the screen never showed \(what) within \(timeout) s; it shows:\n\(last)")
  }

  /// Whether the session still runs (its program has not exited).
  var isRunning: Bool { (try? run(["has-session", "-t", session]).status) == 0 }

  /// Waits for the session to end by itself; true if it did within `timeout`.
  func waitForEnd(timeout: Double = 5) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
      if !isRunning { return true }
      usleep(50_000)
    }
    return false
  }

  /// Ends the server and whatever still runs in it.
  func kill() {
    _ = try? run(["kill-server"])
  }
}

/// The demo carousel, `cued-carousel`, driven through tmux as a user would, with a real cued.
@Suite("The demo terminal carousel", .serialized)
struct CarouselTUITests {
  static var carousel: String { Harness.productsDirectory + "/cued-carousel" }

  /// `text` quoted for the shell.
  static func quoted(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: #"'\''"#) + "'" }

  /// The carousel's command line, on 5 pages without auto-advance, quoted for the shell.
  static func carouselCommand(socket: String) -> String {
    ([carousel, "--socket", socket, "--pages", "5", "--auto", "0"]).map(quoted).joined(separator: " ")
  }

  /// The shell command tmux runs: the carousel, then its exit status written to `statusPath`.
  static func command(socket: String, statusPath: String) -> String {
    carouselCommand(socket: socket) + "; echo $? > " + quoted(statusPath)
  }

  /// The exit status the shell wrote after the carousel ended.
  static func exitStatus(_ path: String) throws -> String {
    try String(contentsOfFile: path, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
  }

  /// The header names the page in the middle, and the middle card says it too.
  static func shows(page: Int, of count: Int, _ screen: String) -> Bool {
    screen.contains("page \(page) of \(count)") && screen.contains("page \(page)/\(count)")
  }

  /// The status line (the screen's last but one line).
  static func statusLine(_ screen: String) -> String {
    let lines = screen.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    let trimmed = lines.last == "" ? Array(lines.dropLast()) : lines
    return trimmed.count >= 2 ? trimmed[trimmed.count - 2] : ""
  }

  @Test func pagingThroughTheCarouselPlaysTheBoundCuesAndQuitExits0() throws {
    let dir = Harness.temporaryDirectory()
    let sounds = try Harness.soundDirectory(
      in: dir,
      [
        "page-next": "tone-48000-mono.mp3", "page-prev": "tone-22050-mono.mp3", "wrap": "tone-44100-stereo.mp3",
        "tick": "tone-8000-mono.mp3",
      ])
    let daemon = try DaemonProcess(
      socket: dir + "/cued.sock", arguments: ["--sounds", sounds, "--device", "null"], logPath: dir + "/cued.log")
    defer { daemon.stop() }
    let subscriber = try ProtocolClient(socket: daemon.socket)
    try subscriber.request("subscribe", [("kinds", .array([.string("paging")]))])

    let statusPath = dir + "/carousel.status"
    let tmux = try TmuxSession(command: Self.command(socket: daemon.socket, statusPath: statusPath), in: dir)
    defer { tmux.kill() }
    // "cued is listening": the carousel is connected and subscribed to cued's answers.
    try tmux.waitForScreen("page 1 and a connection to cued") {
      Self.shows(page: 1, of: 5, $0) && $0.contains("cued is listening")
    }

    // Right: page 2, and cued played page-next for the page change (indexes from 0 on the wire).
    try tmux.send("Right")
    let forward = try subscriber.waitForEvent("paging") { $0["message"] == "page-changed" }
    #expect(forward["carousel"] == "demo")
    #expect(forward["decision"] == "played", "\(JSONWriter.write(forward))")
    #expect(forward["cue"] == "page-next")
    #expect(forward["from"] == 0 && forward["to"] == 1)
    let second = try tmux.waitForScreen("page 2 with cued's answer") {
      Self.shows(page: 2, of: 5, $0) && Self.statusLine($0).contains("played page-next")
    }
    #expect(Self.statusLine(second).contains("(key)"))

    // Left twice: 2 → 1, then 1 → 5, a wrap, which plays the wrap cue.
    try tmux.send("Left")
    try tmux.waitForScreen("page 1") { Self.shows(page: 1, of: 5, $0) && Self.statusLine($0).contains("played page-prev") }
    let backward = try subscriber.waitForEvent("paging") { $0["message"] == "page-changed" && $0["to"] == 0 }
    #expect(backward["decision"] == "played" && backward["cue"] == "page-prev", "\(JSONWriter.write(backward))")
    subscriber.events.removeAll()
    try tmux.send("Left")
    let wrapped = try tmux.waitForScreen("page 5 after the wrap") {
      Self.shows(page: 5, of: 5, $0) && Self.statusLine($0).contains("played wrap")
    }
    #expect(Self.statusLine(wrapped).contains("wrapped"))
    let wrap = try subscriber.waitForEvent("paging") { $0["decision"] == "played" && $0["cue"] == "wrap" }
    #expect(wrap["carousel"] == "demo")
    // The carousel sent `wrapped` after its `page-changed`, and cued answered that too.
    _ = try subscriber.waitForEvent("paging") { $0["message"] == "wrapped" && $0["from"] == 0 && $0["to"] == 4 }

    // q quits: the program exits 0 and the tmux session ends with it.
    try tmux.send("q")
    #expect(tmux.waitForEnd(), "the carousel is still running after q")
    #expect(try Self.exitStatus(statusPath) == "0")
  }

  @Test func withoutCuedTheCarouselSaysSoAndStillPages() throws {
    let dir = Harness.temporaryDirectory()
    let statusPath = dir + "/carousel.status"
    let tmux = try TmuxSession(command: Self.command(socket: dir + "/absent.sock", statusPath: statusPath), in: dir)
    defer { tmux.kill() }
    try tmux.waitForScreen("the notice that cued is not running") {
      Self.shows(page: 1, of: 5, $0) && Self.statusLine($0).contains("cued is not running")
    }
    try tmux.send("Right")
    let screen = try tmux.waitForScreen("page 2") { Self.shows(page: 2, of: 5, $0) }
    #expect(Self.statusLine(screen).contains("cued is not running (silent)"))
    // The wheel pages too (an SGR report of wheel-down, as a terminal sends it).
    try tmux.type("\u{1b}[<65;60;15M")
    try tmux.waitForScreen("page 3 after a wheel notch") { Self.shows(page: 3, of: 5, $0) }
    // Ctrl-C quits as q does (raw mode: it arrives as a byte, not as SIGINT).
    try tmux.send("C-c")
    #expect(tmux.waitForEnd(), "the carousel is still running after Ctrl-C")
    #expect(try Self.exitStatus(statusPath) == "0")
  }

  @Test func whenCuedComesLaterTheCarouselConnectsAndSoundResumes() throws {
    let dir = Harness.temporaryDirectory()
    let socket = dir + "/cued.sock"
    let tmux = try TmuxSession(command: Self.command(socket: socket, statusPath: dir + "/carousel.status"), in: dir)
    defer { tmux.kill() }
    try tmux.waitForScreen("the notice that cued is not running") { Self.statusLine($0).contains("cued is not running") }
    try tmux.send("Right")
    try tmux.waitForScreen("page 2") { Self.shows(page: 2, of: 5, $0) }
    // Past the slide and its scroll-animation-ended: nothing is left to send, so the carousel finds
    // cued by trying again (every 2 s), not because one of its messages got through.
    usleep(500_000)

    let sounds = try Harness.soundDirectory(in: dir, ["page-next": "tone-48000-mono.mp3"])
    let daemon = try DaemonProcess(socket: socket, arguments: ["--sounds", sounds, "--device", "null"], logPath: dir + "/cued.log")
    defer { daemon.stop() }
    let subscriber = try ProtocolClient(socket: daemon.socket)
    try subscriber.request("subscribe", [("kinds", .array([.string("paging")]))])
    // It says so once it is subscribed to cued's answers ("cued: no answer yet": to the page turn before).
    try tmux.waitForScreen("that cued is there", timeout: 8) { Self.statusLine($0).contains("cued: no answer yet") }
    try tmux.send("Right")
    let event = try subscriber.waitForEvent("paging") { $0["message"] == "page-changed" }
    #expect(event["decision"] == "played" && event["cue"] == "page-next", "\(JSONWriter.write(event))")
    try tmux.waitForScreen("page 3 with cued's answer") {
      Self.shows(page: 3, of: 5, $0) && Self.statusLine($0).contains("played page-next")
    }
    try tmux.send("q")
    #expect(tmux.waitForEnd())
  }

  @Test func sigtermRestoresTheTerminalAndExits0() throws {
    let dir = Harness.temporaryDirectory()
    let pidPath = dir + "/carousel.pid"
    let statusPath = dir + "/carousel.status"
    // The shell records the terminal's settings before and after; `exec` keeps the pid it wrote.
    let script = [
      "stty -g > \(Self.quoted(dir + "/stty.before"))",
      "sh -c 'echo $$ > \(pidPath); exec \"$@\"' sh \(Self.carouselCommand(socket: dir + "/absent.sock"))",
      "echo $? > \(Self.quoted(statusPath))",
      "stty -g > \(Self.quoted(dir + "/stty.after"))",
    ].joined(separator: "; ")
    let tmux = try TmuxSession(command: script, in: dir)
    defer { tmux.kill() }
    try tmux.waitForScreen("the carousel") { Self.shows(page: 1, of: 5, $0) }
    let pid = try #require(Int32(String(contentsOfFile: pidPath, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
    Glibc.kill(pid, SIGTERM)
    #expect(tmux.waitForEnd(), "the carousel is still running after SIGTERM")
    #expect(try Self.exitStatus(statusPath) == "0")
    let before = try String(contentsOfFile: dir + "/stty.before", encoding: .utf8)
    let after = try String(contentsOfFile: dir + "/stty.after", encoding: .utf8)
    #expect(before == after, "raw mode was not undone")
  }
}

extension CarouselTUITests {
  /// The carousel's pure parts, without a terminal: the five-view model, auto-advance, key
  /// decoding, the status line and the layout.
  @Suite("The carousel's page logic")
  struct Model {
    typealias Event = CarouselMessage.Event

    /// Runs a carousel's slide to its end; returns what that sent.
    static func settle(_ carousel: inout Carousel, at now: Double) -> [Event] {
      carousel.tick(at: now + Carousel.slideSeconds)
    }

    @Test func theFiveViewsSurroundThePageModuloTheCount() {
      #expect(Carousel.window(around: 0, pageCount: 5) == [3, 4, 0, 1, 2])
      #expect(Carousel.window(around: 4, pageCount: 5) == [2, 3, 4, 0, 1])
      #expect(Carousel.window(around: 1, pageCount: 7) == [6, 0, 1, 2, 3])
      #expect(Carousel.window(around: 0, pageCount: 2) == [0, 1, 0, 1, 0])
      #expect(Carousel.window(around: 0, pageCount: 1) == [0, 0, 0, 0, 0])
    }

    @Test func aKeySlidesToTheNeighbourThenRecentres() {
      var carousel = Carousel(pageCount: 5, autoSeconds: 0, now: 0)
      #expect(carousel.perform(.key(.next), at: 1) == [.pageChanged(from: 0, to: 1, count: 5, reason: .key)])
      // During the slide the views stay; the viewport moves towards the right-hand neighbour.
      #expect(carousel.page == 1 && carousel.current == 0 && carousel.views == [3, 4, 0, 1, 2])
      #expect(carousel.tick(at: 1.06) == [])
      let halfway = carousel.viewportOffset(at: 1.06)
      #expect(halfway > 0 && halfway < 1)
      // At its end: scroll-animation-ended (a programmatic scroll), and the current page is the middle view again.
      #expect(carousel.tick(at: 1.12) == [.scrollAnimationEnded])
      #expect(carousel.current == 1 && carousel.views == [4, 0, 1, 2, 3] && carousel.slide == nil)
      #expect(carousel.viewportOffset(at: 1.2) == 0)
    }

    @Test func slidesAreDrawnInSixFrames() {
      var carousel = Carousel(pageCount: 5, autoSeconds: 0, now: 0)
      _ = carousel.perform(.key(.previous), at: 10)
      var frames: [Double] = []
      var now = 10.0
      while let next = carousel.nextDeadline(after: now), carousel.slide != nil, frames.count < 100 {
        frames.append(next)
        now = next
        _ = carousel.tick(at: now)
      }
      #expect(frames.count == 6)
      #expect(abs(frames.last! - 10.12) < 1e-9)
      #expect(carousel.current == 4)
    }

    @Test func goingRoundEitherEndWrapsAfterThePageChange() {
      var carousel = Carousel(pageCount: 5, autoSeconds: 0, now: 0)
      #expect(
        carousel.perform(.key(.previous), at: 0)
          == [.pageChanged(from: 0, to: 4, count: 5, reason: .key), .wrapped(from: 0, to: 4, count: 5)])
      _ = Self.settle(&carousel, at: 0)
      #expect(
        carousel.perform(.key(.next), at: 1)
          == [.pageChanged(from: 4, to: 0, count: 5, reason: .key), .wrapped(from: 4, to: 0, count: 5)])
      _ = Self.settle(&carousel, at: 1)
      #expect(carousel.perform(.key(.next), at: 2) == [.pageChanged(from: 0, to: 1, count: 5, reason: .key)])
    }

    @Test func twoPagesWrapEveryOtherStep() {
      var carousel = Carousel(pageCount: 2, autoSeconds: 0, now: 0)
      #expect(carousel.perform(.key(.next), at: 0) == [.pageChanged(from: 0, to: 1, count: 2, reason: .key)])
      _ = Self.settle(&carousel, at: 0)
      #expect(carousel.perform(.key(.next), at: 1).contains(.wrapped(from: 1, to: 0, count: 2)))
    }

    @Test func theWheelIsADragThatStopsDead() {
      var carousel = Carousel(pageCount: 5, autoSeconds: 0, now: 0)
      #expect(
        carousel.perform(.wheel(.next), at: 0)
          == [.dragBegan, .pageChanged(from: 0, to: 1, count: 5, reason: .drag), .dragEnded(decelerate: false)])
      // Not a programmatic scroll: no scroll-animation-ended.
      #expect(Self.settle(&carousel, at: 0) == [])
      #expect(
        carousel.perform(.wheel(.previous), at: 1) == [
          .dragBegan, .pageChanged(from: 1, to: 0, count: 5, reason: .drag), .dragEnded(decelerate: false),
        ])
      _ = Self.settle(&carousel, at: 1)
      #expect(
        carousel.perform(.wheel(.previous), at: 2) == [
          .dragBegan, .pageChanged(from: 0, to: 4, count: 5, reason: .drag), .wrapped(from: 0, to: 4, count: 5),
          .dragEnded(decelerate: false),
        ])
    }

    @Test func aMoveDuringASlideFinishesThatSlideFirst() {
      var carousel = Carousel(pageCount: 5, autoSeconds: 0, now: 0)
      _ = carousel.perform(.key(.next), at: 0)
      #expect(
        carousel.perform(.key(.next), at: 0.05)
          == [.scrollAnimationEnded, .pageChanged(from: 1, to: 2, count: 5, reason: .key)])
      #expect(carousel.current == 1 && carousel.page == 2)
    }

    @Test("paging round and round keeps five views and lands on the right page", arguments: [1, 2, 3, 7])
    func pagingRoundAndRound(pageCount: Int) {
      var carousel = Carousel(pageCount: pageCount, autoSeconds: 0, now: 0)
      var now = 0.0
      for _ in 0..<23 {
        _ = carousel.perform(.key(.next), at: now)
        now += 1
        _ = carousel.tick(at: now)
      }
      #expect(carousel.current == 23 % pageCount)
      for _ in 0..<30 {
        _ = carousel.perform(.wheel(.previous), at: now)
        now += 1
        _ = carousel.tick(at: now)
      }
      #expect(carousel.current == Carousel.wrap(23 - 30, pageCount))
      #expect(carousel.views == Carousel.window(around: carousel.current, pageCount: pageCount))
    }

    @Test func aSinglePageGoesNowhereAndSendsNothing() {
      var carousel = Carousel(pageCount: 1, autoSeconds: 1, now: 0)
      #expect(carousel.perform(.key(.next), at: 0) == [])
      #expect(carousel.tick(at: 100) == [])
      #expect(carousel.page == 0 && carousel.slide == nil)
    }

    @Test func autoAdvanceTurnsEveryIntervalAndResumesThreeSecondsAfterAnInteraction() {
      var carousel = Carousel(pageCount: 3, autoSeconds: 4, now: 0)
      #expect(carousel.nextDeadline(after: 0) == 4)
      #expect(carousel.tick(at: 3.9) == [])
      #expect(carousel.tick(at: 4) == [.pageChanged(from: 0, to: 1, count: 3, reason: .auto)])
      #expect(carousel.tick(at: 4.2) == [.scrollAnimationEnded])
      #expect(carousel.nextDeadline(after: 4.2) == 8)
      // A key at 5 pauses it; it resumes at 8 (AUTO_SCROLL_DELAY) and turns an interval later.
      _ = carousel.perform(.key(.next), at: 5)
      #expect(carousel.autoAdvance.isPaused(at: 7.9))
      #expect(!carousel.autoAdvance.isPaused(at: 8))
      #expect(carousel.tick(at: 5.2) == [.scrollAnimationEnded])
      #expect(carousel.tick(at: 11.9) == [])
      #expect(
        carousel.tick(at: 12) == [.pageChanged(from: 2, to: 0, count: 3, reason: .auto), .wrapped(from: 2, to: 0, count: 3)])
    }

    @Test func autoAdvanceWaitsForASlideToEnd() {
      var carousel = Carousel(pageCount: 3, autoSeconds: 0.1, now: 0)
      #expect(carousel.tick(at: 0.1).count == 1)
      // Due again at 0.2, but the slide started at 0.1 runs until 0.22: the slide ends first.
      #expect(carousel.tick(at: 0.2) == [])
      #expect(carousel.tick(at: 0.25) == [.scrollAnimationEnded, .pageChanged(from: 1, to: 2, count: 3, reason: .auto)])
    }

    @Test func autoZeroNeverTurns() {
      var carousel = Carousel(pageCount: 3, autoSeconds: 0, now: 0)
      #expect(carousel.nextDeadline(after: 0) == nil)
      #expect(carousel.tick(at: 1_000) == [])
      #expect(!carousel.autoAdvance.isEnabled)
    }

    // MARK: Keys

    @Test(
      "keys and mouse reports",
      arguments: [
        ("\u{1b}[C", [InputDecoder.Input.next]), ("\u{1b}[D", [.previous]), ("\u{1b}OC", [.next]), ("\u{1b}OD", [.previous]),
        ("\u{1b}[1;5C", [.next]), ("hl", [.previous, .next]), ("q", [.quit]), ("\u{03}", [.quit]),
        ("\u{1b}[<64;10;5M", [.wheelPrevious]), ("\u{1b}[<65;10;5M", [.wheelNext]), ("\u{1b}[<65;10;5m", []),
        ("\u{1b}[<0;10;5M", []), ("\u{1b}[M`!!", [.wheelPrevious]), ("\u{1b}[Ma!!", [.wheelNext]),
        ("\u{1b}[A\u{1b}[Bx", []), ("\u{1b}\u{1b}[C", [.next]), ("\u{1b}q", [.quit]),
      ])
    func keys(_ text: String, _ expected: [InputDecoder.Input]) {
      var decoder = InputDecoder()
      #expect(decoder.feed(Array(text.utf8)) == expected)
    }

    @Test func aSequenceSplitAcrossReadsIsKeptUntilItsEnd() {
      var decoder = InputDecoder()
      #expect(decoder.feed(Array("\u{1b}".utf8)) == [])
      #expect(decoder.feed(Array("[".utf8)) == [])
      #expect(decoder.feed(Array("C\u{1b}[<6".utf8)) == [.next])
      #expect(decoder.feed(Array("5;1;1M".utf8)) == [.wheelNext])
    }

    // MARK: Status line

    @Test func theStatusLineKeepsTheMostTellingAnswerToAPageTurn() {
      var status = StatusLine()
      #expect(status.text == "no page turned yet · looking for cued…")
      status.connection = .connected
      #expect(status.text == "no page turned yet · cued is listening")
      status.sent([.pageChanged(from: 2, to: 3, count: 5, reason: .key)])
      #expect(status.text == "sent page-changed 3→4 (key) · cued: no answer yet")
      status.received(PagingAnswer(message: "page-changed", decision: "played", cue: "page-next"))
      status.sent([.scrollAnimationEnded])
      status.received(PagingAnswer(message: "scroll-animation-ended", decision: "unbound", cue: nil))
      #expect(status.text == "sent page-changed 3→4 (key) · cued: played page-next")
      // A wrap: the page change plays the wrap cue, the wrapped message is merged into it.
      status.sent([.pageChanged(from: 4, to: 0, count: 5, reason: .auto), .wrapped(from: 4, to: 0, count: 5)])
      status.received(PagingAnswer(message: "page-changed", decision: "played", cue: "wrap"))
      status.received(PagingAnswer(message: "wrapped", decision: "merged", cue: "wrap"))
      #expect(status.text == "sent page-changed 5→1 (auto) + wrapped · cued: played wrap")
      status.sent([.pageChanged(from: 0, to: 1, count: 5, reason: .key)])
      status.received(PagingAnswer(message: "page-changed", decision: "too-soon", cue: "page-next"))
      #expect(status.text == "sent page-changed 1→2 (key) · cued: too-soon page-next")
      status.connection = .notRunning
      #expect(status.text == "sent page-changed 1→2 (key) · cued is not running (silent)")
    }

    @Test func aPagingEventCountsOnlyForItsOwnCarousel() throws {
      let body = try JSONParser.parse(
        Array(#"{"event":"paging","carousel":"demo","message":"page-changed","decision":"played","cue":"page-next","voice":12}"#.utf8))
      #expect(PagingAnswer(event: body, carousel: "demo") == PagingAnswer(message: "page-changed", decision: "played", cue: "page-next"))
      #expect(PagingAnswer(event: body, carousel: "photos") == nil)
    }

    // MARK: Layout

    @Test func theCurrentPageIsCentredWithItsNeighboursPartlyVisible() throws {
      let carousel = Carousel(pageCount: 7, start: 2, autoSeconds: 4, now: 0)
      var status = StatusLine()
      status.connection = .notRunning
      let frame = CarouselScreen(name: "demo").render(carousel, status: status, columns: 120, rows: 30, now: 0)
      #expect(frame.text(row: 0).hasPrefix(" cued-carousel · demo"))
      #expect(frame.text(row: 0).hasSuffix("page 3 of 7 "))
      let rows = (0..<30).map { frame.text(row: $0) }
      let label = try #require(rows.firstIndex { $0.contains("page 3/7") })
      let column = try #require(rows[label].range(of: "page 3/7")).lowerBound
      #expect(rows[label].distance(from: rows[label].startIndex, to: column) == 56)  // centred: (120 − 8) / 2
      #expect(rows[label - 2].contains("██████"))  // the big 3's last row
      // Only the middle card's label is on screen; the neighbours show their colour.
      #expect(rows.filter { $0.contains("/7") }.count == 1)
      #expect(rows[28] == " no page turned yet · cued is not running (silent)".padding(toLength: 120, withPad: " ", startingAt: 0))
      #expect(rows[29].hasPrefix(" ←/→ page · wheel pages · q quit · auto every 4 s"))
    }

    @Test func aTinyScreenSaysItIsTooSmall() {
      let frame = CarouselScreen(name: "demo").render(
        Carousel(pageCount: 3, autoSeconds: 0, now: 0), status: StatusLine(), columns: 10, rows: 3, now: 0)
      #expect(frame.text(row: 0).hasPrefix("too small"))
    }
  }
}
