import CueProtocol

#if canImport(Glibc)
import Glibc
#endif

/// What happens when a bound carousel event comes in while its cue still sounds.
public enum Retrigger: String, Sendable, Equatable, CaseIterable {
  /// Fade out the previous voice of this binding and start anew (the seeds' stop-then-play).
  case restart
  /// Let voices overlap, up to `maxVoices` of this binding (the oldest fades out past it).
  case overlap
  /// Play nothing while a voice of this binding still sounds.
  case ignoreWhilePlaying = "ignore-while-playing"
}

/// How a page change that crosses several pages at once (a flick, a jump) sounds.
public enum MultiPage: String, Sendable, Equatable, CaseIterable {
  /// One sound, as for one page.
  case one
  /// A sound per page crossed, `page-spacing` apart on the mixer clock (at most `maximumSounds`).
  case each
  /// One sound whose rate rises a semitone per extra page (pitch follows rate; at most an octave).
  case rate

  public static let maximumSounds = 8
}

/// One binding: the cue a carousel event plays, and how.
public struct PagingBinding: Sendable, Equatable {
  public var cue: String
  public var volume = 1.0
  public var pan = 0.0
  public var loops = 0
  public var retrigger = Retrigger.restart
  /// With `overlap`: the most voices of this binding at once.
  public var maxVoices = 4
  /// The shortest time between two starts of this binding, in seconds (0: none).
  public var minInterval = 0.0
  /// Latest wins: an event whose cue would start later than this after it arrived is dropped.
  public var deadline = 0.030
  /// Next pans right and previous pans left by this much (nil: the carousel's setting).
  public var panByDirection: Double? = nil
  /// A random rate variation of ± this much (nil: the carousel's setting). Pitch follows rate.
  public var rateSpread: Double? = nil
  /// Rate steps by this much per page index (nil: the carousel's setting).
  public var rateByPage: Double? = nil
  /// A page change across several pages: one sound, one per page, or a rate that follows the distance.
  public var multiPage = MultiPage.one
  /// With `multi-page = "each"`: seconds between the sounds.
  public var pageSpacing = 0.06
  /// Where it was set (for messages), 0 when built in.
  public var line = 0

  public init(cue: String, volume: Double = 1, retrigger: Retrigger = .restart) {
    self.cue = cue
    self.volume = volume
    self.retrigger = retrigger
  }
}

extension PagingBinding {
  /// The binding's repeat rule, under the key `carousel`/`name`: `min-interval` is its cooldown;
  /// `restart` is one instance, restarted; `overlap` is `max-voices` instances, the oldest stolen
  /// past them; `ignore-while-playing` is one instance, a play past it refused.
  func repeatRule(carousel: String, name: String) -> RepeatRule {
    var rule = RepeatRule(key: .binding(carousel: carousel, binding: name), cooldown: minInterval)
    switch retrigger {
    case .restart: (rule.maxInstances, rule.pastMaximum) = (1, .restart)
    case .overlap: (rule.maxInstances, rule.pastMaximum) = (maxVoices, .steal)
    case .ignoreWhilePlaying: (rule.maxInstances, rule.pastMaximum) = (1, .refuse)
    }
    return rule
  }

  /// A binding's `rate-spread` (a fraction r of the rate) as a cue's (± semitones): 12·log2(1 + r).
  static func rateSpreadSemitones(_ fraction: Double) -> Double { 12 * log2(1 + fraction) }
}

/// The bindings of one carousel. A missing key means "nothing".
public struct CarouselBindings: Sendable, Equatable {
  /// Keyed by binding name: page-next, page-prev, wrap, drag-began, drag-ended, deceleration-ended,
  /// scroll-animation-ended.
  public var bindings: [String: PagingBinding] = [:]
  public var panByDirection = 0.0
  public var rateSpread = 0.0
  public var rateByPage = 0.0
  /// Pan by where the page sits in the carousel: the first page this far left, the last this far right.
  public var panByPosition = 0.0
  /// The most page sounds (page-next, page-prev, wrap, first-page, last-page) of this carousel heard
  /// at once; a new one fades out the oldest past it, so a burst ends with one clean final sound.
  public var maxPageVoices = 1
  /// A vertical pager (pages above and below each other): stereo has no up and down, so neither
  /// the direction nor the page's position pans its sounds.
  public var vertical = false

  public init(bindings: [String: PagingBinding] = [:]) { self.bindings = bindings }

  /// The bindings whose sounds say "the page changed"; `max-page-voices` counts them together.
  public static let pageSoundNames: Set<String> = ["page-next", "page-prev", "wrap", "first-page", "last-page"]

  /// With no config: the shipped sounds. Settling plays nothing.
  public static let builtIn = CarouselBindings(bindings: [
    "page-next": PagingBinding(cue: "page-next"),
    "page-prev": PagingBinding(cue: "page-prev"),
    "wrap": PagingBinding(cue: "wrap"),
    "drag-began": PagingBinding(cue: "tick", volume: 0.5, retrigger: .overlap),
  ])

  /// The names a binding may have: the page sounds, each lifecycle message, `settled` (derived)
  /// and `edge` (a bounded pager pushed past an end).
  public static let bindingNames = [
    "page-next", "page-prev", "wrap", "first-page", "last-page", "drag-began", "will-end-dragging", "drag-ended",
    "will-begin-decelerating", "deceleration-ended", "scroll-animation-ended", "settled", "edge",
  ]
}
