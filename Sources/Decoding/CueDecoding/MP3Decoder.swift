import CMPG123
import CSyn123
import CueCore
import CuePosix

#if canImport(Glibc)
import Glibc
#endif

/// Limits and target format for decoding.
public struct DecodeOptions: Sendable {
  /// The output rate every cue is converted to (the device rate).
  public var outputRate: Int
  /// The longest cue accepted, in seconds.
  public var maximumSeconds: Double
  /// The largest file read, in bytes.
  public var maximumFileBytes: Int
  /// When set, only files that (once opened) lie inside these directories are read: the sound
  /// directories, for a path a client named, checked again at open time.
  public var confinedTo: [String]? = nil

  public init(outputRate: Int = 48000, maximumSeconds: Double = 60, maximumFileBytes: Int = 64 << 20) {
    self.outputRate = outputRate
    self.maximumSeconds = maximumSeconds
    self.maximumFileBytes = maximumFileBytes
  }
}

/// A decoded cue: PCM at the output rate plus what is known about its source.
public struct DecodedCue: Sendable {
  public var buffer: SampleBuffer
  /// The file's own sample rate.
  public var sourceRate: Int
  /// 1 or 2: how many channels the file has (mono is copied to both outputs).
  public var sourceChannels: Int
  /// Frames at the file's own rate, after gapless trimming.
  public var sourceFrameCount: Int
  /// True when the file carried encoder delay/padding (LAME/Info tag), so trimming was exact.
  public var hasGaplessInfo: Bool
  /// The MPEG version of an MP3; nil for the other formats.
  public var mpegVersion: MPEGSniffer.Version?
  /// `MP3`, `Ogg Vorbis`, `Ogg Opus`, `WAV (PCM 16-bit)`, `FLAC`, …
  public var format: String
  /// Things worth a warning (no gapless info, a truncated file); the cue still loads.
  public var warnings: [String]
}

/// Why a file was not loaded: the path and a reason a person can act on.
public struct DecodeError: Error, Sendable, Equatable, CustomStringConvertible {
  public var path: String
  public var reason: String
  public init(path: String, reason: String) {
    self.path = path
    self.reason = reason
  }
  public var description: String { "\(path): \(reason)" }
}

/// Decodes MP3 files with libmpg123 at their own rate, then converts the rate with libsyn123.
///
/// libmpg123's own rate conversion (NtoM, used whenever the output rate is restricted and
/// `MPG123_AUTO_RESAMPLE` is on) drops samples; it is switched off here and every rate is allowed,
/// so libmpg123 always decodes natively. Gapless trimming (`MPG123_GAPLESS`) removes encoder delay
/// and padding, so loops join without a gap. Thread-safe: each call uses its own handles.
public enum MP3Decoder {
  /// Reads and decodes the file at `path`.
  public static func decode(path: String, options: DecodeOptions = DecodeOptions()) throws(DecodeError) -> DecodedCue {
    try decode(bytes: readFile(path: path, options: options).bytes, name: path, options: options)
  }

  /// Reads the file at `path` through one descriptor, with what `fstat` said of that descriptor
  /// (so the status describes exactly these bytes). Refuses directories, FIFOs, devices, sockets
  /// and files over the size limit with a reason a person can act on.
  public static func readFile(path: String, options: DecodeOptions = DecodeOptions()) throws(DecodeError) -> (bytes: [UInt8], status: Files.Status) {
    do {
      return try Files.readWithStatus(path: path, limit: options.maximumFileBytes, confinedTo: options.confinedTo)
    } catch {
      let reason: String
      switch error.code {
      case 21: reason = "it is a directory, not a file"  // EISDIR
      case 22: reason = "it is \(Files.typeName(of: path) ?? "not a regular file"), not a regular file"  // EINVAL
      case 27: reason = "it is larger than \(options.maximumFileBytes >> 20) MiB; cues are short sound effects"  // EFBIG
      case 13, 1: reason = "permission denied: make it readable by the user cued runs as"  // EACCES, EPERM
      case 40: reason = "it is a symlink loop (or a chain of more than 40 symlinks)"  // ELOOP
      case 18: reason = "it resolves outside the sound directories now (it changed after it was checked)"  // EXDEV
      case 2:  // ENOENT
        if let target = Files.symbolicLinkTarget(path) {
          reason = "it is a dangling symlink: its target \(target) does not exist"
        } else {
          reason = "it does not exist (removed after the directory was read?)"
        }
      case 11: reason = "it kept changing while it was read; it is read again at the next reload"  // EAGAIN
      default: reason = "cannot read it: \(error.description)"
      }
      throw DecodeError(path: path, reason: reason)
    }
  }

