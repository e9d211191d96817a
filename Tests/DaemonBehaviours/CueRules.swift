// The bodies need the testing library's expectations; a release build (make install) builds this
// target without it, and then it holds only the surface.
#if canImport(Testing)
import CueProtocol
import Foundation
import Testing

/// Cue rules (variations, spreads, cooldown, caps and priority) on the samples the daemon's output
/// was given, each written once against `DaemonUnderTest`: CueDaemonTests runs them in process,
/// EndToEndTests live (`CUED_TEST_LIVE=1`).
public enum CueRules {
  /// Every body, for the suites that run them.
  public static let all: [Behaviour] = [
    Behaviour("aFolderIsASetAndNoMemberPlaysTwiceInARow", aFolderIsASetAndNoMemberPlaysTwiceInARow),
    Behaviour("volumeAndRateSpreadsStayWithinTheirBounds", volumeAndRateSpreadsStayWithinTheirBounds),
    Behaviour("aPlayWithinTheCooldownIsSilentAndSaysSo", aPlayWithinTheCooldownIsSilentAndSaysSo),
    Behaviour("pastMaxInstancesARefusedPlayIsSilentAndAStealingOneFadesTheOldest", pastMaxInstancesARefusedPlayIsSilentAndAStealingOneFadesTheOldest),
    Behaviour("aLowPriorityPlayNeverTakesTheVoiceOfAHigherOne", aLowPriorityPlayNeverTakesTheVoiceOfAHigherOne),
    Behaviour("aConfigListIsAWeightedSetAndPagingPlaysSetsToo", aConfigListIsAWeightedSetAndPagingPlaysSetsToo),
  ]

  /// A folder `blip/` of three 10 ms files, each its own constant.
  static func blipFolder(_ sounds: String) throws {
    try FileManager.default.createDirectory(atPath: sounds + "/blip", withIntermediateDirectories: true)
    for (name, value) in [("a", Int16(1000)), ("b", 2000), ("c", 3000)] {
      try writeConstantWAV(sounds + "/blip/\(name).wav", frames: 480, value: value)
    }
  }

  /// Plays `cue` with notify and waits for its `finished`: the plays never overlap.
  static func playAndWait(_ client: TestClient, _ cue: String) throws -> JSONValue {
    let reply = try client.request("play", [("cue", .string(cue)), ("notify", true)])
    let voice = try #require(reply["voice"]?.intValue)
    try client.waitForEvent("finished") { $0["voice"]?.intValue == voice }
    return reply
  }

  public static func aFolderIsASetAndNoMemberPlaysTwiceInARow(_ start: DaemonStarter) throws {
    let daemon = try start(DaemonSetup(prepare: blipFolder))
    let client = try daemon.connect()
    let listed = try client.request("list")["cues"]?.arrayValue ?? []
    #expect(listed.compactMap { $0["name"]?.stringValue } == ["blip/a", "blip/b", "blip/c"])
    #expect(listed.allSatisfy { $0["set"]?.stringValue == "blip" })
    var chosen: [String] = []
    for _ in 0..<200 {
      let reply = try playAndWait(client, "blip")
      #expect(reply["played"] == true)
      chosen.append(reply["variation"]?.stringValue ?? "?")
    }
    let runs = constantRuns(try daemon.finish())
    let values = ["blip/a": 1000, "blip/b": 2000, "blip/c": 3000]
    // What was heard is what the replies said, in order: 200 whole 10 ms sounds, all three, never one twice in a row.
    #expect(runs.map(\.value) == chosen.map { values[$0] ?? 0 })
    #expect(runs.allSatisfy { $0.frames == 480 })
    #expect(Set(runs.map(\.value)) == [1000, 2000, 3000])
    #expect(zip(runs, runs.dropFirst()).allSatisfy { $0.value != $1.value })
  }

