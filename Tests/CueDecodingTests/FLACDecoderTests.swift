import CueCore
import CueDecoding
import CuePosix
import Testing

/// FLAC through libFLAC (FLACDecoder): the fixtures (Tests/Fixtures/make-fixtures.sh) and streams
/// written here (FLACWriter), each compared sample for sample with what went in.
@Suite("Decoding FLAC with libFLAC")
struct FLACDecoderTests {
  static func samples(_ cue: DecodedCue) -> [Float] { cue.buffer.toArray() }

  /// At the file's own rate: no conversion, the samples as decoded.
  static func native(_ rate: Int) -> DecodeOptions { DecodeOptions(outputRate: rate) }

  static func decode(_ bytes: [UInt8], rate: Int = 48000, name: String = "made.flac") throws -> DecodedCue {
    try AudioFileDecoder.decode(bytes: bytes, name: name, options: native(rate))
  }

  /// A `bits`-bit sample as a float: s / 2^(bits-1), computed in Double and rounded once.
  static func float(_ sample: Int32, bits: Int) -> Float { Float(Double(sample) / Double(Int64(1) << (bits - 1))) }

  /// Expects `bytes` to be refused with a reason that names the file and contains `fragment`.
  func expectRefused(
    _ bytes: [UInt8], _ fragment: String, options: DecodeOptions = DecodeOptions(), sourceLocation: SourceLocation = #_sourceLocation
  ) {
    do {
      let cue = try AudioFileDecoder.decode(bytes: bytes, name: "bad.flac", options: options)
      Issue.record("loaded (\(cue.sourceFrameCount) frames, \(cue.warnings)); expected a refusal with \(fragment)", sourceLocation: sourceLocation)
    } catch {
      #expect(error.path == "bad.flac" && error.reason.contains(fragment), "\(error)", sourceLocation: sourceLocation)
    }
  }

  @Test func a32BitFLACDecodesToExactlyTheSamplesOfThe16BitFileItWasWidenedFrom() throws {
    let wide = try AudioFileDecoder.decode(path: fixture("tone-44100-32bit.flac"), options: Self.native(44100))
    let narrow = try AudioFileDecoder.decode(path: fixture("tone-44100-stereo.flac"), options: Self.native(44100))
    #expect(wide.format == "FLAC (32-bit)" && narrow.format == "FLAC (16-bit)")
    #expect(wide.sourceRate == 44100 && wide.sourceChannels == 2 && wide.sourceFrameCount == 5292 && wide.hasGaplessInfo)
    #expect(wide.warnings.isEmpty && narrow.warnings.isEmpty, "\(wide.warnings) \(narrow.warnings)")
    #expect(Self.samples(wide) == Self.samples(narrow))
    // The 16-bit tone, exactly: every sample a whole number of 1/32768ths, peak 0.5.
    let values = Self.samples(narrow)
    #expect(values.count == 5292 * 2 && values.allSatisfy { ($0 * 32768).rounded() == $0 * 32768 })
    #expect(abs((values.map(abs).max() ?? 0) - 0.5) < 0.001)
    // Converted to 48 kHz like any cue: the same cue as the 16-bit file's.
    let converted = try AudioFileDecoder.decode(path: fixture("tone-44100-32bit.flac"))
    let sixteen = try AudioFileDecoder.decode(path: fixture("tone-44100-stereo.flac"))
    #expect(converted.buffer.frameCount == 5760 && Self.samples(converted) == Self.samples(sixteen))
  }

  /// Every sample size FLAC has, its extremes included, mono and stereo, to the bit.
  @Test(arguments: [4, 8, 12, 16, 20, 24, 32])
  func everyBitDepthDecodesToItsSamplesExactly(bits: Int) throws {
    let top = Int64(1) << (bits - 1)
    let edges: [Int64] = [-top, -top + 1, -1, 0, 1, top / 3, -top / 5, top - 2, top - 1]
    let left = (0..<300).map { Int32(max(-top, edges[$0 % edges.count] - Int64($0 % 2))) }
    let right = Array(left.reversed())
    let stereo = try Self.decode(FLACWriter.stream([left, right], bits: bits, blocks: [100]))
    #expect(stereo.format == "FLAC (\(bits)-bit)" && stereo.sourceChannels == 2 && stereo.sourceFrameCount == 300)
    #expect(Self.samples(stereo) == zip(left, right).flatMap { [Self.float($0, bits: bits), Self.float($1, bits: bits)] })
    #expect(Self.samples(stereo).first == -1)
    let mono = try Self.decode(FLACWriter.stream([left], bits: bits))
    #expect(mono.format == "FLAC (\(bits)-bit)" && mono.sourceChannels == 1 && mono.warnings.isEmpty)
    // Mono plays in both channels.
    #expect(Self.samples(mono) == left.flatMap { [Self.float($0, bits: bits), Self.float($0, bits: bits)] })
  }

