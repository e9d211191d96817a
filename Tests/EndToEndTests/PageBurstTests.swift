import CueDecoding
import CueProtocol
import DaemonTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// How page changes arrive at cued, as a carousel sends them.
enum PageArrival: String, CaseIterable, CustomTestStringConvertible, Sendable {
  /// Ten page changes in one write (a TUI that flushes its events once per frame).
  case oneWrite
  /// Ten page changes, one a millisecond.
  case everyMillisecond
  /// Ten page changes at a key repeat of 30 per second.
  case keyRepeat
  /// One page change across eight pages (a flick).
  case flick

  var testDescription: String { rawValue }
}

/// A burst of page changes through the real cued, captured sample for sample (ALSA file PCM in front
/// of a paced null sink): at most `max-page-voices` page voices once a replaced one's fade has
/// ended, the last page's sound whole, and a peak within 0.5 dB of the loudest single page cue.
@Suite("Paging at any speed: bursts of page changes, captured", .serialized)
struct PageBurstTests {
  /// The page cue: 0.12 s of a tone, longer than the key-repeat interval and than page-spacing.
  static let cue = "tone-48000-mono.mp3"

  static func config(_ retrigger: String, multiPage: String = "one") -> String {
    """
    [carousel.default]
    page-next = { cue = "page-next", retrigger = "\(retrigger)", max-voices = 4, multi-page = "\(multiPage)", deadline = 1.0 }
    """
  }

  /// Sends `arrival`'s page changes (fire and forget, as a carousel does) and returns the capture.
  static func capture(_ arrival: PageArrival, config: String) throws -> [Float] {
    let rig = try PacedCapture(cues: ["page-next": cue], config: config)
    let raw = try RawClient(socket: rig.daemon.socket)
    func line(_ from: Int, _ to: Int) -> String {
      JSONWriter.write(CarouselMessage(carousel: "default", event: .pageChanged(from: from, to: to, count: 20, reason: .key)).json) + "\n"
    }
    switch arrival {
    case .oneWrite:
      try raw.send((0..<10).map { line($0, $0 + 1) }.joined())
    case .everyMillisecond, .keyRepeat:
      for page in 0..<10 {
        try raw.send(line(page, page + 1))
        usleep(arrival == .everyMillisecond ? 1_000 : 33_000)
      }
    case .flick:
      try raw.send(line(0, 8))
    }
    // Every sound has ended (eight page-spacings of 60 ms and a cue, at the most).
    usleep(900_000)
    return try rig.finish()
  }

  static func peak(_ samples: [Float]) -> Float { samples.map(abs).max() ?? 0 }

  /// The stop fade, which is also a replacing page sound's crossfade (8 ms at 48 kHz).
  static let fadeFrames = 384

  /// Whether the capture ends with `cue` played to its end: its last `cue.count` samples but the
  /// first crossfade's are the cue's own, exactly (a replacing sound fades in over the one it
  /// replaces for that long; from there on it is alone).
  static func endsWithWhole(_ capture: [Float], _ cue: [Float]) -> Bool {
    guard let end = capture.lastIndex(where: { $0 != 0 }) else { return false }
    let stop = end + (end % 2 == 0 ? 2 : 1)
    guard stop >= cue.count else { return false }
    let skip = 2 * fadeFrames
    return Array(capture[(stop - cue.count + skip)..<stop]) == Array(cue[skip...])
  }

  @Test(arguments: ["restart", "overlap", "ignore-while-playing"], PageArrival.allCases)
  func aBurstEndsWithOneCleanSound(retrigger: String, arrival: PageArrival) throws {
    let capture = try Self.capture(arrival, config: Self.config(retrigger))
    let single = try decoded(Self.cue)
    let allowed = Self.peak(single) * Float(pow(10, 0.5 / 20))
    #expect(Self.peak(capture) <= allowed, "peak \(Self.peak(capture)) over \(allowed) (the cue alone: \(Self.peak(single)))")
    // The sound that is heard last plays whole: the last page's under restart and overlap, the
    // first's under ignore-while-playing (the others are ignored while it plays).
    #expect(Self.endsWithWhole(capture, single), "the last sound is not the cue played to its end")
    if retrigger == "ignore-while-playing" && arrival != .keyRepeat {
      #expect(sounding(capture).count == sounding(single).count, "more than one sound under ignore-while-playing")
    }
  }

