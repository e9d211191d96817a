import CueCore
import CuePosix
import CueProtocol

#if canImport(Glibc)
import Glibc
#endif

/// What paging remembers between carousel messages.
struct PagingState {
  /// Bindings per carousel name ("default" for carousels without their own table).
  /// The bindings in force without a config file's `[carousel.*]` tables.
  static let builtInCarousels: [String: CarouselBindings] = ["default": .builtIn]
  var carousels: [String: CarouselBindings] = builtInCarousels
  /// The mixer frame each scheduled sound of `multi-page = "each"` (after a change's first) starts at.
  var scheduledStarts: [VoiceID: UInt64] = [:]
  /// The last wrap handled per carousel: which transition, by which kind of message, and when, to
  /// merge its other half (a `wrapped` after a `page-changed` for the same move, or the other way).
  var lastWrap: [String: (from: Int, to: Int, byPageChange: Bool, at: UInt64)] = [:]
  var counts: [PagingDecision: Int] = [:]
  /// Where each carousel is in a scroll's life.
  var scrolls: [String: ScrollLifecycle] = [:]
  var outOfOrder = 0
  var settled = 0

  func bindings(for carousel: String) -> CarouselBindings {
    carousels[carousel] ?? carousels["default"] ?? .builtIn
  }
}

/// Audible paging: carousel messages in, bound cues out, under each binding's policy.
final class Paging {
  private(set) var state = PagingState()
  private let voices: VoiceTable
  private let catalog: CueCatalog
  private let rules: CueRules
  private let gate: VoiceGate
  private let events: EventRouter
  private let clock: DaemonClock
  private let sampleRate: Int

  init(
    gate: VoiceGate, catalog: CueCatalog, events: EventRouter, clock: DaemonClock, sampleRate: Int
  ) {
    self.gate = gate
    self.voices = gate.voices
    self.rules = gate.rules
    self.sampleRate = sampleRate
    self.catalog = catalog
    self.events = events
    self.clock = clock
  }

  /// The carousel bindings in force (nil: the built-in ones).
  func setCarousels(_ carousels: [String: CarouselBindings]?) {
    state.carousels = carousels ?? PagingState.builtInCarousels
  }

  var carousels: [String: CarouselBindings] { state.carousels }

  /// The decision counters, out-of-order messages and settled scrolls, for `status`.
  var counts: StatusReply.PagingCounts {
    var counts = StatusReply.PagingCounts(state.counts)
    counts.outOfOrder = state.outOfOrder
    counts.settled = state.settled
    return counts
  }

