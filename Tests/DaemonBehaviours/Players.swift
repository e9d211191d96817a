#if canImport(Testing)
import CueProtocol
import DaemonTestSupport
import Testing

/// The samples with every exact zero left out: what was heard, wherever the pauses fell.
public func sounding(_ samples: [Float]) -> [Float] { samples.filter { $0 != 0 } }

/// Players (loops, pause and resume, stop, seek, play at a time, fades, rate, meters) on the
/// samples the daemon's output was given, each body written once against `DaemonUnderTest`:
/// CueDaemonTests runs them in process, EndToEndTests live (`CUED_TEST_LIVE=1`).
public enum Players {
  public static let all: [Behaviour] = [
    Behaviour("aPlayerLoopsNumberOfLoopsPlusOneTimes", aPlayerLoopsNumberOfLoopsPlusOneTimes),
    Behaviour("pauseAndResumeLeaveNoGapAndRepeatNoSample", pauseAndResumeLeaveNoGapAndRepeatNoSample),
    Behaviour("stopKeepsCurrentTimeAndPlayResumesThere", stopKeepsCurrentTimeAndPlayResumesThere),
    Behaviour("aSeekIsSampleAccurate", aSeekIsSampleAccurate),
    Behaviour("playAtATimeAlignsTwoPlayersToTheSample", playAtATimeAlignsTwoPlayersToTheSample),
    Behaviour("aVolumeFadeReachesItsTargetInItsDuration", aVolumeFadeReachesItsTargetInItsDuration),
    Behaviour("doubleRateHalvesTheDurationAndNeedsEnableRate", doubleRateHalvesTheDurationAndNeedsEnableRate),
    Behaviour("metersReportPowerInDecibels", metersReportPowerInDecibels),
  ]

  /// A daemon whose one cue, `name`, is the MP3 fixture `fixture`, and a client of it.
  static func start(_ start: DaemonStarter, _ name: String, _ fixture: String) throws -> (DaemonUnderTest, TestClient) {
    let daemon = try start(DaemonSetup(cues: [name: fixture]))
    return (daemon, try daemon.connect())
  }

  static func aPlayerLoopsNumberOfLoopsPlusOneTimes(_ start: DaemonStarter) throws {
    let (daemon, client) = try Self.start(start, "loop", "loop-48000-stereo.mp3")
    let player = try client.request("player.create", [("cue", "loop"), ("numberOfLoops", 2)])["player"]!
    try client.request("player.play", [("player", player)])
    let finished = try client.waitForEvent("finished")
    #expect(finished["successfully"] == true)
    #expect(finished["player"] == player)
    daemon.advance(seconds: 0.1)  // silence after the third time, for the check below to read
    let capture = try daemon.finish()
    let once = try decoded("loop-48000-stereo.mp3")
    try #require(capture.count > once.count * 3)
    #expect(Array(capture[0..<(once.count * 3)]) == once + once + once)
    #expect(capture[(once.count * 3)...].allSatisfy { $0 == 0 })
  }

  static func pauseAndResumeLeaveNoGapAndRepeatNoSample(_ start: DaemonStarter) throws {
    let (daemon, client) = try Self.start(start, "tone", "tone-44100-vbr.mp3")
    let player = try client.request("player.create", [("cue", "tone")])["player"]!
    try client.request("player.play", [("player", player)])
    daemon.advance(seconds: 0.15)
    try client.request("player.pause", [("player", player)])
    daemon.advance(seconds: 0.05)
    let whilePaused = try client.request("player.get", [("player", player)])
    #expect(whilePaused["isPlaying"] == false)
    #expect((whilePaused["currentTime"]?.doubleValue ?? 0) > 0)
    #expect(whilePaused["currentTime"] == (try client.request("player.get", [("player", player)]))["currentTime"])
    daemon.advance(seconds: 0.2)
    try client.request("player.play", [("player", player)])
    try client.waitForEvent("finished")
    let capture = try daemon.finish()
    let source = try decoded("tone-44100-vbr.mp3")
    // Somewhere in the capture there is silence (the pause); without it, the samples are the source's.
    let firstSilence = try #require((0..<(capture.count / 2)).first { (i: Int) -> Bool in capture[2 * i] == 0 && capture[2 * i + 1] == 0 && i > 0 })
    #expect(firstSilence < source.count / 2, "the pause left no silence inside the cue")
    #expect(sounding(capture) == sounding(source))
  }

  static func stopKeepsCurrentTimeAndPlayResumesThere(_ start: DaemonStarter) throws {
    let (daemon, client) = try Self.start(start, "loop", "loop-48000-stereo.mp3")
    let player = try client.request("player.create", [("cue", "loop"), ("numberOfLoops", -1)])["player"]!
    try client.request("player.play", [("player", player)])
    daemon.advance(seconds: 0.25)
    try client.request("player.stop", [("player", player)])
    daemon.advance(seconds: 0.1)
    let first = try client.request("player.get", [("player", player)])
    #expect(first["isPlaying"] == false)
    let time = try #require(first["currentTime"]?.doubleValue)
    #expect(time > 0 && time < 0.1)  // within the 0.1 s cue, which loops
    daemon.advance(seconds: 0.2)
    #expect(try client.request("player.get", [("player", player)])["currentTime"]?.doubleValue == time)
    // No finished event for a stop.
    daemon.advance(seconds: 0.3)
    #expect(!(try client.eventsSoFar()).contains { $0["event"] == "finished" })
    try client.request("player.play", [("player", player)])
    #expect(try client.request("player.get", [("player", player)])["isPlaying"] == true)
  }

