import CueDecoding
import CueProtocol
import DaemonTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// cued playing through an ALSA `file` PCM whose slave is a PulseAudio null sink: the null sink
/// paces playback like a card, and the file receives exactly what cued wrote.
final class PacedCapture {
  let directory: String
  let pulse: PulseServer
  let daemon: DaemonProcess
  var capturePath: String { directory + "/out.raw" }

  /// `prepare` gets the sound directory before cued starts (to add files of the test's own).
  init(
    cues: [String: String], extra: [String] = [], config: String? = nil, environment extraEnvironment: [String: String] = [:],
    prepare: (String) throws -> Void = { _ in }
  ) throws {
    directory = Harness.temporaryDirectory()
    pulse = try PulseServer(directory: directory)
    let sounds = try Harness.soundDirectory(in: directory, cues)
    try prepare(sounds)
    var extra = extra
    if let config {
      try config.write(toFile: directory + "/cued.toml", atomically: true, encoding: .utf8)
      extra += ["--config", directory + "/cued.toml"]
    }
    var environment = pulse.environment
    environment["ALSA_CONFIG_PATH"] = try Self.teeConfiguration(pulse: pulse, capture: directory + "/out.raw", at: directory + "/asound.conf")
    environment.merge(extraEnvironment) { _, new in new }
    daemon = try DaemonProcess(
      socket: directory + "/cued.sock",
      arguments: ["--sounds", sounds, "--device", "tee", "--idle-timeout", "60"] + extra,
      environment: environment, logPath: directory + "/cued.log")
  }

  /// Writes an asound.conf at `path` whose PCM `tee` writes what it plays into `capture` (raw float32)
  /// and passes it on to the server's null sink, which paces it; returns `path` (for ALSA_CONFIG_PATH).
  static func teeConfiguration(pulse: PulseServer, capture: String, at path: String) throws -> String {
    let config = """
      </usr/share/alsa/alsa.conf>
      pcm.tee { type file slave.pcm "pulse:\(pulse.sink)" file "\(capture)" format "raw" perm 0644 }
      """
    try config.write(toFile: path, atomically: true, encoding: .utf8)
    return path
  }

  /// Stops cued (so everything it wrote is in the file) and returns the capture.
  func finish() throws -> [Float] {
    daemon.stop()
    return try readFloats(capturePath)
  }

  func client() throws -> ProtocolClient { try ProtocolClient(socket: daemon.socket) }
}

/// Requests with automatic ids; events are kept aside for `waitForEvent`.
final class ProtocolClient {
  let raw: RawClient
  var nextID = 1
  var events: [JSONValue] = []

  init(socket: String) throws { raw = try RawClient(socket: socket) }

  @discardableResult
  func request(_ op: String, _ fields: [(String, JSONValue)] = []) throws -> JSONValue {
    let message = try exchange(op, fields)
    guard message["ok"] == true else {
      throw HarnessError("\(op) failed: \(JSONWriter.write(message))")
    }
    return message
  }

  /// Sends a request and returns its reply line, keeping the events that come before it.
  private func exchange(_ op: String, _ fields: [(String, JSONValue)]) throws -> JSONValue {
    let id = nextID
    nextID += 1
    let object = JSONValue.object([("id", .number(Double(id))), ("op", .string(op))] + fields)
    try raw.send(JSONWriter.write(object) + "\n")
    while true {
      let message = try raw.receive()
      if message["event"] != nil {
        events.append(message)
        continue
      }
      if message["id"]?.intValue == id { return message }
    }
  }

  /// Sends a request that is to fail; returns its `error` object (`code`, `message`).
  func requestError(_ op: String, _ fields: [(String, JSONValue)] = []) throws -> JSONValue {
    let message = try exchange(op, fields)
    guard message["ok"] == false, let error = message["error"] else { throw HarnessError("\(op) did not fail: \(JSONWriter.write(message))") }
    return error
  }

  /// The next event of `kind` (already received, or arriving within `timeout`).
  func waitForEvent(_ kind: String, timeout: Double = 5, where matches: (JSONValue) -> Bool = { _ in true }) throws -> JSONValue {
    if let index = events.firstIndex(where: { $0["event"]?.stringValue == kind && matches($0) }) {
      return events.remove(at: index)
    }
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
      let message = try raw.receive()
      if message["event"]?.stringValue == kind && matches(message) { return message }
      if message["event"] != nil { events.append(message) }
    }
    throw HarnessError("no \(kind) event within \(timeout) s")
  }

  /// Events that arrive within `seconds`.
  func drainEvents(for seconds: Double) -> [JSONValue] {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
      guard let message = try? raw.receive(timeout: max(0.01, deadline.timeIntervalSinceNow)) else { break }
      if message["event"] != nil { events.append(message) }
    }
    defer { events.removeAll() }
    return events
  }
}

func decoded(_ fixture: String) throws -> [Float] {
  try MP3Decoder.decode(path: Harness.fixture(fixture)).buffer.toArray()
}

