import CueProtocol

/// The carousel's page logic without a terminal: the five views, the slide, wraps, the messages
/// each action sends, and when auto-advance turns the page.
///
/// **Five views, recentred.** As in the looping UIScrollView carousels this demo is modelled on,
/// only five card views exist, showing pages current−2 … current+2 (modulo the page count). The
/// viewport rests on the middle one; a move slides it one view left or right, and when the slide
/// ends the carousel *recentres*: the page of the view it landed on becomes the current page and
/// the five views are filled anew around it, so the viewport is back on the middle view. However
/// far one pages, in either direction, nothing grows, and the last page is followed by the first.
///
/// **Messages, in UIScrollView's delegate order.** Every action returns the carousel messages it
/// causes, in the order they are to be sent:
/// - a key: `page-changed` (reason `key`), then `wrapped` if it wrapped; the slide is a
///   programmatic scroll, so `scroll-animation-ended` follows when it ends;
/// - the mouse wheel, modelled as a short drag that stops dead: `drag-began`, `page-changed`
///   (reason `drag`), `wrapped` if it wrapped, `drag-ended` (no deceleration);
/// - auto-advance: `page-changed` (reason `auto`), `wrapped` if it wrapped, and
///   `scroll-animation-ended` when its slide ends.
/// A move during a slide first finishes that slide (recentring, and its `scroll-animation-ended`).
///
/// Times are seconds on any monotonic clock, passed in: the type reads no clock itself.
struct Carousel {
  /// One step left or right.
  enum Step: Int, Sendable {
    case previous = -1
    case next = 1
  }

  /// What the user (or the clock) did.
  enum Action: Equatable, Sendable {
    /// An arrow key (or h/l).
    case key(Step)
    /// A notch of the mouse wheel.
    case wheel(Step)
  }

  /// A slide between two pages under way.
  struct Slide: Equatable, Sendable {
    let from: Int
    let to: Int
    let step: Step
    let startSeconds: Double
    /// Started by the program (a key, auto-advance), not a drag: ends with `scroll-animation-ended`.
    let programmatic: Bool
  }

  /// How many card views are kept, and which one the viewport rests on.
  static let viewCount = 5
  static let middleView = 2

  /// How long a slide takes, and how many frames it is drawn in.
  static let slideSeconds = 0.12
  static let slideFrames = 6

  /// The number of pages (at least 1).
  let pageCount: Int
  /// The page of the middle view: the page shown when no slide is under way (an index from 0).
  private(set) var current: Int
  /// The pages of the five views, left to right: current−2 … current+2, modulo `pageCount`.
  private(set) var views: [Int]
  /// The slide under way, if any.
  private(set) var slide: Slide? = nil
  /// When auto-advance is due.
  private(set) var autoAdvance: AutoAdvance

  /// A carousel of `pageCount` pages on page `start`, auto-advancing every `autoSeconds` (0: never).
  init(pageCount: Int, start: Int = 0, autoSeconds: Double, now: Double) {
    precondition(pageCount >= 1, "a carousel has at least one page")
    self.pageCount = pageCount
    self.current = Self.wrap(start, pageCount)
    self.views = Self.window(around: current, pageCount: pageCount)
    self.autoAdvance = AutoAdvance(intervalSeconds: autoSeconds, now: now)
  }

  /// The page the carousel is on: the page a slide under way is going to, else the current page.
  var page: Int { slide?.to ?? current }

  /// The five views' pages around `page`: page−2 … page+2, modulo `pageCount`.
  static func window(around page: Int, pageCount: Int) -> [Int] {
    (0..<viewCount).map { wrap(page + $0 - middleView, pageCount) }
  }

  /// `index` modulo `pageCount`, in 0..<pageCount even for negative indexes.
  static func wrap(_ index: Int, _ pageCount: Int) -> Int {
    let r = index % pageCount
    return r < 0 ? r + pageCount : r
  }

  /// Whether a step from `from` to `to` went round the end: forward to a lower page, or back to a higher one.
  static func wraps(from: Int, to: Int, step: Step) -> Bool {
    switch step {
    case .next: to <= from
    case .previous: to >= from
    }
  }

  // MARK: - Actions

  /// Does what the user did; returns the messages to send, in order.
  ///
  /// With a single page there is nowhere to go: nothing moves and nothing is sent.
  mutating func perform(_ action: Action, at now: Double) -> [CarouselMessage.Event] {
    autoAdvance.userInteracted(at: now)
    guard pageCount > 1 else { return [] }
    var events = finishSlide()
    switch action {
    case .key(let step):
      events += start(step, reason: .key, programmatic: true, at: now)
    case .wheel(let step):
      events.append(.dragBegan)
      events += start(step, reason: .drag, programmatic: false, at: now)
      events.append(.dragEnded(decelerate: false))
    }
    return events
  }

  /// Lets time pass: ends a slide whose time is up (recentring), then turns the page if
  /// auto-advance is due. Returns the messages to send, in order.
  mutating func tick(at now: Double) -> [CarouselMessage.Event] {
    var events: [CarouselMessage.Event] = []
    if let slide, now >= slide.startSeconds + Self.slideSeconds {
      events += finishSlide()
    }
    if slide == nil, autoAdvance.isDue(at: now) {
      autoAdvance.advanced(at: now)
      if pageCount > 1 { events += start(.next, reason: .auto, programmatic: true, at: now) }
    }
    return events
  }

  /// The next time `tick` has something to do (a frame of a slide, its end, auto-advance); nil: none.
  func nextDeadline(after now: Double) -> Double? {
    if let slide {
      let frame = Self.slideSeconds / Double(Self.slideFrames)
      let elapsed = max(0, now - slide.startSeconds)
      // The next frame strictly after now (a hair of slack, so that a frame's own time, give or
      // take rounding, counts as reached).
      let next = (elapsed / frame + 1e-6).rounded(.down) + 1
      return slide.startSeconds + min(Double(Self.slideFrames), next) * frame
    }
    return autoAdvance.dueSeconds
  }

  /// Where the viewport is, in views, relative to the middle view: 0 at rest, going to +1 (next)
  /// or −1 (previous) during a slide, eased out.
  func viewportOffset(at now: Double) -> Double {
    guard let slide else { return 0 }
    let t = min(1, max(0, (now - slide.startSeconds) / Self.slideSeconds))
    let eased = 1 - (1 - t) * (1 - t) * (1 - t)
    return eased * Double(slide.step.rawValue)
  }

  // MARK: - Slides

  /// Starts a slide one view over; returns its `page-changed` (and `wrapped`).
  private mutating func start(_ step: Step, reason: CarouselMessage.Reason, programmatic: Bool, at now: Double)
    -> [CarouselMessage.Event]
  {
    let from = current
    // The page comes from the neighbouring view, which already shows it.
    let to = views[Self.middleView + step.rawValue]
    slide = Slide(from: from, to: to, step: step, startSeconds: now, programmatic: programmatic)
    var events: [CarouselMessage.Event] = [.pageChanged(from: from, to: to, count: pageCount, reason: reason)]
    if Self.wraps(from: from, to: to, step: step) {
      events.append(.wrapped(from: from, to: to, count: pageCount))
    }
    return events
  }

  /// Ends the slide under way, if any, and recentres; returns `scroll-animation-ended` for a programmatic one.
  private mutating func finishSlide() -> [CarouselMessage.Event] {
    guard let ended = slide else { return [] }
    slide = nil
    current = views[Self.middleView + ended.step.rawValue]
    views = Self.window(around: current, pageCount: pageCount)
    return ended.programmatic ? [.scrollAnimationEnded] : []
  }
}