  static func aSeekIsSampleAccurate(_ start: DaemonStarter) throws {
    let (daemon, client) = try Self.start(start, "tone", "tone-44100-vbr.mp3")
    let player = try client.request("player.create", [("cue", "tone"), ("currentTime", 0.25)])["player"]!
    try client.request("player.play", [("player", player)])
    try client.waitForEvent("finished")
    let capture = try daemon.finish()
    let source = try decoded("tone-44100-vbr.mp3")
    let from = 12_000 * 2  // 0.25 s at 48 kHz, stereo
    try #require(capture.count >= source.count - from)
    #expect(Array(capture[0..<(source.count - from)]) == Array(source[from...]))
  }

  static func playAtATimeAlignsTwoPlayersToTheSample(_ start: DaemonStarter) throws {
    let (daemon, client) = try Self.start(start, "tone", "tone-48000-mono.mp3")
    let left = try client.request("player.create", [("cue", "tone"), ("pan", -1)])["player"]!
    let right = try client.request("player.create", [("cue", "tone"), ("pan", 1)])["player"]!
    try client.request("player.prepare", [("player", left)])
    let now = try #require(client.request("player.get", [("player", left)])["deviceCurrentTime"]?.doubleValue)
    let at = JSONValue.number(now + 0.2)
    try client.request("player.play", [("player", left), ("atTime", at)])
    daemon.advance(seconds: 0.03)  // the second request arrives a few periods later, yet starts on the same frame
    try client.request("player.play", [("player", right), ("atTime", at)])
    try client.waitForEvent("finished")
    try client.waitForEvent("finished")
    let capture = try daemon.finish()
    let firstLeft = try #require((0..<(capture.count / 2)).first { capture[2 * $0] != 0 })
    let firstRight = try #require((0..<(capture.count / 2)).first { capture[2 * $0 + 1] != 0 })
    #expect(firstLeft == firstRight)
    // And they stay aligned: the two channels carry the same signal frame by frame.
    for f in firstLeft..<(firstLeft + 5000) { #expect(capture[2 * f] == capture[2 * f + 1]) }
  }

  static func aVolumeFadeReachesItsTargetInItsDuration(_ start: DaemonStarter) throws {
    let (daemon, client) = try Self.start(start, "tone", "tone-44100-vbr.mp3")
    let player = try client.request("player.create", [("cue", "tone")])["player"]!
    try client.request("player.play", [("player", player)])
    daemon.advance(seconds: 0.1)
    try client.request("player.set", [("player", player), ("volume", 0.25), ("fade", 0.05)])
    try client.waitForEvent("finished")
    let capture = try daemon.finish()
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

  static func doubleRateHalvesTheDurationAndNeedsEnableRate(_ start: DaemonStarter) throws {
    let (daemon, client) = try Self.start(start, "tone", "tone-44100-vbr.mp3")
    #expect(throws: HarnessError.self) { try client.request("player.create", [("cue", "tone"), ("rate", 2)]) }
    let plain = try client.request("player.create", [("cue", "tone")])["player"]!
    #expect(throws: HarnessError.self) { try client.request("player.set", [("player", plain), ("rate", 1.5)]) }
    let player = try client.request("player.create", [("cue", "tone"), ("enableRate", true), ("rate", 2)])["player"]!
    try client.request("player.play", [("player", player)])
    try client.waitForEvent("finished")
    let capture = try daemon.finish()
    let source = try decoded("tone-44100-vbr.mp3")
    let sourceFrames = source.count / 2
    let soundingFrames = (0..<(capture.count / 2)).filter { capture[2 * $0] != 0 || capture[2 * $0 + 1] != 0 }.count
    #expect(abs(soundingFrames - sourceFrames / 2) <= 4, "\(soundingFrames) frames sounded")
    // Every other source frame, as varispeed at exactly 2 reads them.
    for f in stride(from: 100, to: 1000, by: 7) { #expect(abs(capture[2 * f] - source[4 * f]) < 1e-5) }
  }

  static func metersReportPowerInDecibels(_ start: DaemonStarter) throws {
    let (daemon, client) = try Self.start(start, "loop", "loop-48000-stereo.mp3")
    // The loop fixture is a steady sine peaking at 0.5: -6 dBFS peak, -9 dBFS RMS.
    let player = try client.request("player.create", [("cue", "loop"), ("numberOfLoops", -1), ("meteringEnabled", true)])["player"]!
    let idle = try client.request("player.get", [("player", player)])
    #expect(idle["averagePower"]?.arrayValue?.first == -160)
    try client.request("player.play", [("player", player)])
    daemon.advance(seconds: 0.15)
    let playing = try client.request("player.get", [("player", player)])
    let average = (playing["averagePower"]?.arrayValue ?? []).compactMap(\.doubleValue)
    let peak = (playing["peakPower"]?.arrayValue ?? []).compactMap(\.doubleValue)
    #expect(average.count == 2 && peak.count == 2)
    for channel in 0..<min(2, average.count, peak.count) {
      #expect(abs(average[channel] + 9.03) < 0.6, "average \(average)")
      #expect(abs(peak[channel] + 6.02) < 0.6, "peak \(peak)")
    }
    try client.request("player.set", [("player", player), ("volume", 0.5)])
    let quieter = try client.request("player.get", [("player", player)])["peakPower"]?.arrayValue?.first?.doubleValue ?? 0
    #expect(abs(quieter + 12.04) < 0.6)
  }
}
#endif