/// The samples with every exact zero left out: what was heard, wherever the pauses fell.
func sounding(_ samples: [Float]) -> [Float] { samples.filter { $0 != 0 } }

@Suite("Players on captured samples", .serialized)
struct PlayerTests {
  @Test func aPlayerLoopsNumberOfLoopsPlusOneTimes() throws {
    let rig = try PacedCapture(cues: ["loop": "loop-48000-stereo.mp3"])
    let client = try rig.client()
    let player = try client.request("player.create", [("cue", "loop"), ("numberOfLoops", 2)])["player"]!
    try client.request("player.play", [("player", player)])
    let finished = try client.waitForEvent("finished")
    #expect(finished["successfully"] == true)
    #expect(finished["player"] == player)
    let capture = try rig.finish()
    let once = try decoded("loop-48000-stereo.mp3")
    try #require(capture.count >= once.count * 3)
    #expect(Array(capture[0..<(once.count * 3)]) == once + once + once)
    #expect(capture[(once.count * 3)...].allSatisfy { $0 == 0 })
  }

  @Test func pauseAndResumeLeaveNoGapAndRepeatNoSample() throws {
    let rig = try PacedCapture(cues: ["tone": "tone-44100-vbr.mp3"])
    let client = try rig.client()
    let player = try client.request("player.create", [("cue", "tone")])["player"]!
    try client.request("player.play", [("player", player)])
    usleep(150_000)
    let paused = try client.request("player.pause", [("player", player)])
    usleep(50_000)
    let whilePaused = try client.request("player.get", [("player", player)])
    #expect(whilePaused["isPlaying"] == false)
    #expect((whilePaused["currentTime"]?.doubleValue ?? 0) > 0)
    #expect(whilePaused["currentTime"] == (try client.request("player.get", [("player", player)]))["currentTime"])
    _ = paused
    usleep(200_000)
    try client.request("player.play", [("player", player)])
    _ = try client.waitForEvent("finished")
    let capture = try rig.finish()
    let source = try decoded("tone-44100-vbr.mp3")
    // Somewhere in the capture there is silence (the pause); without it, the samples are the source's.
    let firstSilence = try #require((0..<(capture.count / 2)).first { (i: Int) -> Bool in capture[2 * i] == 0 && capture[2 * i + 1] == 0 && i > 0 })
    #expect(firstSilence < source.count / 2, "the pause left no silence inside the cue")
    #expect(sounding(capture) == sounding(source))
  }

  @Test func stopKeepsCurrentTimeAndPlayResumesThere() throws {
    let (daemon, _) = try DaemonTests.start()
    defer { daemon.stop() }
    let client = try ProtocolClient(socket: daemon.socket)
    let player = try client.request("player.create", [("cue", "loop"), ("numberOfLoops", -1)])["player"]!
    try client.request("player.play", [("player", player)])
    usleep(250_000)
    try client.request("player.stop", [("player", player)])
    usleep(100_000)
    let first = try client.request("player.get", [("player", player)])
    #expect(first["isPlaying"] == false)
    let time = try #require(first["currentTime"]?.doubleValue)
    #expect(time > 0 && time < 0.1)  // within the 0.1 s cue, which loops
    usleep(200_000)
    #expect(try client.request("player.get", [("player", player)])["currentTime"]?.doubleValue == time)
    // No finished event for a stop.
    #expect(!client.drainEvents(for: 0.3).contains { $0["event"] == "finished" })
    try client.request("player.play", [("player", player)])
    #expect(try client.request("player.get", [("player", player)])["isPlaying"] == true)
  }

  @Test func aSeekIsSampleAccurate() throws {
    let rig = try PacedCapture(cues: ["tone": "tone-44100-vbr.mp3"])
    let client = try rig.client()
    let player = try client.request("player.create", [("cue", "tone"), ("currentTime", 0.25)])["player"]!
    try client.request("player.play", [("player", player)])
    _ = try client.waitForEvent("finished")
    let capture = try rig.finish()
    let source = try decoded("tone-44100-vbr.mp3")
    let from = 12_000 * 2  // 0.25 s at 48 kHz, stereo
    try #require(capture.count >= source.count - from)
    #expect(Array(capture[0..<(source.count - from)]) == Array(source[from...]))
  }

