import CueDecoding
import CueCore
import CuePosix
import Testing

/// Ogg Vorbis and Opus and WAV through libsndfile, and FLAC beside them (through libFLAC:
/// FLACDecoderTests); the fixtures: Tests/Fixtures/make-fixtures.sh.
@Suite("Decoding Ogg, WAV and FLAC")
struct SoundFileDecoderTests {
  /// The 16-bit samples of a PCM WAV file, read from its `data` chunk.
  static func pcm16(_ path: String) throws -> [Int16] {
    let bytes = try Files.read(path: path, limit: 1 << 20)
    var offset = 12
    while offset + 8 <= bytes.count {
      let id = String(decoding: bytes[offset..<(offset + 4)], as: UTF8.self)
      let size = Int(bytes[offset + 4]) | Int(bytes[offset + 5]) << 8 | Int(bytes[offset + 6]) << 16 | Int(bytes[offset + 7]) << 24
      if id == "data" {
        return stride(from: offset + 8, to: offset + 8 + size, by: 2).map { Int16(bitPattern: UInt16(bytes[$0]) | UInt16(bytes[$0 + 1]) << 8) }
      }
      offset += 8 + size + (size & 1)
    }
    throw DecodeError(path: path, reason: "no data chunk")
  }

  static func samples(_ cue: DecodedCue) -> [Float] { cue.buffer.toArray() }

  @Test func aPCMWaveDecodesToItsSamplesExactly() throws {
    let path = fixture("tone-48000-mono.wav")
    let decoded = try AudioFileDecoder.decode(path: path)
    #expect(decoded.format == "WAV (PCM 16-bit)" && decoded.sourceRate == 48000 && decoded.sourceChannels == 1)
    #expect(decoded.sourceFrameCount == 5760 && decoded.buffer.frameCount == 5760 && decoded.warnings.isEmpty)
    // Mono goes to both channels; a 16-bit sample s is s / 32768.
    let expected = try Self.pcm16(path).flatMap { [Float($0) / 32768, Float($0) / 32768] }
    #expect(Self.samples(decoded) == expected)
  }

  @Test func aFLACFileDecodesToTheSameSamplesAsTheWaveItWasMadeFrom() throws {
    let flac = try AudioFileDecoder.decode(path: fixture("tone-48000-mono.flac"))
    let wave = try AudioFileDecoder.decode(path: fixture("tone-48000-mono.wav"))
    #expect(flac.format == "FLAC (16-bit)")
    #expect(Self.samples(flac) == Self.samples(wave))
  }

  @Test(
    "each format at its own rate, converted to the output rate",
    arguments: [
      ("tone-44100-stereo.flac", "FLAC (16-bit)", 44100, 2, 5292), ("tone-48000-stereo.ogg", "Ogg Vorbis", 48000, 2, 4800),
      ("tone-48000-stereo.opus", "Ogg Opus", 48000, 2, 4800),
    ])
  func formats(_ file: String, _ format: String, _ rate: Int, _ channels: Int, _ frames: Int) throws {
    let decoded = try AudioFileDecoder.decode(path: fixture(file))
    #expect(decoded.format == format && decoded.sourceRate == rate && decoded.sourceChannels == channels)
    // Vorbis and Opus trim their encoder delay and padding: the length is the source's, to the frame.
    #expect(decoded.sourceFrameCount == frames)
    #expect(abs(decoded.buffer.frameCount - frames * 48000 / rate) <= 1)
    // The tone is there, at about its level (peak 0.5; lossy codecs wobble a little).
    let peak = Self.samples(decoded).map(abs).max() ?? 0
    #expect(peak > 0.4 && peak < 0.6, "peak \(peak)")
  }

  @Test func theDesktopThemesOwnFilesDecode() throws {
    let bell = "/usr/share/sounds/freedesktop/stereo/bell.oga"
    try #require(Files.kind(of: bell) == .regular, "sound-theme-freedesktop is not installed (scripts/install-deps.sh)")
    let decoded = try AudioFileDecoder.decode(path: bell)
    #expect(decoded.format == "Ogg Vorbis" && decoded.buffer.frameCount > 4800 && decoded.warnings.isEmpty)
    #expect((Self.samples(decoded).map(abs).max() ?? 0) > 0.05)
  }

