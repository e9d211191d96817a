/// FLAC streams made in the tests, bit by bit, so that any bit depth, rate, channel count and block
/// layout can be decoded and compared with the samples that went in. Verbatim subframes (the samples
/// as they are), independent channels, every frame saying where it starts (variable blocking), CRC-8
/// headers and CRC-16 footers as the format defines them; no MD5 (0: not checked).
enum FLACWriter {
  /// The bits of a stream, most significant first.
  struct Bits {
    var bytes: [UInt8] = []
    var used = 8  // bits used in the last byte

    mutating func put(_ value: UInt64, _ width: Int) {
      for shift in stride(from: width - 1, through: 0, by: -1) {
        if used == 8 {
          bytes.append(0)
          used = 0
        }
        bytes[bytes.count - 1] |= UInt8((value >> UInt64(shift)) & 1) << (7 - used)
        used += 1
      }
    }
  }

  static func crc(_ bytes: [UInt8], polynomial: UInt32, width: Int) -> UInt32 {
    let top: UInt32 = 1 << (width - 1)
    let mask: UInt32 = (1 << width) - 1
    var crc: UInt32 = 0
    for byte in bytes {
      crc ^= UInt32(byte) << (width - 8)
      for _ in 0..<8 { crc = (crc & top != 0 ? (crc << 1) ^ polynomial : crc << 1) & mask }
    }
    return crc
  }

  /// FLAC's UTF-8-like coding of a frame's first sample number.
  static func codedNumber(_ n: Int) -> [UInt8] {
    if n < 0x80 { return [UInt8(n)] }
    var length = 2
    while n >= 1 << (5 * length + 1) { length += 1 }
    let tail = (0..<(length - 1)).reversed().map { UInt8(0x80 | (n >> (6 * $0)) & 0x3F) }
    return [UInt8((0xFF00 >> length) & 0xFF) | UInt8(n >> (6 * (length - 1)))] + tail
  }

  /// `fLaC` and a STREAMINFO block (the last metadata block).
  static func header(rate: Int, channels: Int, bits: Int, total: Int, minBlock: Int = 16, maxBlock: Int = 4096) -> [UInt8] {
    var info = Bits()
    info.put(UInt64(minBlock), 16)
    info.put(UInt64(maxBlock), 16)
    info.put(0, 24)
    info.put(0, 24)
    info.put(UInt64(rate), 20)
    info.put(UInt64(channels - 1), 3)
    info.put(UInt64(bits - 1), 5)
    info.put(UInt64(total), 36)
    info.put(0, 64)
    info.put(0, 64)
    return Array("fLaC".utf8) + [0x80, 0, 0, UInt8(info.bytes.count)] + info.bytes
  }

  /// One frame of `channels[c][i]`, each sample `bits` wide, the first being sample `start` of the
  /// stream; `rate` written into the frame header, or nil for "the STREAMINFO's".
  static func frame(_ channels: [[Int32]], bits: Int, start: Int, rate: Int? = nil) -> [UInt8] {
    let count = channels[0].count
    var rateCode: UInt64 = 0
    var rateTail: [UInt8] = []
    if let rate {
      if rate % 1000 == 0 && rate / 1000 < 256 {
        rateCode = 0b1100
        rateTail = [UInt8(rate / 1000)]
      } else if rate < 65536 {
        rateCode = 0b1101
        rateTail = [UInt8(rate >> 8), UInt8(rate & 0xFF)]
      } else {
        rateCode = 0b1110
        rateTail = [UInt8(rate / 10 >> 8), UInt8(rate / 10 & 0xFF)]
      }
    }
    let sizeCodes = [8: 1, 12: 2, 16: 4, 20: 5, 24: 6, 32: 7]
    var head = Bits()
    head.put(0xFFF9, 16)  // sync, variable blocking
    head.put(0b0111, 4)  // block size - 1 in 16 bits after the number
    head.put(rateCode, 4)
    head.put(UInt64(channels.count - 1), 4)  // independent channels
    head.put(UInt64(sizeCodes[bits] ?? 0), 3)  // 0: the STREAMINFO's
    head.put(0, 1)
    var bytes = head.bytes + codedNumber(start) + [UInt8((count - 1) >> 8), UInt8((count - 1) & 0xFF)] + rateTail
    bytes.append(UInt8(crc(bytes, polynomial: 0x07, width: 8)))
    var body = Bits()
    for channel in channels {
      body.put(0b0000_0010, 8)  // verbatim, no wasted bits
      for sample in channel { body.put(UInt64(bitPattern: Int64(sample)) & ((1 << UInt64(bits)) - 1), bits) }
    }
    bytes += body.bytes
    let footer = crc(bytes, polynomial: 0x8005, width: 16)
    return bytes + [UInt8(footer >> 8), UInt8(footer & 0xFF)]
  }

  /// A whole stream of `channels[c][i]` in blocks of `blocks` samples (repeated until every sample
  /// is written); STREAMINFO says `total` (default: the true length) and the block sizes given.
  static func stream(
    _ channels: [[Int32]], rate: Int = 48000, bits: Int, blocks: [Int] = [4096], total: Int? = nil, minBlock: Int = 16, maxBlock: Int = 4096
  ) -> [UInt8] {
    let length = channels[0].count
    var bytes = header(rate: rate, channels: channels.count, bits: bits, total: total ?? length, minBlock: minBlock, maxBlock: maxBlock)
    var start = 0
    var index = 0
    while start < length {
      let count = min(blocks[index % blocks.count], length - start)
      bytes += frame(channels.map { Array($0[start..<(start + count)]) }, bits: bits, start: start)
      start += count
      index += 1
    }
    return bytes
  }
}
