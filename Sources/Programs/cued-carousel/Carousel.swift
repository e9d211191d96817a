import CueClient
import CueProtocol

/// The carousel's page logic without a terminal: where the viewport is, drags and flicks, keys,
/// the wheel, wraps and edges, the messages each of them sends, and when auto-advance turns the page.
///
/// **One position, in pages.** The viewport is at `anchor + offset`: `anchor` is the page it rests
/// on (counted on past the ends of a looping carousel, so that going round never jumps), `offset`
/// how far it is from there, in card widths, positive towards the next page. At rest the offset is
/// 0. The screen draws the cards around the position (`cards(at:)`), five or so, whatever the page
/// count: nothing grows however far one pages, and after the last page comes the first.
///
/// **A drag, as UIScrollView does it** (the seeds, 001 and 003). A button press grabs the cards
/// (and stops a slide under way); the first motion sends `drag-began`; the cards follow the
/// pointer, and whenever the page under the middle of the screen changes, `page-changed` (reason
/// `drag`) goes out, with `wrapped` when it went round an end. On release the pointer's velocity
/// (pages per second, over its last tenth of a second; 0 if it stood still) decides:
/// - standing still on a page boundary: `will-end-dragging` (velocity 0), `drag-ended`
///   (decelerate: false): the scroll has settled;
/// - otherwise the cards decelerate to a page: `will-end-dragging` (the velocity, the target page),
///   `drag-ended` (decelerate: true), `will-begin-decelerating`; then, as they coast, a
///   `page-changed` (reason `drag`) as the middle of the screen crosses into each page, one page at
///   a time, and `deceleration-ended` when they come to rest. A slow release snaps to the nearest
///   page, back or on; a flick goes at least one page its way, further the faster it was (the
///   position it would coast to in `projectionSeconds`), at most `maxFlickPages`. A press during
///   the coast stops the cards where they are (UIKit sends no end for the interrupted coast): the
///   page under the middle then is the last page sent, so the page heard last is the page shown.
///
/// **Bounded pagers** (`loops: false`, seed 002's UIPageViewController that returns nil past the
/// ends): dragging past the first or last page stretches a rubber band (the cards move less than
/// the pointer) and sends `edge` once per drag; on release they spring back. A key or a wheel notch
/// past an end sends `edge` and bumps. Auto-advance goes back to the first page after the last.
///
/// **Keys and the wheel.** A key is a programmatic scroll: `page-changed` (reason `key`), `wrapped`
/// if it wrapped, and `scroll-animation-ended` when its slide ends. A wheel notch is the same with
/// the reason `programmatic`: nothing was touched, so no drag is invented (a scroll view moved by
/// its owner, as `setContentOffset(_:animated: true)` moves it). A key or notch during a slide
/// first ends that slide (and sends its end).
///
/// **Auto-advance** (seed 003): every `autoSeconds` the page turns (reason `auto`, a programmatic
/// scroll). A drag, a key or a notch holds it; it resumes when the scroll has settled, and the next
/// automatic page comes exactly `resumeDelaySeconds` (3 s) after that. **The crawl** is seed 003 as
/// written (`crawlPagesPerSecond` > 0): when auto-advance is due, the view creeps on continuously
/// (the seed moves the offset a point every 0.05 s, and UIKit calls only scrollViewDidScroll), each
/// page boundary it crosses a page change (reason `auto`; nothing settles while it moves). It ends
/// with one `scroll-animation-ended`, the crawl's one settle: when it stops for good at the end of a
/// bounded pager, or when the user takes over (before the drag's `drag-began`, the key's or the
/// notch's page change); a press stops it where it is, a key or notch takes over from there. The
/// tracker's `autoScroll` and `stopAutoScroll` send these, as for any pager.
///
/// Times are seconds on any monotonic clock, passed in: the type reads no clock itself. Pointer
/// positions are in card strides (a card and its gap) from any fixed origin: the screen converts.
struct Carousel {
  /// One step left or right.
  enum Step: Int, Sendable {
    case previous = -1
    case next = 1
  }