  @Test(
    "bad files get a reason a person can act on, never a crash",
    arguments: [
      ("six-channels.wav", "6 channels; cues are mono or stereo"), ("empty.mp3", "the file is empty"),
      ("not-audio.mp3", "it is not an MP3, Ogg, WAV or FLAC file"),
    ])
  func badFiles(_ file: String, _ reason: String) {
    #expect {
      try AudioFileDecoder.decode(path: fixture(file))
    } throws: { error in
      (error as? DecodeError)?.reason.contains(reason) == true
    }
  }

  @Test func anOggCutInsideItsHeadersIsRefusedWithLibsndfilesReason() throws {
    // truncated.ogg keeps the first 3000 of 4731 bytes: the Vorbis setup header is cut.
    #expect {
      try AudioFileDecoder.decode(path: fixture("truncated.ogg"))
    } throws: { error in
      (error as? DecodeError)?.reason.hasPrefix("libsndfile cannot read it as Ogg") == true
    }
    // Garbage after the magic, and the magic alone.
    for bytes in [Array("OggS".utf8) + [UInt8](repeating: 0x5A, count: 400), Array("fLaC".utf8), Array("RIFF\u{0}\u{0}\u{0}\u{0}WAVE".utf8)] {
      #expect(throws: DecodeError.self) { try AudioFileDecoder.decode(bytes: bytes, name: "hostile") }
    }
  }

  /// A float WAV, one channel at 48 kHz, of `samples` (little-endian IEEE 754).
  static func floatWave(_ samples: [Float]) -> [UInt8] {
    func le32(_ v: UInt32) -> [UInt8] { [UInt8(v & 0xff), UInt8(v >> 8 & 0xff), UInt8(v >> 16 & 0xff), UInt8(v >> 24)] }
    func le16(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xff), UInt8(v >> 8)] }
    let data = samples.flatMap { le32($0.bitPattern) }
    let format = le16(3) + le16(1) + le32(48000) + le32(192_000) + le16(4) + le16(32)
    let body = Array("WAVE".utf8) + Array("fmt ".utf8) + le32(16) + format + Array("data".utf8) + le32(UInt32(data.count)) + data
    return Array("RIFF".utf8) + le32(UInt32(body.count)) + body
  }

  @Test func notANumberInAFloatWaveIsSilencedNotMixed() throws {
    let decoded = try AudioFileDecoder.decode(bytes: Self.floatWave([0.5, .nan, .infinity, -0.25, 3e38, -1.5]), name: "nan.wav")
    #expect(decoded.format == "WAV (float)")
    // NaN is silence; infinity and absurd values are full scale, as a converter to PCM would clip them.
    #expect(Self.samples(decoded) == [0.5, 0.5, 0, 0, 1, 1, -0.25, -0.25, 1, 1, -1, -1])
    #expect(decoded.warnings.contains { $0.contains("2 frames held samples that are not finite") })
    #expect(decoded.warnings.contains { $0.contains("6 samples beyond full scale were clipped") })
    // At another rate the conversion sees only clipped samples: every output sample is a number.
    let converted = try AudioFileDecoder.decode(bytes: try Files.read(path: fixture("float-nan-10112.wav"), limit: 1 << 20), name: "crash")
    let allNumbers = converted.buffer.toArray().allSatisfy { $0.isFinite }
    #expect(allNumbers)
  }

  @Test func aFileLongerThanTheLimitIsRefusedBeforeItIsDecoded() {
    var options = DecodeOptions()
    options.maximumSeconds = 0.05
    #expect {
      try AudioFileDecoder.decode(path: fixture("tone-48000-mono.wav"), options: options)
    } throws: { error in
      (error as? DecodeError)?.reason.contains("the longest cue is 0.05 s") == true
    }
  }

  /// A WAV file's bytes: `format` chunk body, `data`, in little-endian RIFF or big-endian RIFX.
  static func wave(format: [UInt8], data: [UInt8], bigEndian: Bool = false) -> [UInt8] {
    func u32(_ v: Int) -> [UInt8] {
      let le = [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24 & 0xFF)]
      return bigEndian ? le.reversed() : le
    }
    let body = Array("WAVE".utf8) + Array("fmt ".utf8) + u32(format.count) + format + Array("data".utf8) + u32(data.count) + data
    return Array((bigEndian ? "RIFX" : "RIFF").utf8) + u32(body.count) + body
  }

  static func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
  static func le32(_ v: Int) -> [UInt8] { le16(v & 0xFFFF) + le16(v >> 16) }

  /// A big-endian WAV (RIFX) plays, named as what it is, with the same samples as its RIFF twin.
  @Test func aBigEndianRIFXWavePlaysAndSaysWhatItIs() throws {
    let samples: [Int16] = (0..<480).map { Int16(truncatingIfNeeded: ($0 * 997) % 20000 - 10000) }
    // PCM, mono, 48 kHz, 2 bytes a frame, 16 bits: the fmt body, each field in the file's byte order.
    func format(bigEndian: Bool) -> [UInt8] {
      let fields = [(1, 2), (1, 2), (48000, 4), (96000, 4), (2, 2), (16, 2)]
      return fields.flatMap { value, size -> [UInt8] in
        let le = size == 2 ? Self.le16(value) : Self.le32(value)
        return bigEndian ? le.reversed() : le
      }
    }
    let littleData = samples.flatMap { Self.le16(Int(UInt16(bitPattern: $0))) }
    let bigData = samples.flatMap { Self.le16(Int(UInt16(bitPattern: $0))).reversed() }
    let rifx = try AudioFileDecoder.decode(bytes: Self.wave(format: format(bigEndian: true), data: bigData, bigEndian: true), name: "be.wav")
    let riff = try AudioFileDecoder.decode(bytes: Self.wave(format: format(bigEndian: false), data: littleData), name: "le.wav")
    #expect(rifx.format == "WAV (PCM 16-bit, big-endian RIFX)")
    #expect(riff.format == "WAV (PCM 16-bit)")
    #expect(rifx.sourceFrameCount == 480 && Self.samples(rifx) == Self.samples(riff))
  }

  /// WAVE_FORMAT_EXTENSIBLE (what sox writes for 24-bit) is listed as the plain header is.
  @Test func anExtensibleHeaderNamesItsSampleFormat() throws {
    let frames = 240
    let data = (0..<frames).flatMap { i -> [UInt8] in
      let v = (i * 1234) % 0x7FFFFF
      return [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF)]
    }
    // fmt: WAVE_FORMAT_EXTENSIBLE (0xFFFE), mono, 48 kHz, 3 bytes a frame, 24 bits; cbSize 22,
    // valid bits 24, channel mask FC, sub-format KSDATAFORMAT_SUBTYPE_PCM.
    let guid: [UInt8] = [0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71]
    let extensible = Self.le16(0xFFFE) + Self.le16(1) + Self.le32(48000) + Self.le32(144000) + Self.le16(3) + Self.le16(24)
      + Self.le16(22) + Self.le16(24) + Self.le32(4) + guid
    let plain = Self.le16(1) + Self.le16(1) + Self.le32(48000) + Self.le32(144000) + Self.le16(3) + Self.le16(24)
    let wavex = try AudioFileDecoder.decode(bytes: Self.wave(format: extensible, data: data), name: "x.wav")
    let wav = try AudioFileDecoder.decode(bytes: Self.wave(format: plain, data: data), name: "p.wav")
    #expect(wav.format == "WAV (PCM 24-bit)")
    #expect(wavex.format == "WAV (PCM 24-bit)")
    #expect(Self.samples(wavex) == Self.samples(wav))
  }
}
