import CueCore
import CuePosix
import CueProtocol

/// What a carousel event led to, as reported in `paging` events and the status counters.
enum PagingDecision: String {
  case played
  /// ignore-while-playing, and a voice of the binding still sounds.
  case ignored
  /// Within the binding's min-interval of its last start.
  case tooSoon = "too-soon"
  /// It could not start before its deadline (latest wins).
  case late
  /// No cue is bound to it (or the bound cue is not loaded).
  case unbound
  /// The other half of a wrap already played the wrap cue.
  case merged
  /// The page did not change.
  case unchanged
  /// The device could not be opened, or the audio queue was full.
  case failed
}

/// The paging side of the daemon: carousel messages in, bound cues out, under each binding's policy.
struct PagingState {
  /// Bindings per carousel name ("default" for carousels without their own table).
  var carousels: [String: CarouselBindings] = ["default": .builtIn]
  /// Voices sounding per binding ("carousel/binding").
  var voices: [String: [VoiceID]] = [:]
  /// When each binding last started a voice (monotonic ns).
  var lastStart: [String: UInt64] = [:]
  /// The last wrap handled per carousel: which transition, by which kind of message, and when, to
  /// merge its other half (a `wrapped` after a `page-changed` for the same move, or the other way).
  var lastWrap: [String: (from: Int, to: Int, byPageChange: Bool, at: UInt64)] = [:]
  var counts: [String: UInt64] = [:]
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

extension Daemon {
  /// Handles one carousel message; returns the reply fields (sent only when the message had an id).
  func handleCarousel(_ message: CarouselMessage, arrivedAt arrival: UInt64, client: ClientConnection) -> [(String, JSONValue)] {
    var decision: PagingDecision
    var cue: String? = nil
    var voice: VoiceID? = nil
    var extra: [(String, JSONValue)] = []
    switch message.event {
    case .pageChanged(let from, let to, let count, _):
      guard from != to else {
        decision = .unchanged
        break
      }
      let forward = (to - from + count) % count
      let backward = (from - to + count) % count
      let isNext = forward <= backward
      let bindings = paging.bindings(for: message.carousel)
      let wraps = count > 2 && ((isNext && from == count - 1 && to == 0) || (!isNext && from == 0 && to == count - 1))
      if wraps, bindings.bindings["wrap"] != nil {
        if mergesWithLastWrap(message.carousel, from: from, to: to, byPageChange: true) {
          decision = .merged
        } else {
          (decision, cue, voice) = play("wrap", of: message.carousel, direction: isNext ? 1 : -1, page: to, arrival: arrival)
          paging.lastWrap[message.carousel] = (from, to, true, MonotonicClock.nanoseconds())
        }
      } else {
        (decision, cue, voice) = play(isNext ? "page-next" : "page-prev", of: message.carousel, direction: isNext ? 1 : -1, page: to, arrival: arrival)
      }
      extra = [("from", .number(Double(from))), ("to", .number(Double(to)))]
    case .wrapped(let from, let to, let count):
      let isNext = (to - from + count) % count <= (from - to + count) % count
      if mergesWithLastWrap(message.carousel, from: from, to: to, byPageChange: false) {
        decision = .merged
      } else {
        (decision, cue, voice) = play("wrap", of: message.carousel, direction: isNext ? 1 : -1, page: to, arrival: arrival)
        paging.lastWrap[message.carousel] = (from, to, false, MonotonicClock.nanoseconds())
      }
      extra = [("from", .number(Double(from))), ("to", .number(Double(to)))]
    case .dragBegan, .dragEnded, .decelerationEnded, .scrollAnimationEnded:
      (decision, cue, voice) = play(message.event.name, of: message.carousel, direction: 0, page: nil, arrival: arrival)
    }
    paging.counts[decision.rawValue, default: 0] += 1
    var fields: [(String, JSONValue)] = [("decision", .string(decision.rawValue))]
    if let cue { fields.append(("cue", .string(cue))) }
    if let voice { fields.append(("voice", .number(Double(voice.rawValue)))) }
    emit(
      "paging",
      [("carousel", .string(message.carousel)), ("message", .string(message.event.name))] + extra + fields,
      ids: voice.map { [$0.rawValue] } ?? [])
    return fields
  }

