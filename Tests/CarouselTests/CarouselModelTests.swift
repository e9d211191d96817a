import CueProtocol
import Testing

@testable import CarouselProgram

/// The carousel's pure parts, without a terminal: the position and its animations, drags,
/// flicks and the rubber band, auto-advance, input decoding, the status line and the layout.
@Suite("The carousel's page logic")
struct CarouselModelTests {
  typealias Event = CarouselMessage.Event

  static func changed(_ from: Int, _ to: Int, of count: Int, _ reason: CarouselMessage.Reason, _ direction: CarouselMessage.Direction)
    -> Event
  {
    .pageChanged(from: from, to: to, count: count, reason: reason, direction: direction)
  }

  /// Runs an animation to its end; returns what that sent.
  static func settle(_ carousel: inout Carousel, at now: Double) -> [Event] {
    guard case .animating(let animation) = carousel.motion else { return [] }
    return carousel.tick(at: max(now, animation.endSeconds))
  }

  /// A drag from `from` to `to` (card strides) in `steps` motions `interval` apart, starting at
  /// `start`; released at `to` after `still` seconds without motion. Returns every message, in order.
  static func drag(
    _ carousel: inout Carousel, from: Double, to: Double, steps: Int, interval: Double, start: Double, still: Double
  ) -> [Event] {
    var events = carousel.perform(.press(x: from), at: start)
    for i in 1...steps {
      let x = from + (to - from) * Double(i) / Double(steps)
      events += carousel.perform(.motion(x: x), at: start + interval * Double(i))
    }
    events += carousel.perform(.release(x: to), at: start + interval * Double(steps) + still)
    return events
  }

  /// The pages of the cards in sight at rest, left to right.
  static func pages(_ carousel: Carousel, at now: Double = 0) -> [Int] { carousel.cards(at: now).map(\.page) }

  @Test func theCardsAroundThePageGoRoundModuloTheCount() {
    func pages(_ count: Int, on page: Int) -> [Int] { Self.pages(Carousel(pageCount: count, start: page, autoSeconds: 0, now: 0)) }
    #expect(pages(5, on: 0) == [3, 4, 0, 1, 2])
    #expect(pages(5, on: 4) == [2, 3, 4, 0, 1])
    #expect(pages(7, on: 1) == [6, 0, 1, 2, 3])
    #expect(pages(2, on: 0) == [0, 1, 0, 1, 0])
    #expect(pages(1, on: 0) == [0, 0, 0, 0, 0])
    #expect(Carousel(pageCount: 5, autoSeconds: 0, now: 0).cards(at: 0).map(\.place) == [-2, -1, 0, 1, 2])
    // A bounded pager has no page before the first.
    #expect(Self.pages(Carousel(pageCount: 5, loops: false, autoSeconds: 0, now: 0)) == [0, 1, 2])
  }

  // MARK: Keys and the wheel

  @Test func aKeySlidesToTheNeighbourAndEndsWithScrollAnimationEnded() {
    var carousel = Carousel(pageCount: 5, autoSeconds: 0, now: 0)
    #expect(carousel.perform(.key(.next), at: 1) == [Self.changed(0, 1, of: 5, .key, .next)])
    // The page is the new one at once; the viewport comes from the old one (one card to the left).
    #expect(carousel.page == 1 && carousel.isAnimating)
    #expect(carousel.viewportOffset(at: 1) == -1)
    #expect(carousel.tick(at: 1.06) == [])
    let halfway = carousel.viewportOffset(at: 1.06)
    #expect(halfway > -1 && halfway < 0)
    #expect(carousel.tick(at: 1.12) == [.scrollAnimationEnded])
    #expect(!carousel.isAnimating && Self.pages(carousel, at: 1.12) == [4, 0, 1, 2, 3])
    #expect(carousel.viewportOffset(at: 1.2) == 0)
  }

  @Test func slidesAreDrawnInSixFrames() {
    var carousel = Carousel(pageCount: 5, autoSeconds: 0, now: 0)
    _ = carousel.perform(.key(.previous), at: 10)
    var frames: [Double] = []
    var now = 10.0
    while let next = carousel.nextDeadline(after: now), carousel.isAnimating, frames.count < 100 {
      frames.append(next)
      now = next
      _ = carousel.tick(at: now)
    }
    #expect(frames.count == 6)
    #expect(abs(frames.last! - 10.12) < 1e-9)
    #expect(carousel.page == 4)
  }

  @Test func goingRoundEitherEndWrapsAfterThePageChange() {
    var carousel = Carousel(pageCount: 5, autoSeconds: 0, now: 0)
    #expect(carousel.perform(.key(.previous), at: 0) == [Self.changed(0, 4, of: 5, .key, .previous), .wrapped(from: 0, to: 4, count: 5)])
    _ = Self.settle(&carousel, at: 0)
    #expect(carousel.perform(.key(.next), at: 1) == [Self.changed(4, 0, of: 5, .key, .next), .wrapped(from: 4, to: 0, count: 5)])
    _ = Self.settle(&carousel, at: 1)
    #expect(carousel.perform(.key(.next), at: 2) == [Self.changed(0, 1, of: 5, .key, .next)])
  }

