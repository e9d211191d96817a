import CSndfile
import CueCore
import CuePosix

/// Decodes Ogg and WAV files with libsndfile: Ogg Vorbis and Ogg Opus (`.oga`, `.ogg`, `.opus`:
/// what desktop sound themes ship) and WAV. One library for both, maintained and in every
/// distribution, reading from memory (`sf_open_virtual`), so the file is read once through one
/// descriptor exactly as MP3s are (`MP3Decoder.readFile`). MP3 stays on libmpg123 for its gapless
/// trimming; FLAC goes to libFLAC itself (`FLACDecoder`: libsndfile 1.2 refuses 32-bit FLAC and
/// fails a whole file on any frame libFLAC skips). Samples come out as floats normalised to ±1 (PCM16 `s` is
/// `s / 32768` exactly), at the file's rate, then go through the same libsyn123 rate conversion.
/// Thread-safe: each call has its own handle. Known cost: libsndfile 1.2.0 leaks 5.7 KB when it
/// refuses an Ogg Vorbis file whose headers are cut short (scripts/lsan.supp says more).
public enum SoundFileDecoder {
  /// The container a file's first bytes announce, if libsndfile is the decoder for it.
  public enum Container: String, Sendable {
    case ogg = "Ogg"
    case wav = "WAV"
  }

  /// Recognises Ogg (`OggS`) and RIFF/RIFX/RF64 WAVE by their magic numbers.
  public static func sniff(_ bytes: [UInt8]) -> Container? {
    func at(_ offset: Int, _ text: String) -> Bool {
      let magic = Array(text.utf8)
      return bytes.count >= offset + magic.count && Array(bytes[offset..<(offset + magic.count)]) == magic
    }
    if at(0, "OggS") { return .ogg }
    // RIFX is a big-endian RIFF (what some DAWs and Mac tools write); libsndfile reads it.
    if (at(0, "RIFF") || at(0, "RIFX") || at(0, "RF64")) && at(8, "WAVE") { return .wav }
    return nil
  }