  /// True when the other kind of message just handled the wrap from→to (within half a second): a
  /// carousel may send both `page-changed` and `wrapped` for one move, and it sounds once. A second
  /// move of the same kind (the carousel wrapped again) is a new wrap.
  func mergesWithLastWrap(_ carousel: String, from: Int, to: Int, byPageChange: Bool) -> Bool {
    guard let last = paging.lastWrap[carousel], last.from == from, last.to == to, last.byPageChange != byPageChange else {
      return false
    }
    if MonotonicClock.nanoseconds() - last.at < 500_000_000 {
      paging.lastWrap[carousel] = nil
      return true
    }
    return false
  }

  /// Plays `bindingName` of `carousel` under the binding's policy.
  func play(
    _ bindingName: String, of carousel: String, direction: Int, page: Int?, arrival: UInt64
  ) -> (PagingDecision, String?, VoiceID?) {
    let bindings = paging.bindings(for: carousel)
    guard let binding = bindings.bindings[bindingName] else { return (.unbound, nil, nil) }
    guard let cue = library[binding.cue] else { return (.unbound, binding.cue, nil) }
    let key = carousel + "/" + bindingName
    let now = MonotonicClock.nanoseconds()
    // Forget voices that have ended.
    paging.voices[key] = (paging.voices[key] ?? []).filter { voices[$0]?.stopping == false }
    let sounding = paging.voices[key] ?? []
    if binding.retrigger == .ignoreWhilePlaying && !sounding.isEmpty { return (.ignored, binding.cue, nil) }
    if binding.minInterval > 0, let last = paging.lastStart[key], now - last < UInt64(binding.minInterval * 1e9) {
      return (.tooSoon, binding.cue, nil)
    }
    if now - arrival > UInt64(binding.deadline * 1e9) { return (.late, binding.cue, nil) }
    let attachPending: Bool
    do {
      attachPending = try prepareDevice()
    } catch {
      return (.failed, binding.cue, nil)
    }
    defer { if attachPending { attachDevice() } }
    // Opening the device may itself have taken the event past its deadline.
    if MonotonicClock.nanoseconds() - arrival > UInt64(binding.deadline * 1e9) { return (.late, binding.cue, nil) }
    switch binding.retrigger {
    case .restart:
      for old in sounding where engine.send(.stop(old, fadeFrames: stopFadeFrames, reason: .stopped)) { voices[old]?.stopping = true }
    case .overlap:
      if sounding.count >= binding.maxVoices, let oldest = sounding.first,
        engine.send(.stop(oldest, fadeFrames: stopFadeFrames, reason: .stolen))
      {
        voices[oldest]?.stopping = true
      }
    case .ignoreWhilePlaying:
      break
    }
    _ = try? makeRoomForAVoice()
    let panAmount = binding.panByDirection ?? bindings.panByDirection
    let pan = max(-1, min(1, binding.pan + Double(direction) * panAmount))
    var rate = 1.0
    let spread = binding.rateSpread ?? bindings.rateSpread
    if spread > 0 { rate += spread * paging.nextUnit() }
    let step = binding.rateByPage ?? bindings.rateByPage
    if step > 0, let page { rate += step * Double(page % 8) }
    rate = max(0.5, min(2, rate))
    let id = VoiceID(nextID)
    let start = VoiceStart(
      id: id, samples: cue.decoded.buffer.samples,
      gain: StereoGain.voice(volume: binding.volume, pan: pan, sourceIsMono: cue.isMono), loops: .count(binding.loops), rate: rate)
    guard engine.send(.start(start)) else { return (.failed, binding.cue, nil) }
    nextID += 1
    playsStarted += 1
    voices[id] = LiveVoice(cue: cue, owner: 0, notify: false, startedAt: now, loops: .count(binding.loops), requestArrival: arrival)
    paging.voices[key, default: []].append(id)
    paging.lastStart[key] = now
    return (.played, binding.cue, id)
  }

  /// Checks that every bound cue is loaded; the first missing one, with its config line.
  func missingBoundCue(in carousels: [String: CarouselBindings], path: String?, known: Set<String>) -> String? {
    for (name, carousel) in carousels.sorted(by: { $0.key < $1.key }) {
      for (bindingName, binding) in carousel.bindings.sorted(by: { $0.key < $1.key }) where !known.contains(binding.cue) {
        let place = path.map { binding.line > 0 ? "\($0):\(binding.line): " : "\($0): " } ?? ""
        return "\(place)[carousel.\(name)] \(bindingName) plays cue '\(binding.cue)', which is not loaded; \(cueHint())"
      }
    }
    return nil
  }
}