  /// Handles one carousel message; returns the reply fields (sent only when the message had an id).
  /// `client`: the sender's `hello` name (its ceiling holds the bound cues too).
  func handle(_ message: CarouselMessage, arrivedAt arrival: UInt64, client: String? = nil) -> PagingOutcome {
    var played = Played(decision: .unbound)
    var move: (from: Int, to: Int)? = nil
    var pagesCrossed: Int? = nil
    var echo = Event.Paging(carousel: message.carousel, message: message.event.name, outcome: PagingOutcome(decision: .unbound))
    let carousel = message.carousel
    let inOrder = state.scrolls[carousel, default: ScrollLifecycle()].take(message.event)
    switch message.event {
    case .pageChanged(let from, let to, let count, let reason, let given, _):
      echo.reason = reason
      guard from != to else {
        played.decision = .unchanged
        break
      }
      let forward = (to - from + count) % count
      let backward = (from - to + count) % count
      // A direction the carousel gives wins; otherwise the shorter way round, and on a tie (two
      // pages, or half way round) the way the index moved.
      let isNext = given.map { $0 == .next } ?? (forward == backward ? to > from : forward < backward)
      let pages = isNext ? forward : backward
      echo.direction = isNext ? .next : .previous
      let bindings = state.bindings(for: carousel)
      let wraps = (isNext && to < from) || (!isNext && to > from)
      if wraps, bindings.bindings["wrap"] != nil {
        if mergesWithLastWrap(carousel, from: from, to: to, byPageChange: true) {
          played.decision = .merged
        } else {
          played = play("wrap", of: carousel, direction: isNext ? 1 : -1, page: (to, count), arrival: arrival, client: client)
          state.lastWrap[carousel] = (from, to, true, clock.nanoseconds())
        }
      } else {
        var name = isNext ? "page-next" : "page-prev"
        if to == 0, bindings.bindings["first-page"] != nil { name = "first-page" }
        if to == count - 1, count > 1, bindings.bindings["last-page"] != nil { name = "last-page" }
        played = play(name, of: carousel, direction: isNext ? 1 : -1, page: (to, count), pages: pages, arrival: arrival, client: client)
      }
      move = (from, to)
      if pages > 1 { pagesCrossed = pages }
    case .wrapped(let from, let to, let count):
      let isNext = (to - from + count) % count <= (from - to + count) % count
      if mergesWithLastWrap(carousel, from: from, to: to, byPageChange: false) {
        played.decision = .merged
      } else {
        played = play("wrap", of: carousel, direction: isNext ? 1 : -1, page: (to, count), arrival: arrival, client: client)
        state.lastWrap[carousel] = (from, to, false, clock.nanoseconds())
      }
      move = (from, to)
    case .edge(let edge):
      echo.edge = edge
      played = play("edge", of: carousel, direction: edge == .end ? 1 : -1, page: nil, arrival: arrival, client: client)
    case .dragBegan, .willEndDragging, .dragEnded, .willBeginDecelerating, .decelerationEnded, .scrollAnimationEnded:
      if case .willEndDragging(let velocity, let targetPage) = message.event {
        echo.velocity = velocity
        echo.targetPage = targetPage
      }
      if case .dragEnded(let decelerate) = message.event { echo.decelerate = decelerate }
      played = play(message.event.name, of: carousel, direction: 0, page: nil, arrival: arrival, client: client)
    }
    state.counts[played.decision, default: 0] += 1
    if !inOrder { state.outOfOrder += 1 }
    let settles = state.scrolls[carousel]?.settledNow ?? false
    let outcome = PagingOutcome(
      decision: played.decision, cue: played.cue, voice: played.voice?.rawValue, reason: played.silenced, pages: pagesCrossed,
      outOfOrder: !inOrder, settled: settles)
    echo.from = move?.from
    echo.to = move?.to
    echo.outcome = outcome
    events.emit(.paging(echo))
    if settles {
      // The seeds' rule (003): the scroll has settled on didEndDragging(decelerate: false), on
      // didEndDecelerating, or when a programmatic scroll's animation ended; once per scroll.
      state.settled += 1
      let settled = play("settled", of: carousel, direction: 0, page: nil, arrival: arrival, client: client)
      state.counts[settled.decision, default: 0] += 1
      events.emit(
        .paging(
          Event.Paging(
            carousel: carousel, message: "settled",
            outcome: PagingOutcome(decision: settled.decision, cue: settled.cue, voice: settled.voice?.rawValue, reason: settled.silenced))))
    }
    return outcome
  }

  /// True when the other kind of message just handled the wrap from→to (within half a second): a
  /// carousel may send both `page-changed` and `wrapped` for one move, and it sounds once. A second
  /// move of the same kind (the carousel wrapped again) is a new wrap.
  func mergesWithLastWrap(_ carousel: String, from: Int, to: Int, byPageChange: Bool) -> Bool {
    guard let last = state.lastWrap[carousel], last.from == from, last.to == to, last.byPageChange != byPageChange else {
      return false
    }
    if clock.nanoseconds() - last.at < 500_000_000 {
      state.lastWrap[carousel] = nil
      return true
    }
    return false
  }

  /// What playing a binding came to: the decision, the cue and voice, and why the gate kept it silent.
  struct Played {
    var decision: PagingDecision
    var cue: String? = nil
    var voice: VoiceID? = nil
    var silenced: SilenceReason? = nil
  }