  /// Decodes a file held in memory whose container `sniff` recognised; `name` is used in messages.
  public static func decode(bytes: [UInt8], name: String, options: DecodeOptions = DecodeOptions()) throws(DecodeError) -> DecodedCue {
    guard let container = sniff(bytes) else {
      throw DecodeError(path: name, reason: "it is not an Ogg or WAV file")
    }
    var why = [CChar](repeating: 0, count: 512)
    guard cued_sf_load(&why, why.count) == 0 else {
      let reason = String(decoding: why.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
      throw DecodeError(
        path: name,
        reason: "it is \(container.rawValue), which needs libsndfile, and libsndfile cannot be loaded (\(reason)): install the package libsndfile1")
    }
    let source = MemorySource(bytes)
    var info = SF_INFO()
    var io = SF_VIRTUAL_IO(
      get_filelen: { MemorySource.from($0).length },
      seek: { offset, whence, data in MemorySource.from(data).seek(offset, whence) },
      read: { pointer, count, data in MemorySource.from(data).read(into: pointer, count) },
      write: { _, _, _ in 0 },
      tell: { MemorySource.from($0).position })
    // libsndfile holds an unretained pointer to `source` until sf_close: it is kept alive until then.
    defer { withExtendedLifetime(source) {} }
    guard let handle = cued_sf_open_virtual(&io, Int32(SFM_READ), &info, Unmanaged.passUnretained(source).toOpaque()) else {
      throw DecodeError(path: name, reason: "libsndfile cannot read it as \(container.rawValue): \(String(cString: cued_sf_strerror(nil)))")
    }
    defer { cued_sf_close(handle) }
    let format = formatName(info.format)
    guard info.samplerate >= 8000, info.samplerate <= 384_000 else {
      throw DecodeError(path: name, reason: "its sample rate, \(info.samplerate) Hz, is outside 8000…384000 Hz")
    }
    guard info.channels == 1 || info.channels == 2 else {
      throw DecodeError(path: name, reason: "it has \(info.channels) channels; cues are mono or stereo (mix it down first)")
    }
    let rate = Int(info.samplerate)
    let channels = Int(info.channels)
    let maximumFrames = Int(options.maximumSeconds * Double(rate))
    if info.frames > 0, info.frames < Int64(Int32.max), Int(info.frames) > maximumFrames {
      let seconds = Double(info.frames) / Double(rate)
      throw DecodeError(
        path: name,
        reason: "it is \(MP3Decoder.formatSeconds((seconds * 10).rounded() / 10)) s long; the longest cue is \(MP3Decoder.formatSeconds(options.maximumSeconds)) s")
    }
    let samples = GrowingSamples()
    var block = [Float](repeating: 0, count: 4096 * channels)
    var frames = 0
    while true {
      let got = block.withUnsafeMutableBufferPointer { Int(cued_sf_readf_float(handle, $0.baseAddress, 4096)) }
      if got <= 0 { break }
      block.withUnsafeBufferPointer { buffer in
        if channels == 2 {
          samples.append(buffer.baseAddress!, count: got * 2)
        } else {
          samples.appendDoubled(buffer.baseAddress!, count: got)
        }
      }
      frames += got
      if frames > maximumFrames {
        throw DecodeError(path: name, reason: "it is longer than \(MP3Decoder.formatSeconds(options.maximumSeconds)) s, the longest cue")
      }
    }
    var warnings: [String] = []
    let error = cued_sf_error(handle)
    if error != 0 {
      guard frames > 0 else {
        throw DecodeError(path: name, reason: "libsndfile cannot decode it: \(String(cString: cued_sf_strerror(handle)))")
      }
      warnings.append("decoding stopped early: \(String(cString: cued_sf_strerror(handle)))")
    }
    if frames == 0 { throw DecodeError(path: name, reason: "it decodes to no audio at all (truncated or empty)") }
    // A float WAV may hold NaN, infinities or absurd magnitudes (3e38): they would poison the mix
    // bus for every voice, and the rate conversion's sums overflow on them. Not-numbers become
    // silence, and everything is clipped to full scale, as a converter to PCM would.
    var badFrames = 0
    var clipped = 0
    for frame in 0..<(samples.count / 2) {
      var bad = false
      for i in (2 * frame)...(2 * frame + 1) {
        let value = samples.base[i]
        if !value.isFinite && !value.isInfinite {
          samples.base[i] = 0
          bad = true
        } else if value > 1 || value < -1 {
          samples.base[i] = value > 0 ? 1 : -1
          clipped += 1
          if value.isInfinite { bad = true }
        }
      }
      if bad { badFrames += 1 }
    }
    if badFrames > 0 { warnings.append("\(badFrames) frames held samples that are not finite numbers (NaN or infinity); they play as silence or full scale") }
    if clipped > 0 { warnings.append("\(clipped) samples beyond full scale were clipped to ±1") }
    if info.frames > 0, info.frames < Int64(Int32.max), frames < Int(info.frames) {
      warnings.append("the file is truncated: \(frames) of \(info.frames) frames decoded")
    }
    let buffer =
      rate == options.outputRate ? samples.takeBuffer() : try MP3Decoder.resample(samples, from: rate, to: options.outputRate, name: name)
    return DecodedCue(
      buffer: buffer, sourceRate: rate, sourceChannels: channels, sourceFrameCount: frames, hasGaplessInfo: true, mpegVersion: nil,
      format: format, warnings: warnings)
  }

  /// `Ogg Vorbis`, `Ogg Opus`, `WAV (PCM 16-bit)`: what `list` can show. A WAV names its
  /// sample format whatever its header (plain, WAVE_FORMAT_EXTENSIBLE, RF64), and says when it is
  /// big-endian (RIFX).
  static func formatName(_ format: Int32) -> String {
    let major = format & Int32(SF_FORMAT_TYPEMASK)
    let minor = format & Int32(SF_FORMAT_SUBMASK)
    switch major {
    case Int32(SF_FORMAT_OGG):
      switch minor {
      case Int32(SF_FORMAT_VORBIS): return "Ogg Vorbis"
      case Int32(SF_FORMAT_OPUS): return "Ogg Opus"
      default: return "Ogg"
      }
    case Int32(SF_FORMAT_WAV), Int32(SF_FORMAT_WAVEX), Int32(SF_FORMAT_RF64):
      var details = sampleFormatName(minor).map { [$0] } ?? []
      if format & Int32(SF_FORMAT_ENDMASK) == Int32(SF_ENDIAN_BIG) { details.append("big-endian RIFX") }
      return details.isEmpty ? "WAV" : "WAV (\(details.joined(separator: ", ")))"
    default: return "libsndfile format 0x\(String(format, radix: 16))"
    }
  }

  /// The sample format of a WAV, as people name it; nil for one without a common name.
  static func sampleFormatName(_ minor: Int32) -> String? {
    switch minor {
    case Int32(SF_FORMAT_PCM_U8): "PCM 8-bit"
    case Int32(SF_FORMAT_PCM_16): "PCM 16-bit"
    case Int32(SF_FORMAT_PCM_24): "PCM 24-bit"
    case Int32(SF_FORMAT_PCM_32): "PCM 32-bit"
    case Int32(SF_FORMAT_FLOAT): "float"
    case Int32(SF_FORMAT_DOUBLE): "64-bit float"
    case Int32(SF_FORMAT_ULAW): "mu-law"
    case Int32(SF_FORMAT_ALAW): "A-law"
    case Int32(SF_FORMAT_IMA_ADPCM): "IMA ADPCM"
    case Int32(SF_FORMAT_MS_ADPCM): "MS ADPCM"
    case Int32(SF_FORMAT_GSM610): "GSM 6.10"
    default: nil
    }
  }
}

/// The bytes libsndfile reads through its virtual I/O callbacks.
private final class MemorySource {
  let bytes: [UInt8]
  var position: sf_count_t = 0