  /// A flick across eight pages under each multi-page mode: one sound, a sound per page (each
  /// taking the place of the one before, as max-page-voices is 1), or one sound pitched up.
  @Test(arguments: ["one", "each", "rate"])
  func aFlickSoundsByItsMultiPageModeWithinTheCap(multiPage: String) throws {
    let capture = try Self.capture(.flick, config: Self.config("restart", multiPage: multiPage))
    let single = try decoded(Self.cue)
    let allowed = Self.peak(single) * Float(pow(10, 0.5 / 20))
    #expect(Self.peak(capture) <= allowed, "peak \(Self.peak(capture)) over \(allowed)")
    let heardFrames = (0..<(capture.count / 2)).filter { capture[2 * $0] != 0 || capture[2 * $0 + 1] != 0 }.count
    let cueFrames = single.count / 2
    switch multiPage {
    case "one":
      #expect(Self.endsWithWhole(capture, single))
      #expect(abs(heardFrames - cueFrames) <= 2, "\(heardFrames) frames heard")
    case "each":
      // Eight sounds 60 ms (2880 frames) apart, each cut by the next: seven spacings and a whole last cue.
      #expect(Self.endsWithWhole(capture, single), "the last page's sound is not played to its end")
      #expect(abs(heardFrames - (7 * 2880 + cueFrames)) <= 8, "\(heardFrames) frames heard")
    default:
      // Seven semitones up: the cue in 2^(-7/12) of its length.
      let expected = Double(cueFrames) / pow(2, 7.0 / 12)
      #expect(abs(Double(heardFrames) - expected) <= 4, "\(heardFrames) frames heard, not about \(Int(expected))")
    }
  }
}

/// The burst that used to escape the cap under `multi-page = "each"`: nine page changes that each
/// cross two pages (their second sounds scheduled `page-spacing` later), then a one-page wrap, all
/// within the spacing. A newer page change drops the sounds of the older ones that are not yet due
/// (or takes their place with the crossfade), so whatever the mode and however the lines arrive,
/// one page sound is heard at a time and the wrap's is heard last, whole.
@Suite("Paging: a burst of multi-page changes under each multi-page mode, captured", .serialized)
struct MultiPageBurstTests {
  static func config(_ multiPage: String) -> String {
    """
    [carousel.default]
    page-next = { cue = "page-next", multi-page = "\(multiPage)", page-spacing = 0.03, deadline = 1.0 }
    wrap = { cue = "wrap", multi-page = "\(multiPage)", page-spacing = 0.03, deadline = 1.0 }
    """
  }

  /// The nine two-page changes of a 19-page carousel (0→2 … 16→18) and the wrap 18→0, as lines.
  static let lines: [String] = {
    func line(_ from: Int, _ to: Int) -> String {
      JSONWriter.write(
        CarouselMessage(carousel: "default", event: .pageChanged(from: from, to: to, count: 19, reason: .drag, direction: .next)).json)
        + "\n"
    }
    return stride(from: 0, to: 18, by: 2).map { line($0, $0 + 2) } + [line(18, 0)]
  }()

  @Test(arguments: ["one", "each", "rate"], [PageArrival.oneWrite, .everyMillisecond])
  func aBurstStaysWithinOnePageSoundAndEndsWithTheWrapWhole(multiPage: String, arrival: PageArrival) throws {
    let rig = try PacedCapture(cues: ["page-next": PageBurstTests.cue, "wrap": PageBurstTests.cue], config: Self.config(multiPage))
    let raw = try RawClient(socket: rig.daemon.socket)
    if arrival == .oneWrite {
      try raw.send(Self.lines.joined())
    } else {
      for line in Self.lines {
        try raw.send(line)
        usleep(1_000)
      }
    }
    usleep(900_000)
    let capture = try rig.finish()
    let single = try decoded(PageBurstTests.cue)
    let peak = PageBurstTests.peak(capture)
    let allowed = PageBurstTests.peak(single) * Float(pow(10, 0.5 / 20))
    #expect(peak <= allowed, "peak \(20 * log10(peak / PageBurstTests.peak(single))) dB over one page sound")
    #expect(PageBurstTests.endsWithWhole(capture, single), "the wrap's sound, the last, is not whole")
  }
}