  /// Plays `bindingName` of `carousel` under the binding's policy. `page`: the page landed on and
  /// the page count (for rate-by-page and pan-by-position); `pages`: how many pages the move crossed.
  ///
  /// The gate applies the repeat rules, as to every play: the binding's (`retrigger`, `max-voices`,
  /// `min-interval`: `PagingBinding.repeatRule`), then the cue's own. What stays here is paging's:
  /// the deadline, the carousel's `max-page-voices` cap, the voice the new one crossfades with,
  /// pan and rate, and the later sounds of `multi-page = "each"`.
  func play(
    _ bindingName: String, of carousel: String, direction: Int, page: (index: Int, count: Int)?, pages: Int = 1, arrival: UInt64,
    client: String? = nil
  ) -> Played {
    let bindings = state.bindings(for: carousel)
    guard let binding = bindings.bindings[bindingName] else { return Played(decision: .unbound) }
    // The cue's own rules apply as to any play: its variations and spreads (the binding's rate
    // spread drawn on top, by the same rule).
    let spread = PagingBinding.rateSpreadSemitones(binding.rateSpread ?? bindings.rateSpread)
    guard let choice = try? rules.choose(binding.cue, catalog: catalog, addedRateSpread: spread) else {
      return Played(decision: .unbound, cue: binding.cue)
    }
    let deadline = arrival + UInt64(binding.deadline * 1e9)
    let bindingRule = binding.repeatRule(carousel: carousel, name: bindingName)
    var play = VoiceGate.Play(
      request: request(binding, of: bindings, choice: choice, direction: direction, page: page, pages: pages, arrival: arrival),
      rule: binding.cue, client: client, repeats: [bindingRule, rules.repeatRule(playedAs: binding.cue)], deadline: deadline)
    var admitted: VoiceGate.Admitted
    switch gate.admit(play) {
    case .admitted(let admission): admitted = admission
    case .silent(let reason): return Played(decision: reason == .cooldown ? .tooSoon : .ignored, cue: binding.cue, silenced: reason)
    }
    if clock.nanoseconds() > deadline {
      rules.count(.tooLate)
      return Played(decision: .late, cue: binding.cue)
    }
    // The cap, one rule: a carousel's page voices (every page binding's, this binding's own
    // overlapping ones and each scheduled sound of multi-page "each" included) never exceed
    // max-page-voices. Past it the oldest fades out (over the stop fade) as the new one starts, or
    // ends at once if it has not sounded yet, so a burst ends with one clean final sound.
    let isPageSound = CarouselBindings.pageSoundNames.contains(bindingName)
    var pageVoices: [VoiceID] = []  // the page voices that stay, oldest first
    if isPageSound {
      let replaced = Set(admitted.stopping.map(\.0))
      let pageKeys = Set(CarouselBindings.pageSoundNames.map { RepeatKey.binding(carousel: carousel, binding: $0) })
      pageVoices = gate.instances(ofAny: pageKeys).filter { !replaced.contains($0) }
      let excess = pageVoices.count - (bindings.maxPageVoices - 1)
      if excess > 0 {
        admitted.stopping += pageVoices.prefix(excess).map { ($0, .stopped) }
        pageVoices.removeFirst(excess)
      }
    }
    // multi-page "each": the sounds after the first start page-spacing apart on the mixer clock;
    // they are the same play (counted under the binding, not checked again), admitted each in
    // turn, and past max-page-voices each takes the place of the oldest page voice when it sounds.
    let sounds = binding.multiPage == .each ? min(max(pages, 1), MultiPage.maximumSounds) : 1
    let spacing = UInt64((binding.pageSpacing * Double(sampleRate)).rounded())
    let first = voices.nextMixFrame()
    var id = VoiceID(0)
    // The youngest voice this play stops that may have been heard (its own by restart, or a page
    // voice past the cap) is crossfaded: the engine fades it out as the new one fades in, or, if it
    // has not sounded, passes the crossfade on to the voice it was to replace. A scheduled sound
    // not yet due (the rest of an earlier "each") is only dropped: it was never heard, and left
    // to the engine's chain it would come due over the new sound.
    state.scheduledStarts = state.scheduledStarts.filter { voices.isSounding($0.key) }
    let notYetDue = { (voice: VoiceID) in (self.state.scheduledStarts[voice] ?? 0) > first }
    let heard = admitted.stopping.filter { $0.1 == .stopped && !notYetDue($0.0) }.map(\.0)
    if let youngest = heard.max(by: { $0.rawValue < $1.rawValue }) {
      admitted.play.request.replaces = youngest
      admitted.stopping.removeAll { $0.0 == youngest }
    }
    for index in 0..<sounds {
      if index > 0 {
        play.request.startAtFrame = first + UInt64(index) * spacing
        play.request.replaces = isPageSound && pageVoices.count >= bindings.maxPageVoices ? pageVoices.removeFirst() : nil
        play.repeats = [bindingRule]
        play.checksRepeats = false
      }
      do {
        switch try index == 0 ? gate.start(admitted) : gate.start(play) {
        case .started(let started, _):
          if index == 0 { id = started } else { state.scheduledStarts[started] = play.request.startAtFrame }
          if isPageSound { pageVoices.append(started) }
        case .silent(let reason):
          if index == 0 { return Played(decision: .ignored, cue: binding.cue, silenced: reason) }
        }
      } catch {
        // Opening the device may itself have taken the event past its deadline.
        if index == 0 {
          let late = clock.nanoseconds() > deadline
          if late { rules.count(.tooLate) }
          return Played(decision: late ? .late : .failed, cue: binding.cue)
        }
        break
      }
    }
    return Played(decision: .played, cue: binding.cue, voice: id)
  }

