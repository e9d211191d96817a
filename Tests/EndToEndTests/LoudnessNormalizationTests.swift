import CueDecoding
import DaemonTestSupport
import FoundationEssentials
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `loudness-normalize` through the real cued: what the device gets (an ALSA `file` PCM, as
/// AlsaCaptureTests), measured again there.
@Suite("Loudness normalisation (captured)", .serialized)
struct LoudnessNormalizationTests {
  /// 1.5 s of 1 kHz at -20 dBFS: whole 400 ms blocks, about -20 LUFS (Tests/Fixtures/README.md).
  static let sine = "sine-1k-20dbfs-48000.mp3"

  struct Played {
    /// The decoded cue's measurement, as cued makes it at load.
    var cue: LoudnessMeasurement
    /// The first play of it as the device got it.
    var captured: LoudnessMeasurement
    var log: String
  }

  /// Plays `fixture` `times` times through the capture PCM, cued started with `extra`; measures the
  /// decoded cue and the first copy of it in the capture.
  static func play(_ extra: [String], fixture: String = sine, times: Int = 1, config: String? = nil) throws -> Played {
    let dir = Harness.temporaryDirectory()
    var extra = extra
    if let config {
      try config.write(toFile: dir + "/cued.toml", atomically: true, encoding: .utf8)
      extra += ["--config", dir + "/cued.toml"]
    }
    let daemon = try AlsaCaptureTests.startDaemon(in: dir, cues: ["cue": fixture], extra: extra)
    defer { daemon.stop() }
    for _ in 0..<times { #expect(try daemon.cuectl(["play", "cue", "--wait"]).status == 0) }
    try daemon.waitForDevice("closed")
    let captured = try readFloats(dir + "/out.raw")
    let decoded = try MP3Decoder.decode(path: Harness.fixture(fixture)).buffer.toArray()
    // The cue's first copy: from its first sound, as long as the cue (a gain keeps zeros zero).
    let firstDecoded = try #require(decoded.firstIndex { $0 != 0 })
    let firstCaptured = try #require(captured.firstIndex { $0 != 0 }, "the capture is silent")
    let offset = firstCaptured - firstDecoded
    try #require(offset >= 0 && offset % 2 == 0 && offset + decoded.count <= captured.count)
    let copy = Array(captured[offset..<(offset + decoded.count)])
    let cue = try #require(decoded.withUnsafeBufferPointer { Loudness.measure(interleavedStereo: $0, sampleRate: 48000) })
    let heard = try #require(copy.withUnsafeBufferPointer { Loudness.measure(interleavedStereo: $0, sampleRate: 48000) })
    return Played(cue: cue, captured: heard, log: daemon.log)
  }

  @Test func aQuieterCueIsRaisedToTheTarget() throws {
    let played = try Self.play(["--loudness-normalize", "--loudness-target", "-14"])
    let cue = try #require(played.cue.integratedLUFS)
    #expect(cue < -19, "the fixture is quieter than the target: \(cue) LUFS")
    let heard = try #require(played.captured.integratedLUFS)
    #expect(abs(heard - -14) <= 0.5, "captured \(heard) LUFS, target -14")
    #expect(!played.log.contains("would need"))
  }

  @Test func aLouderCueIsLoweredToTheTarget() throws {
    let played = try Self.play(["--loudness-normalize", "--loudness-target", "-30"])
    let heard = try #require(played.captured.integratedLUFS)
    #expect(abs(heard - -30) <= 0.5, "captured \(heard) LUFS, target -30")
    #expect(played.captured.samplePeak < played.cue.samplePeak)
  }

  /// Set in the config file this time. A 0.12 s tone at -6 dBFS measures about -12 LUFS (one
  /// 400 ms block): it would need about +11 dB to reach -1 LUFS, which would put its peak near +5
  /// dBFS. It gets only what brings its peak to 0 dBFS, and the log says so once.
  @Test func theGainStopsWhereThePeakWouldPassZeroDecibels() throws {
    let played = try Self.play([], fixture: "tone-48000-mono.mp3", times: 2, config: "loudness-normalize = true\nloudness-target = -1\n")
    let cue = try #require(played.cue.integratedLUFS)
    let cuePeak = try #require(played.cue.samplePeakDBFS)
    let heard = try #require(played.captured.integratedLUFS)
    // The capped gain is -peak dB: the cue's loudness plus that (the mixer's soft limiter above
    // 0.9 takes a little off the crests).
    #expect(abs(heard - (cue - cuePeak)) <= 0.5, "captured \(heard) LUFS, expected \(cue - cuePeak)")
    #expect(heard < -2, "short of the -1 LUFS target")
    #expect(played.captured.samplePeak <= 1.0 && played.captured.samplePeak > 0.9, "peak \(played.captured.samplePeak)")
    #expect(played.log.components(separatedBy: "would need").count - 1 == 1, "\(played.log)")
  }
}