  /// Decodes MP3 data held in memory; `name` is used in messages.
  public static func decode(bytes: [UInt8], name: String, options: DecodeOptions = DecodeOptions()) throws(DecodeError) -> DecodedCue {
    let header: MPEGSniffer.FrameHeader
    switch MPEGSniffer.sniff(bytes) {
    case .rejected(let reason): throw DecodeError(path: name, reason: reason)
    case .layer3(_, let h): header = h
    }
    var native = try decodeNative(bytes: bytes, name: name, options: options, gapless: true)
    var warnings = native.warnings
    if !native.hasGaplessInfo {
      warnings.append("no gapless information (LAME/Info tag): encoder delay and padding stay in, so loops of it will have a gap")
    } else if native.frameCount == 0 {
      // The tag's encoder delay and padding cover every sample (a one-frame file, or a wrong tag):
      // other players still play such a file, so it is not refused; it plays untrimmed.
      let untrimmed = try decodeNative(bytes: bytes, name: name, options: options, gapless: false)
      if untrimmed.frameCount > 0 {
        native = untrimmed
        native.hasGaplessInfo = false
        warnings = untrimmed.warnings
        warnings.append("its gapless information (LAME/Info tag) trims away every sample; it plays untrimmed, encoder delay and padding included")
      }
    }
    if native.frameCount == 0 {
      throw DecodeError(path: name, reason: "it decodes to no audio at all (truncated or corrupt)")
    }
    let sourceFrames = native.frameCount
    let buffer: SampleBuffer
    if native.rate == options.outputRate {
      // The decoded samples become the cue's buffer as they are: no copy.
      buffer = native.samples.takeBuffer()
    } else {
      buffer = try resample(native.samples, from: native.rate, to: options.outputRate, name: name)
    }
    return DecodedCue(
      buffer: buffer, sourceRate: native.rate, sourceChannels: native.sawStereo ? 2 : 1,
      sourceFrameCount: sourceFrames, hasGaplessInfo: native.hasGaplessInfo,
      mpegVersion: header.version, format: "MP3", warnings: warnings)
  }

  private struct NativePCM {
    var samples = GrowingSamples()  // interleaved stereo at `rate`
    var rate = 0
    var channels = 0
    /// True once any part of the file was stereo.
    var sawStereo = false
    var frameCount: Int { samples.count / 2 }
    var hasGaplessInfo = false
    var warnings: [String] = []
  }