  /// The 16-bit fixtures decode as they did through libsndfile: s / 32768, the WAV's samples.
  @Test func the16BitFixturesDecodeToTheSamplesOfTheirWave() throws {
    let flac = try AudioFileDecoder.decode(path: fixture("tone-48000-mono.flac"))
    let wave = try AudioFileDecoder.decode(path: fixture("tone-48000-mono.wav"))
    #expect(flac.format == "FLAC (16-bit)" && flac.sourceFrameCount == 5760 && flac.warnings.isEmpty)
    #expect(Self.samples(flac) == Self.samples(wave))
  }

  /// Blocks shorter than STREAMINFO's minimum: every sample, in order, each frame where it says it starts.
  @Test func blocksShorterThanTheStreamsMinimumDecodeExactly() throws {
    let short = try AudioFileDecoder.decode(path: fixture("short-blocks.flac"))
    let wave = try AudioFileDecoder.decode(path: fixture("tone-48000-mono.wav"))
    #expect(short.format == "FLAC (16-bit)" && short.sourceFrameCount == 5760 && short.warnings.isEmpty, "\(short.warnings)")
    #expect(Self.samples(short) == Self.samples(wave))
    // Blocks of one, two and fifteen samples among long ones, under a header that says 4096 to 4096.
    let tone = (0..<5000).map { Int32(truncatingIfNeeded: ($0 * 7919) % 65536 - 32768) }
    let made = try Self.decode(FLACWriter.stream([tone], bits: 16, blocks: [1, 2, 15, 4096, 3], minBlock: 4096, maxBlock: 4096))
    #expect(Self.samples(made) == tone.flatMap { [Self.float($0, bits: 16), Self.float($0, bits: 16)] })
  }

  @Test(arguments: [8000, 11025, 44100, 96000, 192_000, 384_000])
  func everyAcceptedRateDecodes(rate: Int) throws {
    let tone = (0..<480).map { Int32($0 * 64 - 15000) }
    let decoded = try AudioFileDecoder.decode(bytes: FLACWriter.stream([tone], rate: rate, bits: 16), name: "rate.flac")
    #expect(decoded.sourceRate == rate && decoded.sourceFrameCount == 480)
    #expect(abs(decoded.buffer.frameCount - 480 * 48000 / rate) <= 1)
  }

