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
}