  public static func volumeAndRateSpreadsStayWithinTheirBounds(_ start: DaemonStarter) throws {
    let daemon = try start(
      DaemonSetup(config: "[cues.hum]\nvolume-spread = 6\nrate-spread = 2\n") { sounds in
        try writeConstantWAV(sounds + "/hum.wav", frames: 4800, value: 8000)
      })
    let client = try daemon.connect()
    for _ in 0..<24 { _ = try playAndWait(client, "hum") }
    // Resampled ends are not constant: a sound is a run between silences.
    let runs = constantRuns(try daemon.finish(), splittingOnChange: false)
    try #require(runs.count == 24)
    let gains = runs.map { Double($0.value) / 8000 }
    let rates = runs.map { 4800 / Double($0.frames) }
    // ±6 dB and ±2 semitones (a frame either way for where the resampled end falls).
    #expect(gains.allSatisfy { $0 >= pow(10, -6.0 / 20) - 0.001 && $0 <= pow(10, 6.0 / 20) + 0.001 }, "\(gains)")
    #expect(rates.allSatisfy { $0 >= pow(2, -2.0 / 12) * 0.999 && $0 <= pow(2, 2.0 / 12) * 1.001 }, "\(rates)")
    // And they do spread: not one value for all 24.
    #expect(Set(runs.map(\.value)).count > 12)
    #expect(Set(runs.map(\.frames)).count > 6)
  }

  public static func aPlayWithinTheCooldownIsSilentAndSaysSo(_ start: DaemonStarter) throws {
    let daemon = try start(
      DaemonSetup(config: "[cues.ping]\ncooldown = 0.5\n") { sounds in
        try writeConstantWAV(sounds + "/ping.wav", frames: 480, value: 5000)
      })
    let client = try daemon.connect()
    let first = try client.request("play", [("cue", "ping")])
    let second = try client.request("play", [("cue", "ping"), ("notify", true)])
    #expect(first["played"] == true)
    #expect(second["played"] == false)
    #expect(second["reason"] == "cooldown")
    let finished = try client.waitForEvent("finished") { $0["voice"] == second["voice"] }
    #expect(finished["reason"] == "cooldown")
    #expect(finished["successfully"] == false)
    daemon.advance(seconds: 0.6)
    #expect(try client.request("play", [("cue", "ping")])["played"] == true)
    daemon.advance(seconds: 0.2)
    let status = try client.request("status")
    #expect(status["silenced"]?["cooldown"]?.intValue == 1)
    #expect(status["plays"]?.intValue == 2)
    let runs = constantRuns(try daemon.finish())
    #expect(runs.map(\.value) == [5000, 5000])
    #expect(runs.allSatisfy { $0.frames == 480 })
  }

  public static func pastMaxInstancesARefusedPlayIsSilentAndAStealingOneFadesTheOldest(_ start: DaemonStarter) throws {
    let config = "[cues.held]\nmax-instances = 1\npast-max = \"refuse\"\n[cues.swap]\nmax-instances = 1\n"
    let daemon = try start(
      DaemonSetup(config: config) { sounds in
        try writeConstantWAV(sounds + "/held.wav", frames: 24000, value: 4000)
        try writeConstantWAV(sounds + "/swap.wav", frames: 24000, value: 6000)
      })
    let client = try daemon.connect()
    try client.request("subscribe", [("kinds", .array(["finished"]))])
    let held = try client.request("play", [("cue", "held")])
    let refused = try client.request("play", [("cue", "held")])
    #expect(refused["played"] == false)
    #expect(refused["reason"] == "cap")
    try client.waitForEvent("finished") { $0["voice"] == held["voice"] }
    let first = try client.request("play", [("cue", "swap")])
    daemon.advance(seconds: 0.1)
    let second = try client.request("play", [("cue", "swap")])
    #expect(second["played"] == true)
    #expect(second["stole"] == first["voice"])
    let stolen = try client.waitForEvent("finished") { $0["voice"] == first["voice"] }
    #expect(stolen["reason"] == "stolen")
    try client.waitForEvent("finished") { $0["voice"] == second["voice"] }
    let capture = try daemon.finish()
    let runs = constantRuns(capture)
    // The refused play added nothing: one whole `held`, never louder than itself.
    #expect(runs.first?.value == 4000)
    #expect(runs.first?.frames == 24000)
    // The stolen swap faded under the new one: at most one swap's worth of its own before it, never two whole.
    let swapFrames = (0..<(capture.count / 2)).filter { abs(capture[2 * $0] - 6000 / 32768) < 1e-6 }.count
    #expect(swapFrames >= 24000 && swapFrames < 2 * 24000 - 2400)
    #expect(capture.allSatisfy { $0 <= 6000 / 32768 * 2 + 1e-6 })
  }

