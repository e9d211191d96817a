import CueProtocol
import DaemonTestSupport
import Foundation
import Testing

@testable import CarouselProgram

#if canImport(Glibc)
import Glibc
#endif

/// A tmux server of its own, running one full-screen program in a session of a fixed size.
///
/// Keys go in with `send-keys`, the screen comes out with `capture-pane -p` (text only, no
/// colours). The server is private to the test (`-L`, no config file, its socket in the test's
/// directory rather than /tmp/tmux-UID, where tmux would leave it behind), and `kill()` ends it.
final class TmuxSession {
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
    try DaemonTestSupport.run(Self.tmux, ["-u", "-f", "/dev/null", "-L", server] + arguments, environment: environment, timeout: 10)
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

  /// Makes the window `columns` × `rows` (the program gets SIGWINCH).
  func resize(columns: Int, rows: Int) throws {
    try tmux(["resize-window", "-t", session, "-x", String(columns), "-y", String(rows)])
  }

  /// The screen's text now.
  func screen() throws -> String { try tmux(["capture-pane", "-p", "-t", session]).stdout }

  /// The screen now with its attributes and colours as escape sequences (`capture-pane -e`).
  func screenWithAttributes() throws -> String { try tmux(["capture-pane", "-p", "-e", "-t", session]).stdout }

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