  private static func decodeNative(bytes: [UInt8], name: String, options: DecodeOptions, gapless: Bool) throws(DecodeError) -> NativePCM {
    var err: Int32 = 0
    guard let handle = mpg123_new(nil, &err) else {
      throw DecodeError(path: name, reason: "libmpg123 could not start: \(String(cString: mpg123_plain_strerror(err)))")
    }
    defer { mpg123_delete(handle) }
    let flags = Int((gapless ? MPG123_GAPLESS.rawValue : 0) | MPG123_QUIET.rawValue | MPG123_FORCE_FLOAT.rawValue)
    mpg123_param2(handle, Int32(MPG123_FLAGS.rawValue), flags, 0)  // exactly these: MPG123_AUTO_RESAMPLE is off
    mpg123_format_none(handle)
    var rates: UnsafePointer<Int>? = nil
    var rateCount = 0
    mpg123_rates(&rates, &rateCount)
    for i in 0..<rateCount {
      mpg123_format(handle, rates![i], Int32(MPG123_MONO.rawValue | MPG123_STEREO.rawValue), Int32(MPG123_ENC_FLOAT_32.rawValue))
    }
    guard mpg123_open_feed(handle) == MPG123_OK.rawValue else {
      throw DecodeError(path: name, reason: "libmpg123: \(String(cString: mpg123_strerror(handle)))")
    }
    // The file is fed in pieces as libmpg123 asks for more (MPG123_NEED_MORE), so its feed buffers
    // stay small and warm instead of holding a second copy of the whole file.
    let feedPiece = 1 << 16
    var fed = 0

    var pcm = NativePCM()
    // mpg123_decode_frame decodes one MPEG frame into the buffer given by mpg123_replace_buffer: the
    // cue's own buffer, at its end, whenever that has room for the largest frame libmpg123 can
    // produce (mpg123_safe_buffer), so the samples are written once and never copied. Otherwise (a
    // short cue, the last frames of a long one) it decodes into `scratch` and the frame is appended.
    // libmpg123 falls back to a buffer of its own on a format change; the returned pointer says
    // where the frame is, and a frame that is not where it was asked to go is copied.
    let safeBytes = mpg123_safe_buffer()
    let safeFloats = safeBytes / MemoryLayout<Float>.size
    let scratch = UnsafeMutableRawPointer.allocate(byteCount: safeBytes, alignment: 16)
    defer { scratch.deallocate() }
    var maximumFrames = Int.max
    loop: while true {
      // Mono frames are doubled to stereo where they were decoded: twice the room.
      let inPlace = pcm.samples.room >= (pcm.channels == 2 ? 1 : 2) * safeFloats
      let target = inPlace ? UnsafeMutableRawPointer(pcm.samples.end) : scratch
      mpg123_replace_buffer(handle, target, inPlace ? pcm.samples.room * MemoryLayout<Float>.size : safeBytes)
      var audio: UnsafeMutablePointer<UInt8>? = nil
      var decodedBytes = 0
      let rc = mpg123_decode_frame(handle, nil, &audio, &decodedBytes)
      let floats = decodedBytes / MemoryLayout<Float>.size
      if floats > 0, let audio {
        if inPlace && UnsafeMutableRawPointer(audio) == target {
          if pcm.channels == 2 {
            pcm.samples.commit(floats)
          } else {
            pcm.samples.commitDoubled(floats)
          }
        } else {
          let source = UnsafeRawPointer(audio).assumingMemoryBound(to: Float.self)
          if pcm.channels == 2 {
            pcm.samples.append(source, count: floats)
          } else {
            pcm.samples.appendDoubled(source, count: floats)
          }
        }
        if pcm.frameCount > maximumFrames {
          throw DecodeError(
            path: name,
            reason: "it is longer than the \(formatSeconds(options.maximumSeconds)) s limit for a cue (raise --max-cue-seconds)")
        }
      }
      switch rc {
      case MPG123_OK.rawValue:
        continue
      case MPG123_NEW_FORMAT.rawValue:
        var rate = 0
        var channels: Int32 = 0
        var encoding: Int32 = 0
        mpg123_getformat(handle, &rate, &channels, &encoding)
        if pcm.rate != 0 && rate != pcm.rate {
          // Converting each part would be possible, but a file like this is two files glued
          // together: refuse it rather than guess (played as one rate, a part would be off speed).
          throw DecodeError(
            path: name,
            reason: "its sample rate changes mid-file (\(pcm.rate) Hz, then \(rate) Hz); re-encode it at one rate")
        }
        if pcm.channels != 0 && Int(channels) != pcm.channels {
          // Each part is copied at its own channel count (mono to both sides), so the audio is
          // right; the cue counts as stereo so pan treats the stereo part as stereo.
          pcm.warnings.append(
            "its channel count changes mid-file (\(pcm.channels == 1 ? "mono" : "stereo"), then \(channels == 1 ? "mono" : "stereo")); it plays as stereo")
        }
        pcm.rate = rate
        pcm.channels = Int(channels)
        if channels == 2 { pcm.sawStereo = true }
        maximumFrames = Int(options.maximumSeconds * Double(rate))
        // With an Info tag libmpg123 knows the length: one allocation instead of repeated growth.
        let expected = mpg123_length(handle)
        if expected > 0 && expected <= maximumFrames { pcm.samples.reserve(expected * 2 + 4608) }
      case MPG123_NEED_MORE.rawValue:
        if fed == bytes.count { break loop }
        let piece = min(feedPiece, bytes.count - fed)
        let rc = bytes.withUnsafeBufferPointer { mpg123_feed(handle, $0.baseAddress! + fed, piece) }
        guard rc == MPG123_OK.rawValue else {
          throw DecodeError(path: name, reason: "libmpg123: \(String(cString: mpg123_strerror(handle)))")
        }
        fed += piece
      case MPG123_DONE.rawValue:
        break loop
      default:
        if pcm.frameCount > 0 {
          pcm.warnings.append("decoding stopped early: \(String(cString: mpg123_strerror(handle)))")
          break loop
        }
        throw DecodeError(path: name, reason: "libmpg123 cannot decode it: \(String(cString: mpg123_strerror(handle)))")
      }
    }
    var delay = -1
    var unused = 0.0
    mpg123_getstate2(handle, Int32(MPG123_ENC_DELAY.rawValue), &delay, &unused)
    pcm.hasGaplessInfo = delay >= 0
    if pcm.hasGaplessInfo {
      // With an Info tag libmpg123 knows the length; fewer frames means the file was cut short.
      let expected = mpg123_length(handle)
      if expected > 0 && pcm.frameCount < expected {
        pcm.warnings.append("the file is truncated: \(pcm.frameCount) of \(expected) frames decoded")
      }
    }
    return pcm
  }

