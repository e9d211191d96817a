/// A carousel's own message: what happened on screen, sent fire-and-forget (no `id`, no reply).
///
/// Its own kind of line (it has `"carousel"`, not `"op"`), modelled on UIScrollView's delegate order:
/// drag began → drag ended (decelerating or not) → deceleration ended; a programmatic scroll's
/// animation ended; the page changed; the carousel wrapped around. cued plays the cue bound to it
/// (docs/CONFIG.md). With an `id` the daemon answers with its decision.
public struct CarouselMessage: Sendable, Equatable {
  public enum Event: Sendable, Equatable {
    case dragBegan
    case dragEnded(decelerate: Bool)
    case decelerationEnded
    case scrollAnimationEnded
    case pageChanged(from: Int, to: Int, count: Int, reason: Reason)
    case wrapped(from: Int, to: Int, count: Int)

    public var name: String {
      switch self {
      case .dragBegan: "drag-began"
      case .dragEnded: "drag-ended"
      case .decelerationEnded: "deceleration-ended"
      case .scrollAnimationEnded: "scroll-animation-ended"
      case .pageChanged: "page-changed"
      case .wrapped: "wrapped"
      }
    }
  }

  /// Every carousel message name, in the order of a scroll's life (for `hello`'s capabilities).
  public static let eventNames = [
    "drag-began", "drag-ended", "deceleration-ended", "scroll-animation-ended", "page-changed", "wrapped",
  ]

  /// Why the page changed.
  public enum Reason: String, Sendable, CaseIterable {
    case drag, key, auto, programmatic
  }

  /// Which carousel (its bindings); "default" when absent.
  public var carousel: String
  public var event: Event
  public var id: RequestID?

  public init(carousel: String = "default", event: Event, id: RequestID? = nil) {
    self.carousel = carousel
    self.event = event
    self.id = id
  }

  /// The largest page count accepted.
  public static let maximumPages = 1_000_000

  /// The message as one JSON object.
  public var json: JSONValue {
    var members: [(String, JSONValue)] = []
    if let id { members.append(("id", id.json)) }
    members.append(("carousel", .string(carousel)))
    members.append(("event", .string(event.name)))
    switch event {
    case .dragBegan, .decelerationEnded, .scrollAnimationEnded:
      break
    case .dragEnded(let decelerate):
      members.append(("decelerate", .bool(decelerate)))
    case .pageChanged(let from, let to, let count, let reason):
      members += [
        ("from", .number(Double(from))), ("to", .number(Double(to))), ("count", .number(Double(count))),
        ("reason", .string(reason.rawValue)),
      ]
    case .wrapped(let from, let to, let count):
      members += [("from", .number(Double(from))), ("to", .number(Double(to))), ("count", .number(Double(count)))]
    }
    return .object(members)
  }

  /// Decodes a carousel line (an object with a `"carousel"` key).
  public static func decode(_ value: JSONValue) throws(ProtocolError) -> CarouselMessage {
    var fields = FieldReader(value)
    guard let carousel = try fields.string("carousel"), !carousel.isEmpty, carousel.utf8.count <= 128 else {
      throw ProtocolError(.invalidRequest, "\"carousel\" must name the carousel (1 to 128 bytes)")
    }
    guard let name = try fields.string("event") else {
      throw ProtocolError(
        .invalidRequest, "a carousel message needs an \"event\": drag-began, drag-ended, deceleration-ended, scroll-animation-ended, page-changed or wrapped")
    }
    func pages() throws(ProtocolError) -> (Int, Int, Int) {
      guard let count = try fields.integer("count"), let from = try fields.integer("from"), let to = try fields.integer("to") else {
        throw ProtocolError(.invalidRequest, "\(name) needs \"from\", \"to\" and \"count\" (page indexes from 0, and the number of pages)")
      }
      guard (1...maximumPages).contains(count) else { throw ProtocolError(.outOfRange, "\"count\" is \(count); it must be 1 to \(maximumPages)") }
      guard (0..<count).contains(from), (0..<count).contains(to) else {
        throw ProtocolError(.outOfRange, "\"from\" (\(from)) and \"to\" (\(to)) must be page indexes from 0 to \(count - 1)")
      }
      return (from, to, count)
    }
    let event: Event
    switch name {
    case "drag-began": event = .dragBegan
    case "drag-ended": event = .dragEnded(decelerate: try fields.bool("decelerate") ?? false)
    case "deceleration-ended": event = .decelerationEnded
    case "scroll-animation-ended": event = .scrollAnimationEnded
    case "page-changed":
      let (from, to, count) = try pages()
      let raw = try fields.string("reason") ?? "programmatic"
      guard let reason = Reason(rawValue: raw) else {
        throw ProtocolError(.invalidRequest, "\"reason\" must be drag, key, auto or programmatic, not \"\(raw.prefix(32))\"")
      }
      event = .pageChanged(from: from, to: to, count: count, reason: reason)
    case "wrapped":
      let (from, to, count) = try pages()
      event = .wrapped(from: from, to: to, count: count)
    default:
      throw ProtocolError(
        .invalidRequest,
        "unknown carousel event \"\(name.prefix(64))\"; the events are drag-began, drag-ended, deceleration-ended, scroll-animation-ended, page-changed, wrapped")
    }
    _ = try fields.integer("page")  // carousels may say which page they show; informational
    try fields.rejectUnread(op: "carousel \(name)")
    return CarouselMessage(carousel: carousel, event: event)
  }
}
