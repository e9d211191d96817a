import CFLAC
import CueCore

/// Decodes FLAC files with libFLAC's stream decoder, from memory: every bit depth FLAC has (4 to
/// 32 bits; libsndfile 1.2 refuses 32), mono or stereo, at 8,000 to 384,000 Hz. The file is read
/// once through one descriptor, as every sound file is (`MP3Decoder.readFile`), and libFLAC reads it
/// from memory through the face's callbacks. Samples come out as floats normalised to ±1 (a `b`-bit
/// sample `s` is `s / 2^(b-1)`: a 16-bit one `s / 32768` exactly, as libsndfile gives it), at the
/// file's rate, then go through the same libsyn123 rate conversion as the other formats.
///
/// libFLAC skips what it cannot decode (bytes that are not frames, a frame that fails its checksum)
/// and goes on at the next frame, saying so through its error callback: the cue loads with a warning
/// that names what was skipped, as other players play such a file; a file of which nothing decodes
/// is refused with libFLAC's reason. Thread-safe: each call has its own decoder.
public enum FLACDecoder {
  /// True when `bytes` are a FLAC stream: `fLaC`, at the start or after ID3v2 tags (some taggers
  /// put one there; libFLAC skips it).
  public static func sniff(_ bytes: [UInt8]) -> Bool {
    var start = 0
    while start + 10 <= bytes.count, bytes[start] == 0x49, bytes[start + 1] == 0x44, bytes[start + 2] == 0x33 {
      let size = bytes[(start + 6)..<(start + 10)]
      guard size.allSatisfy({ $0 < 0x80 }) else { return false }
      start += 10 + size.reduce(0) { ($0 << 7) | Int($1) } + (bytes[start + 5] & 0x10 != 0 ? 10 : 0)
    }
    return bytes.count >= start + 4 && bytes[start..<(start + 4)].elementsEqual("fLaC".utf8)
  }

  /// `FLAC (16-bit)`, `FLAC (24-bit)`, `FLAC (32-bit)`, …: what `list` shows.
  public static func formatName(bitsPerSample: Int) -> String { "FLAC (\(bitsPerSample)-bit)" }