  public static func aLowPriorityPlayNeverTakesTheVoiceOfAHigherOne(_ start: DaemonStarter) throws {
    let daemon = try start(
      DaemonSetup(config: "[cues.alert]\npriority = 90\n[cues.tick]\npriority = 10\n", maxVoices: 1) { sounds in
        try writeConstantWAV(sounds + "/alert.wav", frames: 24000, value: 7000)
        try writeConstantWAV(sounds + "/tick.wav", frames: 24000, value: 1500)
      })
    let client = try daemon.connect()
    try client.request("subscribe", [("kinds", .array(["finished"]))])
    let alert = try client.request("play", [("cue", "alert")])
    let tick = try client.request("play", [("cue", "tick")])
    #expect(tick["played"] == false)
    #expect(tick["reason"] == "cap")
    #expect(try client.waitForEvent("finished") { $0["voice"] == tick["voice"] }["reason"] == "cap")
    #expect(try client.waitForEvent("finished") { $0["voice"] == alert["voice"] }["reason"] == "end")
    // The other way round, the alert takes the tick's voice.
    let tick2 = try client.request("play", [("cue", "tick")])
    daemon.advance(seconds: 0.1)
    let alert2 = try client.request("play", [("cue", "alert")])
    #expect(alert2["played"] == true)
    #expect(alert2["stole"] == tick2["voice"])
    #expect(try client.waitForEvent("finished") { $0["voice"] == tick2["voice"] }["reason"] == "stolen")
    try client.waitForEvent("finished") { $0["voice"] == alert2["voice"] }
    let capture = try daemon.finish()
    let runs = constantRuns(capture)
    // The first alert whole and alone; the second whole after the tick's fade.
    #expect(runs.first?.value == 7000)
    #expect(runs.first?.frames == 24000)
    let alertFrames = (0..<(capture.count / 2)).filter { abs(capture[2 * $0] - 7000 / 32768) < 1e-6 }.count
    #expect(alertFrames >= 2 * 24000 - 480)
  }

  public static func aConfigListIsAWeightedSetAndPagingPlaysSetsToo(_ start: DaemonStarter) throws {
    let config = """
      [cues.mix]
      variations = [{ cue = "x", weight = 6 }, "y", "z"]
      [carousel.default]
      page-next = { cue = "blip", deadline = 1.0 }
      page-prev = false
      wrap = false
      drag-began = false

      """
    let daemon = try start(
      DaemonSetup(config: config) { sounds in
        try blipFolder(sounds)
        for (name, value) in [("x", Int16(4000)), ("y", 5000), ("z", 6000)] {
          try writeConstantWAV(sounds + "/\(name).wav", frames: 48, value: value)
        }
      })
    let client = try daemon.connect()
    var picks: [String] = []
    for _ in 0..<90 {
      let reply = try client.request("play", [("cue", "mix")])
      picks.append(reply["variation"]?.stringValue ?? "?")
    }
    #expect(zip(picks, picks.dropFirst()).allSatisfy { $0 != $1 })
    let counts = Dictionary(picks.map { ($0, 1) }, uniquingKeysWith: +)
    // x is chosen whenever it may be (after y or z) six times in seven: about 42 of 90.
    #expect((counts["x"] ?? 0) > 30, "\(counts)")
    #expect((counts["y"] ?? 0) > 5 && (counts["z"] ?? 0) > 5, "\(counts)")
    #expect(Set(picks) == ["x", "y", "z"])
    daemon.advance(seconds: 0.3)
    // A carousel binding to a folder: each page turn a member, never the same twice running.
    let paged = try daemon.connect()
    for page in 0..<30 {
      try paged.send(#"{"carousel":"default","event":"page-changed","from":\#(page),"to":\#(page + 1),"count":99,"reason":"key"}"#)
      daemon.advance(seconds: 0.03)
    }
    daemon.advance(seconds: 0.2)
    let runs = constantRuns(try daemon.finish()).filter { [1000, 2000, 3000].contains($0.value) }
    #expect(runs.count == 30)
    #expect(zip(runs, runs.dropFirst()).allSatisfy { $0.value != $1.value })
    #expect(Set(runs.map(\.value)) == [1000, 2000, 3000])
  }
}
#endif
