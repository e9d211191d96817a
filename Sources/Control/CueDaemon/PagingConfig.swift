import CueProtocol

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

extension ConfigFile {
  /// Reads the `[carousel.NAME]` tables.
  static func interpretCarousels(_ value: JSONValue, path: String, locator: KeyLocator) throws(ConfigError) -> [String: CarouselBindings] {
    guard let tables = value.objectValue else {
      throw ConfigError(path: path, line: locator.line(of: "carousel", in: ""), message: "carousel must hold tables: [carousel.NAME]")
    }
    var carousels: [String: CarouselBindings] = [:]
    for (name, table) in tables {
      let section = "carousel." + name
      func fail(_ key: String, _ message: String) -> ConfigError {
        ConfigError(path: path, line: locator.line(of: key, in: section), message: message)
      }
      guard let members = table.objectValue else { throw fail(name, "[\(section)] must be a table of bindings") }
      var carousel = CarouselBindings()
      for (key, setting) in members {
        switch key {
        case "pan-by-direction": carousel.panByDirection = try unit(setting, key, 0...1, fail)
        case "rate-spread": carousel.rateSpread = try unit(setting, key, 0...0.5, fail)
        case "rate-by-page": carousel.rateByPage = try unit(setting, key, 0...0.1, fail)
        case "pan-by-position": carousel.panByPosition = try unit(setting, key, 0...1, fail)
        case "max-page-voices":
          guard let n = setting.intValue, (1...16).contains(n) else { throw fail(key, "max-page-voices must be a whole number from 1 to 16") }
          carousel.maxPageVoices = n
        case _ where CarouselBindings.bindingNames.contains(key):
          if let binding = try binding(setting, key: key, line: locator.line(of: key, in: section), fail) {
            carousel.bindings[key] = binding
          }
        default:
          throw fail(
            key,
            "unknown key \(key) in [\(section)]; a carousel takes the bindings \(CarouselBindings.bindingNames.joined(separator: ", ")) and pan-by-direction, pan-by-position, rate-spread, rate-by-page, max-page-voices")
        }
      }
      carousels[name] = carousel
    }
    return carousels
  }

  /// A number within `range` (of `unit`, for the message), or `fail` naming the key and the range.
  static func unit(
    _ value: JSONValue, _ key: String, _ range: ClosedRange<Double>, _ fail: (String, String) -> ConfigError, of unit: String? = nil
  ) throws(ConfigError) -> Double {
    guard let x = value.doubleValue, x.isFinite, range.contains(x) else {
      throw fail(key, "\(key) must be a number\(unit.map { " of " + $0 } ?? "") from \(range.lowerBound) to \(range.upperBound)")
    }
    return x
  }

  /// `true` or `false`, or `fail` naming the key.
  static func flag(_ value: JSONValue, _ key: String, _ fail: (String, String) -> ConfigError) throws(ConfigError) -> Bool {
    guard let flag = value.boolValue else { throw fail(key, "\(key) must be true or false") }
    return flag
  }

  /// A binding: a cue name, `false` or `""` for nothing, or `{ cue = "…", volume = …, … }`.
  private static func binding(
    _ value: JSONValue, key: String, line: Int, _ fail: (String, String) -> ConfigError
  ) throws(ConfigError) -> PagingBinding? {
    if value.boolValue == false || value.stringValue == "" { return nil }
    if let cue = value.stringValue {
      var binding = PagingBinding(cue: cue)
      binding.line = line
      return binding
    }
    guard let fields = value.objectValue else {
      throw fail(key, "\(key) must be a cue name, false, or a table like { cue = \"page-next\", volume = 0.8 }")
    }
    guard let cue = value["cue"]?.stringValue, !cue.isEmpty else {
      throw fail(key, "\(key) needs cue = \"…\" (the cue to play), or false for nothing")
    }
    var binding = PagingBinding(cue: cue)
    binding.line = line
    for (field, setting) in fields {
      switch field {
      case "cue": break
      case "volume": binding.volume = try unit(setting, "volume", 0...1, fail)
      case "pan": binding.pan = try unit(setting, "pan", -1...1, fail)
      case "loops":
        guard let n = setting.intValue, (0...1000).contains(n) else { throw fail(key, "loops must be a whole number from 0 to 1000 here") }
        binding.loops = n
      case "retrigger":
        guard let raw = setting.stringValue, let retrigger = Retrigger(rawValue: raw) else {
          throw fail(key, "retrigger must be \"restart\", \"overlap\" or \"ignore-while-playing\"")
        }
        binding.retrigger = retrigger
      case "max-voices":
        guard let n = setting.intValue, (1...64).contains(n) else { throw fail(key, "max-voices must be a whole number from 1 to 64") }
        binding.maxVoices = n
      case "min-interval": binding.minInterval = try unit(setting, "min-interval", 0...10, fail)
      case "deadline": binding.deadline = try unit(setting, "deadline", 0.001...10, fail)
      case "pan-by-direction": binding.panByDirection = try unit(setting, "pan-by-direction", 0...1, fail)
      case "rate-spread": binding.rateSpread = try unit(setting, "rate-spread", 0...0.5, fail)
      case "rate-by-page": binding.rateByPage = try unit(setting, "rate-by-page", 0...0.1, fail)
      case "multi-page":
        guard let raw = setting.stringValue, let multiPage = MultiPage(rawValue: raw) else {
          throw fail(key, "multi-page must be \"one\", \"each\" or \"rate\"")
        }
        binding.multiPage = multiPage
      case "page-spacing": binding.pageSpacing = try unit(setting, "page-spacing", 0.01...1, fail)
      default:
        throw fail(
          key,
          "unknown setting \(field) in \(key); a binding takes cue, volume, pan, loops, retrigger, max-voices, min-interval, deadline, pan-by-direction, rate-spread, rate-by-page, multi-page, page-spacing")
      }
    }
    return binding
  }
}