  /// Decodes a FLAC file held in memory; `name` is used in messages.
  public static func decode(bytes: [UInt8], name: String, options: DecodeOptions = DecodeOptions()) throws(DecodeError) -> DecodedCue {
    guard sniff(bytes) else { throw DecodeError(path: name, reason: "it is not a FLAC file (no fLaC at its start)") }
    var why = [CChar](repeating: 0, count: 512)
    guard cued_flac_load(&why, why.count) == 0 else {
      let reason = String(decoding: why.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
      throw DecodeError(
        path: name, reason: "it is FLAC, which needs libFLAC, and libFLAC cannot be loaded (\(reason)): install the package libflac12")
    }
    guard let decoder = cued_flac_decoder_new() else { throw DecodeError(path: name, reason: "libFLAC could not start (out of memory)") }
    defer { cued_flac_decoder_delete(decoder) }
    let stream = FLACStream(bytes: bytes, maximumSeconds: options.maximumSeconds)
    // libFLAC holds an unretained pointer to `stream` until it is finished: kept alive until then.
    let status = withExtendedLifetime(stream) {
      let client = Unmanaged.passUnretained(stream).toOpaque()
      let status = cued_flac_decoder_init_stream(
        decoder, { _, buffer, count, client in FLACStream.from(client).read(into: buffer, count) }, nil, nil, nil,
        { _, client in FLACStream.from(client).atEnd ? 1 : 0 },
        { _, frame, channels, client in FLACStream.from(client).write(frame, channels) },
        { _, metadata, client in FLACStream.from(client).metadata(metadata) },
        { _, error, client in FLACStream.from(client).skipped(error) }, client)
      guard status == CUED_FLAC_INIT_OK else { return status }
      _ = cued_flac_decoder_process_until_end_of_stream(decoder)
      _ = cued_flac_decoder_finish(decoder)
      return status
    }
    guard status == CUED_FLAC_INIT_OK else {
      throw DecodeError(path: name, reason: "libFLAC could not start a decoder (init status \(status.rawValue))")
    }
    if let refusal = stream.refusal { throw DecodeError(path: name, reason: refusal) }
    let state = cued_flac_decoder_get_state(decoder)
    if state == CUED_FLAC_STATE_MEMORY_ALLOCATION_ERROR {
      throw DecodeError(path: name, reason: "libFLAC ran out of memory decoding it")
    }
    guard let format = stream.format, stream.frames > 0 else {
      let skipped = stream.skippedDescription.map { ": libFLAC found \($0)" } ?? " (truncated, or STREAMINFO only)"
      throw DecodeError(path: name, reason: "it decodes to no audio at all\(skipped)")
    }
    var warnings: [String] = []
    if let skipped = stream.skippedDescription {
      if let total = stream.totalFrames, stream.framesBeforeFirstSkip >= total {
        warnings.append("bytes after its last frame are not FLAC (a tag?): libFLAC skipped \(skipped)")
      } else {
        warnings.append("it is damaged: libFLAC skipped \(skipped); what those parts held plays as silence or is missing")
      }
    }
    if let total = stream.totalFrames, stream.frames < total {
      warnings.append("the file is truncated: \(stream.frames) of \(total) frames decoded")
    }
    let buffer =
      format.rate == options.outputRate
      ? stream.samples.takeBuffer() : try MP3Decoder.resample(stream.samples, from: format.rate, to: options.outputRate, name: name)
    return DecodedCue(
      buffer: buffer, sourceRate: format.rate, sourceChannels: format.channels, sourceFrameCount: stream.frames, hasGaplessInfo: true,
      mpegVersion: nil, format: formatName(bitsPerSample: format.bits), warnings: warnings)
  }

  /// What libFLAC's error callback reports, in words.
  static func describe(_ status: UInt32) -> String {
    switch status {
    case CUED_FLAC_ERROR_LOST_SYNC.rawValue: "bytes that are not FLAC frames"
    case CUED_FLAC_ERROR_BAD_HEADER.rawValue: "a corrupt frame header"
    case CUED_FLAC_ERROR_FRAME_CRC_MISMATCH.rawValue: "a frame that fails its checksum"
    case CUED_FLAC_ERROR_UNPARSEABLE_STREAM.rawValue: "a frame it cannot parse (reserved values)"
    case CUED_FLAC_ERROR_BAD_METADATA.rawValue: "a corrupt metadata block"
    case 5: "a frame that decodes out of bounds"
    case 6: "a missing frame"
    default: "an error libFLAC numbers \(status)"
    }
  }
}

/// One decode: the bytes libFLAC reads, and what its callbacks gave. Every decision about the
/// stream is made here, in the callbacks, before a sample is kept.
private final class FLACStream {
  struct Format {
    var rate: Int
    var channels: Int
    var bits: Int
  }

  let bytes: [UInt8]
  var position = 0
  let maximumSeconds: Double
  /// The stream's format: STREAMINFO's, or the first frame's when there is no STREAMINFO.
  var format: Format?
  /// STREAMINFO's length in frames, when it gives one.
  var totalFrames: Int?
  var maximumFrames = Int.max
  /// Interleaved stereo at the stream's rate (mono copied to both channels).
  let samples = GrowingSamples()
  var frames = 0
  /// Why decoding stopped, when the stream itself is refused; libFLAC is told to abort.
  var refusal: String?
  /// What libFLAC skipped: its error statuses, in the order first seen, with their counts.
  var skips: [(status: UInt32, count: Int)] = []
  var framesBeforeFirstSkip = 0

  init(bytes: [UInt8], maximumSeconds: Double) {
    self.bytes = bytes
    self.maximumSeconds = maximumSeconds
  }

  static func from(_ client: UnsafeMutableRawPointer?) -> FLACStream { Unmanaged<FLACStream>.fromOpaque(client!).takeUnretainedValue() }

  var atEnd: Bool { position >= bytes.count }

  func read(into buffer: UnsafeMutablePointer<UInt8>?, _ count: UnsafeMutablePointer<Int>?) -> cued_flac_read_status {
    guard let buffer, let count else { return CUED_FLAC_READ_ABORT }
    if refusal != nil { return CUED_FLAC_READ_ABORT }
    guard position < bytes.count else {
      count.pointee = 0
      return CUED_FLAC_READ_END_OF_STREAM
    }
    let n = min(count.pointee, bytes.count - position)
    bytes.withUnsafeBufferPointer { buffer.update(from: $0.baseAddress! + position, count: n) }
    position += n
    count.pointee = n
    return CUED_FLAC_READ_CONTINUE
  }

