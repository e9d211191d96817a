import ArgumentParser
import CuePosix
import CueProtocol

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `cued-carousel`: a demo carousel in the terminal that makes cued play its paging cues.
struct CarouselCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "cued-carousel",
    abstract: "A looping carousel of coloured cards in the terminal, with cued's paging sounds.",
    discussion: """
      Drag the cards with the mouse: they follow the pointer, and on release they snap back, go \
      on a page, or (flicked) coast across several, each page sounding as they reach it. ←/→ (or h/l) and the mouse wheel turn the page \
      too; q or Ctrl-C quits. From the last page the carousel goes on to the first, and back \
      (--no-loop: it stops at the ends, and a drag past one stretches like a rubber band). Every \
      scroll is sent to cued as carousel messages in UIScrollView's order (docs/PROTOCOL.md), and \
      cued plays the cues bound to them (by default page-next, page-prev, wrap, and tick when a \
      drag begins); the status line shows what cued answered. Auto-advance stops while you drag \
      and turns the next page --resume seconds after the scroll settles. Without cued the \
      carousel works silently and connects when cued comes.

      Examples:
        cued-carousel
        cued-carousel --pages 12 --auto 0
        cued-carousel --no-loop --pages 4
        cued-carousel --no-loop --no-bounce --start-page 3
        cued-carousel --auto 1 --crawl 0.5
        cued-carousel --vertical --carousel feed
        cued-carousel --carousel photos --socket /tmp/cued.sock
      """,
    version: cuedVersion)

  @Option(help: ArgumentHelp("How many pages (cards).", valueName: "n"))
  var pages = 7

  @Option(help: ArgumentHelp("Seconds between automatic page turns; 0 turns auto-advance off.", valueName: "seconds"))
  var auto: Double = 4

  @Option(help: ArgumentHelp("Seconds after a drag or key has settled until the next automatic page.", valueName: "seconds"))
  var resume: Double = AutoAdvance.defaultResumeDelaySeconds

  @Flag(name: .customLong("no-loop"), help: "Stop at the first and last page (a bounded pager) instead of going round.")
  var noLoop = false

  @Flag(
    name: .customLong("no-bounce"),
    help: "With --no-loop: the ends stop the cards hard instead of stretching like a rubber band (pushing past one still sends edge).")
  var noBounce = false

  @Option(
    help: ArgumentHelp(
      "Auto-scroll as a continuous crawl at this many pages a second (seed 003) instead of whole pages; 0: whole pages.",
      valueName: "pages/s"))
  var crawl = 0.0

  @Flag(help: "Stack the cards top to bottom (a vertical pager): drag up and down, ↑/↓ page.")
  var vertical = false

  @Option(name: .customLong("start-page"), help: ArgumentHelp("The page shown at start, from 1.", valueName: "n"))
  var startPage = 1

  @Option(name: .customLong("flick-pages"), help: ArgumentHelp("The most pages one flick crosses.", valueName: "n"))
  var flickPages = 5

  @Option(help: ArgumentHelp("The carousel's name: whose bindings cued uses.", valueName: "name"))
  var carousel = "demo"

  @Option(help: ArgumentHelp("Append every message sent, with its time on the carousel's clock, to this file (JSON lines).", valueName: "path"))
  var trace: String?

  @Option(help: ArgumentHelp("cued's socket (default: $CUED_SOCKET, else $XDG_RUNTIME_DIR/cued/cued.sock).", valueName: "path"))
  var socket: String?

  func validate() throws {
    guard (1...CarouselMessage.maximumPages).contains(pages) else {
      throw ValidationError("--pages must be 1 to \(CarouselMessage.maximumPages)")
    }
    guard auto.isFinite, auto >= 0 else { throw ValidationError("--auto must be 0 (off) or a number of seconds") }
    guard resume.isFinite, (0...3600).contains(resume) else { throw ValidationError("--resume must be 0 to 3600 seconds") }
    guard (1...100).contains(flickPages) else { throw ValidationError("--flick-pages must be 1 to 100") }
    guard crawl.isFinite, (0...10).contains(crawl) else { throw ValidationError("--crawl must be 0 (whole pages) to 10 pages a second") }
    guard (1...pages).contains(startPage) else { throw ValidationError("--start-page must be 1 to --pages (\(pages))") }
    guard !carousel.isEmpty, carousel.utf8.count <= 128 else { throw ValidationError("--carousel must be 1 to 128 bytes") }
  }

  func run() throws {
    let options = CarouselApp.Options(
      pageCount: pages, autoSeconds: auto, resumeSeconds: resume, loops: !noLoop, bounces: !noBounce, startPage: startPage - 1, crawlPagesPerSecond: crawl, vertical: vertical,
      maxFlickPages: flickPages,
      carousel: carousel, socketPath: socket, tracePath: trace)
    do {
      try CarouselApp(options).run()
    } catch {
      writeToStandardError("cued-carousel: \(error)\n")
      throw ExitCode(1)
    }
  }
}

// Usage errors exit 2, as cuectl's do (swift-argument-parser's default is 64); help and --version exit 0.
/// `cued-carousel`'s whole run, on this process's command line: the entry point of the
/// `cued-carousel` executable and of the multi-call `cued` run as `cued-carousel`.
public func carouselMain() -> Never {
  do {
    var command = try CarouselCommand.parseAsRoot()
    try command.run()
  } catch {
    let code = CarouselCommand.exitCode(for: error)
    let message = CarouselCommand.fullMessage(for: error)
    if code == .success {
      writeToStandardOutput(message + "\n")
      exit(0)
    }
    if !message.isEmpty { writeToStandardError(message + "\n") }
    exit(code == .validationFailure ? 2 : code.rawValue)
  }
  exit(0)
}
