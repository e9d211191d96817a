// Dragging, as UIScrollView does it (seeds 000-002): the cards follow the pointer, the page changes
// as the middle of the screen crosses half a card, and the release snaps back, goes on a page, or
// coasts (a flick) to where the release velocity projects. Part of `Carousel` (Carousel.swift).
import CueProtocol

extension Carousel {

  mutating func press(x: Double, at now: Double) -> [CarouselMessage.Event] {
    autoAdvance.hold()
    // A press without the release before it (the release went to another window): end that drag first.
    var events = isDragging ? release(x: x, at: now) : []
    let grabbed = isAnimating || isCrawling
    // Grabbing a moving carousel stops it where it is, and that touch is the drag's beginning
    // (UIKit sends willBeginDragging and no end for the interrupted coast). A coasting flick has
    // sent each page as the middle of the screen reached it: the page it crossed into since the
    // last frame goes out now, and the last page sent is the page shown. The crawl sends its end
    // first (the user took over). A key's slide announced its target at the key; caught on its
    // way, the page is the one under the middle now, taken without a page change: the cards never
    // went past it, so a change back from the target would sound the pages in reverse.
    let position = Double(anchor) + viewportOffset(at: now)
    if case .animating(let animation) = motion, animation.kind == .deceleration { events += coast(to: position) }
    if isCrawling { events += stopCrawl(at: now).events }
    if grabbed {
      anchor = clamped(Int(position.rounded()))
      tracker.rest(atOffset: Double(anchor))
    }
    motion = .dragging(
      Drag(
        pressX: x, pressPosition: position, startAnchor: anchor, began: grabbed, rawPosition: position,
        samples: [Sample(seconds: now, position: position)]))
    if grabbed { events.append(.dragBegan) }
    return events
  }

  mutating func move(to x: Double, at now: Double) -> [CarouselMessage.Event] {
    guard case .dragging(var drag) = motion else { return [] }
    let raw = drag.pressPosition + (drag.pressX - x)
    var events: [CarouselMessage.Event] = []
    if !drag.began {
      guard raw != drag.rawPosition else { return [] }
      drag.began = true
      events.append(.dragBegan)
    }
    drag.rawPosition = raw
    drag.samples.append(Sample(seconds: now, position: raw))
    if drag.samples.count > 16 { drag.samples.removeFirst(drag.samples.count - 16) }
    if !loops, !drag.edgeSent {
      if raw < -Self.edgeThreshold {
        drag.edgeSent = true
        events.append(.edge(.start))
      } else if raw > Double(pageCount - 1) + Self.edgeThreshold {
        drag.edgeSent = true
        events.append(.edge(.end))
      }
    }
    // The page under the middle of the screen.
    let under = clamped(Int(displayed(raw).rounded()))
    if under != anchor { events += pageChange(to: under, reason: .drag) ?? [] }
    motion = .dragging(drag)
    return events
  }

  mutating func release(x: Double, at now: Double) -> [CarouselMessage.Event] {
    guard case .dragging = motion else { return [] }
    var events = move(to: x, at: now)
    guard case .dragging(let drag) = motion else { return events }
    guard drag.began else {
      // A click that did not move: nothing was dragged.
      motion = .resting
      autoAdvance.settled(at: now)
      return events
    }
    let velocity = min(CarouselMessage.maximumVelocity, max(-CarouselMessage.maximumVelocity, Self.velocity(drag.samples, at: now)))
    let shown = displayed(drag.rawPosition)
    let target = releaseTarget(drag, shown: shown, velocity: velocity)
    let remaining = shown - Double(target)
    let decelerate = abs(velocity) >= Self.stillVelocity || abs(remaining) > 0.02
    events.append(.willEndDragging(velocity: (velocity * 100).rounded() / 100, targetPage: page(target)))
    // The coast sends the pages on the way as the cards reach them (`coast`, each frame).
    anchor = target
    events.append(.dragEnded(decelerate: decelerate))
    guard decelerate else {
      motion = .resting
      autoAdvance.settled(at: now)
      return events
    }
    events.append(.willBeginDecelerating)
    // An ease-out cubic starts at 3 × distance / duration: match the release velocity when there is one.
    let seconds =
      abs(velocity) >= Self.stillVelocity ? 3 * abs(remaining) / abs(velocity) : 0.25
    let duration = min(Self.decelerationRange.upperBound, max(Self.decelerationRange.lowerBound, seconds))
    motion = .animating(Animation(kind: .deceleration, fromOffset: remaining, startSeconds: now, durationSeconds: duration))
    return events
  }

  /// The page a drag released at `shown` with `velocity` comes to rest on.
  func releaseTarget(_ drag: Drag, shown: Double, velocity: Double) -> Int {
    if !loops, drag.rawPosition < 0 || drag.rawPosition > Double(pageCount - 1) {
      return clamped(Int(shown.rounded()))  // springs back from the rubber band
    }
    guard abs(velocity) >= Self.stillVelocity else { return clamped(Int(shown.rounded())) }
    var target = Int((drag.rawPosition + velocity * Self.projectionSeconds).rounded())
    // A flick goes at least to the next page boundary its way.
    if velocity > 0, Double(target) <= shown { target = Int(shown.rounded(.down)) + 1 }
    if velocity < 0, Double(target) >= shown { target = Int(shown.rounded(.up)) - 1 }
    // At most maxFlickPages from where the drag began (or from where it was dragged to, if further).
    let lowest = min(drag.startAnchor - maxFlickPages, Int(shown.rounded(.down)))
    let highest = max(drag.startAnchor + maxFlickPages, Int(shown.rounded(.up)))
    return clamped(min(highest, max(lowest, target)))
  }

  /// The release velocity in pages per second (positive towards the next page): the pointer's
  /// travel over its last `stillSeconds` of motion, or 0 if it had stopped that long before `now`.
  static func velocity(_ samples: [Sample], at now: Double) -> Double {
    guard let last = samples.last, now - last.seconds <= stillSeconds, samples.count >= 2 else { return 0 }
    var first = samples[samples.count - 2]
    for sample in samples.dropLast(2).reversed() where last.seconds - sample.seconds <= stillSeconds {
      first = sample
    }
    // Reports that arrived together (one read) have no time between them: a floor of 8 ms.
    let seconds = max(0.008, last.seconds - first.seconds)
    return (last.position - first.position) / seconds
  }

  /// Where the cards are for a pointer at `raw`: the same, except past the ends of a bounded pager,
  /// where a rubber band lets them go only part of the way (UIScrollView's (1 − 1/(0.55·x + 1))).
  /// Without bounces they stop dead at the ends.
  func displayed(_ raw: Double) -> Double {
    guard !loops else { return raw }
    let last = Double(pageCount - 1)
    if raw < 0 { return bounces ? -Self.rubberBand(-raw) : 0 }
    if raw > last { return bounces ? last + Self.rubberBand(raw - last) : last }
    return raw
  }

  static func rubberBand(_ overshoot: Double) -> Double { 1 - 1 / (overshoot * 0.55 + 1) }

  func clamped(_ index: Int) -> Int { loops ? index : min(max(0, index), pageCount - 1) }

  func page(_ index: Int) -> Int { Self.wrap(index, pageCount) }
}