  /// STREAMINFO: the format is checked before any audio is decoded, and the length against the limit.
  func metadata(_ metadata: UnsafePointer<cued_flac_metadata>?) {
    guard let metadata, metadata.pointee.type == CUED_FLAC_METADATA_STREAMINFO, format == nil else { return }
    let info = metadata.pointee.stream_info
    accept(Format(rate: Int(info.sample_rate), channels: Int(info.channels), bits: Int(info.bits_per_sample)))
    guard refusal == nil, info.total_samples > 0 else { return }
    if info.total_samples > UInt64(maximumFrames) {
      let seconds = Double(info.total_samples) / Double(info.sample_rate)
      refusal =
        "it is \(MP3Decoder.formatSeconds((seconds * 10).rounded() / 10)) s long; the longest cue is \(MP3Decoder.formatSeconds(maximumSeconds)) s"
    } else {
      totalFrames = Int(info.total_samples)
      samples.reserve(Int(info.total_samples) * 2)
    }
  }

  /// Takes `candidate` as the stream's format, or refuses it.
  private func accept(_ candidate: Format) {
    format = candidate
    if candidate.rate < 8000 || candidate.rate > 384_000 {
      refusal = "its sample rate, \(candidate.rate) Hz, is outside 8000…384000 Hz"
    } else if candidate.channels != 1 && candidate.channels != 2 {
      refusal = "it has \(candidate.channels) channels; cues are mono or stereo (mix it down first)"
    } else if candidate.bits < 4 || candidate.bits > 32 {
      refusal = "its samples are \(candidate.bits) bits; FLAC has 4 to 32"
    }
    maximumFrames = Int(maximumSeconds * Double(candidate.rate))
  }

  /// One decoded frame: checked against the stream's format, converted to floats and appended.
  func write(_ frame: UnsafePointer<cued_flac_frame>?, _ channels: UnsafePointer<UnsafePointer<Int32>?>?) -> cued_flac_write_status {
    guard let frame, let channels else { return CUED_FLAC_WRITE_ABORT }
    let header = frame.pointee.header
    let this = Format(rate: Int(header.sample_rate), channels: Int(header.channels), bits: Int(header.bits_per_sample))
    if format == nil { accept(this) }
    guard refusal == nil, let format else { return CUED_FLAC_WRITE_ABORT }
    if this.rate != format.rate {
      // Two files glued together: refused rather than played partly off speed (as an MP3 is).
      refusal = "its sample rate changes mid-file (\(format.rate) Hz, then \(this.rate) Hz); re-encode it at one rate"
    } else if this.channels != format.channels {
      refusal = "its channel count changes mid-file (\(format.channels), then \(this.channels)); re-encode it with one"
    } else if this.bits < 4 || this.bits > 32 {
      refusal = "a frame's samples are \(this.bits) bits; FLAC has 4 to 32"
    }
    let count = Int(header.blocksize)
    if refusal == nil && frames + count > maximumFrames {
      refusal = "it is longer than \(MP3Decoder.formatSeconds(maximumSeconds)) s, the longest cue"
    }
    guard refusal == nil else { return CUED_FLAC_WRITE_ABORT }
    guard count > 0 else { return CUED_FLAC_WRITE_CONTINUE }
    guard let left = channels[0], let right = format.channels == 2 ? channels[1] : channels[0] else { return CUED_FLAC_WRITE_ABORT }
    if samples.room < 2 * count { samples.reserve(max(samples.count + 2 * count, 2 * (samples.count + samples.room))) }
    // A b-bit sample s is s / 2^(b-1): a power of two, so exact for every sample a Float holds.
    let scale = 1 / Float(Int64(1) << (this.bits - 1))
    let out = samples.end
    for i in 0..<count {
      out[2 * i] = Float(left[i]) * scale
      out[2 * i + 1] = Float(right[i]) * scale
    }
    samples.commit(2 * count)
    frames += count
    return CUED_FLAC_WRITE_CONTINUE
  }

  func skipped(_ status: cued_flac_error_status) {
    if skips.isEmpty { framesBeforeFirstSkip = frames }
    if let i = skips.firstIndex(where: { $0.status == status.rawValue }) {
      skips[i].count += 1
    } else {
      skips.append((status.rawValue, 1))
    }
  }

  /// What libFLAC skipped, in words (`2 × a frame that fails its checksum, bytes that are not FLAC
  /// frames`), or nil when it skipped nothing.
  var skippedDescription: String? {
    skips.isEmpty ? nil : skips.map { ($0.count > 1 ? "\($0.count) × " : "") + FLACDecoder.describe($0.status) }.joined(separator: ", ")
  }
}