  /// What the user did.
  enum Action: Equatable, Sendable {
    /// An arrow key (or h/l).
    case key(Step)
    /// A notch of the mouse wheel.
    case wheel(Step)
    /// The (left) mouse button went down with the pointer at `x` (in card strides).
    case press(x: Double)
    /// The pointer moved to `x` with the button held.
    case motion(x: Double)
    /// The button came up with the pointer at `x`.
    case release(x: Double)
  }

  /// A scroll animation under way: the offset goes from `fromOffset` to 0, eased out.
  struct Animation: Equatable, Sendable {
    enum Kind: Equatable, Sendable {
      /// A key or auto-advance: ends with `scroll-animation-ended`.
      case programmatic
      /// After a drag or a wheel notch: ends with `deceleration-ended`.
      case deceleration
      /// A key or notch against the end of a bounded pager: no message.
      case bump
    }
    let kind: Kind
    let fromOffset: Double
    let startSeconds: Double
    let durationSeconds: Double

    var endSeconds: Double { startSeconds + durationSeconds }

    /// The offset at `now`: an ease-out cubic from `fromOffset` to 0 (a bump goes out and back).
    func offset(at now: Double) -> Double {
      let t = durationSeconds > 0 ? min(1, max(0, (now - startSeconds) / durationSeconds)) : 1
      if kind == .bump { return fromOffset * 4 * t * (1 - t) }
      let remaining = 1 - t
      return fromOffset * remaining * remaining * remaining
    }
  }

  /// A pointer position, for the velocity.
  struct Sample: Equatable, Sendable {
    let seconds: Double
    let position: Double
  }

  /// A drag under way.
  struct Drag: Equatable, Sendable {
    /// Where the button went down, and the (unstretched) position then.
    let pressX: Double
    let pressPosition: Double
    /// The page the drag started on (a flick is counted from there).
    let startAnchor: Int
    /// Whether `drag-began` was sent (at the first motion, or at once when it grabbed a moving carousel).
    var began: Bool
    /// Whether this drag already sent `edge`.
    var edgeSent = false
    /// Where the pointer puts the carousel, unstretched (before the rubber band), in pages.
    var rawPosition: Double
    /// The last few positions, for the release velocity.
    var samples: [Sample]
  }

  /// The crawl under way: the position (in pages) moves on at `pagesPerSecond` from `startPosition`.
  struct Crawl: Equatable, Sendable {
    let startSeconds: Double
    let startPosition: Double
    let pagesPerSecond: Double

    func position(at now: Double) -> Double { startPosition + max(0, now - startSeconds) * pagesPerSecond }
  }

  enum Motion: Equatable, Sendable {
    case resting
    case dragging(Drag)
    case animating(Animation)
    case crawling(Crawl)
  }

  /// How long a key's or a notch's slide takes; frames are drawn every `frameSeconds`.
  static let slideSeconds = 0.12
  static let frameSeconds = 0.02
  /// Velocities under this (pages per second) count as standing still.
  static let stillVelocity = 0.5
  /// A pointer that has not moved for this long before the release stood still.
  static let stillSeconds = 0.1
  /// How far ahead a flick is projected: the target is the page nearest to where it would coast.
  static let projectionSeconds = 0.3
  /// How far past an end a drag must pull (in card widths) to count as pushing past it.
  static let edgeThreshold = 0.05
  /// A deceleration lasts between these (seconds), matched to the release velocity.
  static let decelerationRange = 0.15...0.6
  /// How far a bump moves (card widths).
  static let bumpDistance = 0.06

  /// The number of pages (at least 1).
  let pageCount: Int
  /// Whether the last page is followed by the first (false: a bounded pager).
  let loops: Bool
  /// The crawl's speed in pages per second; 0: auto-advance turns whole pages.
  let crawlPagesPerSecond: Double
  /// A bounded pager's ends stretch like a rubber band and spring back (UIScrollView's `bounces`);
  /// false: the cards stop hard at the first and last page. Pushing past an end sends `edge` either
  /// way: the user pushed against it, and cued may sound that.
  let bounces: Bool
  /// The most pages one flick crosses.
  let maxFlickPages: Int
  /// The page the viewport rests on or is going to, counted on past the ends when it loops.
  var anchor: Int
  /// Derives the page changes from where the view is, as the client library does for any pager.
  var tracker: ScrollTracker
  var motion: Motion = .resting
  /// When auto-advance is due.
  var autoAdvance: AutoAdvance