  /// The pid of the pane's first process (the shell that runs the command).
  func panePID() throws -> Int32 {
    guard let pid = Int32(try tmux(["display-message", "-p", "-t", session, "#{pane_pid}"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines))
    else { throw HarnessError("tmux did not say the pane's pid") }
    return pid
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

  /// The carousel's command line, on 5 pages without auto-advance (unless `extra` says otherwise), quoted for the shell.
  static func carouselCommand(socket: String, _ extra: [String] = []) -> String {
    ([carousel, "--socket", socket, "--pages", "5", "--auto", "0"] + extra).map(quoted).joined(separator: " ")
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

  // MARK: - Dragging with the mouse

  /// The screen is 120 columns wide: cards of 72 columns, 74 from one to the next, the middle
  /// card's label at column 56 (counted from 0).
  static let cardStride = 74

  /// An SGR mouse report: the left button pressed (`M`, button 0), moved while held (32), released (`m`).
  static func press(_ column: Int) -> String { "\u{1b}[<0;\(column);15M" }
  static func motion(_ column: Int) -> String { "\u{1b}[<32;\(column);15M" }
  static func release(_ column: Int) -> String { "\u{1b}[<0;\(column);15m" }

  /// The column (from 0) where `text` starts on the first screen line that has it.
  static func column(of text: String, in screen: String) -> Int? {
    for line in screen.split(separator: "\n") {
      if let range = line.range(of: text) { return line.unicodeScalars.distance(from: line.unicodeScalars.startIndex, to: range.lowerBound) }
    }
    return nil
  }

  /// A daemon on the null sink with the test cues bound by default, a subscriber to its `paging`
  /// events (and `kinds` more), and the carousel in tmux with `extra` options.
  fileprivate static func rig(
    _ extra: [String], in dir: String, startPage: Int = 1, kinds: [String] = []
  ) throws -> (DaemonProcess, ProtocolClient, TmuxSession) {
    let sounds = try Harness.soundDirectory(
      in: dir, ["page-next": "tone-48000-mono.mp3", "page-prev": "tone-22050-mono.mp3", "wrap": "tone-44100-stereo.mp3", "tick": "tone-8000-mono.mp3"])
    let daemon = try DaemonProcess(socket: dir + "/cued.sock", arguments: ["--sounds", sounds, "--device", "null"], logPath: dir + "/cued.log")
    let subscriber = try ProtocolClient(socket: daemon.socket)
    try subscriber.request("subscribe", [("kinds", .array((["paging"] + kinds).map { .string($0) }))])
    let tmux = try TmuxSession(command: carouselCommand(socket: daemon.socket, extra), in: dir)
    try tmux.waitForScreen("page \(startPage), connected to cued") { $0.contains("page \(startPage) of") && $0.contains("cued is listening") }
    return (daemon, subscriber, tmux)
  }

  /// The `paging` events cued sent for carousel `demo`, up to and with the `settled` that ends a scroll.
  static func lifecycle(_ subscriber: ProtocolClient, timeout: Double = 5) throws -> [JSONValue] {
    var seen: [JSONValue] = []
    while true {
      let event = try subscriber.waitForEvent("paging", timeout: timeout) { $0["carousel"] == "demo" }
      seen.append(event)
      if event["message"] == "settled" { return seen }
    }
  }

  static func names(_ events: [JSONValue]) -> [String] { events.compactMap { $0["message"]?.stringValue } }

  @Test func aSlowDragMovesTheCardsWithThePointerAndStopsDeadOnTheNextPage() throws {
    let dir = Harness.temporaryDirectory()
    let (daemon, subscriber, tmux) = try Self.rig([], in: dir)
    defer {
      tmux.kill()
      daemon.stop()
    }
    let rest = try #require(Self.column(of: "page 1/5", in: try tmux.screen()))
    #expect(rest == 56)
    // Press at column 100 and drag left slowly, 6 columns at a time, 30 columns: the card follows.
    try tmux.type(Self.press(100))
    for column in stride(from: 94, through: 70, by: -6) {
      try tmux.type(Self.motion(column))
      usleep(40_000)
    }
    let following = try tmux.waitForScreen("the card 30 columns to the left") { Self.column(of: "page 1/5", in: $0) == 26 }
    #expect(following.contains("page 1 of 5"))
    // On past half a card, to exactly one card's width from the press, then still for 0.3 s: the
    // middle page is the second, and the release finds the cards at rest on it.
    for column in stride(from: 64, through: 100 - Self.cardStride, by: -6) + [100 - Self.cardStride] {
      try tmux.type(Self.motion(column))
      usleep(40_000)
    }
    usleep(300_000)
    try tmux.type(Self.release(100 - Self.cardStride))
    let events = try Self.lifecycle(subscriber)
    #expect(Self.names(events) == ["drag-began", "page-changed", "will-end-dragging", "drag-ended", "settled"], "\(events.map(JSONWriter.write))")
    let changed = events[1]
    #expect(changed["from"] == 0 && changed["to"] == 1 && changed["reason"] == "drag" && changed["direction"] == "next")
    #expect(changed["decision"] == "played" && changed["cue"] == "page-next")
    #expect(events[2]["velocity"] == 0 && events[2]["targetPage"] == 1)
    #expect(events[3]["decelerate"] == false && events[3]["settled"] == true)
    try tmux.waitForScreen("page 2 centred") { Self.shows(page: 2, of: 5, $0) && Self.column(of: "page 2/5", in: $0) == 56 }
  }

  /// A flick is heard page by page as it coasts: the release says where it is going
  /// (`will-end-dragging`'s target) and each page goes out, and is played, as the middle of the
  /// screen reaches it, between the release and the coast's end (on the carousel's clock); each
  /// page's sound is mixed (its `started`), one after the other.
  @Test func aFlickIsHeardPageByPageAsItCoasts() throws {
    let dir = Harness.temporaryDirectory()
    let trace = dir + "/trace.jsonl"
    let (daemon, subscriber, tmux) = try Self.rig(["--pages", "7", "--flick-pages", "3", "--trace", trace], in: dir, kinds: ["started"])
    defer {
      tmux.kill()
      daemon.stop()
    }
    // A quick 40-column swipe to the left, released while moving (the last motion and the release
    // come together, as terminals send them): well over 6.5 pages a second, the least that
    // projects three pages on; --flick-pages 3 is the most one flick crosses.
    try tmux.type(Self.press(100) + Self.motion(95) + Self.motion(90))
    try tmux.type(Self.motion(80) + Self.motion(70) + Self.motion(60) + Self.release(60))
    let events = try Self.lifecycle(subscriber)
    #expect(
      Self.names(events) == [
        "drag-began", "page-changed", "will-end-dragging", "drag-ended", "will-begin-decelerating", "page-changed", "page-changed",
        "deceleration-ended", "settled",
      ], "\(events.map(JSONWriter.write))")
    guard events.count == 9 else { return }
    // Past half a card during the drag: page 2; the release projects page 4, two pages further.
    #expect(events[1]["from"] == 0 && events[1]["to"] == 1 && events[1]["direction"] == "next")
    let velocity = try #require(events[2]["velocity"]?.doubleValue)
    #expect(velocity > 6.5 && velocity <= 1000)
    #expect(events[2]["targetPage"] == 3)
    #expect(events[3]["decelerate"] == true)
    // The coast: page 3, then page 4, one page each, each played.
    for (event, page) in zip([events[5], events[6]], [2, 3]) {
      #expect(event["from"] == .number(Double(page - 1)) && event["to"] == .number(Double(page)), "\(JSONWriter.write(event))")
      #expect(event["reason"] == "drag" && event["direction"] == "next" && event["pages"] == nil)
      #expect(event["decision"] == "played" && event["cue"] == "page-next", "\(JSONWriter.write(event))")
    }
    #expect(events[7]["settled"] == true)
    let heard = try [events[5], events[6]].map { page in
      let voice = try #require(page["voice"]?.intValue, "\(JSONWriter.write(page))")
      let started = try subscriber.waitForEvent("started") { $0["voice"]?.intValue == voice }
      return try #require(started["deviceTime"]?.doubleValue)
    }
    #expect(heard[0] < heard[1], "page 3's sound at \(heard[0]) s, page 4's at \(heard[1]) s")
    try tmux.waitForScreen("page 4") { Self.shows(page: 4, of: 7, $0) && Self.column(of: "page 4/7", in: $0) == 56 }
    #expect(try tmux.screen().contains("○ ○ ○ ● ○ ○ ○"))
    // Sent as the cards got there: after the release's drag-ended, before the coast ended, in order.
    let lines = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n").map { try JSONParser.parse(Array($0.utf8)) }
    let released = try #require(lines.first { $0["event"] == "drag-ended" }?["t"]?.doubleValue)
    let ended = try #require(lines.first { $0["event"] == "deceleration-ended" }?["t"]?.doubleValue)
    let coasting = lines.filter { $0["event"] == "page-changed" && ($0["t"]?.doubleValue ?? 0) > released }
    #expect(coasting.map { $0["to"]?.intValue } == [2, 3])
    let times = coasting.compactMap { $0["t"]?.doubleValue }
    #expect(times.count == 2 && times[0] < times[1] && times[1] < ended, "sent at \(times), the coast ended at \(ended)")
  }

  /// A press on the cards while a flick coasts stops them where they are, as a touch stops a moving
  /// scroll view: the drag begins again there, the page under the middle is the last page sent
  /// (and heard), and nothing pages back; the release snaps to that page, which the screen shows.
  @Test func aCaughtFlickEndsOnThePageShownAndThatIsTheLastPageHeard() throws {
    let dir = Harness.temporaryDirectory()
    let (daemon, subscriber, tmux) = try Self.rig(["--pages", "9", "--flick-pages", "5"], in: dir, kinds: ["started"])
    defer {
      tmux.kill()
      daemon.stop()
    }
    // A moderate flick (15 columns, a fifth of a card, every 25 ms or so: some 8 pages a second)
    // coasts for the longest deceleration, 0.6 s; a press and release that do not move catch it
    // 0.2 s into it.
    try tmux.type(Self.press(100))
    for column in stride(from: 85, through: 40, by: -15) {
      usleep(25_000)
      try tmux.type(Self.motion(column) + (column == 40 ? Self.release(40) : ""))
    }
    usleep(200_000)
    try tmux.type(Self.press(40) + Self.release(40))
    var events = try Self.lifecycle(subscriber)
    while let more = try? Self.lifecycle(subscriber, timeout: 1) { events += more }
    let names = Self.names(events)
    let released = try #require(names.firstIndex(of: "will-begin-decelerating"), "\(names)")
    let caught = try #require(names[released...].firstIndex(of: "drag-began"), "the coasting flick was not caught: \(names)")
    #expect(!names[released..<caught].contains("deceleration-ended"), "caught after its coast ended (or: no end for the interrupted coast)")
    let pages = events.filter { $0["message"] == "page-changed" }
    #expect(!pages.contains { $0["direction"] == "previous" }, "paged back: \(pages.map(JSONWriter.write))")
    #expect(pages.allSatisfy { $0["decision"] == "played" }, "\(pages.map(JSONWriter.write))")
    #expect(names.last == "settled")
    let lastHeard = try #require(pages.last?["to"]?.intValue)
    let lastVoice = try #require(pages.last?["voice"]?.intValue)
    _ = try subscriber.waitForEvent("started") { $0["voice"]?.intValue == lastVoice }
    // The screen shows the page heard last, centred.
    try tmux.waitForScreen("page \(lastHeard + 1), the last page heard") {
      Self.shows(page: lastHeard + 1, of: 9, $0) && Self.column(of: "page \(lastHeard + 1)/9", in: $0) == 56
    }
  }

  @Test func aBoundedPagerStretchesPastItsFirstPageAndSpringsBack() throws {
    let dir = Harness.temporaryDirectory()
    let (daemon, subscriber, tmux) = try Self.rig(["--pages", "4", "--no-loop"], in: dir)
    defer {
      tmux.kill()
      daemon.stop()
    }
    // Nothing left of the first card: the end is marked one column before it.
    let atRest = try tmux.screen()
    #expect(Self.column(of: "┊", in: atRest) == 23 && atRest.contains("first ▸"))
    // Pull right by 40 columns, slowly: the card follows only part of the way (the rubber band).
    try tmux.type(Self.press(30))
    for column in stride(from: 38, through: 70, by: 8) {
      try tmux.type(Self.motion(column))
      usleep(40_000)
    }
    let pulled = try tmux.waitForScreen("the card pulled right, less than the pointer") {
      guard let label = Self.column(of: "page 1/4", in: $0) else { return false }
      return label > 56 + 5 && label < 56 + 40
    }
    let band = try #require(Self.column(of: "┊", in: pulled))
    #expect(band > 23 + 5 && band < 23 + 40)
    usleep(300_000)
    try tmux.type(Self.release(70))
    let events = try Self.lifecycle(subscriber)
    #expect(
      Self.names(events) == [
        "drag-began", "edge", "will-end-dragging", "drag-ended", "will-begin-decelerating", "deceleration-ended", "settled",
      ], "\(events.map(JSONWriter.write))")
    guard events.count == 7 else { return }
    #expect(events[1]["edge"] == "start")
    #expect(events[2]["velocity"] == 0 && events[2]["targetPage"] == 0)
    #expect(events[3]["decelerate"] == true)
    // It springs back: page 1, centred, the end mark where it was.
    try tmux.waitForScreen("page 1 back in place") { Self.column(of: "page 1/4", in: $0) == 56 && Self.column(of: "┊", in: $0) == 23 }
  }

  @Test func autoAdvanceHoldsDuringADragAndTurnsThreeSecondsAfterTheScrollSettles() throws {
    let dir = Harness.temporaryDirectory()
    let trace = dir + "/trace.jsonl"
    let (daemon, _, tmux) = try Self.rig(["--auto", "2", "--trace", trace], in: dir)
    defer {
      tmux.kill()
      daemon.stop()
    }
    // Hold the cards for 2.5 s (longer than the 2 s interval), moving a little, then put them
    // back where they were and let go: a drag that ends without decelerating.
    try tmux.type(Self.press(60))
    for column in [56, 52, 48, 52, 56] {
      try tmux.type(Self.motion(column))
      usleep(500_000)
    }
    try tmux.type(Self.motion(60))
    usleep(300_000)
    try tmux.type(Self.release(60))
    // A wheel notch after the automatic page: an animated programmatic scroll (no drag).
    try tmux.waitForScreen("the automatic page after the drag", timeout: 6) { $0.contains("(auto)") }
    usleep(500_000)
    try tmux.type("\u{1b}[<65;60;15M")
    usleep(3_600_000)

    let lines = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n").map { try JSONParser.parse(Array($0.utf8)) }
    func time(_ line: JSONValue) -> Double { line["t"]?.doubleValue ?? .nan }
    let autoPages = lines.filter { $0["event"] == "page-changed" && $0["reason"] == "auto" }
    let began = try #require(lines.firstIndex { $0["event"] == "drag-began" })
    let dragEnded = try #require(lines.firstIndex { $0["event"] == "drag-ended" })
    #expect(lines[dragEnded]["decelerate"] == false)
    // Nothing turned by itself while the button was held.
    #expect(!autoPages.contains { time($0) > time(lines[began]) && time($0) < time(lines[dragEnded]) })
    // The next automatic page: 3 s after the drag ended (it settled then), on the carousel's clock.
    let firstAfterDrag = try #require(autoPages.first { time($0) > time(lines[dragEnded]) })
    let afterDrag = time(firstAfterDrag) - time(lines[dragEnded])
    #expect(afterDrag >= 2.999 && afterDrag < 3.15, "\(afterDrag) s")
    // The notch sent its page change and the end of its animation, and no drag.
    let notch = try #require(lines.lastIndex { $0["event"] == "page-changed" && $0["reason"] == "programmatic" })
    #expect(!lines[notch...].contains { $0["event"] == "drag-began" })
    // And the next automatic page 3 s after the notch's animation ended.
    let animationEnded = try #require(lines[notch...].firstIndex { $0["event"] == "scroll-animation-ended" })
    let firstAfterNotch = try #require(autoPages.first { time($0) > time(lines[animationEnded]) })
    let afterNotch = time(firstAfterNotch) - time(lines[animationEnded])
    #expect(afterNotch >= 2.999 && afterNotch < 3.15, "\(afterNotch) s")
  }

  /// --start-page opens on that page; with --no-loop --no-bounce a key at the first page only says
  /// `edge` (no bump), and the first page change is counted from the start page.
  @Test func aBoundedPagerWithoutBouncesStartsOnTheGivenPage() throws {
    let dir = Harness.temporaryDirectory()
    let (daemon, subscriber, tmux) = try Self.rig(["--pages", "5", "--start-page", "2", "--no-loop", "--no-bounce"], in: dir, startPage: 2)
    defer {
      tmux.kill()
      daemon.stop()
    }
    try tmux.waitForScreen("page 2 at start") { Self.shows(page: 2, of: 5, $0) }
    try tmux.send("Left")
    let changed = try subscriber.waitForEvent("paging") { $0["message"] == "page-changed" }
    #expect(changed["from"] == 1 && changed["to"] == 0 && changed["direction"] == "previous")
    try tmux.waitForScreen("page 1") { Self.shows(page: 1, of: 5, $0) }
    usleep(300_000)
    try tmux.send("Left")
    let edge = try subscriber.waitForEvent("paging") { $0["message"] == "edge" }
    #expect(edge["edge"] == "start")
    // A drag past the first page (real SGR reports): edge once, and the cards do not move at all.
    usleep(300_000)
    try tmux.type(Self.press(40) + Self.motion(50) + Self.motion(70))
    let pulled = try subscriber.waitForEvent("paging") { $0["message"] == "edge" }
    #expect(pulled["edge"] == "start")
    usleep(150_000)  // drawn (a rubber band would have moved the label right by now)
    #expect(Self.column(of: "page 1/5", in: try tmux.screen()) == 56, "no rubber band without bounces")
    try tmux.type(Self.release(70))
    try tmux.waitForScreen("back on page 1") { Self.shows(page: 1, of: 5, $0) && Self.column(of: "page 1/5", in: $0) == 56 }
  }

  /// --crawl: auto-scroll creeps on (seed 003), each page it crosses a page change (reason auto),
  /// and nothing settles while it moves; a press stops it where it is (its end, one settle, before
  /// the drag), and nothing crawls while the button is held.
  @Test func theCrawlPagesByItselfAndAPressStopsIt() throws {
    let dir = Harness.temporaryDirectory()
    let (daemon, subscriber, tmux) = try Self.rig(["--pages", "9", "--auto", "0.3", "--crawl", "4"], in: dir)
    defer {
      tmux.kill()
      daemon.stop()
    }
    let crawled = try subscriber.waitForEvent("paging", timeout: 5) { $0["message"] == "page-changed" && $0["reason"] == "auto" }
    #expect(crawled["direction"] == "next")
    try tmux.type(Self.press(60))
    _ = try subscriber.waitForEvent("paging", timeout: 5) { $0["message"] == "drag-began" }
    // Before the drag: the crawl's pages and its one end, which settled it.
    let crawl = subscriber.events.filter { $0["carousel"] == "demo" }
    #expect(Self.names(crawl).filter { $0 != "page-changed" } == ["scroll-animation-ended", "settled"], "\(Self.names(crawl))")
    #expect(crawl.filter { $0["message"] == "page-changed" }.allSatisfy { $0["reason"] == "auto" && $0["settled"] == nil })
    subscriber.events.removeAll()
    let whileHeld = subscriber.drainEvents(for: 1.2)
    #expect(!whileHeld.contains { $0["message"] == "page-changed" }, "it crawled on while held")
    try tmux.type(Self.release(60))
  }

  /// The crawl across a bounded pager: a page change at each page it crosses, and the settled cue
  /// (bound here) plays once, when it stops at the last page, not on any page on the way.
  @Test func aCrawlSettlesOnlyWhenItStops() throws {
    let dir = Harness.temporaryDirectory()
    let sounds = try Harness.soundDirectory(in: dir, ["page-next": "tone-48000-mono.mp3", "tick": "tone-8000-mono.mp3"])
    let config = dir + "/cued.toml"
    try "[carousel.default]\npage-next = \"page-next\"\nsettled = \"tick\"\n".write(toFile: config, atomically: true, encoding: .utf8)
    let daemon = try DaemonProcess(
      socket: dir + "/cued.sock", arguments: ["--sounds", sounds, "--device", "null", "--config", config], logPath: dir + "/cued.log")
    defer { daemon.stop() }
    let subscriber = try ProtocolClient(socket: daemon.socket)
    try subscriber.request("subscribe", [("kinds", .array([.string("paging")]))])
    let tmux = try TmuxSession(
      command: Self.carouselCommand(socket: daemon.socket, ["--pages", "4", "--no-loop", "--auto", "1.5", "--crawl", "4"]), in: dir)
    defer { tmux.kill() }
    // Connected before the crawl begins (1.5 s after the start), so that none of its lines is lost.
    try tmux.waitForScreen("a connection to cued") { $0.contains("cued is listening") }
    let events = try Self.lifecycle(subscriber)
    #expect(
      Self.names(events) == ["page-changed", "page-changed", "page-changed", "scroll-animation-ended", "settled"],
      "\(events.map(JSONWriter.write))")
    guard events.count == 5 else { return }
    #expect(events[..<3].map { $0["to"]?.intValue } == [1, 2, 3])
    #expect(events[..<3].allSatisfy { $0["reason"] == "auto" && $0["decision"] == "played" && $0["settled"] == nil })
    #expect(events[3]["settled"] == true)
    #expect(events[4]["decision"] == "played" && events[4]["cue"] == "tick", "\(JSONWriter.write(events[4]))")
    try tmux.waitForScreen("page 4, where the crawl stopped") { Self.shows(page: 4, of: 4, $0) }
    // It stopped for good: nothing more comes.
    #expect(!subscriber.drainEvents(for: 1).contains { $0["carousel"] == "demo" })
  }

