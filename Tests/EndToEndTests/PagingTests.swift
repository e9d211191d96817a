import CueProtocol
import DaemonTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension ProtocolClient {
  /// Sends a carousel message with an id and returns cued's decision reply.
  @discardableResult
  func carousel(_ event: CarouselMessage.Event, carousel: String = "default") throws -> JSONValue {
    let id = nextID
    nextID += 1
    let message = CarouselMessage(carousel: carousel, event: event, id: .number(id))
    try raw.send(JSONWriter.write(message.json) + "\n")
    while true {
      let line = try raw.receive()
      if line["event"] != nil {
        events.append(line)
        continue
      }
      if line["id"]?.intValue == id { return line }
    }
  }

  func page(_ from: Int, _ to: Int, of count: Int, carousel: String = "default") throws -> JSONValue {
    try self.carousel(.pageChanged(from: from, to: to, count: count, reason: .key), carousel: carousel)
  }
}

/// The mono test cue (0.12 s at 48 kHz) and the cue names the default bindings use.
let pagingCues = ["page-next": "tone-48000-mono.mp3", "page-prev": "tone-48000-mono.mp3", "wrap": "tone-44100-stereo.mp3", "tick": "tone-8000-mono.mp3"]

@Suite("Audible paging: bindings and rapid-paging policies on captured samples", .serialized)
struct PagingTests {
  @Test func directionPansTheRightWay() throws {
    let rig = try PacedCapture(cues: pagingCues, config: "[carousel.default]\npage-next = { cue = \"page-next\", deadline = 1.0 }\npage-prev = { cue = \"page-prev\", deadline = 1.0 }\npan-by-direction = 1.0\n")
    let client = try rig.client()
    #expect(try client.page(1, 2, of: 5)["decision"] == "played")
    usleep(300_000)
    #expect(try client.page(2, 1, of: 5)["decision"] == "played")
    usleep(300_000)
    let capture = try rig.finish()
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

  @Test func restartCrossfadesFromThePreviousVoice() throws {
    let rig = try PacedCapture(cues: pagingCues, config: "[carousel.default]\npage-next = { cue = \"page-next\", retrigger = \"restart\" }\n")
    let client = try rig.client()
    try client.request("subscribe", [("kinds", ["finished"])])
    let first = try client.page(0, 1, of: 5)
    usleep(40_000)
    let second = try client.page(1, 2, of: 5)
    #expect(first["decision"] == "played" && second["decision"] == "played")
    let cut = try client.waitForEvent("finished") { $0["voice"] == first["voice"] }
    #expect(cut["reason"] == "stopped")
    usleep(300_000)
    let capture = try rig.finish()
    let cue = try decoded("tone-48000-mono.mp3")
    // The first voice exactly, up to the restart; then a 384-frame (8 ms) crossfade, the first
    // falling as the second rises (whose first frame is still the first voice's own, the second at
    // gain 0); from there on the second voice alone, exactly. The crossfade never sums above the cue.
    let k = try #require((0..<cue.count).first { capture[$0] != cue[$0] }) / 2 - 1
    #expect(k > 0 && k < cue.count / 2)
    let fade = 384
    for i in stride(from: 2 * fade, to: cue.count, by: 1) { #expect(capture[2 * k + i] == cue[i]); if capture[2 * k + i] != cue[i] { break } }
    #expect(capture[(2 * k + cue.count)...].allSatisfy { $0 == 0 })
    let cuePeak = cue.map(abs).max() ?? 0
    #expect(capture.map(abs).max() ?? 0 <= cuePeak + 1e-6)
  }

  @Test func overlapCapsTheNumberOfVoices() throws {
    let (daemon, dir) = try DaemonTests.start(sounds: pagingCues)
    defer { daemon.stop() }
    // max-page-voices above the binding's own cap: the binding's max-voices is what holds here.
    try "[carousel.default]\nmax-page-voices = 4\npage-next = { cue = \"wrap\", retrigger = \"overlap\", max-voices = 2 }\n".write(
      toFile: dir + "/cued.toml", atomically: true, encoding: .utf8)
    let capped = try DaemonProcess(
      socket: dir + "/capped.sock", arguments: ["--sounds", dir + "/sounds", "--device", "null", "--config", dir + "/cued.toml"],
      logPath: dir + "/capped.log")
    defer { capped.stop() }
    let client = try ProtocolClient(socket: capped.socket)
    try client.request("subscribe", [("kinds", ["finished"])])
    var voices: [JSONValue] = []
    for i in 0..<4 { voices.append(try client.page(i, i + 1, of: 9)["voice"]!) }
    #expect(try client.request("status")["voices"] == 2)
    let stolen = client.drainEvents(for: 0.5).filter { $0["reason"] == "stolen" }.compactMap { $0["voice"] }
    #expect(Set(stolen.map { JSONWriter.write($0) }) == Set(voices[0..<2].map { JSONWriter.write($0) }))
  }

  @Test func ignoreWhilePlayingIgnores() throws {
    let rig = try PacedCapture(cues: pagingCues, config: "[carousel.default]\npage-next = { cue = \"page-next\", retrigger = \"ignore-while-playing\" }\n")
    let client = try rig.client()
    #expect(try client.page(0, 1, of: 5)["decision"] == "played")
    usleep(30_000)
    #expect(try client.page(1, 2, of: 5)["decision"] == "ignored")
    usleep(300_000)
    let capture = try rig.finish()
    let cue = try decoded("tone-48000-mono.mp3")
    #expect(Array(capture[0..<cue.count]) == cue)
    #expect(capture[cue.count...].allSatisfy { $0 == 0 })
  }

  @Test func theMinimumIntervalIsKept() throws {
    let rig = try PacedCapture(cues: pagingCues, config: "[carousel.default]\npage-next = { cue = \"page-next\", retrigger = \"overlap\", min-interval = 5.0, deadline = 1.0 }\n")
    let client = try rig.client()
    #expect(try client.page(0, 1, of: 5)["decision"] == "played")
    #expect(try client.page(1, 2, of: 5)["decision"] == "too-soon")
    #expect(try client.page(2, 3, of: 5)["decision"] == "too-soon")
    let counts = try #require(client.request("status")["paging"])
    #expect(counts["too-soon"] == 2 && counts["played"] == 1)
    usleep(300_000)
    let capture = try rig.finish()
    let cue = try decoded("tone-48000-mono.mp3")
    #expect(Array(capture[0..<cue.count]) == cue)
    #expect(capture[cue.count...].allSatisfy { $0 == 0 })
  }

  @Test func latestWinsDropsLateEvents() throws {
    // A 1 ms deadline cannot be met while the device opens (connecting to the sound server takes
    // longer): that event is dropped, never played late.
    let rig = try PacedCapture(cues: pagingCues, config: "[carousel.default]\npage-next = { cue = \"page-next\", deadline = 0.001 }\n")
    let client = try rig.client()
    #expect(try client.page(0, 1, of: 5)["decision"] == "late")
    let paging = try #require(client.request("status")["paging"])
    #expect(paging["late"] == 1 && paging["played"] == 0)
    usleep(200_000)
    let capture = try rig.finish()
    #expect(capture.allSatisfy { $0 == 0 })
  }

  @Test func aWrapPlaysTheWrapCue() throws {
    let rig = try PacedCapture(cues: pagingCues)
    let client = try rig.client()
    let reply = try client.page(4, 0, of: 5)
    #expect(reply["decision"] == "played" && reply["cue"] == "wrap")
    // The carousel's own `wrapped` for the same move is merged, not played twice.
    #expect(try client.carousel(.wrapped(from: 4, to: 0, count: 5))["decision"] == "merged")
    usleep(400_000)
    let capture = try rig.finish()
    let wrap = try decoded("tone-44100-stereo.mp3")
    #expect(Array(capture[0..<wrap.count]) == wrap)
    #expect(capture[wrap.count...].allSatisfy { $0 == 0 })
  }

  @Test func aSecondWrapRightAfterTheFirstStillPlays() throws {
    let (daemon, _) = try DaemonTests.start(sounds: pagingCues)
    defer { daemon.stop() }
    let client = try ProtocolClient(socket: daemon.socket)
    // A fast carousel goes round twice: two wraps, both heard; only a `wrapped` for the same move merges.
    #expect(try client.page(2, 0, of: 3)["cue"] == "wrap")
    #expect(try client.page(0, 1, of: 3)["cue"] == "page-next")
    #expect(try client.page(1, 2, of: 3)["cue"] == "page-next")
    #expect(try client.page(2, 0, of: 3)["cue"] == "wrap")
    #expect(try client.carousel(.wrapped(from: 2, to: 0, count: 3))["decision"] == "merged")
    #expect(try client.carousel(.wrapped(from: 2, to: 0, count: 3))["decision"] == "played")
  }

  @Test func withoutAConfigTheShippedSoundsAreBound() throws {
    let (daemon, _) = try DaemonTests.start(sounds: pagingCues)
    defer { daemon.stop() }
    let client = try ProtocolClient(socket: daemon.socket)
    #expect(try client.page(0, 1, of: 3)["cue"] == "page-next")
    #expect(try client.page(1, 0, of: 3)["cue"] == "page-prev")
    #expect(try client.carousel(.dragBegan)["cue"] == "tick")
    #expect(try client.carousel(.decelerationEnded)["decision"] == "unbound")
    // Fire-and-forget: without an id there is no reply, but the decision is reported as an event.
    try client.request("subscribe", [("kinds", ["paging"])])
    try client.raw.send(#"{"carousel":"default","event":"page-changed","from":1,"to":2,"count":3,"reason":"drag"}"# + "\n")
    let event = try client.waitForEvent("paging")
    #expect(event["decision"] == "played" && event["message"] == "page-changed")
  }

  @Test func eachCarouselHasItsOwnBindings() throws {
    let dir = Harness.temporaryDirectory()
    let sounds = try Harness.soundDirectory(in: dir, pagingCues)
    try "[carousel.photos]\npage-next = \"tick\"\n\n[carousel.default]\npage-next = \"page-next\"\n".write(toFile: dir + "/cued.toml", atomically: true, encoding: .utf8)
    let daemon = try DaemonProcess(
      socket: dir + "/cued.sock", arguments: ["--sounds", sounds, "--device", "null", "--config", dir + "/cued.toml"], logPath: dir + "/cued.log")
    defer { daemon.stop() }
    let client = try ProtocolClient(socket: daemon.socket)
    #expect(try client.page(0, 1, of: 3, carousel: "photos")["cue"] == "tick")
    #expect(try client.page(0, 1, of: 3, carousel: "music")["cue"] == "page-next")
    #expect(try client.page(1, 0, of: 3, carousel: "photos")["decision"] == "unbound")
  }

  @Test func cuectlPageAndCarouselSpeakForShellScripts() throws {
    let (daemon, _) = try DaemonTests.start(sounds: pagingCues)
    defer { daemon.stop() }
    let page = try daemon.cuectl(["page", "--from", "2", "--to", "3", "--count", "7"])
    #expect(page.status == 0 && page.stdout.hasPrefix("played page-next"))
    let drag = try daemon.cuectl(["carousel", "drag-began"])
    #expect(drag.stdout.hasPrefix("played tick"))
    #expect(try daemon.cuectl(["page", "--from", "9", "--to", "3", "--count", "7"]).status == 2)
    // A direction the carousel knows: next from the last of two pages is a wrap.
    #expect(try daemon.cuectl(["page", "--from", "1", "--to", "0", "--count", "2", "--direction", "next"]).stdout.hasPrefix("played wrap"))
    #expect(try daemon.cuectl(["page", "--from", "1", "--to", "0", "--count", "2", "--direction", "up"]).status == 2)
    // The rest of the lifecycle, and a bounded pager's edge (bound to nothing by default).
    #expect(try daemon.cuectl(["carousel", "will-end-dragging", "--velocity", "3.5", "--target-page", "2"]).stdout.hasPrefix("unbound"))
    #expect(try daemon.cuectl(["carousel", "will-end-dragging"]).status == 2)
    #expect(try daemon.cuectl(["carousel", "edge", "--edge", "end"]).stdout.hasPrefix("unbound"))
    #expect(try daemon.cuectl(["carousel", "edge"]).status == 2)
  }

  @Test(
    "binding errors name the file, the line and the fix",
    arguments: [
      ("[carousel.default]\npage-next = { cue = \"page-next\", retrigger = \"loud\" }\n", ":2:", "retrigger must be"),
      ("[carousel.default]\n\nflip = \"tick\"\n", ":3:", "unknown key flip"),
      ("[carousel.default]\npage-next = { volume = 0.5 }\n", ":2:", "needs cue"),
    ])
  func bindingErrors(_ text: String, _ line: String, _ fix: String) throws {
    try ConfigTests.expectRejected(text, at: line, saying: fix)
  }

  @Test func aReloadBindingAnUnknownCueIsRefusedAndThePreviousBindingsStay() throws {
    let dir = Harness.temporaryDirectory()
    let sounds = try Harness.soundDirectory(in: dir, pagingCues)
    let config = dir + "/cued.toml"
    try "[carousel.default]\npage-next = \"tick\"\n".write(toFile: config, atomically: true, encoding: .utf8)
    let daemon = try DaemonProcess(
      socket: dir + "/cued.sock", arguments: ["--sounds", sounds, "--device", "null", "--config", config], logPath: dir + "/cued.log")
    defer { daemon.stop() }
    try "[carousel.default]\n\npage-next = \"no-such-cue\"\n".write(toFile: config, atomically: true, encoding: .utf8)
    let refused = try daemon.cuectl(["reload"])
    #expect(refused.status == 1)
    #expect(refused.stderr.contains(config + ":3"))
    #expect(refused.stderr.contains("no-such-cue"))
    #expect(try daemon.cuectl(["page", "--from", "0", "--to", "1", "--count", "3"]).stdout.hasPrefix("played tick"))
  }

  /// Onsets in a stereo capture: frames where sound begins after at least 10 ms of silence.
  static func onsets(_ capture: [Float]) -> [Int] {
    var onsets: [Int] = []
    var quiet = Int.max
    for frame in 0..<(capture.count / 2) {
      if capture[2 * frame] != 0 || capture[2 * frame + 1] != 0 {
        if quiet > 480 { onsets.append(frame) }
        quiet = 0
      } else if quiet != Int.max {
        quiet += 1
      }
    }
    return onsets
  }

  @Test func aDeceleratingFlickIsHeardAsItsBindingsSayThroughTheRealDevicePath() throws {
    // A flick across three pages with a sound per page 200 ms apart (the 120 ms test tone does not
    // overlap the next), and the settled sound: the lifecycle as cued-carousel sends it, through
    // cued's real ALSA output into a file.
    let rig = try PacedCapture(
      cues: ["tick": "tone-48000-mono.mp3", "settle": "tone-22050-mono.mp3"],
      config: """
        [carousel.default]
        page-next = { cue = "tick", multi-page = "each", page-spacing = 0.2 }
        settled = { cue = "settle" }
        """)
    let client = try rig.client()
    #expect(try client.carousel(.dragBegan)["decision"] == "unbound")
    #expect(try client.carousel(.willEndDragging(velocity: 14.2, targetPage: 3))["decision"] == "unbound")
    let flick = try client.carousel(.pageChanged(from: 0, to: 3, count: 7, reason: .drag, direction: .next))
    #expect(flick["decision"] == "played" && flick["pages"] == 3)
    #expect(try client.carousel(.dragEnded(decelerate: true))["settled"] == nil)
    #expect(try client.carousel(.willBeginDecelerating)["settled"] == nil)
    usleep(700_000)  // the deceleration (and the three ticks)
    let ended = try client.carousel(.decelerationEnded)
    #expect(ended["settled"] == true)
    // A second end of the same scroll settles nothing (and is out of order).
    let again = try client.carousel(.decelerationEnded)
    #expect(again["settled"] == nil && again["outOfOrder"] == true)
    usleep(400_000)
    let capture = try rig.finish()
    let tick = try decoded("tone-48000-mono.mp3")
    let settle = try decoded("tone-22050-mono.mp3")
    let onsets = Self.onsets(capture)
    // Three ticks 9600 frames (200 ms at 48 kHz) apart, to the sample, each whole; then the settled sound, once.
    #expect(onsets.count == 4, "\(onsets)")
    guard onsets.count == 4 else { return }
    #expect(onsets[1] - onsets[0] == 9600 && onsets[2] - onsets[1] == 9600)
    for onset in onsets[0..<3] { #expect(Array(capture[(2 * onset)..<(2 * onset + tick.count)]) == tick) }
    #expect(onsets[3] - onsets[0] > 48_000 * 6 / 10)
    #expect(Array(capture[(2 * onsets[3])..<(2 * onsets[3] + settle.count)]) == settle)
  }

  @Test func aTwoPageCarouselPagesBothWaysWithTheRightSounds() throws {
    // Two pages: each way round is as short as the other, so the direction the carousel sends
    // decides between a page sound and the wrap. Three different tones tell them apart.
    let rig = try PacedCapture(cues: ["page-next": "tone-48000-mono.mp3", "page-prev": "tone-22050-mono.mp3", "wrap": "tone-44100-stereo.mp3"])
    let client = try rig.client()
    let moves: [(Int, Int, CarouselMessage.Direction, String)] = [
      (0, 1, .next, "page-next"), (1, 0, .next, "wrap"), (0, 1, .previous, "wrap"), (1, 0, .previous, "page-prev"),
    ]
    for (from, to, direction, cue) in moves {
      let reply = try client.carousel(.pageChanged(from: from, to: to, count: 2, reason: .key, direction: direction))
      #expect(reply["decision"] == "played" && reply["cue"] == .string(cue), "\(from)→\(to) \(direction): \(JSONWriter.write(reply))")
      usleep(300_000)
    }
    let capture = try rig.finish()
    let onsets = Self.onsets(capture)
    #expect(onsets.count == 4, "\(onsets)")
    guard onsets.count == 4 else { return }
    let sounds = ["page-next": try decoded("tone-48000-mono.mp3"), "page-prev": try decoded("tone-22050-mono.mp3"), "wrap": try decoded("tone-44100-stereo.mp3")]
    for (onset, move) in zip(onsets, moves) {
      let expected = try #require(sounds[move.3])
      #expect(Array(capture[(2 * onset)..<(2 * onset + expected.count)]) == expected, "the \(move.3) sound")
    }
  }
}