  /// A carousel of `pageCount` pages on page `start`, auto-advancing every `autoSeconds` (0: never)
  /// and resuming `resumeDelaySeconds` after a scroll settles.
  init(
    pageCount: Int, start: Int = 0, loops: Bool = true, bounces: Bool = true, autoSeconds: Double, crawlPagesPerSecond: Double = 0,
    resumeDelaySeconds: Double = AutoAdvance.defaultResumeDelaySeconds, maxFlickPages: Int = 5, now: Double
  ) {
    precondition(pageCount >= 1, "a carousel has at least one page")
    self.pageCount = pageCount
    self.loops = loops
    self.bounces = bounces
    self.crawlPagesPerSecond = max(0, crawlPagesPerSecond)
    // Round a looping carousel and back to the same page is no flick: at most all the other pages.
    self.maxFlickPages = max(1, loops ? min(maxFlickPages, pageCount - 1) : maxFlickPages)
    self.anchor = loops ? Self.wrap(start, pageCount) : min(max(0, start), pageCount - 1)
    self.tracker = ScrollTracker(pageCount: pageCount, pageWidth: 1, page: start, loops: loops)
    self.autoAdvance = AutoAdvance(intervalSeconds: autoSeconds, resumeDelaySeconds: resumeDelaySeconds, now: now)
  }

  /// The page the carousel is on, as last sent: the one under the middle of the screen during a
  /// drag, a coast or the crawl, the one a key's slide is going to, else the one it rests on.
  var page: Int { tracker.page }

  /// Whether a slide or deceleration is under way.
  var isAnimating: Bool {
    if case .animating = motion { return true }
    return false
  }

  /// Whether the crawl is under way.
  var isCrawling: Bool {
    if case .crawling = motion { return true }
    return false
  }

  /// Whether the button is held on the cards.
  var isDragging: Bool {
    if case .dragging = motion { return true }
    return false
  }

  /// `index` modulo `pageCount`, in 0..<pageCount even for negative indexes.
  static func wrap(_ index: Int, _ pageCount: Int) -> Int {
    let r = index % pageCount
    return r < 0 ? r + pageCount : r
  }

  /// The page at position `index` (nil past the ends of a bounded pager).
  func pageAt(_ index: Int) -> Int? {
    if loops { return Self.wrap(index, pageCount) }
    return (0..<pageCount).contains(index) ? index : nil
  }

  /// Where the viewport is, in card widths from the page it rests on (`anchor`): 0 at rest.
  func viewportOffset(at now: Double) -> Double {
    switch motion {
    case .resting: 0
    case .dragging(let drag): displayed(drag.rawPosition) - Double(anchor)
    case .animating(let animation): animation.offset(at: now)
    case .crawling(let crawl): crawl.position(at: now) - Double(anchor)
    }
  }

  /// The cards in sight at `now`: each page with its place relative to the middle of the screen,
  /// in card strides (0: centred; −1: one to the left).
  func cards(at now: Double, reach: Int = 2) -> [(page: Int, place: Double)] {
    let offset = viewportOffset(at: now)
    let low = Int(offset.rounded(.down)) - reach
    let high = Int(offset.rounded(.up)) + reach
    return (low...high).compactMap { k in pageAt(anchor + k).map { ($0, Double(k) - offset) } }
  }

  // MARK: - Actions

