/// A carousel's own message: what happened on screen, sent fire-and-forget (no `id`, no reply).
///
/// Its own kind of line (it has `"carousel"`, not `"op"`), modelled on UIScrollView's delegate order:
/// drag began (willBeginDragging) → will end dragging (velocity, target page) → drag ended
/// (didEndDragging, decelerating or not) → will begin decelerating → deceleration ended
/// (didEndDecelerating); a programmatic scroll's animation ended; the page changed (with its
/// direction); the carousel wrapped around; a bounded pager was pushed past its first or last page
/// (the rubber band). cued plays the cue bound to it (docs/CONFIG.md), and derives the moment the
/// scroll settled. With an `id` the daemon answers with its decision.
public struct CarouselMessage: Sendable, Equatable {
  public enum Event: Sendable, Equatable {
    case dragBegan
    /// Velocity in pages per second (positive toward the next page); the page the scroll will stop on.
    case willEndDragging(velocity: Double, targetPage: Int?)
    case dragEnded(decelerate: Bool)
    case willBeginDecelerating
    case decelerationEnded
    case scrollAnimationEnded
    /// `animated` false: a jump with no animation (UIKit's `setContentOffset(_:animated: false)`
    /// sends one scrollViewDidScroll and nothing else), which settles the scroll at once.
    case pageChanged(from: Int, to: Int, count: Int, reason: Reason, direction: Direction? = nil, animated: Bool = true)
    case wrapped(from: Int, to: Int, count: Int)
    case edge(Edge)

    public var name: String {
      switch self {
      case .dragBegan: "drag-began"
      case .willEndDragging: "will-end-dragging"
      case .dragEnded: "drag-ended"
      case .willBeginDecelerating: "will-begin-decelerating"
      case .decelerationEnded: "deceleration-ended"
      case .scrollAnimationEnded: "scroll-animation-ended"
      case .pageChanged: "page-changed"
      case .wrapped: "wrapped"
      case .edge: "edge"
      }
    }
  }

  /// Every carousel message name, in the order of a scroll's life (for `hello`'s capabilities).
  public static let eventNames = [
    "drag-began", "will-end-dragging", "drag-ended", "will-begin-decelerating", "deceleration-ended",
    "scroll-animation-ended", "page-changed", "wrapped", "edge",
  ]

  /// Which way a page change went.
  public enum Direction: String, Sendable, CaseIterable {
    case next, previous
  }

  /// Which end of a bounded pager was pushed past.
  public enum Edge: String, Sendable, CaseIterable {
    case start, end
  }

  /// The largest velocity accepted, in pages per second.
  public static let maximumVelocity = 1000.0

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
    case .dragBegan, .willBeginDecelerating, .decelerationEnded, .scrollAnimationEnded:
      break
    case .willEndDragging(let velocity, let targetPage):
      members.append(("velocity", .number(velocity)))
      if let targetPage { members.append(("targetPage", .number(Double(targetPage)))) }
    case .dragEnded(let decelerate):
      members.append(("decelerate", .bool(decelerate)))
    case .pageChanged(let from, let to, let count, let reason, let direction, let animated):
      members += [
        ("from", .number(Double(from))), ("to", .number(Double(to))), ("count", .number(Double(count))),
        ("reason", .string(reason.rawValue)),
      ]
      if let direction { members.append(("direction", .string(direction.rawValue))) }
      if !animated { members.append(("animated", .bool(false))) }
    case .edge(let edge):
      members.append(("edge", .string(edge.rawValue)))
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
        .invalidRequest, "a carousel message needs an \"event\": \(eventNames.joined(separator: ", "))")
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
    case "will-end-dragging":
      guard let velocity = try fields.double("velocity") else {
        throw ProtocolError(.invalidRequest, "will-end-dragging needs \"velocity\" (pages per second, positive toward the next page)")
      }
      guard velocity.isFinite, abs(velocity) <= maximumVelocity else {
        throw ProtocolError(.outOfRange, "\"velocity\" is \(velocity); it must be between -\(Int(maximumVelocity)) and \(Int(maximumVelocity)) pages per second")
      }
      let target = try fields.integer("targetPage")
      if let target, !(0..<maximumPages).contains(target) {
        throw ProtocolError(.outOfRange, "\"targetPage\" is \(target); it must be a page index from 0")
      }
      event = .willEndDragging(velocity: velocity, targetPage: target)
    case "drag-ended": event = .dragEnded(decelerate: try fields.bool("decelerate") ?? false)
    case "will-begin-decelerating": event = .willBeginDecelerating
    case "deceleration-ended": event = .decelerationEnded
    case "scroll-animation-ended": event = .scrollAnimationEnded
    case "page-changed":
      let (from, to, count) = try pages()
      let raw = try fields.string("reason") ?? "programmatic"
      guard let reason = Reason(rawValue: raw) else {
        throw ProtocolError(.invalidRequest, "\"reason\" must be drag, key, auto or programmatic, not \"\(raw.prefix(32))\"")
      }
      var direction: Direction? = nil
      if let raw = try fields.string("direction") {
        guard let given = Direction(rawValue: raw) else {
          throw ProtocolError(.invalidRequest, "\"direction\" must be next or previous, not \"\(raw.prefix(32))\"")
        }
        direction = given
      }
      let animated = try fields.bool("animated") ?? true
      event = .pageChanged(from: from, to: to, count: count, reason: reason, direction: direction, animated: animated)
    case "wrapped":
      let (from, to, count) = try pages()
      event = .wrapped(from: from, to: to, count: count)
    case "edge":
      guard let raw = try fields.string("edge"), let edge = Edge(rawValue: raw) else {
        throw ProtocolError(.invalidRequest, "edge needs \"edge\": start (pushed past the first page) or end (past the last)")
      }
      event = .edge(edge)
    default:
      throw ProtocolError(
        .invalidRequest,
        "unknown carousel event \"\(name.prefix(64))\"; the events are \(eventNames.joined(separator: ", "))")
    }
    _ = try fields.integer("page")  // carousels may say which page they show; informational
    try fields.rejectUnread(op: "carousel \(name)")
    return CarouselMessage(carousel: carousel, event: event)
  }
}
