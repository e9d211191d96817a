import CueProtocol

/// Turns what a paging scroll view knows into cued's carousel messages, in UIKit's units and in
/// its delegate order: a program that forwards UIScrollViewDelegate calls (or any toolkit's
/// equivalents) sends the right lifecycle without doing cued's arithmetic itself.
///
/// Offsets are content offsets along the paging axis, in points; `pageWidth` is one page in
/// points (the scroll view's width, or height for a vertical pager). The page is the one under the
/// middle of the view, as the seeds' carousels compute it in scrollViewDidScroll:
/// `round(offset / pageWidth)`, kept within `0..<pageCount` (a looping pager's offset runs on past
/// its ends, and the page is that index modulo `pageCount`: going round sends `wrapped` too).
/// UIKit's velocity is in points per millisecond (scrollViewWillEndDragging); cued takes pages per
/// second: `velocity × 1000 / pageWidth`.
///
/// Each method returns the messages to send, in order (send them with `CueClient.send(_:)` as
/// fire-and-forget carousel lines). `page-changed` goes out whenever the page under the middle
/// changes: with the reason `drag` while a drag or its deceleration moves the view, `programmatic`
/// while `setContentOffset` does, `auto` while an auto-scroll's timer moves it (`autoScroll`).
/// A jump with `animated: false` is the whole scroll (`"animated": false`: cued settles it at
/// once); an animated one ends with `didEndScrollingAnimation`.
///
/// **Auto-scroll** (seed 003: a timer moves the content offset a little at a time, and UIKit calls
/// nothing but scrollViewDidScroll): `autoScroll(toOffset:)` on each step sends the page changes as
/// the pages are crossed (reason `auto`) and nothing that settles; `stopAutoScroll()` when the
/// timer stops (the end of a bounded pager) sends `scroll-animation-ended`, the one settle of the
/// whole crawl; and when the user takes over (`willBeginDragging`, `setContentOffset`) that end goes
/// out first, by itself.
///
/// **Edges.** A bounded pager (`loops: false`) whose offset goes past its first or last page
/// (UIKit's rubber band while the user drags it or its deceleration bounces) sends `edge` once per
/// scroll, when it is more than `edgeThreshold` of a page past the end. A pure value: no I/O, no
/// clock.
public struct ScrollTracker: Sendable, Equatable {
  public let pageCount: Int
  /// One page along the paging axis, in points.
  public var pageWidth: Double
  /// The last page is followed by the first (the offset runs on past the ends).
  public let loops: Bool
  /// The page under the middle of the view, counted on past the ends of a looping pager.
  public private(set) var index: Int
  /// The page under the middle of the view, as last reported.
  public var page: Int { Self.wrap(index, pageCount) }

  /// How far past an end (in pages) a bounded pager's offset must go to count as a push past it.
  public static let edgeThreshold = 0.05

  private enum Mover: Sendable, Equatable { case none, user, program, auto }
  private var mover = Mover.none
  /// Whether this scroll already sent `edge`.
  private var edgeSent = false

  /// A pager of `pageCount` pages, `pageWidth` points each, showing `page`.
  public init(pageCount: Int, pageWidth: Double, page: Int = 0, loops: Bool = false) {
    precondition(pageCount >= 1 && pageWidth > 0, "a pager has pages, and they have a width")
    self.pageCount = pageCount
    self.pageWidth = pageWidth
    self.loops = loops
    self.index = loops ? Self.wrap(page, pageCount) : min(max(0, page), pageCount - 1)
  }

  /// The page under the middle of a view at `contentOffset` (points).
  public func page(atOffset contentOffset: Double) -> Int { Self.wrap(index(atOffset: contentOffset), pageCount) }

  /// The page index under the middle at `contentOffset`, counted on past the ends when looping.
  func index(atOffset contentOffset: Double) -> Int {
    guard contentOffset.isFinite else { return index }
    let nearest = Int((contentOffset / pageWidth).rounded())
    return loops ? nearest : min(max(0, nearest), pageCount - 1)
  }

  /// `index` modulo `pageCount`, in 0..<pageCount even for negative indexes.
  public static func wrap(_ index: Int, _ pageCount: Int) -> Int {
    let r = index % pageCount
    return r < 0 ? r + pageCount : r
  }

  /// UIKit's velocity (points per millisecond) in cued's unit, pages per second.
  public static func pagesPerSecond(pointsPerMillisecond: Double, pageWidth: Double) -> Double {
    pointsPerMillisecond * 1000 / pageWidth
  }

  /// scrollViewWillBeginDragging.
  /// An auto-scroll under way ends first (`scroll-animation-ended`): the user took over.
  public mutating func willBeginDragging() -> [CarouselMessage.Event] {
    let ended = stopAutoScroll()
    mover = .user
    edgeSent = false
    return ended + [.dragBegan]
  }

  /// scrollViewDidScroll: a page change when the page under the middle changed, and `edge` when
  /// the user's scroll took a bounded pager past an end.
  public mutating func didScroll(contentOffset: Double) -> [CarouselMessage.Event] {
    let reason: CarouselMessage.Reason =
      switch mover {
      case .program: .programmatic
      case .auto: .auto
      case .user, .none: .drag
      }
    return edge(atOffset: contentOffset) + move(toOffset: contentOffset, reason: reason)
  }