  init(_ bytes: [UInt8]) { self.bytes = bytes }

  static func from(_ data: UnsafeMutableRawPointer?) -> MemorySource {
    Unmanaged<MemorySource>.fromOpaque(data!).takeUnretainedValue()
  }

  var length: sf_count_t { sf_count_t(bytes.count) }

  func seek(_ offset: sf_count_t, _ whence: Int32) -> sf_count_t {
    let base: sf_count_t
    switch whence {
    case SEEK_CUR: base = position
    case SEEK_END: base = length
    default: base = 0
    }
    let target = base + offset
    guard target >= 0, target <= length else { return -1 }
    position = target
    return position
  }

  func read(into pointer: UnsafeMutableRawPointer?, _ count: sf_count_t) -> sf_count_t {
    guard let pointer, count > 0, position < length else { return 0 }
    let n = Int(min(count, length - position))
    bytes.withUnsafeBytes { raw in
      pointer.copyMemory(from: raw.baseAddress! + Int(position), byteCount: n)
    }
    position += sf_count_t(n)
    return sf_count_t(n)
  }
}

/// Any sound file cued decodes: MP3 with libmpg123, Ogg Vorbis/Opus and WAV with libsndfile, FLAC
/// with libFLAC, told apart by their first bytes, never by the file name.
public enum AudioFileDecoder {
  /// The file name extensions of the sound files cued reads (any case). The name only finds the
  /// files in a directory; how a file is read is decided by its first bytes.
  public static let fileExtensions = [".mp3", ".oga", ".ogg", ".opus", ".wav", ".flac"]

  /// A sound file's name without its extension (`pico.mp3` → `pico`, `bell.OGA` → `bell`); nil
  /// for hidden files, names that are only an extension, and other files.
  public static func soundName(forFile file: String) -> String? {
    guard !file.hasPrefix(".") else { return nil }
    let lowered = file.lowercased()
    for suffix in fileExtensions where lowered.hasSuffix(suffix) && file.utf8.count > suffix.utf8.count {
      return String(decoding: file.utf8.dropLast(suffix.utf8.count), as: UTF8.self)
    }
    return nil
  }

  /// Reads and decodes the file at `path`.
  public static func decode(path: String, options: DecodeOptions = DecodeOptions()) throws(DecodeError) -> DecodedCue {
    try decode(bytes: MP3Decoder.readFile(path: path, options: options).bytes, name: path, options: options)
  }

  /// Decodes a file held in memory; `name` is used in messages.
  public static func decode(bytes: [UInt8], name: String, options: DecodeOptions = DecodeOptions()) throws(DecodeError) -> DecodedCue {
    if FLACDecoder.sniff(bytes) { return try FLACDecoder.decode(bytes: bytes, name: name, options: options) }
    if SoundFileDecoder.sniff(bytes) != nil { return try SoundFileDecoder.decode(bytes: bytes, name: name, options: options) }
    if case .rejected(let reason) = MPEGSniffer.sniff(bytes) {
      let notMP3 = "it is not an MP3 file"
      let said = reason.hasSuffix(notMP3) ? reason.dropLast(notMP3.count) + "it is not an MP3, Ogg, WAV or FLAC file" : reason
      throw DecodeError(path: name, reason: String(said))
    }
    return try MP3Decoder.decode(bytes: bytes, name: name, options: options)
  }
}