  @Test func twoPagesSayWhichWayTheyWent() {
    // With two pages the shorter way round is a tie: the direction says it, and wraps are every other step.
    var carousel = Carousel(pageCount: 2, autoSeconds: 0, now: 0)
    #expect(carousel.perform(.key(.next), at: 0) == [Self.changed(0, 1, of: 2, .key, .next)])
    _ = Self.settle(&carousel, at: 0)
    #expect(carousel.perform(.key(.next), at: 1) == [Self.changed(1, 0, of: 2, .key, .next), .wrapped(from: 1, to: 0, count: 2)])
    _ = Self.settle(&carousel, at: 1)
    #expect(
      carousel.perform(.key(.previous), at: 2) == [Self.changed(0, 1, of: 2, .key, .previous), .wrapped(from: 0, to: 1, count: 2)])
    _ = Self.settle(&carousel, at: 2)
    #expect(carousel.perform(.key(.previous), at: 3) == [Self.changed(1, 0, of: 2, .key, .previous)])
  }

  /// The wheel moves the scroll view without touching it: an animated programmatic scroll, no drag.
  @Test func theWheelIsAnAnimatedScrollWithNoInventedDrag() {
    var carousel = Carousel(pageCount: 5, autoSeconds: 0, now: 0)
    #expect(carousel.perform(.wheel(.next), at: 0) == [Self.changed(0, 1, of: 5, .programmatic, .next)])
    #expect(Self.settle(&carousel, at: 0) == [.scrollAnimationEnded])
    #expect(carousel.perform(.wheel(.previous), at: 1) == [Self.changed(1, 0, of: 5, .programmatic, .previous)])
    // A notch during the slide ends it first.
    #expect(
      carousel.perform(.wheel(.previous), at: 1.05) == [
        .scrollAnimationEnded, Self.changed(0, 4, of: 5, .programmatic, .previous), .wrapped(from: 0, to: 4, count: 5),
      ])
  }

  @Test func aKeyDuringASlideFinishesThatSlideFirst() {
    var carousel = Carousel(pageCount: 5, autoSeconds: 0, now: 0)
    _ = carousel.perform(.key(.next), at: 0)
    #expect(carousel.perform(.key(.next), at: 0.05) == [.scrollAnimationEnded, Self.changed(1, 2, of: 5, .key, .next)])
    #expect(carousel.page == 2)
  }

  @Test("paging round and round lands on the right page", arguments: [1, 2, 3, 7])
  func pagingRoundAndRound(pageCount: Int) {
    var carousel = Carousel(pageCount: pageCount, autoSeconds: 0, now: 0)
    var now = 0.0
    for _ in 0..<23 {
      _ = carousel.perform(.key(.next), at: now)
      now += 1
      _ = carousel.tick(at: now)
    }
    #expect(carousel.page == 23 % pageCount)
    for _ in 0..<30 {
      _ = carousel.perform(.wheel(.previous), at: now)
      now += 1
      _ = carousel.tick(at: now)
    }
    #expect(carousel.page == Carousel.wrap(23 - 30, pageCount))
    #expect(Self.pages(carousel, at: now) == (-2...2).map { Carousel.wrap(carousel.page + $0, pageCount) })
  }

  @Test func aSinglePageGoesNowhereAndSendsNothing() {
    var carousel = Carousel(pageCount: 1, autoSeconds: 1, now: 0)
    #expect(carousel.perform(.key(.next), at: 0) == [])
    #expect(carousel.perform(.press(x: 3), at: 0) == [] && carousel.perform(.motion(x: 1), at: 0.1) == [])
    #expect(carousel.tick(at: 100) == [])
    #expect(carousel.page == 0 && !carousel.isAnimating)
  }

  // MARK: Dragging

  @Test func aSlowDragThatStopsOnAPageEndsWithoutDecelerating() {
    // Seed 003 (b): dragged, stopped dead, released: didEndDragging(decelerate: false) settles it.
    var carousel = Carousel(pageCount: 5, autoSeconds: 0, now: 0)
    let events = Self.drag(&carousel, from: 5, to: 4, steps: 10, interval: 0.05, start: 0, still: 0.3)
    #expect(
      events == [
        .dragBegan, Self.changed(0, 1, of: 5, .drag, .next), .willEndDragging(velocity: 0, targetPage: 1),
        .dragEnded(decelerate: false),
      ])
    #expect(carousel.page == 1 && carousel.motion == .resting)
  }

  @Test func theCardsFollowThePointerAndThePageChangesHalfWay() {
    var carousel = Carousel(pageCount: 5, autoSeconds: 0, now: 0)
    #expect(carousel.perform(.press(x: 3), at: 0) == [])
    #expect(carousel.perform(.motion(x: 2.8), at: 0.05) == [.dragBegan])
    #expect(abs(carousel.viewportOffset(at: 0.05) - 0.2) < 1e-9)
    #expect(carousel.perform(.motion(x: 2.6), at: 0.1) == [])
    #expect(carousel.perform(.motion(x: 2.4), at: 0.15) == [Self.changed(0, 1, of: 5, .drag, .next)])
    // Relative to the new page the viewport is 0.4 short of it, the cards where they were.
    #expect(abs(carousel.viewportOffset(at: 0.15) + 0.4) < 1e-9)
    #expect(carousel.perform(.motion(x: 2.6), at: 0.2) == [Self.changed(1, 0, of: 5, .drag, .previous)])
  }

  @Test func aSlowReleaseOffAPageSnapsToTheNearestOne() {
    var carousel = Carousel(pageCount: 5, autoSeconds: 0, now: 0)
    let events = Self.drag(&carousel, from: 5, to: 4.7, steps: 3, interval: 0.1, start: 0, still: 0.3)
    #expect(
      events == [.dragBegan, .willEndDragging(velocity: 0, targetPage: 0), .dragEnded(decelerate: true), .willBeginDecelerating])
    #expect(Self.settle(&carousel, at: 0.6) == [.decelerationEnded])
    #expect(carousel.page == 0 && carousel.viewportOffset(at: 2) == 0)
  }

  @Test func aFlickCrossesPagesByItsVelocityUpToTheLimit() {
    var carousel = Carousel(pageCount: 10, autoSeconds: 0, maxFlickPages: 3, now: 0)
    // 0.2 pages every 10 ms: 20 pages a second, released while moving.
    let events = Self.drag(&carousel, from: 10, to: 9.4, steps: 3, interval: 0.01, start: 0, still: 0)
    // The release announces the target (will-end-dragging) and no page: the coast sends those.
    #expect(
      events == [
        .dragBegan, Self.changed(0, 1, of: 10, .drag, .next), .willEndDragging(velocity: 20, targetPage: 3),
        .dragEnded(decelerate: true), .willBeginDecelerating,
      ])
    #expect(carousel.page == 1, "the page under the middle at the release")
    // It decelerates from where it was released, at the release velocity: 3 × 2.4 pages / 20 = 0.36 s.
    guard case .animating(let animation) = carousel.motion else {
      Issue.record("not decelerating: \(carousel.motion)")
      return
    }
    #expect(abs(animation.durationSeconds - 0.36) < 1e-9 && abs(animation.fromOffset + 2.4) < 1e-9)
    // Frame by frame, each page goes out in the frame where the middle of the screen crossed into it.
    var coast: [Event] = []
    var previous = 0.6
    for frame in 1...17 {
      let now = 0.03 + Double(frame) * Carousel.frameSeconds
      let position = Double(carousel.anchor) + carousel.viewportOffset(at: now)
      let sent = carousel.tick(at: now)
      let crossed = Int(position.rounded()) - Int(previous.rounded())
      #expect(sent.count == crossed, "frame \(frame) at \(position): \(sent)")
      #expect(carousel.page == Int(position.rounded()))
      coast += sent
      previous = position
    }
    #expect(coast == [Self.changed(1, 2, of: 10, .drag, .next), Self.changed(2, 3, of: 10, .drag, .next)])
    #expect(carousel.tick(at: animation.endSeconds) == [.decelerationEnded])
    #expect(carousel.page == 3)
  }

  /// A coast faster than a page a frame still sends each page, one at a time, in order.
  @Test func aFastCoastSendsEveryPageItCrosses() {
    var carousel = Carousel(pageCount: 10, autoSeconds: 0, maxFlickPages: 5, now: 0)
    // Dragged to page 2 (1.5 pages), released at 50 pages a second: the target is 5 pages from page 0.
    _ = Self.drag(&carousel, from: 10, to: 8.5, steps: 3, interval: 0.01, start: 0, still: 0)
    #expect(carousel.page == 2 && carousel.anchor == 5)
    let coast = Self.settle(&carousel, at: 0)
    #expect(
      coast == (2..<5).map { Self.changed($0, $0 + 1, of: 10, .drag, .next) } + [.decelerationEnded], "\(coast)")
  }

  @Test func aSlowerFlickGoesAtLeastOnePageItsWay() {
    var carousel = Carousel(pageCount: 10, autoSeconds: 0, now: 0)
    // 0.1 page in 0.1 s, leftwards (towards the previous page): 1 page a second.
    let events = Self.drag(&carousel, from: 3, to: 3.1, steps: 2, interval: 0.05, start: 0, still: 0)
    #expect(events == [.dragBegan, .willEndDragging(velocity: -1, targetPage: 9), .dragEnded(decelerate: true), .willBeginDecelerating])
    #expect(
      Self.settle(&carousel, at: 0) == [
        Self.changed(0, 9, of: 10, .drag, .previous), .wrapped(from: 0, to: 9, count: 10), .decelerationEnded,
      ])
  }

  @Test func aLoopingFlickNeverGoesAllTheWayRound() {
    var carousel = Carousel(pageCount: 3, autoSeconds: 0, maxFlickPages: 5, now: 0)
    let events = Self.drag(&carousel, from: 10, to: 9, steps: 2, interval: 0.01, start: 0, still: 0)
    #expect(events.contains(.willEndDragging(velocity: 50, targetPage: 2)))
    _ = Self.settle(&carousel, at: 0)
    #expect(carousel.page == 2)
  }

  @Test func theReleaseVelocityIsThePointersLastTenthOfASecond() {
    typealias Sample = Carousel.Sample
    let steady = (0...10).map { Sample(seconds: Double($0) * 0.02, position: Double($0) * 0.1) }
    #expect(abs(Carousel.velocity(steady, at: 0.2) - 5) < 1e-9)
    // Stood still for more than a tenth of a second: no velocity, whatever came before.
    #expect(Carousel.velocity(steady, at: 0.31) == 0)
    // Reports that arrived in one read: 8 ms between them at least.
    let together = [Sample(seconds: 1, position: 0), Sample(seconds: 1, position: 0.4)]
    #expect(abs(Carousel.velocity(together, at: 1) - 50) < 1e-9)
    #expect(Carousel.velocity([Sample(seconds: 0, position: 1)], at: 0) == 0)
  }

  @Test func grabbingADeceleratingCarouselStopsItWhereItIs() {
    var carousel = Carousel(pageCount: 10, autoSeconds: 0, now: 0)
    _ = Self.drag(&carousel, from: 10, to: 9.4, steps: 3, interval: 0.01, start: 0, still: 0)
    let position = Double(carousel.anchor) + carousel.viewportOffset(at: 0.1)
    // The touch is the new drag's beginning; the interrupted deceleration sends no end, only the
    // page the middle crossed into since the last frame (none was drawn here since the release).
    #expect(carousel.perform(.press(x: 5), at: 0.1) == [Self.changed(1, 2, of: 10, .drag, .next), .dragBegan])
    #expect(Int(position.rounded()) == 2)
    #expect(carousel.isDragging && abs(Double(carousel.anchor) + carousel.viewportOffset(at: 0.1) - position) < 1e-9)
    #expect(carousel.tick(at: 5) == [])
  }

  /// Catching a flick on its way: it stops where it is, on the page under the middle, and that is
  /// the last page sent: the coast sent the pages it reached and no more (nothing of the target it
  /// did not reach, nothing back); the release snaps to that page.
  @Test func catchingAFlickEndsOnThePageShownAndThatIsTheLastPageSent() {
    var carousel = Carousel(pageCount: 10, autoSeconds: 0, maxFlickPages: 5, now: 0)
    var sent = Self.drag(&carousel, from: 10, to: 8.5, steps: 3, interval: 0.01, start: 0, still: 0)
    let target = carousel.anchor
    #expect(target > 2, "a flick across several pages: \(sent)")
    // Early in its coast (two frames drawn), the cards are still near the start.
    let caughtAt = 0.09
    sent += carousel.tick(at: 0.05) + carousel.tick(at: 0.07)
    let position = Double(carousel.anchor) + carousel.viewportOffset(at: caughtAt)
    #expect(position < Double(target) - 0.5)
    sent += carousel.perform(.press(x: 5), at: caughtAt)
    #expect(sent.last == .dragBegan)
    let shown = Int(position.rounded())
    #expect(carousel.page == shown, "the page under the middle")
    sent += carousel.perform(.release(x: 5), at: caughtAt + 0.5) + Self.settle(&carousel, at: 2)
    #expect(carousel.page == shown)
    let pages = sent.compactMap { if case .pageChanged(_, let to, _, _, _, _) = $0 { to } else { nil } }
    #expect(pages == Array(1...shown), "each page once, in order, up to the one shown: \(sent)")
  }

  @Test func aClickThatDoesNotMoveSendsNothing() {
    var carousel = Carousel(pageCount: 5, autoSeconds: 0, now: 0)
    #expect(carousel.perform(.press(x: 2), at: 0) == [])
    #expect(carousel.perform(.release(x: 2), at: 0.1) == [])
    #expect(carousel.motion == .resting && carousel.page == 0)
  }

  // MARK: Bounded pagers

  /// UIScrollView's `bounces` off: the ends stop the cards dead (no rubber band, no bump), and
  /// pushing past one still sends `edge` once per push.
  @Test func withoutBouncesTheEndsStopHardAndStillSayEdge() {
    var carousel = Carousel(pageCount: 4, loops: false, bounces: false, autoSeconds: 0, now: 0)
    #expect(carousel.perform(.press(x: 5), at: 0) == [])
    #expect(carousel.perform(.motion(x: 5.02), at: 0.05) == [.dragBegan])
    #expect(carousel.perform(.motion(x: 5.6), at: 0.1) == [.edge(.start)])
    #expect(carousel.viewportOffset(at: 0.1) == 0, "no rubber band")
    _ = carousel.perform(.release(x: 5.6), at: 0.5)
    _ = Self.settle(&carousel, at: 1)
    #expect(carousel.page == 0)
    #expect(carousel.perform(.key(.previous), at: 2) == [.edge(.start)])
    #expect(carousel.motion == .resting, "no bump")
  }

  @Test func aCarouselMayStartOnAnyPage() {
    var carousel = Carousel(pageCount: 7, start: 3, autoSeconds: 0, now: 0)
    #expect(carousel.page == 3)
    #expect(carousel.perform(.key(.next), at: 0) == [Self.changed(3, 4, of: 7, .key, .next)])
    #expect(Carousel(pageCount: 4, start: 9, loops: false, autoSeconds: 0, now: 0).page == 3)
  }

  @Test func aBoundedPagerStretchesPastItsEndSendsEdgeOnceAndSpringsBack() {
    var carousel = Carousel(pageCount: 4, loops: false, autoSeconds: 0, now: 0)
    #expect(carousel.perform(.press(x: 5), at: 0) == [])
    #expect(carousel.perform(.motion(x: 5.02), at: 0.05) == [.dragBegan])
    #expect(carousel.perform(.motion(x: 5.3), at: 0.1) == [.edge(.start)])
    #expect(carousel.perform(.motion(x: 5.6), at: 0.15) == [])
    // The rubber band: the cards moved less than the pointer's 0.6.
    let shown = carousel.viewportOffset(at: 0.15)
    #expect(abs(shown + Carousel.rubberBand(0.6)) < 1e-9 && shown > -0.3)
    #expect(
      carousel.perform(.release(x: 5.6), at: 0.5) == [
        .willEndDragging(velocity: 0, targetPage: 0), .dragEnded(decelerate: true), .willBeginDecelerating,
      ])
    #expect(Self.settle(&carousel, at: 0.5) == [.decelerationEnded])
    #expect(carousel.page == 0)
    // The other end: from the last page, a flick on does not wrap.
    var last = Carousel(pageCount: 4, start: 3, loops: false, autoSeconds: 0, now: 0)
    let events = Self.drag(&last, from: 5, to: 4.5, steps: 2, interval: 0.01, start: 0, still: 0)
    #expect(events.contains(.edge(.end)) && events.contains(.willEndDragging(velocity: 25, targetPage: 3)))
    #expect(!events.contains { if case .pageChanged = $0 { true } else { false } })
  }

  @Test func keysAndTheWheelBumpAtTheEndsOfABoundedPager() {
    var carousel = Carousel(pageCount: 3, loops: false, autoSeconds: 0, now: 0)
    #expect(carousel.perform(.key(.previous), at: 0) == [.edge(.start)])
    #expect(carousel.viewportOffset(at: 0.06) < 0)
    #expect(Self.settle(&carousel, at: 0) == [])
    #expect(carousel.page == 0 && carousel.viewportOffset(at: 1) == 0)
    _ = carousel.perform(.key(.next), at: 1)
    _ = carousel.perform(.key(.next), at: 2)
    _ = Self.settle(&carousel, at: 2)
    #expect(carousel.page == 2)
    #expect(carousel.perform(.wheel(.next), at: 3) == [.edge(.end)])
  }

  @Test func autoAdvanceOnABoundedPagerGoesBackToTheFirstPage() {
    var carousel = Carousel(pageCount: 3, start: 2, loops: false, autoSeconds: 1, now: 0)
    #expect(carousel.tick(at: 1) == [Self.changed(2, 0, of: 3, .auto, .previous)])
    #expect(carousel.viewportOffset(at: 1) == 2)
  }

  // MARK: Auto-advance

  @Test func autoAdvanceTurnsEveryInterval() {
    var carousel = Carousel(pageCount: 3, autoSeconds: 4, now: 0)
    #expect(carousel.nextDeadline(after: 0) == 4)
    #expect(carousel.tick(at: 3.9) == [])
    #expect(carousel.tick(at: 4) == [Self.changed(0, 1, of: 3, .auto, .next)])
    #expect(carousel.tick(at: 4.2) == [.scrollAnimationEnded])
    #expect(carousel.nextDeadline(after: 4.2) == 8)
    #expect(carousel.tick(at: 8) == [Self.changed(1, 2, of: 3, .auto, .next)])
  }

  @Test func theNextAutomaticPageComesExactlyTheResumeDelayAfterAKeysSlideSettles() {
    var carousel = Carousel(pageCount: 3, autoSeconds: 4, now: 0)
    // A key at 5 holds auto-advance; its slide settles at 5.12; the next automatic page is due at 8.12.
    _ = carousel.perform(.key(.next), at: 5)
    #expect(carousel.autoAdvance.isPaused(at: 5.1))
    #expect(carousel.tick(at: 5.12) == [.scrollAnimationEnded])
    #expect(carousel.autoAdvance.dueSeconds == 5.12 + 3)
    #expect(carousel.autoAdvance.isPaused(at: 8.1))
    #expect(carousel.tick(at: 8.11) == [])
    #expect(carousel.tick(at: 5.12 + 3) == [Self.changed(1, 2, of: 3, .auto, .next)])
  }

  @Test func aDragHoldsAutoAdvanceUntilItsScrollSettles() {
    var carousel = Carousel(pageCount: 5, autoSeconds: 1, resumeDelaySeconds: 1.5, now: 0)
    _ = carousel.perform(.press(x: 5), at: 0.5)
    _ = carousel.perform(.motion(x: 4.9), at: 0.6)
    // However long the button is held, nothing turns.
    #expect(carousel.tick(at: 20) == [] && carousel.nextDeadline(after: 20) == nil)
    #expect(carousel.autoAdvance.isPaused(at: 20))
    // Released off a page: it decelerates back (0.25 s), settles at 20.25; the next page at 21.75.
    #expect(carousel.perform(.release(x: 4.9), at: 20).last == .willBeginDecelerating)
    #expect(carousel.tick(at: 20.25) == [.decelerationEnded])
    #expect(carousel.tick(at: 21.74) == [])
    #expect(carousel.tick(at: 21.75) == [Self.changed(0, 1, of: 5, .auto, .next)])
    // A drag that ends without decelerating settles at its release.
    var still = Carousel(pageCount: 5, autoSeconds: 1, now: 0)
    _ = Self.drag(&still, from: 5, to: 4, steps: 4, interval: 0.1, start: 0.5, still: 0.5)
    #expect(still.autoAdvance.dueSeconds == 1.4 + 3)
  }

  @Test func autoAdvanceWaitsForASlideToEnd() {
    var carousel = Carousel(pageCount: 3, autoSeconds: 0.1, now: 0)
    #expect(carousel.tick(at: 0.1).count == 1)
    // Due again at 0.2, but the slide started at 0.1 runs until 0.22: the slide ends first.
    #expect(carousel.tick(at: 0.2) == [])
    #expect(carousel.tick(at: 0.25) == [.scrollAnimationEnded, Self.changed(1, 2, of: 3, .auto, .next)])
  }

  @Test func autoZeroNeverTurns() {
    var carousel = Carousel(pageCount: 3, autoSeconds: 0, now: 0)
    #expect(carousel.nextDeadline(after: 0) == nil)
    #expect(carousel.tick(at: 1_000) == [])
    #expect(!carousel.autoAdvance.isEnabled)
  }

  // MARK: Input

  @Test(
    "keys and mouse reports",
    arguments: [
      ("\u{1b}[C", [InputDecoder.Input.next]), ("\u{1b}[D", [.previous]), ("\u{1b}OC", [.next]), ("\u{1b}OD", [.previous]),
      ("\u{1b}[1;5C", [.next]), ("hl", [.previous, .next]), ("q", [.quit]), ("\u{03}", [.quit]),
      ("\u{1b}[<64;10;5M", [.wheelPrevious]), ("\u{1b}[<65;10;5M", [.wheelNext]), ("\u{1b}[<65;10;5m", []),
      ("\u{1b}[<0;10;5M", [.press(column: 10, row: 5)]), ("\u{1b}[<32;11;5M", [.drag(column: 11, row: 5)]), ("\u{1b}[<0;12;5m", [.release(column: 12, row: 5)]),
      ("\u{1b}[<4;10;5M", [.press(column: 10, row: 5)]), ("\u{1b}[<2;10;5M", []), ("\u{1b}[<34;10;5M", []), ("\u{1b}[<0;10M", []),
      ("\u{1b}[M !!", [.press(column: 1, row: 1)]), ("\u{1b}[M@\"!", [.drag(column: 2, row: 1)]), ("\u{1b}[M##!", [.release(column: 3, row: 1)]),
      ("\u{1b}[M`!!", [.wheelPrevious]), ("\u{1b}[Ma!!", [.wheelNext]),
      ("\u{1b}[A\u{1b}[Bx", [.previous, .next]), ("\u{1b}\u{1b}[C", [.next]), ("\u{1b}q", [.quit]),
    ])
  func keys(_ text: String, _ expected: [InputDecoder.Input]) {
    var decoder = InputDecoder()
    #expect(decoder.feed(Array(text.utf8)) == expected)
  }

  @Test func aSequenceSplitAcrossReadsIsKeptUntilItsEnd() {
    var decoder = InputDecoder()
    #expect(decoder.feed(Array("\u{1b}".utf8)) == [])
    #expect(decoder.feed(Array("[".utf8)) == [])
    #expect(decoder.feed(Array("C\u{1b}[<6".utf8)) == [.next])
    #expect(decoder.feed(Array("5;1;1M\u{1b}[<32;4".utf8)) == [.wheelNext])
    #expect(decoder.feed(Array("0;9M".utf8)) == [.drag(column: 40, row: 9)])
  }

  // MARK: The crawl

  /// Seed 003 as written: when auto-advance is due the view creeps on; each page boundary crossed
  /// (the middle past half a card) is a page change of its own, and nothing settles while it moves.
  @Test func theCrawlCreepsOnAndEachBoundaryItCrossesIsAPageChange() {
    var carousel = Carousel(pageCount: 5, autoSeconds: 1, crawlPagesPerSecond: 0.5, now: 0)
    #expect(carousel.tick(at: 0.5) == [])
    #expect(carousel.tick(at: 1) == [] && carousel.isCrawling, "due: the crawl begins")
    #expect(abs(carousel.viewportOffset(at: 1.4) - 0.2) < 1e-9, "it moves continuously")
    #expect(carousel.tick(at: 1.9) == [])
    #expect(carousel.tick(at: 2.1) == [Self.changed(0, 1, of: 5, .auto, .next)])
    #expect(carousel.page == 1 && abs(carousel.viewportOffset(at: 2.1) + 0.45) < 1e-9, "the page under the middle, the view between")
    #expect(carousel.tick(at: 4.1) == [Self.changed(1, 2, of: 5, .auto, .next)])
  }

  @Test func aPressStopsTheCrawlWhereItIsAndItResumesThreeSecondsAfterTheScrollSettles() {
    var carousel = Carousel(pageCount: 5, autoSeconds: 1, crawlPagesPerSecond: 0.5, now: 0)
    _ = carousel.tick(at: 1)
    let position = Double(carousel.anchor) + carousel.viewportOffset(at: 1.6)
    // The user took over: the crawl's end (its one settle), then the drag.
    #expect(carousel.perform(.press(x: 5), at: 1.6) == [.scrollAnimationEnded, .dragBegan])
    #expect(!carousel.isCrawling && abs(Double(carousel.anchor) + carousel.viewportOffset(at: 1.6) - position) < 1e-9)
    _ = carousel.perform(.release(x: 5), at: 1.7)
    let settled = Self.settle(&carousel, at: 1.7)
    #expect(settled.last == .decelerationEnded || carousel.motion == .resting, "\(settled)")
    #expect(carousel.page == 0)
    let resumed = (2...60).map { 1.7 + Double($0) * 0.1 }.first { _ = carousel.tick(at: $0); return carousel.isCrawling }
    #expect(resumed.map { abs($0 - 5) < 0.15 } == true, "the crawl resumed at \(String(describing: resumed)), not about 3 s after it settled")
  }

  @Test func aKeyDuringTheCrawlTakesOverFromWhereTheViewIs() {
    var carousel = Carousel(pageCount: 5, autoSeconds: 1, crawlPagesPerSecond: 0.5, now: 0)
    _ = carousel.tick(at: 1)
    #expect(carousel.perform(.key(.next), at: 1.4) == [.scrollAnimationEnded, Self.changed(0, 1, of: 5, .key, .next)])
    #expect(abs(carousel.viewportOffset(at: 1.4) + 0.8) < 1e-9, "the slide starts where the crawl was")
  }

  @Test func theCrawlStopsForGoodAtTheEndOfABoundedPager() {
    var carousel = Carousel(pageCount: 3, loops: false, autoSeconds: 1, crawlPagesPerSecond: 1, now: 0)
    _ = carousel.tick(at: 1)
    var sent: [CarouselMessage.Event] = []
    for t in stride(from: 1.1, through: 9, by: 0.1) { sent += carousel.tick(at: t) }
    // Its end at the last page is the crawl's one settle.
    #expect(sent == [Self.changed(0, 1, of: 3, .auto, .next), Self.changed(1, 2, of: 3, .auto, .next), .scrollAnimationEnded])
    #expect(carousel.page == 2 && carousel.motion == .resting && carousel.viewportOffset(at: 9) == 0)
  }

  // MARK: Status line

  @Test func theStatusLineKeepsTheMostTellingAnswerToAPageTurn() {
    var status = StatusLine()
    #expect(status.text == "no page turned yet · looking for cued…")
    status.connection = .connected
    #expect(status.text == "no page turned yet · cued is listening")
    status.sent([.pageChanged(from: 2, to: 3, count: 5, reason: .key)])
    #expect(status.text == "sent page-changed 3→4 (key) · cued: no answer yet")
    status.received(PagingAnswer(message: "page-changed", decision: "played", cue: "page-next"))
    status.sent([.scrollAnimationEnded])
    status.received(PagingAnswer(message: "scroll-animation-ended", decision: "unbound", cue: nil))
    #expect(status.text == "sent page-changed 3→4 (key) · cued: played page-next")
    // A wrap: the page change plays the wrap cue, the wrapped message is merged into it.
    status.sent([.pageChanged(from: 4, to: 0, count: 5, reason: .auto), .wrapped(from: 4, to: 0, count: 5)])
    status.received(PagingAnswer(message: "page-changed", decision: "played", cue: "wrap"))
    status.received(PagingAnswer(message: "wrapped", decision: "merged", cue: "wrap"))
    #expect(status.text == "sent page-changed 5→1 (auto) + wrapped · cued: played wrap")
    status.sent([.pageChanged(from: 0, to: 1, count: 5, reason: .key)])
    status.received(PagingAnswer(message: "page-changed", decision: "too-soon", cue: "page-next"))
    #expect(status.text == "sent page-changed 1→2 (key) · cued: too-soon page-next")
    // An edge is a turn of its own: the line no longer shows the page change before it.
    status.sent([.edge(.end)])
    #expect(status.text == "sent edge (last page) · cued: no answer yet")
    status.received(PagingAnswer(message: "edge", decision: "played", cue: "tick"))
    #expect(status.text == "sent edge (last page) · cued: played tick")
    status.connection = .notRunning
    #expect(status.text == "sent edge (last page) · cued is not running (silent)")
  }

  @Test func aPagingEventCountsOnlyForItsOwnCarousel() throws {
    let body = try JSONParser.parse(
      Array(#"{"event":"paging","carousel":"demo","message":"page-changed","decision":"played","cue":"page-next","voice":12}"#.utf8))
    #expect(PagingAnswer(event: body, carousel: "demo") == PagingAnswer(message: "page-changed", decision: "played", cue: "page-next"))
    #expect(PagingAnswer(event: body, carousel: "photos") == nil)
  }

  // MARK: Layout

  @Test func theCurrentPageIsCentredWithItsNeighboursPartlyVisible() throws {
    let carousel = Carousel(pageCount: 7, start: 2, autoSeconds: 4, now: 0)
    var status = StatusLine()
    status.connection = .notRunning
    let frame = CarouselScreen(name: "demo").render(carousel, status: status, columns: 120, rows: 30, now: 0)
    #expect(frame.text(row: 0).hasPrefix(" cued-carousel · demo"))
    #expect(frame.text(row: 0).hasSuffix("page 3 of 7 "))
    let rows = (0..<30).map { frame.text(row: $0) }
    let label = try #require(rows.firstIndex { $0.contains("page 3/7") })
    #expect(Self.column(of: "page 3/7", in: rows[label]) == 56)  // centred: (120 − 8) / 2
    #expect(rows[label - 2].contains("██████"))  // the big 3's last row
    // Only the middle card's label is on screen; the neighbours show their colour.
    #expect(rows.filter { $0.contains("/7") }.count == 1)
    let statusText = " no page turned yet · cued is not running (silent)"
    #expect(rows[28] == statusText + String(repeating: " ", count: 120 - statusText.unicodeScalars.count))
    #expect(rows[29].hasPrefix(" ←/→ page · drag or wheel · q quit · auto every 4 s"))
    // The page dots, the third filled, centred under the cards.
    #expect(rows[27].trimmingBlanks == "○ ○ ● ○ ○ ○ ○")
  }

  @Test func manyPagesShowTheDotsAroundThePage() {
    let carousel = Carousel(pageCount: 200, start: 100, autoSeconds: 0, now: 0)
    let row = CarouselScreen(name: "demo").render(carousel, status: StatusLine(), columns: 40, rows: 12, now: 0).text(row: 9)
    let dots = row.trimmingBlanks
    #expect(dots.hasPrefix("… ○") && dots.hasSuffix("○ …"))
    #expect(dots.filter { $0 == "●" }.count == 1 && dots.unicodeScalars.count <= 40)
  }

  @Test func aBoundedPagerShowsWhereItEndsAndTheRubberBandOpensIt() throws {
    var carousel = Carousel(pageCount: 4, loops: false, autoSeconds: 0, now: 0)
    let screen = CarouselScreen(name: "demo")
    let atRest = screen.render(carousel, status: StatusLine(), columns: 120, rows: 30, now: 0)
    // Left of the first card: no card, the end marked; the help says it does not loop.
    let middle = try #require((0..<30).first { atRest.text(row: $0).contains("first ▸") })
    let restColumn = Self.column(of: "┊", in: atRest.text(row: middle))
    #expect(restColumn == 23)  // the card starts at (120 − 72) / 2 = 24
    #expect(atRest.text(row: 29).contains("no loop"))
    // Pulled 0.6 of a card past the start, the gap widens by the rubber band's 0.25 of a card (74 columns).
    _ = carousel.perform(.press(x: 1), at: 0)
    _ = carousel.perform(.motion(x: 1.6), at: 0.1)
    let pulled = screen.render(carousel, status: StatusLine(), columns: 120, rows: 30, now: 0.1)
    let pulledColumn = Self.column(of: "┊", in: pulled.text(row: middle))
    #expect(pulledColumn == 23 + Int((Carousel.rubberBand(0.6) * 74).rounded()))
  }

  @Test("any size from the smallest up draws the page", arguments: [(24, 8), (40, 12), (80, 24), (200, 60)])
  func anySizeDrawsThePage(columns: Int, rows: Int) {
    let frame = CarouselScreen(name: "demo").render(
      Carousel(pageCount: 9, start: 4, autoSeconds: 0, now: 0), status: StatusLine(), columns: columns, rows: rows, now: 0)
    let text = (0..<rows).map { frame.text(row: $0) }.joined(separator: "\n")
    #expect(text.contains("page 5 of 9") && text.contains("5"))
    #expect(text.contains("●"))
  }

  /// The unicode-scalar column where `mark` first appears in `row`.
  static func column(of mark: String, in row: String) -> Int? {
    let scalars = Array(row.unicodeScalars), wanted = Array(mark.unicodeScalars)
    guard wanted.count <= scalars.count else { return nil }
    return (0...(scalars.count - wanted.count)).first { Array(scalars[$0..<($0 + wanted.count)]) == wanted }
  }

  /// A vertical pager stacks the cards: the current one in the middle rows, the next one below
  /// (cut off by the dots), and a drag half a card upward shows the next in the middle.
  @Test func aVerticalPagerStacksItsCards() {
    var carousel = Carousel(pageCount: 5, autoSeconds: 0, now: 0)
    let screen = CarouselScreen(name: "demo", vertical: true)
    var frame = screen.render(carousel, status: StatusLine(), columns: 80, rows: 40, now: 0)
    var rows = (0..<40).map { frame.text(row: $0) }
    let label = rows.firstIndex { $0.contains("page 1/5") }
    #expect(label.map { (12...28).contains($0) } == true, "the current card is in the middle: \(String(describing: label))")
    #expect(rows[39].hasPrefix(" ↑/↓ page"))
    // The pointer's unit is a card and a row; dragging up by half of it and more turns the page.
    let stride = Double(CarouselScreen.verticalStride(rows: 40))
    _ = carousel.perform(.press(x: 30 / stride), at: 0)
    let sent = carousel.perform(.motion(x: (30 - stride * 0.6) / stride), at: 0.1)
    #expect(sent.contains(.pageChanged(from: 0, to: 1, count: 5, reason: .drag, direction: .next)))
    frame = screen.render(carousel, status: StatusLine(), columns: 80, rows: 40, now: 0.1)
    rows = (0..<40).map { frame.text(row: $0) }
    #expect(rows.contains { $0.contains("page 2/5") })
  }

  @Test func aTinyScreenSaysItIsTooSmall() {
    let frame = CarouselScreen(name: "demo").render(
      Carousel(pageCount: 3, autoSeconds: 0, now: 0), status: StatusLine(), columns: 10, rows: 3, now: 0)
    #expect(frame.text(row: 0).hasPrefix("too small"))
  }
}

extension String {
  /// Without the blanks at either end.
  var trimmingBlanks: String {
    var scalars = Substring(self)
    while scalars.first == " " { scalars.removeFirst() }
    while scalars.last == " " { scalars.removeLast() }
    return String(scalars)
  }
}