  /// Converts interleaved stereo from `inputRate` to `outputRate` with libsyn123's resampler.
  static func resample(_ samples: GrowingSamples, from inputRate: Int, to outputRate: Int, name: String) throws(DecodeError) -> SampleBuffer {
    let inputFrames = samples.count / 2
    let total = Int(syn123_resample_total(inputRate, outputRate, inputFrames))
    guard total >= 0 else { throw DecodeError(path: name, reason: "cannot convert \(inputRate) Hz to \(outputRate) Hz") }
    var err: Int32 = 0
    guard let syn = syn123_new(outputRate, 2, Int32(MPG123_ENC_FLOAT_32.rawValue), 0, &err) else {
      throw DecodeError(path: name, reason: "libsyn123 could not start (error \(err))")
    }
    defer { syn123_del(syn) }
    guard syn123_setup_resample(syn, inputRate, outputRate, 2, 0, 0) == 0 else {
      throw DecodeError(path: name, reason: "libsyn123 cannot convert \(inputRate) Hz to \(outputRate) Hz")
    }
    // size_t: may exceed Int.max when upsampling (see AUDIO-NOTES), hence the bit pattern read.
    let maximumIn = UInt(bitPattern: syn123_resample_maxincount(inputRate, outputRate))
    let blockFrames = Int(min(maximumIn, 4096))
    let buffer = SampleBuffer(frameCount: total)
    var produced = 0
    var consumed = 0
    var scratch = [Float](repeating: 0, count: (Int(syn123_resample_count(inputRate, outputRate, blockFrames)) + 2) * 2)
    do {
      let source = samples.base
      while consumed < inputFrames {
        let n = min(blockFrames, inputFrames - consumed)
        let out = scratch.withUnsafeMutableBufferPointer { dst in
          syn123_resample(syn, dst.baseAddress, source + consumed * 2, n)
        }
        let frames = min(out, total - produced)
        if frames > 0 {
          scratch.withUnsafeBufferPointer { (buffer.mutableBase + produced * 2).update(from: $0.baseAddress!, count: frames * 2) }
          produced += frames
        }
        consumed += n
      }
    }
    if produced != total {
      throw DecodeError(path: name, reason: "rate conversion gave \(produced) frames, expected \(total)")
    }
    return buffer
  }

  static func formatSeconds(_ seconds: Double) -> String {
    seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
  }
}

/// Decoded samples, grown in place; the finished buffer is handed to a `SampleBuffer` without a copy.
/// A class, so the memory is freed on every path (an error mid-decode included).
///
/// The memory stays uninitialised until the decoder writes it (nothing is zero-filled first). A
/// buffer of `mappingBytes` or more is an anonymous mapping of its own, aligned to 2 MiB and marked
/// `MADV_HUGEPAGE`: its first touch then costs one page fault per 2 MiB instead of one per 4 KiB
/// (46 MB of samples, 120 s, took 11,000 faults, about a third of the decode time), and it never
/// mixes with malloc's heap, so freeing it returns it to the system at once.
final class GrowingSamples {
  private(set) var base: UnsafeMutablePointer<Float>
  private(set) var count = 0
  private var capacity: Int
  /// Bytes mapped at `base` when it is a mapping of its own; 0 when it came from `allocate`.
  private var mappedBytes = 0

  /// From this size (about 11 s of 48 kHz stereo) a buffer gets a mapping of its own.
  static let mappingBytes = 4 << 20
  private static let hugePage = 2 << 20

