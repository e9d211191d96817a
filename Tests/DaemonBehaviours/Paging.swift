#if canImport(Testing)
import CueDecoding
import CueProtocol
import DaemonTestSupport
import Testing

/// The MP3 fixture `name` as the daemon decodes it: interleaved stereo at 48 kHz.
public func decoded(_ fixture: String) throws -> [Float] {
  try MP3Decoder.decode(path: TestPaths.fixture(fixture)).buffer.toArray()
}

/// `count` samples of `capture` from `sample` on, fewer where the capture ends first (then they
/// differ from what was expected there: a short capture fails the check instead of trapping).
func window(_ capture: [Float], from sample: Int, count: Int) -> [Float] {
  Array(capture[min(sample, capture.count)..<min(sample + count, capture.count)])
}

/// Onsets in interleaved stereo output: frames where sound begins after at least 10 ms of silence.
public func soundOnsets(_ output: [Float]) -> [Int] {
  var onsets: [Int] = []
  var quiet = Int.max
  for frame in 0..<(output.count / 2) {
    if output[2 * frame] != 0 || output[2 * frame + 1] != 0 {
      if quiet > 480 { onsets.append(frame) }
      quiet = 0
    } else if quiet != Int.max {
      quiet += 1
    }
  }
  return onsets
}

/// Audible paging (bindings, retrigger policies, wraps, the scroll lifecycle) on the samples the
/// daemon's output was given, each body written once against `DaemonUnderTest`.
public enum Paging {
  public static let all: [Behaviour] = [
    Behaviour("directionPansTheRightWay", directionPansTheRightWay),
    Behaviour("restartCrossfadesFromThePreviousVoice", restartCrossfadesFromThePreviousVoice),
    Behaviour("overlapCapsTheNumberOfVoices", overlapCapsTheNumberOfVoices),
    Behaviour("ignoreWhilePlayingIgnores", ignoreWhilePlayingIgnores),
    Behaviour("theMinimumIntervalIsKept", theMinimumIntervalIsKept),
    Behaviour("aWrapPlaysTheWrapCue", aWrapPlaysTheWrapCue),
    Behaviour("aSecondWrapRightAfterTheFirstStillPlays", aSecondWrapRightAfterTheFirstStillPlays),
    Behaviour("withoutAConfigTheShippedSoundsAreBound", withoutAConfigTheShippedSoundsAreBound),
    Behaviour("eachCarouselHasItsOwnBindings", eachCarouselHasItsOwnBindings),
    Behaviour("aDeceleratingFlickIsHeardAsItsBindingsSay", aDeceleratingFlickIsHeardAsItsBindingsSay),
    Behaviour("aTwoPageCarouselPagesBothWaysWithTheRightSounds", aTwoPageCarouselPagesBothWaysWithTheRightSounds),
  ]

  /// The mono test cue (0.12 s at 48 kHz) and the cue names the default bindings use.
  public static let cues = ["page-next": "tone-48000-mono.mp3", "page-prev": "tone-48000-mono.mp3", "wrap": "tone-44100-stereo.mp3", "tick": "tone-8000-mono.mp3"]

  static func directionPansTheRightWay(_ start: DaemonStarter) throws {
    let config = "[carousel.default]\npage-next = { cue = \"page-next\", deadline = 1.0 }\npage-prev = { cue = \"page-prev\", deadline = 1.0 }\npan-by-direction = 1.0\n"
    let daemon = try start(DaemonSetup(cues: cues, config: config))
    let client = try daemon.connect()
    #expect(try client.page(1, 2, of: 5)["decision"] == "played")
    daemon.advance(seconds: 0.3)
    #expect(try client.page(2, 1, of: 5)["decision"] == "played")
    daemon.advance(seconds: 0.3)
    let capture = try daemon.finish()
    let frames = capture.count / 2
    let firstSound = try #require((0..<frames).first { capture[2 * $0] != 0 || capture[2 * $0 + 1] != 0 })
    // Next: everything on the right. Previous (after a gap of silence): everything on the left.
    let gap = try #require((firstSound..<frames).first { f in (f..<min(f + 2400, frames)).allSatisfy { capture[2 * $0] == 0 && capture[2 * $0 + 1] == 0 } })
    let second = try #require((gap..<frames).first { capture[2 * $0] != 0 || capture[2 * $0 + 1] != 0 })
    #expect((firstSound..<gap).allSatisfy { capture[2 * $0] == 0 })
    #expect((firstSound..<gap).contains { capture[2 * $0 + 1] != 0 })
    #expect((second..<frames).allSatisfy { capture[2 * $0 + 1] == 0 })
    #expect((second..<frames).contains { capture[2 * $0] != 0 })
  }

