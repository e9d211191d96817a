#if canImport(Testing)
import CueProtocol
import Foundation
import Testing

/// How page changes arrive at cued, as a carousel sends them.
public enum PageArrival: String, CaseIterable, Sendable {
  /// Ten page changes in one write (a TUI that flushes its events once per frame).
  case oneWrite
  /// Ten page changes, one a millisecond.
  case everyMillisecond
  /// Ten page changes at a key repeat of 30 per second.
  case keyRepeat
  /// One page change across eight pages (a flick).
  case flick
}

/// Paging at any speed: bursts of page changes (fire and forget, as a carousel sends them), on the
/// samples the daemon's output was given: at most `max-page-voices` page voices once a replaced
/// one's fade has ended, the last page's sound whole, and a peak within 0.5 dB of the loudest
/// single page cue. Each body written once against `DaemonUnderTest`, one per case.
public enum PageBursts {
  public static let all: [Behaviour] =
    ["restart", "overlap", "ignore-while-playing"].flatMap { retrigger in
      PageArrival.allCases.map { arrival in
        Behaviour("aBurstEndsWithOneCleanSound(\(retrigger), \(arrival))") {
          try aBurstEndsWithOneCleanSound($0, retrigger: retrigger, arrival: arrival)
        }
      }
    }
    + ["one", "each", "rate"].map { multiPage in
      Behaviour("aFlickSoundsByItsMultiPageModeWithinTheCap(\(multiPage))") { try aFlickSoundsByItsMultiPageModeWithinTheCap($0, multiPage: multiPage) }
    }
    + ["one", "each", "rate"].flatMap { multiPage in
      [PageArrival.oneWrite, .everyMillisecond].map { arrival in
        Behaviour("aMultiPageBurstStaysWithinOnePageSoundAndEndsWithTheWrapWhole(\(multiPage), \(arrival))") {
          try aMultiPageBurstStaysWithinOnePageSoundAndEndsWithTheWrapWhole($0, multiPage: multiPage, arrival: arrival)
        }
      }
    }

  /// The page cue: 0.12 s of a tone, longer than the key-repeat interval and than page-spacing.
  static let cue = "tone-48000-mono.mp3"

  static func config(_ retrigger: String, multiPage: String = "one") -> String {
    """
    [carousel.default]
    page-next = { cue = "page-next", retrigger = "\(retrigger)", max-voices = 4, multi-page = "\(multiPage)", deadline = 1.0 }
    """
  }

  static func line(_ from: Int, _ to: Int, of count: Int, reason: CarouselMessage.Reason = .key, direction: CarouselMessage.Direction? = nil) -> String {
    JSONWriter.write(CarouselMessage(carousel: "default", event: .pageChanged(from: from, to: to, count: count, reason: reason, direction: direction)).json)
  }

  /// Sends `lines` as `arrival` says (in one write, or a millisecond or a key repeat apart), waits
  /// until every sound has ended, and returns what the output was given.
  static func send(_ lines: [String], _ arrival: PageArrival, to daemon: DaemonUnderTest) throws -> [Float] {
    let client = try daemon.connect()
    switch arrival {
    case .oneWrite, .flick:
      try client.send(lines.joined(separator: "\n"))
    case .everyMillisecond, .keyRepeat:
      for line in lines {
        try client.send(line)
        daemon.advance(seconds: arrival == .everyMillisecond ? 0.001 : 0.033)
      }
    }
    // Every sound has ended (eight page-spacings of 60 ms and a cue, at the most).
    daemon.advance(seconds: 0.9)
    return try daemon.finish()
  }

  /// `arrival`'s page changes of a 20-page carousel.
  static func capture(_ start: DaemonStarter, _ arrival: PageArrival, config: String) throws -> [Float] {
    let daemon = try start(DaemonSetup(cues: ["page-next": cue], config: config))
    let lines = arrival == .flick ? [line(0, 8, of: 20)] : (0..<10).map { line($0, $0 + 1, of: 20) }
    return try send(lines, arrival, to: daemon)
  }

  static func peak(_ samples: [Float]) -> Float { samples.map(abs).max() ?? 0 }

  /// The stop fade, which is also a replacing page sound's crossfade (8 ms at 48 kHz).
  static let fadeFrames = 384

