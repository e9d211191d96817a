import CueDecoding
import CueCore
import Testing

/// Where the MP3 fixtures live (made by Tests/Fixtures/make-fixtures.sh).
func fixture(_ name: String) -> String {
  let file = #filePath
  let testsDirectory = file.split(separator: "/", omittingEmptySubsequences: false).dropLast(2).joined(separator: "/")
  return testsDirectory + "/Fixtures/" + name
}

struct FixtureExpectation: Sendable, CustomTestStringConvertible {
  var file: String
  var sourceRate: Int
  var channels: Int
  var sourceFrames: Int
  var testDescription: String { file }
}

@Suite("MP3 decoding")
struct DecoderTests {
  static let fixtures: [FixtureExpectation] = [
    .init(file: "tone-44100-stereo.mp3", sourceRate: 44100, channels: 2, sourceFrames: 5292),
    .init(file: "tone-48000-mono.mp3", sourceRate: 48000, channels: 1, sourceFrames: 5760),
    .init(file: "tone-22050-mono.mp3", sourceRate: 22050, channels: 1, sourceFrames: 2646),
    .init(file: "tone-8000-mono.mp3", sourceRate: 8000, channels: 1, sourceFrames: 2000),
    .init(file: "tone-11025-stereo.mp3", sourceRate: 11025, channels: 2, sourceFrames: 2205),
    .init(file: "tone-44100-vbr.mp3", sourceRate: 44100, channels: 2, sourceFrames: 22050),
    .init(file: "tone-44100-id3v1.mp3", sourceRate: 44100, channels: 2, sourceFrames: 5292),
    .init(file: "tone-44100-id3v2.mp3", sourceRate: 44100, channels: 2, sourceFrames: 5292),
    .init(file: "tone-44100-ape.mp3", sourceRate: 44100, channels: 2, sourceFrames: 5292),
    .init(file: "loop-48000-stereo.mp3", sourceRate: 48000, channels: 2, sourceFrames: 4800),
  ]

  @Test("gapless frame counts at the source rate and after conversion to 48 kHz", arguments: fixtures)
  func gaplessFrameCounts(_ expected: FixtureExpectation) throws {
    let cue = try MP3Decoder.decode(path: fixture(expected.file))
    #expect(cue.sourceRate == expected.sourceRate)
    #expect(cue.sourceChannels == expected.channels)
    #expect(cue.sourceFrameCount == expected.sourceFrames)
    #expect(cue.hasGaplessInfo)
    #expect(cue.warnings.isEmpty)
    // The rate conversion keeps the duration exactly: frames × 48000 / rate, rounded as libsyn123 does.
    let converted = (expected.sourceFrames * 48000 + expected.sourceRate / 2) / expected.sourceRate
    #expect(abs(cue.buffer.frameCount - converted) <= 1)
  }

  @Test func aFileAtTheOutputRateIsCopiedUnchanged() throws {
    let cue = try MP3Decoder.decode(path: fixture("loop-48000-stereo.mp3"))
    #expect(cue.buffer.frameCount == 4800)
  }

  @Test func monoIsCopiedToBothChannels() throws {
    let cue = try MP3Decoder.decode(path: fixture("tone-48000-mono.mp3"))
    let samples = cue.buffer.toArray()
    var peak: Float = 0
    for frame in 0..<cue.buffer.frameCount {
      #expect(samples[2 * frame] == samples[2 * frame + 1])
      peak = max(peak, abs(samples[2 * frame]))
    }
    #expect(peak > 0.3)
  }

  @Test func leftStaysLeft() throws {
    let cue = try MP3Decoder.decode(path: fixture("stereo-lr-44100.mp3"))
    let samples = cue.buffer.toArray()
    var leftPeak: Float = 0
    var rightPeak: Float = 0
    for frame in 0..<cue.buffer.frameCount {
      leftPeak = max(leftPeak, abs(samples[2 * frame]))
      rightPeak = max(rightPeak, abs(samples[2 * frame + 1]))
    }
    #expect(leftPeak > 0.3)
    #expect(rightPeak < 0.01)
  }

  @Test func aFileWithoutGaplessInfoLoadsWithAWarning() throws {
    let cue = try MP3Decoder.decode(path: fixture("tone-44100-notag.mp3"))
    #expect(!cue.hasGaplessInfo)
    #expect(cue.sourceFrameCount == 6912)
    #expect(cue.warnings.contains { $0.contains("gapless") })
  }

  /// A LAME tag whose encoder delay and padding cover every sample would leave nothing after the
  /// gapless trim: the file plays untrimmed (what the untagged file would give), with a warning.
  @Test func aGaplessTrimThatWouldLeaveNothingPlaysUntrimmed() throws {
    let cue = try MP3Decoder.decode(path: fixture("gapless-trims-everything.mp3"))
    let original = try MP3Decoder.decode(path: fixture("tone-48000-mono.mp3"))
    #expect(cue.sourceFrameCount > original.sourceFrameCount)  // delay and padding stay in
    #expect(cue.sourceFrameCount % 1152 == 0, "\(cue.sourceFrameCount)")  // whole MPEG frames
    #expect(!cue.hasGaplessInfo)
    #expect(cue.warnings.contains { $0.contains("trims away every sample; it plays untrimmed") }, "\(cue.warnings)")
    #expect(cue.buffer.toArray().contains { $0 != 0 })
  }

  @Test func aTruncatedFileLoadsWhatItHasWithAWarning() throws {
    let cue = try MP3Decoder.decode(path: fixture("truncated.mp3"))
    #expect(cue.sourceFrameCount < 5292)
    #expect(cue.warnings.contains { $0.contains("truncated") })
  }

  @Test(
    "non-MP3 input is rejected with a reason",
    arguments: [
      ("empty.mp3", "empty"),
      ("not-audio.mp3", "not an MP3"),
      ("random.mp3", "not an MP3"),
    ])
  func nonMP3InputIsRejected(_ file: String, _ reasonFragment: String) {
    let path = fixture(file)
    #expect {
      _ = try MP3Decoder.decode(path: path)
    } throws: { error in
      guard let error = error as? DecodeError else { return false }
      return error.path == path && error.reason.contains(reasonFragment)
    }
  }

  @Test func aDirectoryIsRejected() {
    #expect(throws: DecodeError.self) { _ = try MP3Decoder.decode(path: fixture("")) }
  }

  @Test func aMissingFileIsRejectedWithItsPath() {
    let path = fixture("no-such-file.mp3")
    #expect {
      _ = try MP3Decoder.decode(path: path)
    } throws: { error in
      (error as? DecodeError)?.description.contains("no-such-file.mp3") == true
    }
  }

  @Test func theLengthLimitIsEnforced() {
    #expect {
      _ = try MP3Decoder.decode(path: fixture("tone-44100-vbr.mp3"), options: DecodeOptions(maximumSeconds: 0.1))
    } throws: { error in
      (error as? DecodeError)?.reason.contains("limit") == true
    }
  }

  @Test func anID3TagAloneIsRejected() {
    var bytes: [UInt8] = Array("ID3".utf8) + [3, 0, 0, 0, 0, 0, 10]
    bytes += [UInt8](repeating: 0, count: 10)
    #expect {
      _ = try MP3Decoder.decode(bytes: bytes, name: "tag-only.mp3")
    } throws: { error in
      (error as? DecodeError)?.reason.contains("ID3") == true
    }
  }
}