  static func restartCrossfadesFromThePreviousVoice(_ start: DaemonStarter) throws {
    let daemon = try start(DaemonSetup(cues: cues, config: "[carousel.default]\npage-next = { cue = \"page-next\", retrigger = \"restart\" }\n"))
    let client = try daemon.connect()
    try client.request("subscribe", [("kinds", ["finished"])])
    let first = try client.page(0, 1, of: 5)
    daemon.advance(seconds: 0.04)
    let second = try client.page(1, 2, of: 5)
    #expect(first["decision"] == "played" && second["decision"] == "played")
    let cut = try client.waitForEvent("finished") { $0["voice"] == first["voice"] }
    #expect(cut["reason"] == "stopped")
    daemon.advance(seconds: 0.3)
    let capture = try daemon.finish()
    let cue = try decoded("tone-48000-mono.mp3")
    try #require(capture.count >= 2 * cue.count, "the output holds \(capture.count) samples")
    // The first voice exactly, up to the restart; then a 384-frame (8 ms) crossfade, the first
    // falling as the second rises (whose first frame is still the first voice's own, the second at
    // gain 0); from there on the second voice alone, exactly. The crossfade never sums above the cue.
    let k = try #require((0..<cue.count).first { capture[$0] != cue[$0] }) / 2 - 1
    #expect(k > 0 && k < cue.count / 2)
    let fade = 384
    for i in stride(from: 2 * fade, to: cue.count, by: 1) { #expect(capture[2 * k + i] == cue[i]); if capture[2 * k + i] != cue[i] { break } }
    #expect(capture.dropFirst(2 * k + cue.count).allSatisfy { $0 == 0 })
    let cuePeak = cue.map(abs).max() ?? 0
    #expect(capture.map(abs).max() ?? 0 <= cuePeak + 1e-6)
  }

  static func overlapCapsTheNumberOfVoices(_ start: DaemonStarter) throws {
    // max-page-voices above the binding's own cap: the binding's max-voices is what holds here.
    let config = "[carousel.default]\nmax-page-voices = 4\npage-next = { cue = \"wrap\", retrigger = \"overlap\", max-voices = 2 }\n"
    let daemon = try start(DaemonSetup(cues: cues, config: config))
    let client = try daemon.connect()
    try client.request("subscribe", [("kinds", ["finished"])])
    var voices: [JSONValue] = []
    for i in 0..<4 { voices.append(try #require(client.page(i, i + 1, of: 9)["voice"])) }
    #expect(try client.request("status")["voices"] == 2)
    daemon.advance(seconds: 0.5)
    let stolen = try client.eventsSoFar().filter { $0["reason"] == "stolen" }.compactMap { $0["voice"] }
    #expect(Set(stolen.map { JSONWriter.write($0) }) == Set(voices[0..<2].map { JSONWriter.write($0) }))
  }

  static func ignoreWhilePlayingIgnores(_ start: DaemonStarter) throws {
    let daemon = try start(DaemonSetup(cues: cues, config: "[carousel.default]\npage-next = { cue = \"page-next\", retrigger = \"ignore-while-playing\" }\n"))
    let client = try daemon.connect()
    #expect(try client.page(0, 1, of: 5)["decision"] == "played")
    daemon.advance(seconds: 0.03)
    #expect(try client.page(1, 2, of: 5)["decision"] == "ignored")
    daemon.advance(seconds: 0.3)
    let capture = try daemon.finish()
    let cue = try decoded("tone-48000-mono.mp3")
    #expect(window(capture, from: 0, count: cue.count) == cue)
    #expect(capture.dropFirst(cue.count).allSatisfy { $0 == 0 })
  }

  static func theMinimumIntervalIsKept(_ start: DaemonStarter) throws {
    let config = "[carousel.default]\npage-next = { cue = \"page-next\", retrigger = \"overlap\", min-interval = 5.0, deadline = 1.0 }\n"
    let daemon = try start(DaemonSetup(cues: cues, config: config))
    let client = try daemon.connect()
    #expect(try client.page(0, 1, of: 5)["decision"] == "played")
    #expect(try client.page(1, 2, of: 5)["decision"] == "too-soon")
    #expect(try client.page(2, 3, of: 5)["decision"] == "too-soon")
    let counts = try #require(client.request("status")["paging"])
    #expect(counts["too-soon"] == 2 && counts["played"] == 1)
    daemon.advance(seconds: 0.3)
    let capture = try daemon.finish()
    let cue = try decoded("tone-48000-mono.mp3")
    #expect(window(capture, from: 0, count: cue.count) == cue)
    #expect(capture.dropFirst(cue.count).allSatisfy { $0 == 0 })
  }

  static func aWrapPlaysTheWrapCue(_ start: DaemonStarter) throws {
    let daemon = try start(DaemonSetup(cues: cues))
    let client = try daemon.connect()
    let reply = try client.page(4, 0, of: 5)
    #expect(reply["decision"] == "played" && reply["cue"] == "wrap")
    // The carousel's own `wrapped` for the same move is merged, not played twice.
    #expect(try client.carousel(.wrapped(from: 4, to: 0, count: 5))["decision"] == "merged")
    daemon.advance(seconds: 0.4)
    let capture = try daemon.finish()
    let wrap = try decoded("tone-44100-stereo.mp3")
    #expect(window(capture, from: 0, count: wrap.count) == wrap)
    #expect(capture.dropFirst(wrap.count).allSatisfy { $0 == 0 })
  }

  static func aSecondWrapRightAfterTheFirstStillPlays(_ start: DaemonStarter) throws {
    let client = try start(DaemonSetup(cues: cues)).connect()
    // A fast carousel goes round twice: two wraps, both heard; only a `wrapped` for the same move merges.
    #expect(try client.page(2, 0, of: 3)["cue"] == "wrap")
    #expect(try client.page(0, 1, of: 3)["cue"] == "page-next")
    #expect(try client.page(1, 2, of: 3)["cue"] == "page-next")
    #expect(try client.page(2, 0, of: 3)["cue"] == "wrap")
    #expect(try client.carousel(.wrapped(from: 2, to: 0, count: 3))["decision"] == "merged")
    #expect(try client.carousel(.wrapped(from: 2, to: 0, count: 3))["decision"] == "played")
  }

  static func withoutAConfigTheShippedSoundsAreBound(_ start: DaemonStarter) throws {
    let client = try start(DaemonSetup(cues: cues)).connect()
    #expect(try client.page(0, 1, of: 3)["cue"] == "page-next")
    #expect(try client.page(1, 0, of: 3)["cue"] == "page-prev")
    #expect(try client.carousel(.dragBegan)["cue"] == "tick")
    #expect(try client.carousel(.decelerationEnded)["decision"] == "unbound")
    // Fire-and-forget: without an id there is no reply, but the decision is reported as an event.
    try client.request("subscribe", [("kinds", ["paging"])])
    try client.send(#"{"carousel":"default","event":"page-changed","from":1,"to":2,"count":3,"reason":"drag"}"#)
    let event = try client.waitForEvent("paging")
    #expect(event["decision"] == "played" && event["message"] == "page-changed")
  }

  static func eachCarouselHasItsOwnBindings(_ start: DaemonStarter) throws {
    let config = "[carousel.photos]\npage-next = \"tick\"\n\n[carousel.default]\npage-next = \"page-next\"\n"
    let client = try start(DaemonSetup(cues: cues, config: config)).connect()
    #expect(try client.page(0, 1, of: 3, carousel: "photos")["cue"] == "tick")
    #expect(try client.page(0, 1, of: 3, carousel: "music")["cue"] == "page-next")
    #expect(try client.page(1, 0, of: 3, carousel: "photos")["decision"] == "unbound")
  }

  static func aDeceleratingFlickIsHeardAsItsBindingsSay(_ start: DaemonStarter) throws {
    // A flick across three pages with a sound per page 200 ms apart (the 120 ms test tone does not
    // overlap the next), and the settled sound: the lifecycle as cued-carousel sends it.
    let config = """
      [carousel.default]
      page-next = { cue = "tick", multi-page = "each", page-spacing = 0.2 }
      settled = { cue = "settle" }
      """
    let daemon = try start(DaemonSetup(cues: ["tick": "tone-48000-mono.mp3", "settle": "tone-22050-mono.mp3"], config: config))
    let client = try daemon.connect()
    #expect(try client.carousel(.dragBegan)["decision"] == "unbound")
    #expect(try client.carousel(.willEndDragging(velocity: 14.2, targetPage: 3))["decision"] == "unbound")
    let flick = try client.carousel(.pageChanged(from: 0, to: 3, count: 7, reason: .drag, direction: .next))
    #expect(flick["decision"] == "played" && flick["pages"] == 3)
    #expect(try client.carousel(.dragEnded(decelerate: true))["settled"] == nil)
    #expect(try client.carousel(.willBeginDecelerating)["settled"] == nil)
    daemon.advance(seconds: 0.7)  // the deceleration (and the three ticks)
    let ended = try client.carousel(.decelerationEnded)
    #expect(ended["settled"] == true)
    // A second end of the same scroll settles nothing (and is out of order).
    let again = try client.carousel(.decelerationEnded)
    #expect(again["settled"] == nil && again["outOfOrder"] == true)
    daemon.advance(seconds: 0.4)
    let capture = try daemon.finish()
    let tick = try decoded("tone-48000-mono.mp3")
    let settle = try decoded("tone-22050-mono.mp3")
    let onsets = soundOnsets(capture)
    // Three ticks 9600 frames (200 ms at 48 kHz) apart, to the sample, each whole; then the settled sound, once.
    #expect(onsets.count == 4, "\(onsets)")
    guard onsets.count == 4 else { return }
    #expect(onsets[1] - onsets[0] == 9600 && onsets[2] - onsets[1] == 9600)
    for onset in onsets[0..<3] { #expect(window(capture, from: 2 * onset, count: tick.count) == tick) }
    #expect(onsets[3] - onsets[0] > 48_000 * 6 / 10)
    #expect(window(capture, from: 2 * onsets[3], count: settle.count) == settle)
  }

  static func aTwoPageCarouselPagesBothWaysWithTheRightSounds(_ start: DaemonStarter) throws {
    // Two pages: each way round is as short as the other, so the direction the carousel sends
    // decides between a page sound and the wrap. Three different tones tell them apart.
    let daemon = try start(DaemonSetup(cues: ["page-next": "tone-48000-mono.mp3", "page-prev": "tone-22050-mono.mp3", "wrap": "tone-44100-stereo.mp3"]))
    let client = try daemon.connect()
    let moves: [(Int, Int, CarouselMessage.Direction, String)] = [
      (0, 1, .next, "page-next"), (1, 0, .next, "wrap"), (0, 1, .previous, "wrap"), (1, 0, .previous, "page-prev"),
    ]
    for (from, to, direction, cue) in moves {
      let reply = try client.carousel(.pageChanged(from: from, to: to, count: 2, reason: .key, direction: direction))
      #expect(reply["decision"] == "played" && reply["cue"] == .string(cue), "\(from)→\(to) \(direction): \(JSONWriter.write(reply))")
      daemon.advance(seconds: 0.3)
    }
    let capture = try daemon.finish()
    let onsets = soundOnsets(capture)
    #expect(onsets.count == 4, "\(onsets)")
    guard onsets.count == 4 else { return }
    let sounds = ["page-next": try decoded("tone-48000-mono.mp3"), "page-prev": try decoded("tone-22050-mono.mp3"), "wrap": try decoded("tone-44100-stereo.mp3")]
    for (onset, move) in zip(onsets, moves) {
      let expected = try #require(sounds[move.3])
      #expect(window(capture, from: 2 * onset, count: expected.count) == expected, "the \(move.3) sound")
    }
  }
}
#endif
