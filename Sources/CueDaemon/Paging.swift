import CueCore
import CuePosix
import CueProtocol

/// What paging remembers between carousel messages.
struct PagingState {
  /// Bindings per carousel name ("default" for carousels without their own table).
  /// The bindings in force without a config file's `[carousel.*]` tables.
  static let builtInCarousels: [String: CarouselBindings] = ["default": .builtIn]
  var carousels: [String: CarouselBindings] = builtInCarousels
  /// Voices sounding per binding ("carousel/binding").
  var voices: [String: [VoiceID]] = [:]
  /// When each binding last started a voice (monotonic ns).
  var lastStart: [String: UInt64] = [:]
  /// The last wrap handled per carousel: which transition, by which kind of message, and when, to
  /// merge its other half (a `wrapped` after a `page-changed` for the same move, or the other way).
  var lastWrap: [String: (from: Int, to: Int, byPageChange: Bool, at: UInt64)] = [:]
  var counts: [PagingDecision: Int] = [:]
  /// A small deterministic generator for rate-spread (xorshift).
  var random: UInt64 = 0x9E37_79B9_7F4A_7C15

  mutating func nextUnit() -> Double {
    random ^= random << 13
    random ^= random >> 7
    random ^= random << 17
    return Double(random >> 11) / Double(UInt64(1) << 53) * 2 - 1
  }

  func bindings(for carousel: String) -> CarouselBindings {
    carousels[carousel] ?? carousels["default"] ?? .builtIn
  }
}

/// Audible paging: carousel messages in, bound cues out, under each binding's policy.
final class Paging {
  private(set) var state = PagingState()
  private let voices: VoiceTable
  private let catalog: CueCatalog
  private let events: EventRouter
  private let clock: DaemonClock

  init(voices: VoiceTable, catalog: CueCatalog, events: EventRouter, clock: DaemonClock) {
    self.voices = voices
    self.catalog = catalog
    self.events = events
    self.clock = clock
  }

  /// The carousel bindings in force (nil: the built-in ones).
  func setCarousels(_ carousels: [String: CarouselBindings]?) {
    state.carousels = carousels ?? PagingState.builtInCarousels
  }

  var carousels: [String: CarouselBindings] { state.carousels }

  /// The decision counters, for `status`.
  var counts: [PagingDecision: Int] { state.counts }

  /// Handles one carousel message; returns the reply fields (sent only when the message had an id).
  func handle(_ message: CarouselMessage, arrivedAt arrival: UInt64) -> PagingOutcome {
    var decision: PagingDecision
    var cue: String? = nil
    var voice: VoiceID? = nil
    var move: (from: Int, to: Int)? = nil
    switch message.event {
    case .pageChanged(let from, let to, let count, _):
      guard from != to else {
        decision = .unchanged
        break
      }
      let forward = (to - from + count) % count
      let backward = (from - to + count) % count
      let isNext = forward <= backward
      let bindings = state.bindings(for: message.carousel)
      let wraps = count > 2 && ((isNext && from == count - 1 && to == 0) || (!isNext && from == 0 && to == count - 1))
      if wraps, bindings.bindings["wrap"] != nil {
        if mergesWithLastWrap(message.carousel, from: from, to: to, byPageChange: true) {
          decision = .merged
        } else {
          (decision, cue, voice) = play("wrap", of: message.carousel, direction: isNext ? 1 : -1, page: to, arrival: arrival)
          state.lastWrap[message.carousel] = (from, to, true, clock.nanoseconds())
        }
      } else {
        (decision, cue, voice) = play(isNext ? "page-next" : "page-prev", of: message.carousel, direction: isNext ? 1 : -1, page: to, arrival: arrival)
      }
      move = (from, to)
    case .wrapped(let from, let to, let count):
      let isNext = (to - from + count) % count <= (from - to + count) % count
      if mergesWithLastWrap(message.carousel, from: from, to: to, byPageChange: false) {
        decision = .merged
      } else {
        (decision, cue, voice) = play("wrap", of: message.carousel, direction: isNext ? 1 : -1, page: to, arrival: arrival)
        state.lastWrap[message.carousel] = (from, to, false, clock.nanoseconds())
      }
      move = (from, to)
    case .dragBegan, .dragEnded, .decelerationEnded, .scrollAnimationEnded:
      (decision, cue, voice) = play(message.event.name, of: message.carousel, direction: 0, page: nil, arrival: arrival)
    }
    state.counts[decision, default: 0] += 1
    let outcome = PagingOutcome(decision: decision, cue: cue, voice: voice?.rawValue)
    events.emit(.paging(Event.Paging(carousel: message.carousel, message: message.event.name, from: move?.from, to: move?.to, outcome: outcome)))
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

  /// Plays `bindingName` of `carousel` under the binding's policy.
  func play(
    _ bindingName: String, of carousel: String, direction: Int, page: Int?, arrival: UInt64
  ) -> (PagingDecision, String?, VoiceID?) {
    let bindings = state.bindings(for: carousel)
    guard let binding = bindings.bindings[bindingName] else { return (.unbound, nil, nil) }
    guard let cue = catalog[binding.cue] else { return (.unbound, binding.cue, nil) }
    let key = carousel + "/" + bindingName
    let now = clock.nanoseconds()
    // Forget voices that have ended.
    state.voices[key] = (state.voices[key] ?? []).filter { voices.isSounding($0) }
    let sounding = state.voices[key] ?? []
    if binding.retrigger == .ignoreWhilePlaying && !sounding.isEmpty { return (.ignored, binding.cue, nil) }
    if binding.minInterval > 0, let last = state.lastStart[key], now - last < UInt64(binding.minInterval * 1e9) {
      return (.tooSoon, binding.cue, nil)
    }
    let deadline = arrival + UInt64(binding.deadline * 1e9)
    if now > deadline { return (.late, binding.cue, nil) }
    var replacing: [(VoiceID, VoiceEndReason)] = []
    switch binding.retrigger {
    case .restart:
      replacing = sounding.map { ($0, .stopped) }
    case .overlap:
      if sounding.count >= binding.maxVoices, let oldest = sounding.first { replacing = [(oldest, .stolen)] }
    case .ignoreWhilePlaying:
      break
    }
    let panAmount = binding.panByDirection ?? bindings.panByDirection
    let pan = max(-1, min(1, binding.pan + Double(direction) * panAmount))
    var rate = 1.0
    let spread = binding.rateSpread ?? bindings.rateSpread
    if spread > 0 { rate += spread * state.nextUnit() }
    let step = binding.rateByPage ?? bindings.rateByPage
    if step > 0, let page { rate += step * Double(page % 8) }
    var request = VoiceRequest(
      cue: cue, gain: StereoGain.voice(volume: binding.volume, pan: pan, sourceIsMono: cue.isMono), loops: .count(binding.loops))
    request.rate = max(0.5, min(2, rate))
    request.requestArrival = arrival
    let id: VoiceID
    do {
      id = try voices.start(request, deadline: deadline, replacing: replacing).id
    } catch {
      // Opening the device may itself have taken the event past its deadline.
      return (clock.nanoseconds() > deadline ? .late : .failed, binding.cue, nil)
    }
    state.voices[key, default: []].append(id)
    state.lastStart[key] = now
    return (.played, binding.cue, id)
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