  /// `edge` when the user's scroll (a drag or its deceleration) has taken a bounded pager more than
  /// `edgeThreshold` of a page past an end, once per scroll.
  mutating func edge(atOffset contentOffset: Double) -> [CarouselMessage.Event] {
    guard !loops, mover == .user, !edgeSent, contentOffset.isFinite else { return [] }
    let pages = contentOffset / pageWidth
    if pages < -Self.edgeThreshold {
      edgeSent = true
      return [.edge(.start)]
    }
    if pages > Double(pageCount - 1) + Self.edgeThreshold {
      edgeSent = true
      return [.edge(.end)]
    }
    return []
  }

  /// An auto-scroll's timer set the content offset (seed 003): the page changes it crossed, with
  /// the reason `auto`. Nothing settles while it moves.
  public mutating func autoScroll(toOffset contentOffset: Double) -> [CarouselMessage.Event] {
    mover = .auto
    return move(toOffset: contentOffset, reason: .auto)
  }

  /// The auto-scroll stopped (its timer stopped, or it reached the end of a bounded pager):
  /// `scroll-animation-ended`, which settles it, when one was under way; else nothing.
  public mutating func stopAutoScroll() -> [CarouselMessage.Event] {
    guard mover == .auto else { return [] }
    mover = .none
    return [.scrollAnimationEnded]
  }

  /// The view is now at `contentOffset` for `reason` (a key, auto-scroll, … where the caller knows
  /// better than the delegate order): the page change, and `wrapped` when it went round an end.
  public mutating func move(toOffset contentOffset: Double, reason: CarouselMessage.Reason, animated: Bool = true) -> [CarouselMessage.Event] {
    let target = index(atOffset: contentOffset)
    guard target != index else { return [] }
    let from = index
    index = target
    var events: [CarouselMessage.Event] = [
      .pageChanged(
        from: Self.wrap(from, pageCount), to: page, count: pageCount, reason: reason, direction: target > from ? .next : .previous,
        animated: animated)
    ]
    if loops, Self.floorDivision(from, pageCount) != Self.floorDivision(target, pageCount) {
      events.append(.wrapped(from: Self.wrap(from, pageCount), to: page, count: pageCount))
    }
    return events
  }

  /// The view rests at `contentOffset` without a page change being sent: a pager that announced a
  /// target page ahead of the view (a key's slide, at the key) and was stopped short of it, where
  /// changing back would sound the pages it never reached in reverse.
  public mutating func rest(atOffset contentOffset: Double) {
    index = index(atOffset: contentOffset)
  }

  static func floorDivision(_ a: Int, _ b: Int) -> Int { a >= 0 ? a / b : -((-a + b - 1) / b) }

  /// scrollViewWillEndDragging(_:withVelocity:targetContentOffset:), with the velocity and target
  /// along the paging axis.
  public mutating func willEndDragging(velocityPointsPerMillisecond: Double, targetContentOffset: Double) -> [CarouselMessage.Event] {
    let velocity = Self.pagesPerSecond(pointsPerMillisecond: velocityPointsPerMillisecond, pageWidth: pageWidth)
    let bounded = velocity.isFinite ? min(max(velocity, -CarouselMessage.maximumVelocity), CarouselMessage.maximumVelocity) : 0
    return [.willEndDragging(velocity: bounded, targetPage: page(atOffset: targetContentOffset))]
  }

  /// scrollViewDidEndDragging(_:willDecelerate:).
  public mutating func didEndDragging(willDecelerate: Bool) -> [CarouselMessage.Event] {
    if !willDecelerate { mover = .none }
    return [.dragEnded(decelerate: willDecelerate)]
  }

  /// scrollViewWillBeginDecelerating.
  public mutating func willBeginDecelerating() -> [CarouselMessage.Event] { [.willBeginDecelerating] }

  /// scrollViewDidEndDecelerating.
  public mutating func didEndDecelerating() -> [CarouselMessage.Event] {
    mover = .none
    return [.decelerationEnded]
  }

  /// setContentOffset(_:animated:) called by the program. Not animated, it is the whole scroll
  /// (UIKit calls scrollViewDidScroll once and nothing else): the page change says
  /// `"animated": false`. Animated, the page changes come from `didScroll` as it moves, and
  /// `didEndScrollingAnimation` ends it.
  /// An auto-scroll under way ends first.
  public mutating func setContentOffset(_ contentOffset: Double, animated: Bool) -> [CarouselMessage.Event] {
    let ended = stopAutoScroll()
    if animated {
      mover = .program
      return ended
    }
    mover = .none
    return ended + move(toOffset: contentOffset, reason: .programmatic, animated: false)
  }

  /// scrollViewDidEndScrollingAnimation.
  public mutating func didEndScrollingAnimation() -> [CarouselMessage.Event] {
    mover = .none
    return [.scrollAnimationEnded]
  }
}