  /// --vertical: the cards stack; ↓ pages on, and a drag upward with real SGR reports (rows, not
  /// columns) turns the page with the drag lifecycle.
  @Test func aVerticalPagerPagesWithTheDownKeyAndAnUpwardDrag() throws {
    let dir = Harness.temporaryDirectory()
    let (daemon, subscriber, tmux) = try Self.rig(["--pages", "5", "--vertical", "--auto", "0"], in: dir)
    defer {
      tmux.kill()
      daemon.stop()
    }
    try tmux.send("Down")
    try tmux.waitForScreen("page 2") { Self.shows(page: 2, of: 5, $0) }
    let keyed = try Self.lifecycle(subscriber)
    let key = try #require(keyed.first { $0["message"] == "page-changed" })
    #expect(key["to"] == 1 && key["direction"] == "next")
    usleep(300_000)
    // 30 rows: cards of 15 rows and a gap; 12 rows up is past half a card.
    try tmux.type("\u{1b}[<0;60;22M" + "\u{1b}[<32;60;18M" + "\u{1b}[<32;60;14M")
    usleep(200_000)
    try tmux.type("\u{1b}[<32;60;10M")
    usleep(300_000)
    try tmux.type("\u{1b}[<0;60;10m")
    let events = try Self.lifecycle(subscriber)
    #expect(Self.names(events).first == "drag-began", "\(Self.names(events))")
    #expect(events.contains { $0["message"] == "page-changed" && $0["from"] == 1 && $0["to"] == 2 })
    try tmux.waitForScreen("page 3") { Self.shows(page: 3, of: 5, $0) }
  }

  @Test func aResizeRedrawsTheCarouselAtTheNewSize() throws {
    let dir = Harness.temporaryDirectory()
    let tmux = try TmuxSession(command: Self.carouselCommand(socket: dir + "/absent.sock", ["--pages", "3"]), in: dir)
    defer { tmux.kill() }
    try tmux.waitForScreen("the carousel") { Self.column(of: "page 1/3", in: $0) == 56 }
    // 60 columns: cards of 36, the label centred at (60 − 8) / 2 = 26; then too small, then back.
    try tmux.resize(columns: 60, rows: 20)
    try tmux.waitForScreen("the carousel redrawn at 60 columns") { Self.column(of: "page 1/3", in: $0) == 26 && $0.contains("● ○ ○") }
    try tmux.resize(columns: 20, rows: 6)
    try tmux.waitForScreen("the too-small notice") { $0.contains("too small") }
    try tmux.resize(columns: 120, rows: 30)
    try tmux.waitForScreen("the carousel back at 120 columns") { Self.column(of: "page 1/3", in: $0) == 56 }
    try tmux.send("Right")
    try tmux.waitForScreen("page 2") { Self.shows(page: 2, of: 3, $0) }
  }
}