  /// Whether the output ends with `cue` played to its end: its last `cue.count` samples but the
  /// first crossfade's are the cue's own, exactly (a replacing sound fades in over the one it
  /// replaces for that long; from there on it is alone).
  static func endsWithWhole(_ output: [Float], _ cue: [Float]) -> Bool {
    guard let end = output.lastIndex(where: { $0 != 0 }) else { return false }
    let stop = end + (end % 2 == 0 ? 2 : 1)
    guard stop >= cue.count else { return false }
    let skip = 2 * fadeFrames
    return Array(output[(stop - cue.count + skip)..<stop]) == Array(cue[skip...])
  }

  static func aBurstEndsWithOneCleanSound(_ start: DaemonStarter, retrigger: String, arrival: PageArrival) throws {
    let capture = try capture(start, arrival, config: config(retrigger))
    let single = try decoded(cue)
    let allowed = peak(single) * Float(pow(10, 0.5 / 20))
    #expect(peak(capture) <= allowed, "peak \(peak(capture)) over \(allowed) (the cue alone: \(peak(single)))")
    // The sound that is heard last plays whole: the last page's under restart and overlap, the
    // first's under ignore-while-playing (the others are ignored while it plays).
    #expect(endsWithWhole(capture, single), "the last sound is not the cue played to its end")
    if retrigger == "ignore-while-playing" && arrival != .keyRepeat {
      #expect(capture.filter { $0 != 0 }.count == single.filter { $0 != 0 }.count, "more than one sound under ignore-while-playing")
    }
  }

  /// A flick across eight pages under each multi-page mode: one sound, a sound per page (each
  /// taking the place of the one before, as max-page-voices is 1), or one sound pitched up.
  static func aFlickSoundsByItsMultiPageModeWithinTheCap(_ start: DaemonStarter, multiPage: String) throws {
    let capture = try capture(start, .flick, config: config("restart", multiPage: multiPage))
    let single = try decoded(cue)
    let allowed = peak(single) * Float(pow(10, 0.5 / 20))
    #expect(peak(capture) <= allowed, "peak \(peak(capture)) over \(allowed)")
    let heardFrames = (0..<(capture.count / 2)).filter { capture[2 * $0] != 0 || capture[2 * $0 + 1] != 0 }.count
    let cueFrames = single.count / 2
    switch multiPage {
    case "one":
      #expect(endsWithWhole(capture, single))
      #expect(abs(heardFrames - cueFrames) <= 2, "\(heardFrames) frames heard")
    case "each":
      // Eight sounds 60 ms (2880 frames) apart, each cut by the next: seven spacings and a whole last cue.
      #expect(endsWithWhole(capture, single), "the last page's sound is not played to its end")
      #expect(abs(heardFrames - (7 * 2880 + cueFrames)) <= 8, "\(heardFrames) frames heard")
    default:
      // Seven semitones up: the cue in 2^(-7/12) of its length.
      let expected = Double(cueFrames) / pow(2, 7.0 / 12)
      #expect(abs(Double(heardFrames) - expected) <= 4, "\(heardFrames) frames heard, not about \(Int(expected))")
    }
  }

  /// The burst that used to escape the cap under `multi-page = "each"`: nine page changes that each
  /// cross two pages (their second sounds scheduled `page-spacing` later), then a one-page wrap, all
  /// within the spacing. A newer page change drops the sounds of the older ones that are not yet due
  /// (or takes their place with the crossfade), so whatever the mode and however the lines arrive,
  /// one page sound is heard at a time and the wrap's is heard last, whole.
  static func aMultiPageBurstStaysWithinOnePageSoundAndEndsWithTheWrapWhole(
    _ start: DaemonStarter, multiPage: String, arrival: PageArrival
  ) throws {
    let config = """
      [carousel.default]
      page-next = { cue = "page-next", multi-page = "\(multiPage)", page-spacing = 0.03, deadline = 1.0 }
      wrap = { cue = "wrap", multi-page = "\(multiPage)", page-spacing = 0.03, deadline = 1.0 }
      """
    let daemon = try start(DaemonSetup(cues: ["page-next": cue, "wrap": cue], config: config))
    // The nine two-page changes of a 19-page carousel (0→2 … 16→18) and the wrap 18→0.
    let lines = (stride(from: 0, to: 18, by: 2).map { ($0, $0 + 2) } + [(18, 0)]).map { line($0, $1, of: 19, reason: .drag, direction: .next) }
    let capture = try send(lines, arrival, to: daemon)
    let single = try decoded(cue)
    let allowed = peak(single) * Float(pow(10, 0.5 / 20))
    #expect(peak(capture) <= allowed, "peak \(20 * log10(peak(capture) / peak(single))) dB over one page sound")
    #expect(endsWithWhole(capture, single), "the wrap's sound, the last, is not whole")
  }
}
#endif