  /// The voice a binding's play starts: its volume, pan by direction and position, rate by page and
  /// by distance (`multi-page = "rate"`) on the spreads `choice` drew, and loops.
  private func request(
    _ binding: PagingBinding, of bindings: CarouselBindings, choice: CueRules.Choice, direction: Int, page: (index: Int, count: Int)?,
    pages: Int, arrival: UInt64
  ) -> VoiceRequest {
    let panAmount = bindings.vertical ? 0 : binding.panByDirection ?? bindings.panByDirection
    var pan = binding.pan + Double(direction) * panAmount
    if !bindings.vertical, bindings.panByPosition > 0, let page, page.count > 1 {
      pan += bindings.panByPosition * (2 * Double(page.index) / Double(page.count - 1) - 1)
    }
    pan = max(-1, min(1, pan))
    var rate = choice.rateFactor
    let step = binding.rateByPage ?? bindings.rateByPage
    if step > 0, let page { rate += step * Double(page.index % 8) }
    if binding.multiPage == .rate && pages > 1 { rate *= exp2(Double(min(pages - 1, 12)) / 12) }  // a semitone per extra page
    var request = VoiceRequest(
      cue: choice.cue, gain: StereoGain.voice(volume: binding.volume, pan: pan, sourceIsMono: choice.cue.isMono).scaled(by: choice.gainFactor),
      loops: .count(binding.loops))
    request.rate = max(0.5, min(2, rate))
    request.requestArrival = arrival
    return request
  }

  /// Checks that every bound cue is loaded; the first missing one, with its config line.
  static func missingBoundCue(in carousels: [String: CarouselBindings], path: String?, known: Set<String>, hint: String) -> String? {
    for (name, carousel) in carousels.sorted(by: { $0.key < $1.key }) {
      for (bindingName, binding) in carousel.bindings.sorted(by: { $0.key < $1.key }) where !known.contains(binding.cue) {
        let place = path.map { binding.line > 0 ? "\($0):\(binding.line): " : "\($0): " } ?? ""
        return "\(place)[carousel.\(name)] \(bindingName) plays cue '\(binding.cue)', which is not loaded; \(hint)"
      }
    }
    return nil
  }
}

/// One carousel's place in UIScrollView's delegate order (seeds 001–003):
/// drag-began → will-end-dragging → drag-ended(decelerate) → [will-begin-decelerating →
/// deceleration-ended]; scroll-animation-ended for a programmatic scroll. `take` says whether a
/// message came in that order; every message is handled either way.
struct ScrollLifecycle {
  enum Phase { case idle, dragging, endingDrag, decelerating }
  var phase = Phase.idle
  /// Something moved since the scroll last settled (a drag, a page change).
  var unsettled = false
  /// The message just taken settled the scroll.
  private(set) var settledNow = false

  /// Takes one message; false when it came out of order.
  mutating func take(_ event: CarouselMessage.Event) -> Bool {
    settledNow = false
    var inOrder = true
    switch event {
    case .dragBegan:
      // Touching a decelerating scroll starts a new drag: in order (UIKit does the same).
      inOrder = phase == .idle || phase == .decelerating
      phase = .dragging
      unsettled = true
    case .willEndDragging:
      inOrder = phase == .dragging
      phase = .endingDrag
    case .dragEnded(let decelerate):
      inOrder = phase == .dragging || phase == .endingDrag
      if decelerate {
        phase = .decelerating
      } else {
        settle()
      }
    case .willBeginDecelerating:
      inOrder = phase == .decelerating
    case .decelerationEnded:
      inOrder = phase == .decelerating
      settle()
    case .scrollAnimationEnded:
      inOrder = phase == .idle
      settle()
    case .pageChanged(_, _, _, _, _, let animated):
      unsettled = true
      // A jump with no animation is the whole scroll (seed 000: one scrollViewDidScroll, no
      // end-of-animation call): it settles at once. During a drag it is part of that drag.
      if !animated && phase == .idle { settle() }
    case .wrapped:
      unsettled = true
    case .edge:
      break
    }
    return inOrder
  }

  /// The scroll settled, once: a second end for the same scroll settles nothing.
  private mutating func settle() {
    settledNow = unsettled
    unsettled = false
    phase = .idle
  }
}