  /// Does what the user did at `now`; returns the messages to send, in order.
  ///
  /// With a single page there is nowhere to go: nothing moves and nothing is sent.
  mutating func perform(_ action: Action, at now: Double) -> [CarouselMessage.Event] {
    guard pageCount > 1 else { return [] }
    switch action {
    case .key(let step):
      guard !isDragging else { return [] }
      autoAdvance.hold()
      let (from, ended) = stopCrawl(at: now)
      return ended + finishAnimation(at: now) + programmaticStep(step, reason: .key, from: from, at: now)
    case .wheel(let step):
      guard !isDragging else { return [] }
      autoAdvance.hold()
      let (from, ended) = stopCrawl(at: now)
      return ended + finishAnimation(at: now) + wheelNotch(step, from: from, at: now)
    case .press(let x):
      return press(x: x, at: now)
    case .motion(let x):
      return move(to: x, at: now)
    case .release(let x):
      return release(x: x, at: now)
    }
  }

  /// Lets time pass: ends an animation whose time is up, then turns the page if auto-advance is
  /// due. Returns the messages to send, in order.
  mutating func tick(at now: Double) -> [CarouselMessage.Event] {
    var events: [CarouselMessage.Event] = []
    if case .animating(let animation) = motion, animation.kind == .deceleration {
      events += coast(to: Double(anchor) + animation.offset(at: now))
    }
    if case .animating(let animation) = motion, now >= animation.endSeconds {
      events += finishAnimation(at: now)
    }
    if case .crawling(let crawl) = motion {
      events += crawlOn(crawl, at: now)
    }
    if case .resting = motion, autoAdvance.isDue(at: now) {
      autoAdvance.advanced(at: now)
      if pageCount > 1 {
        if crawlPagesPerSecond > 0 {
          startCrawl(at: now)
        } else {
          events += autoStep(at: now)
        }
      }
    }
    return events
  }

  /// The next time `tick` has something to do (a frame of an animation, its end, auto-advance); nil: none.
  func nextDeadline(after now: Double) -> Double? {
    switch motion {
    case .animating(let animation):
      let elapsed = max(0, now - animation.startSeconds)
      // The next frame strictly after now (a hair of slack, so that a frame's own time, give or
      // take rounding, counts as reached).
      let next = (elapsed / Self.frameSeconds + 1e-6).rounded(.down) + 1
      return min(animation.endSeconds, animation.startSeconds + next * Self.frameSeconds)
    case .dragging:
      return nil
    case .crawling:
      return now + Self.frameSeconds
    case .resting:
      return autoAdvance.dueSeconds
    }
  }

  // MARK: - Keys, the wheel, auto-advance

  /// A key: a programmatic slide one page over, or a bump and `edge` at the end of a bounded pager.
  /// `from`: where the view is, in card widths from the anchor (a crawl stopped part of the way).
  mutating func programmaticStep(
    _ step: Step, reason: CarouselMessage.Reason, from offset: Double = 0, at now: Double
  ) -> [CarouselMessage.Event] {
    guard let events = pageChange(to: anchor + step.rawValue, reason: reason) else {
      return bump(step, at: now)
    }
    motion = .animating(
      Animation(kind: .programmatic, fromOffset: offset - Double(step.rawValue), startSeconds: now, durationSeconds: Self.slideSeconds))
    return events
  }

  /// A wheel notch: an animated programmatic scroll one page over (or a bump at an end).
  mutating func wheelNotch(_ step: Step, from offset: Double = 0, at now: Double) -> [CarouselMessage.Event] {
    programmaticStep(step, reason: .programmatic, from: offset, at: now)
  }

  // MARK: - The crawl

  /// Starts creeping on from where the view rests.
  mutating func startCrawl(at now: Double) {
    motion = .crawling(Crawl(startSeconds: now, startPosition: Double(anchor), pagesPerSecond: crawlPagesPerSecond))
    // The timer's first step: from now on the tracker knows an auto-scroll is under way.
    _ = tracker.autoScroll(toOffset: Double(anchor))
  }

  /// The crawl at `now`: a page change when the middle crossed into another page (the tracker's
  /// auto-scroll, one page at a time); at the end of a bounded pager it stops there, for good
  /// (until the user scrolls), and its end settles it.
  mutating func crawlOn(_ crawl: Crawl, at now: Double) -> [CarouselMessage.Event] {
    var position = crawl.position(at: now)
    let last = Double(pageCount - 1)
    let reachedEnd = !loops && position >= last
    if reachedEnd { position = last }
    var events = step(to: position, reason: .auto)
    anchor = clamped(Int(position.rounded()))
    if reachedEnd {
      motion = .resting
      autoAdvance.hold()
      events += tracker.stopAutoScroll()
    }
    return events
  }

