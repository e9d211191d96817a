/// Recognises MPEG audio layer III data before libmpg123 sees it.
///
/// libmpg123 will try to decode almost any bytes, so a file is accepted only when, after any
/// ID3v2 tags, two consecutive valid layer III frame headers with the same version and rate are
/// found near the start (or one header whose frame ends the data). Pure: no I/O, no C.
public enum MPEGSniffer {
  public enum Version: Sendable, Equatable {
    case mpeg1, mpeg2, mpeg25
    public var name: String {
      switch self {
      case .mpeg1: "MPEG-1"
      case .mpeg2: "MPEG-2"
      case .mpeg25: "MPEG-2.5"
      }
    }
  }

  /// One parsed frame header.
  public struct FrameHeader: Sendable, Equatable {
    public var version: Version
    /// 1, 2 or 3.
    public var layer: Int
    public var sampleRate: Int
    /// kbit/s; 0 for free format.
    public var bitrate: Int
    /// Bytes in the frame, header included; 0 when free format.
    public var frameBytes: Int
    public var channels: Int
  }

  /// What the sniffer found.
  public enum Verdict: Sendable, Equatable {
    /// Layer III audio starting at `offset`.
    case layer3(offset: Int, header: FrameHeader)
    /// Not something cued decodes; `reason` says why, in words a user can act on.
    case rejected(reason: String)
  }

  /// How far past the tags to look for the first frame.
  public static let searchWindow = 64 * 1024

  public static func sniff(_ bytes: [UInt8]) -> Verdict {
    if bytes.isEmpty { return .rejected(reason: "the file is empty") }
    var start = 0
    // Skip ID3v2 tags (there may be more than one) by their declared size, however large: a tag
    // may hold megabytes of cover art, or bytes that look like audio frames.
    var tagBytes = 0
    while start + 10 <= bytes.count, bytes[start] == 0x49, bytes[start + 1] == 0x44, bytes[start + 2] == 0x33 {
      let sizeBytes = bytes[(start + 6)..<(start + 10)]
      guard sizeBytes.allSatisfy({ $0 < 0x80 }) else { return .rejected(reason: "its ID3v2 tag is malformed (the size is not syncsafe)") }
      let size = sizeBytes.reduce(0) { ($0 << 7) | Int($1) }
      let hasFooter = bytes[start + 5] & 0x10 != 0
      start += 10 + size + (hasFooter ? 10 : 0)
      tagBytes = start
    }
    if start > bytes.count {
      return .rejected(
        reason: "its ID3 tag declares \(tagBytes) bytes but the file has only \(bytes.count): it is truncated, and holds no audio")
    }
    if start == bytes.count { return .rejected(reason: "it holds an ID3 tag (\(tagBytes) bytes) and no MPEG audio after it") }
    let end = min(bytes.count, start + searchWindow)
    var otherLayer: FrameHeader? = nil
    var offset = start
    while offset + 4 <= end {
      if bytes[offset] == 0xFF, let header = parseHeader(bytes, at: offset), header.frameBytes > 0 {
        let next = offset + header.frameBytes
        let confirmed: Bool
        if next + 4 <= bytes.count {
          if let following = parseHeader(bytes, at: next) {
            confirmed = following.version == header.version && following.layer == header.layer
              && following.sampleRate == header.sampleRate
          } else {
            confirmed = isTagOrEnd(bytes, at: next)
          }
        } else {
          confirmed = next <= bytes.count
        }
        if confirmed {
          if header.layer == 3 { return .layer3(offset: offset, header: header) }
          if otherLayer == nil { otherLayer = header }
        }
      }
      offset += 1
    }
    if let other = otherLayer {
      return .rejected(reason: "it is \(other.version.name) layer \(other.layer == 2 ? "II" : "I") audio; cued plays layer III (MP3) only")
    }
    if tagBytes > 0 {
      return .rejected(
        reason: "no MPEG audio frame found in the \(searchWindow / 1024) KiB after its ID3 tag (\(tagBytes) bytes): it is not an MP3 file")
    }
    return .rejected(reason: "no MPEG audio frame found in its first \(searchWindow / 1024) KiB: it is not an MP3 file")
  }

  private static func isTagOrEnd(_ bytes: [UInt8], at offset: Int) -> Bool {
    if offset >= bytes.count { return true }
    let tags: [[UInt8]] = [Array("TAG".utf8), Array("APETAGEX".utf8), Array("ID3".utf8), Array("LYRICS".utf8)]
    return tags.contains { tag in
      offset + tag.count <= bytes.count && Array(bytes[offset..<(offset + tag.count)]) == tag
    }
  }

  private static let layer3V1: [Int] = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320]
  private static let layer3V2: [Int] = [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160]
  private static let layer2V1: [Int] = [0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384]
  private static let layer1V1: [Int] = [0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448]
  private static let layer1V2: [Int] = [0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256]

  /// Parses the 4-byte header at `offset`, or nil when it is not a valid MPEG audio header.
  public static func parseHeader(_ bytes: [UInt8], at offset: Int) -> FrameHeader? {
    guard offset >= 0, offset + 4 <= bytes.count else { return nil }
    let b1 = bytes[offset + 1]
    let b2 = bytes[offset + 2]
    let b3 = bytes[offset + 3]
    guard bytes[offset] == 0xFF, b1 & 0xE0 == 0xE0 else { return nil }
    let version: Version
    switch (b1 >> 3) & 3 {
    case 0: version = .mpeg25
    case 2: version = .mpeg2
    case 3: version = .mpeg1
    default: return nil
    }
    let layer: Int
    switch (b1 >> 1) & 3 {
    case 1: layer = 3
    case 2: layer = 2
    case 3: layer = 1
    default: return nil
    }
    let bitrateIndex = Int(b2 >> 4)
    let rateIndex = Int((b2 >> 2) & 3)
    guard bitrateIndex != 15, rateIndex != 3, b3 & 3 != 2 else { return nil }  // emphasis 2 is reserved
    let baseRates = [44100, 48000, 32000]
    let sampleRate: Int
    switch version {
    case .mpeg1: sampleRate = baseRates[rateIndex]
    case .mpeg2: sampleRate = baseRates[rateIndex] / 2
    case .mpeg25: sampleRate = baseRates[rateIndex] / 4
    }
    let bitrate: Int
    switch (layer, version) {
    case (3, .mpeg1): bitrate = layer3V1[bitrateIndex]
    case (3, _), (2, .mpeg2), (2, .mpeg25): bitrate = layer3V2[bitrateIndex]
    case (2, _): bitrate = layer2V1[bitrateIndex]
    case (_, .mpeg1): bitrate = layer1V1[bitrateIndex]
    default: bitrate = layer1V2[bitrateIndex]
    }
    let padding = Int((b2 >> 1) & 1)
    var frameBytes = 0
    if bitrate > 0 {
      switch layer {
      case 1: frameBytes = (12 * bitrate * 1000 / sampleRate + padding) * 4
      case 3 where version != .mpeg1: frameBytes = 72 * bitrate * 1000 / sampleRate + padding
      default: frameBytes = 144 * bitrate * 1000 / sampleRate + padding
      }
    }
    let channels = (b3 >> 6) == 3 ? 1 : 2
    return FrameHeader(
      version: version, layer: layer, sampleRate: sampleRate, bitrate: bitrate, frameBytes: frameBytes,
      channels: channels)
  }
}