  @Test func ratesOutsideTheRangeAndMoreThanTwoChannelsAreRefusedAsForEveryFormat() throws {
    let tone = (0..<64).map { Int32($0) }
    expectRefused(FLACWriter.stream([tone], rate: 7999, bits: 16), "its sample rate, 7999 Hz, is outside 8000…384000 Hz")
    expectRefused(FLACWriter.stream([tone], rate: 384_001, bits: 16), "its sample rate, 384001 Hz, is outside 8000…384000 Hz")
    // Six channels: the words six-channels.wav gets from the libsndfile path.
    let six = "it has 6 channels; cues are mono or stereo (mix it down first)"
    expectRefused(FLACWriter.stream(Array(repeating: tone, count: 6), bits: 16), six)
    #expect {
      try AudioFileDecoder.decode(path: fixture("six-channels.wav"))
    } throws: { error in
      (error as? DecodeError)?.reason == six
    }
    for channels in [3, 8] {
      expectRefused(FLACWriter.stream(Array(repeating: tone, count: channels), bits: 24), "it has \(channels) channels")
    }
  }

  @Test func aRateOrChannelCountThatChangesMidFileIsRefused() {
    let tone = (0..<256).map { Int32($0 * 100) }
    let header = FLACWriter.header(rate: 48000, channels: 1, bits: 16, total: 512)
    let first = FLACWriter.frame([tone], bits: 16, start: 0, rate: 48000)
    expectRefused(
      header + first + FLACWriter.frame([tone], bits: 16, start: 256, rate: 44100),
      "its sample rate changes mid-file (48000 Hz, then 44100 Hz)")
    expectRefused(header + first + FLACWriter.frame([tone, tone], bits: 16, start: 256), "its channel count changes mid-file (1, then 2)")
  }

  @Test func aTruncatedFLACPlaysWhatItHoldsAndSaysSo() throws {
    let cut = try AudioFileDecoder.decode(path: fixture("truncated.flac"), options: Self.native(44100))
    let whole = try AudioFileDecoder.decode(path: fixture("tone-44100-stereo.flac"), options: Self.native(44100))
    #expect(cut.sourceFrameCount == 4096 && cut.warnings == ["the file is truncated: 4096 of 5292 frames decoded"], "\(cut.warnings)")
    #expect(Self.samples(cut) == Array(Self.samples(whole).prefix(4096 * 2)))
  }

  @Test func aFLACWithNoAudioIsRefusedWithAReason() throws {
    let bytes = try Files.read(path: fixture("tone-44100-32bit.flac"), limit: 1 << 20)
    // The magic alone, STREAMINFO cut short, STREAMINFO and no frame, garbage after the magic.
    for broken in [Array(bytes.prefix(4)), Array(bytes.prefix(30)), Array(bytes.prefix(42)), Array("fLaC".utf8) + [UInt8](repeating: 0x5A, count: 400)] {
      expectRefused(broken, "it decodes to no audio at all")
    }
  }

  /// Every prefix of a file, and every byte of it inverted: a cue or a reason, never a crash, and
  /// never a sample that is not a number or past full scale.
  @Test func everyCutAndEveryDamagedByteDecodesOrIsRefusedNeverCrashes() throws {
    let bytes = try Files.read(path: fixture("tone-44100-32bit.flac"), limit: 1 << 20)
    var variants: [[UInt8]] = (0..<bytes.count).map { Array(bytes.prefix($0)) }
    for i in 0..<bytes.count {
      var damaged = bytes
      damaged[i] ^= 0xFF
      variants.append(damaged)
    }
    var decoded = 0
    for variant in variants {
      guard let cue = try? AudioFileDecoder.decode(bytes: variant, name: "x.flac", options: Self.native(44100)) else { continue }
      decoded += 1
      #expect(cue.sourceFrameCount > 0 && cue.sourceFrameCount <= 4 * 5292)
      #expect(Self.samples(cue).allSatisfy { $0.isFinite && abs($0) <= 1 })
    }
    #expect(decoded > bytes.count, "\(decoded) of \(variants.count) decoded")
  }

  @Test func aFrameThatFailsItsChecksumIsSkippedWithAWarningAndTheRestPlays() throws {
    // Samples from 0 to 29999: no 0xFF byte, so nothing in the frames looks like a frame's sync code.
    let tone = (0..<3000).map { Int32(($0 * 331) % 30000) }
    let header = FLACWriter.header(rate: 48000, channels: 1, bits: 16, total: 3000)
    let frames = (0..<3).map { FLACWriter.frame([Array(tone[($0 * 1000)..<($0 * 1000 + 1000)])], bits: 16, start: $0 * 1000) }
    var middle = frames[1]
    middle[middle.count / 2] ^= 0x40  // a sample bit: the header holds, the checksum fails
    let cue = try Self.decode(header + frames[0] + middle + frames[2])
    #expect(cue.warnings.contains { $0.hasPrefix("it is damaged: libFLAC skipped a frame that fails its checksum") }, "\(cue.warnings)")
    // libFLAC keeps the stream's timing: the frame it dropped is silence, the one before it exact.
    // (libFLAC 1.4.2 silences the frame after the gap too: its gap filling overwrites that frame's
    // samples, which 1.4.3 fixed.)
    let got = Self.samples(cue)
    let expected = tone.map { Self.float($0, bits: 16) }.flatMap { [$0, $0] }
    #expect(got.count == 3000 * 2)
    #expect(got.prefix(2000) == expected.prefix(2000), "the frame before the damaged one is not exact")
    #expect(got[2000..<4000].allSatisfy { $0 == 0 }, "the damaged frame is not silence")
    let after = got.suffix(2000)
    #expect(after.elementsEqual(expected.suffix(2000)) || after.allSatisfy { $0 == 0 }, "the frame after it is neither itself nor silence")
  }

  @Test func bytesAfterTheLastFrameAreIgnoredWithAWarning() throws {
    let tone = (0..<600).map { Int32($0 * 50 - 15000) }
    let tag = Array("TAG".utf8) + [UInt8](repeating: 0x20, count: 125)  // an ID3v1 tag at the end
    let cue = try Self.decode(FLACWriter.stream([tone], bits: 16) + tag)
    #expect(Self.samples(cue) == tone.flatMap { [Self.float($0, bits: 16), Self.float($0, bits: 16)] })
    #expect(cue.warnings.count == 1 && cue.warnings[0].hasPrefix("bytes after its last frame are not FLAC"), "\(cue.warnings)")
  }

  @Test func aFLACFileIsKnownByItsContentsAfterAnID3TagAndWhateverItsName() throws {
    let tone = (0..<600).map { Int32($0 * 50 - 15000) }
    let plain = FLACWriter.stream([tone], bits: 16)
    let id3: [UInt8] = Array("ID3".utf8) + [3, 0, 0, 0, 0, 0, 20] + [UInt8](repeating: 0, count: 20)
    #expect(FLACDecoder.sniff(plain) && FLACDecoder.sniff(id3 + plain) && !FLACDecoder.sniff(Array(plain.dropFirst())))
    let tagged = try Self.decode(id3 + plain, name: "tagged.mp3")
    let untagged = try Self.decode(plain)
    #expect(tagged.format == "FLAC (16-bit)" && Self.samples(tagged) == Self.samples(untagged))
  }

  @Test func aFLACLongerThanTheLimitIsRefused() {
    let tone = [Int32](repeating: 1000, count: 4800)
    var options = DecodeOptions()
    options.maximumSeconds = 0.05
    // STREAMINFO gives the length: refused before a frame is decoded.
    expectRefused(FLACWriter.stream([tone], bits: 16), "it is 0.1 s long; the longest cue is 0.05 s", options: options)
    // An unknown length (0): refused once the frames pass the limit.
    expectRefused(FLACWriter.stream([tone], bits: 16, blocks: [1000], total: 0), "it is longer than 0.05 s, the longest cue", options: options)
  }
}
