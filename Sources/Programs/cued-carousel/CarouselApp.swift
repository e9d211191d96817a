import CuePosix
import CueProtocol
import TerminalScreen

/// The terminal loop: reads keys and the mouse, lets the carousel model turn pages, draws the
/// frames, posts the messages to cued and shows what cued answered.
///
/// One thread (the main one) does it all around a poll(2) on standard input and the wake-up
/// pipe, with a timeout set by the model's next deadline (a frame of an animation, auto-advance).
/// Mouse columns become card strides at the screen's current width, so a drag follows the pointer
/// at any size. With `--trace` every message sent is also appended to a file with the time it was
/// sent on the carousel's clock (a JSON line: `{"t":seconds,…the message…}`).
/// cued is reached by `CuedLink` in tasks of its own; signals arrive through `SignalWatcher`.
/// The terminal is restored on every way out: `q`, Ctrl-C, SIGINT/SIGTERM/SIGHUP, end of input.
final class CarouselApp {
  struct Options: Sendable {
    var pageCount: Int
    var autoSeconds: Double
    var resumeSeconds: Double = AutoAdvance.defaultResumeDelaySeconds
    var loops = true
    var bounces = true
    var startPage = 0
    var crawlPagesPerSecond = 0.0
    var vertical = false
    var maxFlickPages = 5
    var carousel: String
    var socketPath: String?
    var tracePath: String? = nil
  }

  enum Failure: Error, CustomStringConvertible {
    case terminal(Terminal.Failure)
    case system(SystemError)
    case noSignalThread
    case trace(String)

    var description: String {
      switch self {
      case .terminal(let failure): failure.description
      case .system(let error): "\(error)"
      case .noSignalThread: "cannot start the thread that watches for signals"
      case .trace(let path): "cannot open the trace file \(path): check that its directory exists and is writable"
      }
    }
  }

  private let options: Options
  private let terminal = Terminal(mouse: .buttonEvents, advice: "run cued-carousel in a terminal (or under tmux)")
  private let screen: CarouselScreen
  private var carousel: Carousel
  private var status = StatusLine()
  private var decoder = InputDecoder()
  private var size = (columns: 80, rows: 24)
  private var needsDrawing = true
  private var trace: AppendFile? = nil

  init(_ options: Options) {
    self.options = options
    screen = CarouselScreen(name: options.carousel, vertical: options.vertical)
    carousel = Carousel(
      pageCount: options.pageCount, start: options.startPage, loops: options.loops, bounces: options.bounces,
      autoSeconds: options.autoSeconds, crawlPagesPerSecond: options.crawlPagesPerSecond,
      resumeDelaySeconds: options.resumeSeconds, maxFlickPages: options.maxFlickPages, now: MonotonicClock.seconds())
  }

  /// Runs until the user quits or a signal says stop; the terminal is back as it was on return.
  func run() throws(Failure) {
    let wakeup: Wakeup
    do {
      wakeup = try Wakeup()
    } catch {
      throw .system(error)
    }
    // Before any other thread exists (the link's tasks), so that all of them inherit the blocked signals.
    if let path = options.tracePath {
      guard let file = AppendFile(path: path) else { throw .trace(path) }
      trace = file
    }
    guard SignalWatcher.start(waking: wakeup) else { throw .noSignalThread }
    do {
      try terminal.enter()
    } catch {
      throw .terminal(error)
    }
    defer { terminal.leave() }
    let link = CuedLink(socketPath: options.socketPath, carousel: options.carousel, wakeup: wakeup)
    link.start()
    size = terminal.size()

    while true {
      let now = MonotonicClock.seconds()
      let moving = carousel.isAnimating || carousel.isCrawling
      send(carousel.tick(at: now), through: link, at: now)
      if moving || carousel.isAnimating || carousel.isCrawling { needsDrawing = true }
      if needsDrawing { draw(at: now) }

      let ready: [PollEvents]
      do {
        ready = try Poll.wait(
          [PollRequest(fd: terminal.input, events: .readable), PollRequest(fd: wakeup.readEnd, events: .readable)],
          timeoutMilliseconds: timeout(after: now))
      } catch {
        throw .system(error)
      }
      // A timeout with nothing to read: a deadline passed (a frame, the end of a pause) and the screen may show it.
      if ready.allSatisfy(\.isEmpty) { needsDrawing = true }
      if !ready[1].isEmpty, !handle(wakeup.drain(), link: link) { return }
      if !ready[0].isEmpty {
        // End of input (the terminal went away) ends the program like `q`.
        guard let bytes = terminal.read(), handle(decoder.feed(bytes), link: link) else { return }
      }
    }
  }

  /// Acts on what woke the loop; false when it is time to go.
  private func handle(_ reasons: [Wakeup.Reason], link: CuedLink) -> Bool {
    for reason in reasons {
      switch reason {
      case .stop:
        return false
      case .resized:
        size = terminal.size()
      case .news:
        for news in link.takeNews() {
          switch news {
          case .connection(let connection): status.connection = connection
          case .answer(let answer): status.received(answer)
          }
        }
      }
      needsDrawing = true
    }
    return true
  }

  /// Acts on keys and the mouse; false on `q` or Ctrl-C.
  private func handle(_ inputs: [InputDecoder.Input], link: CuedLink) -> Bool {
    // The pointer's unit: a card stride along the pages' axis (columns; rows for a vertical pager).
    let vertical = options.vertical
    let stride = Double(vertical ? CarouselScreen.verticalStride(rows: size.rows) : CarouselScreen.stride(columns: size.columns))
    func along(_ column: Int, _ row: Int) -> Double { Double(vertical ? row : column) / stride }
    for input in inputs {
      let now = MonotonicClock.seconds()
      let action: Carousel.Action
      switch input {
      case .quit: return false
      case .previous: action = .key(.previous)
      case .next: action = .key(.next)
      case .wheelPrevious: action = .wheel(.previous)
      case .wheelNext: action = .wheel(.next)
      case .press(let column, let row): action = .press(x: along(column, row))
      case .drag(let column, let row): action = .motion(x: along(column, row))
      case .release(let column, let row): action = .release(x: along(column, row))
      }
      send(carousel.perform(action, at: now), through: link, at: now)
      needsDrawing = true
    }
    return true
  }

  private func send(_ events: [CarouselMessage.Event], through link: CuedLink, at now: Double) {
    guard !events.isEmpty else { return }
    link.post(events)
    status.sent(events)
    if let trace {
      var bytes: [UInt8] = []
      for event in events {
        guard case .object(let members) = CarouselMessage(carousel: options.carousel, event: event).json else { continue }
        bytes += Array(JSONWriter.write(.object([("t", .number(now))] + members)).utf8) + [0x0a]
      }
      trace.append(bytes)
    }
    needsDrawing = true
  }

  private func draw(at now: Double) {
    terminal.write(screen.render(carousel, status: status, columns: size.columns, rows: size.rows, now: now).ansi)
    needsDrawing = false
  }

  /// Milliseconds until the model's next deadline (a frame, auto-advance: a pause ends with the
  /// automatic page it waited for); -1 (wait for input) when there is none.
  private func timeout(after now: Double) -> Int32 {
    guard let deadline = carousel.nextDeadline(after: now) else { return -1 }
    let milliseconds = ((deadline - now) * 1000).rounded(.up)
    return Int32(min(60_000, max(0, milliseconds)))
  }
}