  init() {
    base = .allocate(capacity: 8192)
    capacity = 8192
  }

  deinit { Self.release(base, mappedBytes: mappedBytes) }

  func reserve(_ wanted: Int) {
    guard wanted > capacity else { return }
    let (grown, mapped) = Self.allocate(floats: wanted)
    grown.initialize(from: base, count: count)
    Self.release(base, mappedBytes: mappedBytes)
    base = grown
    capacity = wanted
    mappedBytes = mapped
  }

  /// Floats that fit after the samples without growing.
  var room: Int { capacity - count }

  /// Where the next sample goes (`room` floats are writable there).
  var end: UnsafeMutablePointer<Float> { base + count }

  /// Counts `n` samples written at `end` by someone else (the decoder).
  func commit(_ n: Int) {
    precondition(n <= room)
    count += n
  }

  /// Turns `n` mono samples written at `end` into `2 * n` stereo ones, in place (from the back, so
  /// no sample is overwritten before it is read).
  func commitDoubled(_ n: Int) {
    precondition(2 * n <= room)
    let samples = base + count
    var i = n - 1
    while i >= 0 {
      let value = samples[i]
      samples[2 * i] = value
      samples[2 * i + 1] = value
      i -= 1
    }
    count += 2 * n
  }

  func append(_ source: UnsafePointer<Float>, count n: Int) {
    if count + n > capacity { reserve(max(count + n, capacity * 2)) }
    (base + count).initialize(from: source, count: n)
    count += n
  }

  /// Appends mono samples as stereo (each sample to both channels).
  func appendDoubled(_ source: UnsafePointer<Float>, count n: Int) {
    if count + 2 * n > capacity { reserve(max(count + 2 * n, capacity * 2)) }
    let out = base + count
    for i in 0..<n {
      out[2 * i] = source[i]
      out[2 * i + 1] = source[i]
    }
    count += 2 * n
  }

  /// The samples as a cue buffer, which now owns the memory.
  func takeBuffer() -> SampleBuffer {
    let buffer: SampleBuffer
    if mappedBytes > 0 {
      // Unmap the pages past the samples (the length in the Info tag was a promise; a truncated
      // file leaves some untouched), so the cue holds exactly what it uses.
      let page = Int(sysconf(Int32(_SC_PAGESIZE)))
      let used = max((count * MemoryLayout<Float>.size + page - 1) / page * page, page)
      if used < mappedBytes { _ = munmap(UnsafeMutableRawPointer(base) + used, mappedBytes - used) }
      buffer = SampleBuffer(adopting: base, frameCount: count / 2) { _ = munmap($0, used) }
    } else {
      buffer = SampleBuffer(adopting: base, frameCount: count / 2)
    }
    base = .allocate(capacity: 2)
    capacity = 2
    count = 0
    mappedBytes = 0
    return buffer
  }

  /// Uninitialised memory for `floats` samples, and the bytes mapped for it (0: from `allocate`).
  private static func allocate(floats: Int) -> (UnsafeMutablePointer<Float>, Int) {
    let bytes = floats * MemoryLayout<Float>.size
    if bytes >= mappingBytes {
      // Map 2 MiB more than needed, keep the 2 MiB-aligned part, unmap the rest: a huge page
      // needs an aligned 2 MiB range.
      let page = Int(sysconf(Int32(_SC_PAGESIZE)))
      let length = (bytes + page - 1) / page * page
      if let raw = mmap(nil, length + hugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
        raw != UnsafeMutableRawPointer(bitPattern: -1)
      {
        let address = Int(bitPattern: raw)
        let start = (address + hugePage - 1) & ~(hugePage - 1)
        if start > address { _ = munmap(raw, start - address) }
        let tail = hugePage - (start - address)
        if tail > 0 { _ = munmap(raw + (start - address) + length, tail) }
        let aligned = raw + (start - address)
        // Advice only: where transparent huge pages are off, the mapping works with small pages.
        _ = madvise(aligned, length, MADV_HUGEPAGE)
        return (aligned.bindMemory(to: Float.self, capacity: length / MemoryLayout<Float>.size), length)
      }
    }
    return (.allocate(capacity: floats), 0)
  }

  private static func release(_ base: UnsafeMutablePointer<Float>, mappedBytes: Int) {
    if mappedBytes > 0 { _ = munmap(base, mappedBytes) } else { base.deallocate() }
  }
}