  /// Stops the crawl where it is: the page the middle crossed into since the last frame, and the
  /// crawl's end (`scroll-animation-ended`), which settles it; `offset`: the view's offset from the
  /// anchor then (0 without a crawl).
  mutating func stopCrawl(at now: Double) -> (offset: Double, events: [CarouselMessage.Event]) {
    guard case .crawling(let crawl) = motion else { return (0, []) }
    let events = crawlOn(crawl, at: now) + tracker.stopAutoScroll()
    let offset = viewportOffset(at: now)
    motion = .resting
    return (offset, events)
  }

  /// A flick's coast at `position` (pages): a `page-changed` (reason `drag`) for each page the
  /// middle of the screen crossed into since the last frame, one page at a time, so each is heard
  /// as the cards reach it.
  mutating func coast(to position: Double) -> [CarouselMessage.Event] {
    step(to: position, reason: .drag)
  }

  /// Moves the tracker one page at a time to the page under the middle at `position`: by its
  /// auto-scroll for `auto` (the crawl), else as the view moved for `reason`; the messages it returned.
  private mutating func step(to position: Double, reason: CarouselMessage.Reason) -> [CarouselMessage.Event] {
    let under = clamped(Int(position.rounded()))
    var events: [CarouselMessage.Event] = []
    while tracker.index != under {
      let next = Double(tracker.index + (under > tracker.index ? 1 : -1))
      events += reason == .auto ? tracker.autoScroll(toOffset: next) : tracker.move(toOffset: next, reason: reason)
    }
    return events
  }

  /// Auto-advance: the next page, or back to the first after the last page of a bounded pager.
  mutating func autoStep(at now: Double) -> [CarouselMessage.Event] {
    let target = pageAt(anchor + 1) != nil ? anchor + 1 : 0
    let distance = target - anchor
    guard let events = pageChange(to: target, reason: .auto) else { return [] }
    let seconds = min(0.4, Self.slideSeconds + 0.04 * Double(abs(distance) - 1))
    motion = .animating(Animation(kind: .programmatic, fromOffset: -Double(distance), startSeconds: now, durationSeconds: seconds))
    return events
  }

  /// A key or notch against an end: `edge`, and the cards nudge that way and back (stay put
  /// without bounces).
  mutating func bump(_ step: Step, at now: Double) -> [CarouselMessage.Event] {
    guard bounces else { return [.edge(step == .next ? .end : .start)] }
    motion = .animating(
      Animation(kind: .bump, fromOffset: Self.bumpDistance * Double(step.rawValue), startSeconds: now, durationSeconds: Self.slideSeconds))
    return [.edge(step == .next ? .end : .start)]
  }

  /// Ends the animation under way, if any; returns its end message (and notes the settled scroll).
  /// A coast ended early (a key) first sends the pages it had still to cross.
  mutating func finishAnimation(at now: Double) -> [CarouselMessage.Event] {
    guard case .animating(let animation) = motion else { return [] }
    motion = .resting
    autoAdvance.settled(at: now)
    switch animation.kind {
    case .programmatic: return [.scrollAnimationEnded]
    case .deceleration: return coast(to: Double(anchor)) + [.decelerationEnded]
    case .bump: return []
    }
  }

  // MARK: - Page changes

  /// Moves the anchor to `target`; returns `page-changed` (with the direction) and `wrapped` when
  /// the move went round an end; nil when `target` is not a page (past the end of a bounded pager).
  /// The messages come from the client library's `ScrollTracker`, as any program that forwards a
  /// scroll view gets them (its content offset here in pages: a page is 1 wide).
  mutating func pageChange(to target: Int, reason: CarouselMessage.Reason, animated: Bool = true) -> [CarouselMessage.Event]? {
    guard pageAt(target) != nil else { return nil }
    anchor = target
    return tracker.move(toOffset: Double(target), reason: reason, animated: animated)
  }
}