  @Test func playAtATimeAlignsTwoPlayersToTheSample() throws {
    let rig = try PacedCapture(cues: ["tone": "tone-48000-mono.mp3"])
    let client = try rig.client()
    let left = try client.request("player.create", [("cue", "tone"), ("pan", -1)])["player"]!
    let right = try client.request("player.create", [("cue", "tone"), ("pan", 1)])["player"]!
    try client.request("player.prepare", [("player", left)])
    let now = try #require(client.request("player.get", [("player", left)])["deviceCurrentTime"]?.doubleValue)
    let at = JSONValue.number(now + 0.2)
    try client.request("player.play", [("player", left), ("atTime", at)])
    usleep(30_000)  // the second request arrives a few periods later, yet starts on the same frame
    try client.request("player.play", [("player", right), ("atTime", at)])
    _ = try client.waitForEvent("finished")
    _ = try client.waitForEvent("finished")
    let capture = try rig.finish()
    let firstLeft = try #require((0..<(capture.count / 2)).first { capture[2 * $0] != 0 })
    let firstRight = try #require((0..<(capture.count / 2)).first { capture[2 * $0 + 1] != 0 })
    #expect(firstLeft == firstRight)
    // And they stay aligned: the two channels carry the same signal frame by frame.
    for f in firstLeft..<(firstLeft + 5000) { #expect(capture[2 * f] == capture[2 * f + 1]) }
  }

  @Test func aVolumeFadeReachesItsTargetInItsDuration() throws {
    let rig = try PacedCapture(cues: ["tone": "tone-44100-vbr.mp3"])
    let client = try rig.client()
    let player = try client.request("player.create", [("cue", "tone")])["player"]!
    try client.request("player.play", [("player", player)])
    usleep(100_000)
    try client.request("player.set", [("player", player), ("volume", 0.25), ("fade", 0.05)])
    _ = try client.waitForEvent("finished")
    let capture = try rig.finish()
    let source = try decoded("tone-44100-vbr.mp3")
    // The gain applied to each frame: 1 before the fade, 0.25 after, a straight line between.
    var gains: [(frame: Int, gain: Float)] = []
    for f in 0..<(source.count / 2) where abs(source[2 * f]) > 0.05 {
      gains.append((f, capture[2 * f] / source[2 * f]))
    }
    let fadeStart = try #require(gains.first { abs($0.gain - 1) > 1e-4 }?.frame)
    let fadeEnd = try #require(gains.first { abs($0.gain - 0.25) < 1e-5 }?.frame)
    #expect(abs((fadeEnd - fadeStart) - 2400) <= 40, "fade took \(fadeEnd - fadeStart) frames")
    #expect(gains.filter { $0.frame > fadeEnd + 2 }.allSatisfy { abs($0.gain - 0.25) < 1e-5 })
  }

  @Test func doubleRateHalvesTheDurationAndNeedsEnableRate() throws {
    let rig = try PacedCapture(cues: ["tone": "tone-44100-vbr.mp3"])
    let client = try rig.client()
    #expect(throws: HarnessError.self) { try client.request("player.create", [("cue", "tone"), ("rate", 2)]) }
    let plain = try client.request("player.create", [("cue", "tone")])["player"]!
    #expect(throws: HarnessError.self) { try client.request("player.set", [("player", plain), ("rate", 1.5)]) }
    let player = try client.request("player.create", [("cue", "tone"), ("enableRate", true), ("rate", 2)])["player"]!
    try client.request("player.play", [("player", player)])
    _ = try client.waitForEvent("finished")
    let capture = try rig.finish()
    let source = try decoded("tone-44100-vbr.mp3")
    let sourceFrames = source.count / 2
    let soundingFrames = (0..<(capture.count / 2)).filter { capture[2 * $0] != 0 || capture[2 * $0 + 1] != 0 }.count
    #expect(abs(soundingFrames - sourceFrames / 2) <= 4, "\(soundingFrames) frames sounded")
    // Every other source frame, as varispeed at exactly 2 reads them.
    for f in stride(from: 100, to: 1000, by: 7) { #expect(abs(capture[2 * f] - source[4 * f]) < 1e-5) }
  }

  @Test func metersReportPowerInDecibels() throws {
    let (daemon, _) = try DaemonTests.start()
    defer { daemon.stop() }
    let client = try ProtocolClient(socket: daemon.socket)
    // The loop fixture is a steady sine peaking at 0.5: -6 dBFS peak, -9 dBFS RMS.
    let player = try client.request("player.create", [("cue", "loop"), ("numberOfLoops", -1), ("meteringEnabled", true)])["player"]!
    let idle = try client.request("player.get", [("player", player)])
    #expect(idle["averagePower"]?.arrayValue?.first == -160)
    try client.request("player.play", [("player", player)])
    usleep(150_000)
    let playing = try client.request("player.get", [("player", player)])
    let average = (playing["averagePower"]?.arrayValue ?? []).compactMap(\.doubleValue)
    let peak = (playing["peakPower"]?.arrayValue ?? []).compactMap(\.doubleValue)
    #expect(average.count == 2 && peak.count == 2)
    for channel in 0..<2 {
      #expect(abs(average[channel] + 9.03) < 0.6, "average \(average)")
      #expect(abs(peak[channel] + 6.02) < 0.6, "peak \(peak)")
    }
    try client.request("player.set", [("player", player), ("volume", 0.5)])
    let quieter = try client.request("player.get", [("player", player)])["peakPower"]?.arrayValue?.first?.doubleValue ?? 0
    #expect(abs(quieter + 12.04) < 0.6)
  }
}
