import ArgumentParser
import CueClient
import CuePosix
import CueProtocol

/// Sends one carousel message and prints cued's decision.
func sendCarousel(_ message: CarouselMessage, global: GlobalOptions) throws {
  let session = try Session(global)
  let reply: JSONValue
  do {
    reply = try session.connection.send(message)
  } catch {
    throw session.fail(error)
  }
  if global.json {
    writeToStandardOutput(JSONWriter.write(reply) + "\n")
    return
  }
  let outcome: PagingOutcome
  do {
    outcome = try PagingOutcome(reply: reply)
  } catch {
    throw session.fail(.protocolViolation("\(error.message): \(reply)"))
  }
  var text = outcome.decision.rawValue
  if let cue = outcome.cue { text += " \(cue)" }
  if let voice = outcome.voice { text += " (voice \(voice))" }
  writeToStandardOutput(text + "\n")
}

struct PageCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "page",
    abstract: "Tells cued a carousel's page changed; cued plays the bound cue and prints its decision.",
    discussion: """
      The decision is one of played, ignored, too-soon, late, unbound, merged, unchanged, failed.

      Examples:
        cuectl page --from 2 --to 3 --count 7              # played page-next (voice 12)
        cuectl page --from 6 --to 0 --count 7 --reason auto # a wrap: played wrap
        cuectl page --from 3 --to 2 --count 7 --carousel photos
        cuectl page --from 0 --to 3 --count 7 --direction next # a flick across three pages
      """)
  @OptionGroup var global: GlobalOptions
  @Option(help: ArgumentHelp("The page shown before (from 0).", valueName: "n")) var from: Int
  @Option(help: ArgumentHelp("The page shown now (from 0).", valueName: "n")) var to: Int
  @Option(help: ArgumentHelp("How many pages the carousel has.", valueName: "n")) var count: Int
  @Option(help: ArgumentHelp("drag, key, auto or programmatic.", valueName: "reason")) var reason: String = "key"
  @Option(help: ArgumentHelp("next or previous (default: cued takes the shorter way round).", valueName: "direction"))
  var direction: String?
  @Option(help: ArgumentHelp("Whose bindings (default: default).", valueName: "name")) var carousel: String = "default"

  func validate() throws {
    guard count >= 1, (0..<count).contains(from), (0..<count).contains(to) else {
      throw ValidationError("--from and --to must be page indexes from 0 to --count - 1")
    }
    guard CarouselMessage.Reason(rawValue: reason) != nil else { throw ValidationError("--reason must be drag, key, auto or programmatic") }
    if let direction, CarouselMessage.Direction(rawValue: direction) == nil { throw ValidationError("--direction must be next or previous") }
  }

  func run() throws {
    let event = CarouselMessage.Event.pageChanged(
      from: from, to: to, count: count, reason: CarouselMessage.Reason(rawValue: reason)!,
      direction: direction.flatMap(CarouselMessage.Direction.init(rawValue:)))
    try sendCarousel(CarouselMessage(carousel: carousel, event: event), global: global)
  }
}

struct CarouselCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "carousel",
    abstract: "Sends the other carousel events: the scroll lifecycle, wrapped, edge.",
    discussion: """
      They follow UIScrollView's delegate order: drag-began, will-end-dragging (--velocity, and
      --target-page), drag-ended (--decelerate when it keeps moving), will-begin-decelerating, then
      deceleration-ended; scroll-animation-ended after a programmatic scroll. cued derives the
      moment the scroll settled. edge: a bounded pager pushed past its first (--edge start) or
      last page (--edge end).

      Examples:
        cuectl carousel drag-began
        cuectl carousel will-end-dragging --velocity 4.5 --target-page 5
        cuectl carousel drag-ended --decelerate
        cuectl carousel wrapped --from 6 --to 0 --count 7
        cuectl carousel edge --edge end
      """)
  @OptionGroup var global: GlobalOptions
  @Argument(help: "drag-began, will-end-dragging, drag-ended, will-begin-decelerating, deceleration-ended, scroll-animation-ended, wrapped or edge.")
  var event: String
  @Flag(help: "With drag-ended: the carousel keeps moving (decelerates).") var decelerate = false
  @Option(help: ArgumentHelp("With will-end-dragging: pages per second, positive toward the next page.", valueName: "v")) var velocity: Double?
  @Option(help: ArgumentHelp("With will-end-dragging: the page the scroll will stop on.", valueName: "n")) var targetPage: Int?
  @Option(help: ArgumentHelp("With edge: start or end.", valueName: "edge")) var edge: String?
  @Option(help: ArgumentHelp("With wrapped: the page before.", valueName: "n")) var from: Int?
  @Option(help: ArgumentHelp("With wrapped: the page after.", valueName: "n")) var to: Int?
  @Option(help: ArgumentHelp("With wrapped: how many pages.", valueName: "n")) var count: Int?
  @Option(help: ArgumentHelp("Whose bindings (default: default).", valueName: "name")) var carousel: String = "default"

  func validate() throws {
    let known = CarouselMessage.eventNames.filter { $0 != "page-changed" }
    guard known.contains(event) else { throw ValidationError("the event must be one of \(known.joined(separator: ", ")); page changes use `cuectl page`") }
    if event == "will-end-dragging" && velocity == nil { throw ValidationError("will-end-dragging needs --velocity (pages per second)") }
    if event == "edge" && edge.flatMap(CarouselMessage.Edge.init(rawValue:)) == nil { throw ValidationError("edge needs --edge start or --edge end") }
    if event == "wrapped" {
      guard let from, let to, let count, count >= 1, (0..<count).contains(from), (0..<count).contains(to) else {
        throw ValidationError("wrapped needs --from, --to and --count (page indexes from 0)")
      }
    }
  }

  func run() throws {
    let message: CarouselMessage.Event
    switch event {
    case "drag-began": message = .dragBegan
    case "will-end-dragging": message = .willEndDragging(velocity: velocity ?? 0, targetPage: targetPage)
    case "drag-ended": message = .dragEnded(decelerate: decelerate)
    case "will-begin-decelerating": message = .willBeginDecelerating
    case "deceleration-ended": message = .decelerationEnded
    case "edge": message = .edge(CarouselMessage.Edge(rawValue: edge ?? "end") ?? .end)
    case "scroll-animation-ended": message = .scrollAnimationEnded
    default: message = .wrapped(from: from!, to: to!, count: count!)
    }
    try sendCarousel(CarouselMessage(carousel: carousel, event: message), global: global)
  }
}
