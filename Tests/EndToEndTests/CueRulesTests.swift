import CueProtocol
import DaemonTestSupport
import FoundationEssentials
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A 16-bit stereo WAV at 48 kHz whose every sample is `value` (so the capture says which file
/// played: libsndfile reads it as exactly value/32768, and unity gain keeps it).
func writeConstantWAV(_ path: String, frames: Int, value: Int16) throws {
  var bytes: [UInt8] = []
  func u32(_ x: UInt32) { withUnsafeBytes(of: x.littleEndian) { bytes += $0 } }
  func u16(_ x: UInt16) { withUnsafeBytes(of: x.littleEndian) { bytes += $0 } }
  let dataBytes = UInt32(frames * 4)
  bytes += Array("RIFF".utf8); u32(36 + dataBytes); bytes += Array("WAVE".utf8)
  bytes += Array("fmt ".utf8); u32(16); u16(1); u16(2); u32(48000); u32(48000 * 4); u16(4); u16(16)
  bytes += Array("data".utf8); u32(dataBytes)
  for _ in 0..<(frames * 2) { u16(UInt16(bitPattern: value)) }
  try Data(bytes).write(to: URL(fileURLWithPath: path))
}

/// Runs of non-zero left-channel samples in a capture: (the middle sample × 32768, frames). A run
/// ends at silence or, with `splittingOnChange`, where the value changes (sounds back to back).
func constantRuns(_ capture: [Float], splittingOnChange: Bool = true) -> [(value: Int, frames: Int)] {
  var runs: [(value: Int, frames: Int)] = []
  var f = 0
  let frames = capture.count / 2
  while f < frames {
    let x = capture[2 * f]
    guard x != 0 else { f += 1; continue }
    var end = f
    while end < frames && capture[2 * end] != 0 && (!splittingOnChange || capture[2 * end] == x) { end += 1 }
    runs.append((Int((capture[2 * (f + (end - f) / 2)] * 32768).rounded()), end - f))
    f = end
  }
  return runs
}

@Suite("Cue rules: variations, spreads, cooldown, caps and priority, on captured samples", .serialized)
struct CueRulesTests {
  /// A folder `blip/` of three 10 ms files, each its own constant.
  static func blipFolder(_ sounds: String) throws {
    try FileManager.default.createDirectory(atPath: sounds + "/blip", withIntermediateDirectories: true)
    for (name, value) in [("a", Int16(1000)), ("b", 2000), ("c", 3000)] {
      try writeConstantWAV(sounds + "/blip/\(name).wav", frames: 480, value: value)
    }
  }

  /// Plays `cue` with notify and waits for its `finished`: the plays never overlap.
  static func playAndWait(_ client: ProtocolClient, _ cue: String) throws -> JSONValue {
    let reply = try client.request("play", [("cue", .string(cue)), ("notify", true)])
    let voice = try #require(reply["voice"]?.intValue)
    _ = try client.waitForEvent("finished") { $0["voice"]?.intValue == voice }
    return reply
  }

  @Test func aFolderIsASetAndNoMemberPlaysTwiceInARow() throws {
    let rig = try PacedCapture(cues: [:], prepare: Self.blipFolder)
    let client = try rig.client()
    let listed = try client.request("list")["cues"]?.arrayValue ?? []
    #expect(listed.compactMap { $0["name"]?.stringValue } == ["blip/a", "blip/b", "blip/c"])
    #expect(listed.allSatisfy { $0["set"]?.stringValue == "blip" })
    var chosen: [String] = []
    for _ in 0..<200 {
      let reply = try Self.playAndWait(client, "blip")
      #expect(reply["played"] == true)
      chosen.append(reply["variation"]?.stringValue ?? "?")
    }
    let capture = try rig.finish()
    let runs = constantRuns(capture)
    let values = ["blip/a": 1000, "blip/b": 2000, "blip/c": 3000]
    // What was heard is what the replies said, in order: 200 whole 10 ms sounds, all three, never one twice in a row.
    #expect(runs.map(\.value) == chosen.map { values[$0] ?? 0 })
    #expect(runs.allSatisfy { $0.frames == 480 })
    #expect(Set(runs.map(\.value)) == [1000, 2000, 3000])
    #expect(zip(runs, runs.dropFirst()).allSatisfy { $0.value != $1.value })
  }

  @Test func volumeAndRateSpreadsStayWithinTheirBounds() throws {
    let config = "[cues.hum]\nvolume-spread = 6\nrate-spread = 2\n"
    let rig = try PacedCapture(cues: [:], config: config) { sounds in
      try writeConstantWAV(sounds + "/hum.wav", frames: 4800, value: 8000)
    }
    let client = try rig.client()
    for _ in 0..<24 { _ = try Self.playAndWait(client, "hum") }
    // Resampled ends are not constant: a sound is a run between silences.
    let runs = constantRuns(try rig.finish(), splittingOnChange: false)
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

  @Test func aPlayWithinTheCooldownIsSilentAndSaysSo() throws {
    let rig = try PacedCapture(cues: [:], config: "[cues.ping]\ncooldown = 0.5\n") { sounds in
      try writeConstantWAV(sounds + "/ping.wav", frames: 480, value: 5000)
    }
    let client = try rig.client()
    let first = try client.request("play", [("cue", "ping")])
    let second = try client.request("play", [("cue", "ping"), ("notify", true)])
    #expect(first["played"] == true)
    #expect(second["played"] == false)
    #expect(second["reason"] == "cooldown")
    let finished = try client.waitForEvent("finished") { $0["voice"] == second["voice"] }
    #expect(finished["reason"] == "cooldown")
    #expect(finished["successfully"] == false)
    usleep(600_000)
    #expect(try client.request("play", [("cue", "ping")])["played"] == true)
    usleep(200_000)
    let status = try client.request("status")
    #expect(status["silenced"]?["cooldown"]?.intValue == 1)
    #expect(status["plays"]?.intValue == 2)
    let runs = constantRuns(try rig.finish())
    #expect(runs.map(\.value) == [5000, 5000])
    #expect(runs.allSatisfy { $0.frames == 480 })
  }

  @Test func pastMaxInstancesARefusedPlayIsSilentAndAStealingOneFadesTheOldest() throws {
    let config = "[cues.held]\nmax-instances = 1\npast-max = \"refuse\"\n[cues.swap]\nmax-instances = 1\n"
    let rig = try PacedCapture(cues: [:], config: config) { sounds in
      try writeConstantWAV(sounds + "/held.wav", frames: 24000, value: 4000)
      try writeConstantWAV(sounds + "/swap.wav", frames: 24000, value: 6000)
    }
    let client = try rig.client()
    _ = try client.request("subscribe", [("kinds", .array(["finished"]))])
    let held = try client.request("play", [("cue", "held")])
    let refused = try client.request("play", [("cue", "held")])
    #expect(refused["played"] == false)
    #expect(refused["reason"] == "cap")
    _ = try client.waitForEvent("finished", timeout: 5) { $0["voice"] == held["voice"] }
    let first = try client.request("play", [("cue", "swap")])
    usleep(100_000)
    let second = try client.request("play", [("cue", "swap")])
    #expect(second["played"] == true)
    #expect(second["stole"] == first["voice"])
    let stolen = try client.waitForEvent("finished") { $0["voice"] == first["voice"] }
    #expect(stolen["reason"] == "stolen")
    _ = try client.waitForEvent("finished", timeout: 5) { $0["voice"] == second["voice"] }
    let capture = try rig.finish()
    let runs = constantRuns(capture)
    // The refused play added nothing: one whole `held`, never louder than itself.
    #expect(runs.first?.value == 4000)
    #expect(runs.first?.frames == 24000)
    // The stolen swap faded under the new one: at most one swap's worth of its own before it, never two whole.
    let swapFrames = (0..<(capture.count / 2)).filter { abs(capture[2 * $0] - 6000 / 32768) < 1e-6 }.count
    #expect(swapFrames >= 24000 && swapFrames < 2 * 24000 - 2400)
    #expect(capture.allSatisfy { $0 <= 6000 / 32768 * 2 + 1e-6 })
  }

  @Test func aLowPriorityPlayNeverTakesTheVoiceOfAHigherOne() throws {
    let config = "[cues.alert]\npriority = 90\n[cues.tick]\npriority = 10\n"
    let rig = try PacedCapture(cues: [:], extra: ["--max-voices", "1"], config: config) { sounds in
      try writeConstantWAV(sounds + "/alert.wav", frames: 24000, value: 7000)
      try writeConstantWAV(sounds + "/tick.wav", frames: 24000, value: 1500)
    }
    let client = try rig.client()
    _ = try client.request("subscribe", [("kinds", .array(["finished"]))])
    let alert = try client.request("play", [("cue", "alert")])
    let tick = try client.request("play", [("cue", "tick")])
    #expect(tick["played"] == false)
    #expect(tick["reason"] == "cap")
    #expect(try client.waitForEvent("finished") { $0["voice"] == tick["voice"] }["reason"] == "cap")
    #expect(try client.waitForEvent("finished", timeout: 5) { $0["voice"] == alert["voice"] }["reason"] == "end")
    // The other way round, the alert takes the tick's voice.
    let tick2 = try client.request("play", [("cue", "tick")])
    usleep(100_000)
    let alert2 = try client.request("play", [("cue", "alert")])
    #expect(alert2["played"] == true)
    #expect(alert2["stole"] == tick2["voice"])
    #expect(try client.waitForEvent("finished") { $0["voice"] == tick2["voice"] }["reason"] == "stolen")
    _ = try client.waitForEvent("finished", timeout: 5) { $0["voice"] == alert2["voice"] }
    let capture = try rig.finish()
    let runs = constantRuns(capture)
    // The first alert whole and alone; the second whole after the tick's fade.
    #expect(runs.first?.value == 7000)
    #expect(runs.first?.frames == 24000)
    let alertFrames = (0..<(capture.count / 2)).filter { abs(capture[2 * $0] - 7000 / 32768) < 1e-6 }.count
    #expect(alertFrames >= 2 * 24000 - 480)
  }

  @Test func aConfigListIsAWeightedSetAndPagingPlaysSetsToo() throws {
    let config = """
      [cues.mix]
      variations = [{ cue = "x", weight = 6 }, "y", "z"]
      [carousel.default]
      page-next = { cue = "blip", deadline = 1.0 }
      page-prev = false
      wrap = false
      drag-began = false

      """
    let rig = try PacedCapture(cues: [:], config: config) { sounds in
      try Self.blipFolder(sounds)
      for (name, value) in [("x", Int16(4000)), ("y", 5000), ("z", 6000)] {
        try writeConstantWAV(sounds + "/\(name).wav", frames: 48, value: value)
      }
    }
    let client = try rig.client()
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
    usleep(300_000)
    // A carousel binding to a folder: each page turn a member, never the same twice running.
    let paged = try rig.client()
    for page in 0..<30 {
      try paged.raw.send(#"{"carousel":"default","event":"page-changed","from":\#(page),"to":\#(page + 1),"count":99,"reason":"key"}"# + "\n")
      usleep(30_000)
    }
    usleep(200_000)
    let runs = constantRuns(try rig.finish()).filter { [1000, 2000, 3000].contains($0.value) }
    #expect(runs.count == 30)
    #expect(zip(runs, runs.dropFirst()).allSatisfy { $0.value != $1.value })
    #expect(Set(runs.map(\.value)) == [1000, 2000, 3000])
  }

  @Test func cuectlShowsAndSetsTheLevelAndTheGroups() throws {
    let config = "[groups.ui]\nvolume = 0.8\n[groups.alerts]\nduck = { group = \"ui\", by = -12 }\n[quiet-hours]\nfrom = \"03:00\"\nto = \"03:01\"\n"
    let rig = try PacedCapture(cues: ["pico": "tone-48000-mono.mp3"], config: config)
    let daemon = rig.daemon
    #expect(try daemon.cuectl(["level"]).stdout.hasPrefix("level: full (set by start)\nquiet hours: 03:00-03:01"))
    let quiet = try daemon.cuectl(["level", "quiet"])
    #expect(quiet.status == 0 && quiet.stdout.hasPrefix("level: quiet (set by client)"), "\(quiet.stderr)")
    let silent = try daemon.cuectl(["play", "pico"])
    #expect(silent.status == 0 && silent.stderr.contains("pico is silent: level"), "\(silent.stderr)")
    #expect(try daemon.cuectl(["level", "loud"]).status != 0)
    let groups = try daemon.cuectl(["group"]).stdout
    #expect(groups.contains("GROUP") && groups.contains("alerts") && groups.contains("default") && groups.contains("ui"), "\(groups)")
    let ui = try daemon.cuectl(["group", "ui", "--volume", "0.5", "--mute"]).stdout
    #expect(ui.contains("ui") && ui.contains("0.5") && ui.contains("yes"), "\(ui)")
    let json = try daemon.cuectl(["--json", "group", "ui"]).stdout
    #expect(json.contains(#""muted":true"#) && json.contains(#""volume":0.5"#), "\(json)")
    let unknown = try daemon.cuectl(["group", "nope"])
    #expect(unknown.status != 0 && unknown.stderr.contains("no group named 'nope'"), "\(unknown.stderr)")
    // Nothing was heard: the level allowed nothing that was asked for.
    #expect(daemon.stop() == 0)
  }
}
