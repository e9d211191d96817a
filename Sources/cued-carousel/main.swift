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
      ←/→ (or h/l) and the mouse wheel turn the page; q or Ctrl-C quits. From the last page the \
      carousel goes on to the first, and back. Every page turn is sent to cued as a carousel \
      message (docs/PROTOCOL.md), which plays the cue bound to it (by default page-next, page-prev, \
      wrap, and tick when a drag begins); the status line shows what cued answered. Without cued \
      the carousel works silently and connects when cued comes.

      Examples:
        cued-carousel
        cued-carousel --pages 12 --auto 0
        cued-carousel --carousel photos --socket /tmp/cued.sock
      """,
    version: cuedVersion)

  @Option(help: ArgumentHelp("How many pages (cards).", valueName: "n"))
  var pages = 7

  @Option(help: ArgumentHelp("Seconds between automatic page turns; 0 turns auto-advance off.", valueName: "seconds"))
  var auto: Double = 4

  @Option(help: ArgumentHelp("The carousel's name: whose bindings cued uses.", valueName: "name"))
  var carousel = "demo"

  @Option(help: ArgumentHelp("cued's socket (default: $CUED_SOCKET, else $XDG_RUNTIME_DIR/cued/cued.sock).", valueName: "path"))
  var socket: String?

  func validate() throws {
    guard (1...CarouselMessage.maximumPages).contains(pages) else {
      throw ValidationError("--pages must be 1 to \(CarouselMessage.maximumPages)")
    }
    guard auto.isFinite, auto >= 0 else { throw ValidationError("--auto must be 0 (off) or a number of seconds") }
    guard !carousel.isEmpty, carousel.utf8.count <= 128 else { throw ValidationError("--carousel must be 1 to 128 bytes") }
  }

  func run() throws {
    let options = CarouselApp.Options(pageCount: pages, autoSeconds: auto, carousel: carousel, socketPath: socket)
    do {
      try CarouselApp(options).run()
    } catch {
      writeToStandardError("cued-carousel: \(error)\n")
      throw ExitCode(1)
    }
  }
}

// Usage errors exit 2, as cuectl's do (swift-argument-parser's default is 64); help and --version exit 0.
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
