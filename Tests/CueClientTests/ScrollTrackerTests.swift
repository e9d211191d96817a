import CueClient
import CueProtocol
import Testing

/// The scroll tracker: UIScrollViewDelegate calls, in UIKit's units, to cued's carousel messages.
@Suite("Scroll tracker (UIKit's units and order to carousel messages)")
struct ScrollTrackerTests {
  @Test func velocityAndPagesConvertFromPoints() {
    // 2 points per millisecond on a 400-point page: 5 pages per second.
    #expect(ScrollTracker.pagesPerSecond(pointsPerMillisecond: 2, pageWidth: 400) == 5)
    let tracker = ScrollTracker(pageCount: 5, pageWidth: 400)
    #expect(tracker.page(atOffset: 199) == 0 && tracker.page(atOffset: 200) == 1 && tracker.page(atOffset: 1210) == 3)
    #expect(tracker.page(atOffset: -80) == 0 && tracker.page(atOffset: 9000) == 4, "kept within the pages (a bounce)")
  }

  /// A drag past half a page, released with a flick that decelerates two pages further: the seeds'
  /// order, with each page change as the middle of the view crosses it.
  @Test func aFlickSendsTheLifecycleAndEachPageAsItPasses() {
    var tracker = ScrollTracker(pageCount: 6, pageWidth: 400)
    var sent: [CarouselMessage.Event] = []
    sent += tracker.willBeginDragging()
    for offset in stride(from: 0.0, through: 260, by: 65) { sent += tracker.didScroll(contentOffset: offset) }
    sent += tracker.willEndDragging(velocityPointsPerMillisecond: 3.2, targetContentOffset: 1200)
    sent += tracker.didEndDragging(willDecelerate: true)
    sent += tracker.willBeginDecelerating()
    for offset in stride(from: 300.0, through: 1200, by: 150) { sent += tracker.didScroll(contentOffset: offset) }
    sent += tracker.didEndDecelerating()
    #expect(
      sent == [
        .dragBegan,
        .pageChanged(from: 0, to: 1, count: 6, reason: .drag, direction: .next),
        .willEndDragging(velocity: 8, targetPage: 3),
        .dragEnded(decelerate: true), .willBeginDecelerating,
        .pageChanged(from: 1, to: 2, count: 6, reason: .drag, direction: .next),
        .pageChanged(from: 2, to: 3, count: 6, reason: .drag, direction: .next),
        .decelerationEnded,
      ])
    #expect(tracker.page == 3)
  }

  /// Seed 000's programmatic scrolls: animated, the page changes as it moves and the animation's end
  /// follows; not animated, one page change that says so (cued settles it at once).
  @Test func programmaticScrollsSayWhetherTheyAnimate() {
    var tracker = ScrollTracker(pageCount: 5, pageWidth: 320, page: 1)
    #expect(tracker.setContentOffset(960, animated: true) == [])
    var sent: [CarouselMessage.Event] = []
    for offset in [480.0, 700, 960] { sent += tracker.didScroll(contentOffset: offset) }
    sent += tracker.didEndScrollingAnimation()
    #expect(
      sent == [
        .pageChanged(from: 1, to: 2, count: 5, reason: .programmatic, direction: .next),
        .pageChanged(from: 2, to: 3, count: 5, reason: .programmatic, direction: .next), .scrollAnimationEnded,
      ])
    #expect(
      tracker.setContentOffset(0, animated: false) == [
        .pageChanged(from: 3, to: 0, count: 5, reason: .programmatic, direction: .previous, animated: false)
      ])
    // UIKit's one scrollViewDidScroll for that jump reports nothing more.
    #expect(tracker.didScroll(contentOffset: 0) == [])
  }

  /// A looping pager: the offset runs on past the ends, the page wraps, and going round says
  /// `wrapped` too, both ways; a key or auto-scroll names its own reason.
  @Test func aLoopingPagerWrapsBothWays() {
    var tracker = ScrollTracker(pageCount: 3, pageWidth: 100, page: 2, loops: true)
    #expect(
      tracker.move(toOffset: 300, reason: .key) == [
        .pageChanged(from: 2, to: 0, count: 3, reason: .key, direction: .next), .wrapped(from: 2, to: 0, count: 3),
      ])
    #expect(tracker.page == 0 && tracker.index == 3)
    #expect(tracker.move(toOffset: 400, reason: .auto) == [.pageChanged(from: 0, to: 1, count: 3, reason: .auto, direction: .next)])
    var back = ScrollTracker(pageCount: 3, pageWidth: 100, loops: true)
    #expect(
      back.move(toOffset: -100, reason: .drag) == [
        .pageChanged(from: 0, to: 2, count: 3, reason: .drag, direction: .previous), .wrapped(from: 0, to: 2, count: 3),
      ])
    #expect(back.page == 2)
  }

  /// A pager that announced a target and was stopped short takes the page it rests on silently.
  @Test func restingTakesThePageWithoutAPageChange() {
    var tracker = ScrollTracker(pageCount: 9, pageWidth: 1)
    _ = tracker.move(toOffset: 5, reason: .drag)
    tracker.rest(atOffset: 3.4)
    #expect(tracker.page == 3)
    #expect(tracker.move(toOffset: 3.2, reason: .drag) == [], "already there")
    #expect(tracker.move(toOffset: 4, reason: .drag) == [.pageChanged(from: 3, to: 4, count: 9, reason: .drag, direction: .next)])
  }

  /// A bounded pager dragged past its first page (UIKit's rubber band: the offset goes negative),
  /// then past its last by a flick's bounce: `edge` once per scroll, only past the threshold; a
  /// looping pager has no edges, and nor does a program's scroll.
  @Test func pushingABoundedPagerPastAnEndSendsEdgeOncePerScroll() {
    var tracker = ScrollTracker(pageCount: 3, pageWidth: 400)
    var sent = tracker.willBeginDragging()
    sent += tracker.didScroll(contentOffset: -10)  // 0.025 of a page: not yet a push
    sent += tracker.didScroll(contentOffset: -60)
    sent += tracker.didScroll(contentOffset: -90)
    sent += tracker.didScroll(contentOffset: -20)
    sent += tracker.willEndDragging(velocityPointsPerMillisecond: 0, targetContentOffset: 0)
    sent += tracker.didEndDragging(willDecelerate: true)
    sent += tracker.didScroll(contentOffset: 0)
    sent += tracker.didEndDecelerating()
    #expect(
      sent == [
        .dragBegan, .edge(.start), .willEndDragging(velocity: 0, targetPage: 0), .dragEnded(decelerate: true), .decelerationEnded,
      ])
    // The next scroll: a flick to the last page that bounces past it as it decelerates.
    sent = tracker.willBeginDragging()
    sent += tracker.didScroll(contentOffset: 300)
    sent += tracker.didEndDragging(willDecelerate: true)
    for offset in [600.0, 830, 860, 800] { sent += tracker.didScroll(contentOffset: offset) }
    #expect(
      sent == [
        .dragBegan, .pageChanged(from: 0, to: 1, count: 3, reason: .drag, direction: .next), .dragEnded(decelerate: true),
        .pageChanged(from: 1, to: 2, count: 3, reason: .drag, direction: .next), .edge(.end),
      ])
    var looping = ScrollTracker(pageCount: 3, pageWidth: 400, loops: true)
    _ = looping.willBeginDragging()
    #expect(!looping.didScroll(contentOffset: -90).contains(.edge(.start)))
    var program = ScrollTracker(pageCount: 3, pageWidth: 400)
    _ = program.setContentOffset(-90, animated: true)
    #expect(program.didScroll(contentOffset: -90) == [])
  }

  /// Seed 003's auto-scroll: a timer moves the offset a little at a time; the pages it crosses go
  /// out as they are crossed (reason `auto`, animated, so nothing settles), and one
  /// `scroll-animation-ended` when it stops or when the user takes over, before the drag begins.
  @Test func anAutoScrollPagesAsItCrossesAndEndsOnceWhenStoppedOrTakenOver() {
    var tracker = ScrollTracker(pageCount: 4, pageWidth: 100)
    var sent: [CarouselMessage.Event] = []
    for offset in stride(from: 5.0, through: 300, by: 5) { sent += tracker.autoScroll(toOffset: offset) }
    sent += tracker.stopAutoScroll()
    #expect(
      sent == [
        .pageChanged(from: 0, to: 1, count: 4, reason: .auto, direction: .next),
        .pageChanged(from: 1, to: 2, count: 4, reason: .auto, direction: .next),
        .pageChanged(from: 2, to: 3, count: 4, reason: .auto, direction: .next), .scrollAnimationEnded,
      ])
    #expect(tracker.stopAutoScroll() == [], "stopped already")
    // Taken over by the user: the crawl's end, then the drag; UIKit's didScroll calls from then
    // on are the drag's.
    var caught = ScrollTracker(pageCount: 4, pageWidth: 100, loops: true)
    sent = caught.autoScroll(toOffset: 40) + caught.autoScroll(toOffset: 60) + caught.didScroll(contentOffset: 70)
    sent += caught.willBeginDragging() + caught.didScroll(contentOffset: 160)
    #expect(
      sent == [
        .pageChanged(from: 0, to: 1, count: 4, reason: .auto, direction: .next), .scrollAnimationEnded, .dragBegan,
        .pageChanged(from: 1, to: 2, count: 4, reason: .drag, direction: .next),
      ])
    // A program's scroll takes over too.
    var keyed = ScrollTracker(pageCount: 4, pageWidth: 100)
    _ = keyed.autoScroll(toOffset: 30)
    #expect(
      keyed.setContentOffset(200, animated: false) == [
        .scrollAnimationEnded, .pageChanged(from: 0, to: 2, count: 4, reason: .programmatic, direction: .next, animated: false),
      ])
  }
}
