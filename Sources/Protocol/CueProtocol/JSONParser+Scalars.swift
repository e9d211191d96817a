// JSON's scalars: numbers (RFC 8259 section 6) and strings (section 7), for the parser in JSONParser.swift.

extension JSONTextParser {
  // MARK: Numbers

  static func isDigit(_ byte: UInt8) -> Bool {
    byte >= ASCII.zero && byte <= ASCII.nine
  }

  mutating func parseNumber() throws(JSONParseError) -> Double {
    let start = index
    var negative = false
    if bytes[index] == ASCII.minus {
      negative = true
      index += 1
    }

    // Digits accumulated exactly while they fit (value = mantissa * 10^decimalExponent);
    // once they do not, the slow path is used.
    var mantissa: UInt64 = 0
    var mantissaOverflow = false
    var decimalExponent = 0

    func accumulate(_ digit: UInt8) {
      if mantissa < 100_000_000_000_000_000 {
        mantissa = mantissa * 10 + UInt64(digit - ASCII.zero)
      } else {
        mantissaOverflow = true
      }
    }

    // Integer part: "0" or a non-zero digit followed by digits.
    guard index < end, JSONTextParser.isDigit(bytes[index]) else {
      throw fail(.invalidNumber, at: index, "expected a digit in a number")
    }
    if bytes[index] == ASCII.zero {
      index += 1
      if index < end && JSONTextParser.isDigit(bytes[index]) {
        throw fail(.invalidNumber, at: start, "a number must not have leading zeros")
      }
    } else {
      while index < end && JSONTextParser.isDigit(bytes[index]) {
        accumulate(bytes[index])
        index += 1
      }
    }

    // Fraction.
    if index < end && bytes[index] == ASCII.period {
      index += 1
      guard index < end, JSONTextParser.isDigit(bytes[index]) else {
        throw fail(.invalidNumber, at: index, "expected a digit after '.' in a number")
      }
      while index < end && JSONTextParser.isDigit(bytes[index]) {
        accumulate(bytes[index])
        decimalExponent -= 1
        index += 1
      }
    }

    // Exponent.
    if index < end && (bytes[index] == ASCII.lowerE || bytes[index] == ASCII.upperE) {
      index += 1
      var exponentNegative = false
      if index < end && (bytes[index] == ASCII.plus || bytes[index] == ASCII.minus) {
        exponentNegative = bytes[index] == ASCII.minus
        index += 1
      }
      guard index < end, JSONTextParser.isDigit(bytes[index]) else {
        throw fail(.invalidNumber, at: index, "expected a digit in a number's exponent")
      }
      var exponent = 0
      while index < end && JSONTextParser.isDigit(bytes[index]) {
        if exponent < 1_000_000 {
          exponent = exponent * 10 + Int(bytes[index] - ASCII.zero)
        }
        index += 1
      }
      decimalExponent += exponentNegative ? -exponent : exponent
    }

    // Fast path: an exact mantissa and an exact power of ten give a correctly rounded result
    // with a single IEEE multiplication or division.
    if !mantissaOverflow && mantissa <= 9_007_199_254_740_992 {
      var value: Double?
      if mantissa == 0 {
        value = 0
      } else if decimalExponent >= 0 && decimalExponent < exactPowersOfTen.count {
        value = Double(mantissa) * exactPowersOfTen[decimalExponent]
      } else if decimalExponent < 0 && -decimalExponent < exactPowersOfTen.count {
        value = Double(mantissa) / exactPowersOfTen[-decimalExponent]
      }
      if let value, value.isFinite {
        return negative ? -value : value
      }
    }

    // Slow path: the standard library's correctly rounded decimal conversion.
    let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
    guard let value = Double(text), value.isFinite else {
      throw fail(.numberOutOfRange, at: start, "number \(text) is out of the range of a Double")
    }
    return value
  }

  // MARK: Strings

  /// Parses a string starting at its opening quote; leaves the index after the closing quote.
  mutating func parseString() throws(JSONParseError) -> String {
    index += 1
    let contentStart = index
    var runStart = index
    var hasEscapes = false
    while true {
      guard index < end else {
        throw fail(.unexpectedEnd, at: index, "unexpected end of input inside a string")
      }
      let byte = bytes[index]
      if byte == ASCII.quote {
        let result: String
        if hasEscapes {
          scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
          result = String(decoding: scratch, as: UTF8.self)
        } else {
          result = String(decoding: UnsafeBufferPointer(rebasing: bytes[contentStart..<index]), as: UTF8.self)
        }
        index += 1
        return result
      } else if byte == ASCII.backslash {
        if !hasEscapes {
          hasEscapes = true
          scratch.removeAll(keepingCapacity: true)
        }
        scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
        try parseEscape()
        runStart = index
      } else if byte < 0x20 {
        throw fail(.controlCharacterInString, at: index, "raw control character \(JSONTextParser.describe(byte)) in a string")
      } else if byte < 0x80 {
        index += 1
      } else {
        try skipMultibyteSequence()
      }
    }
  }

  /// Validates one multi-byte UTF-8 sequence at the index (Unicode Table 3-7) and skips it.
  mutating func skipMultibyteSequence() throws(JSONParseError) {
    let start = index
    let lead = bytes[start]
    let length: Int
    var low: UInt8 = 0x80
    var high: UInt8 = 0xBF
    switch lead {
    case 0xC2...0xDF:
      length = 2
    case 0xE0:
      length = 3
      low = 0xA0  // no overlongs
    case 0xE1...0xEC, 0xEE...0xEF:
      length = 3
    case 0xED:
      length = 3
      high = 0x9F  // no UTF-16 surrogates
    case 0xF0:
      length = 4
      low = 0x90  // no overlongs
    case 0xF1...0xF3:
      length = 4
    case 0xF4:
      length = 4
      high = 0x8F  // nothing above U+10FFFF
    default:
      throw fail(.invalidUTF8, at: start, "invalid UTF-8 in a string: \(JSONTextParser.describe(lead)) cannot start a character")
    }
    guard end - start >= length else {
      throw fail(.invalidUTF8, at: start, "truncated UTF-8 sequence in a string")
    }
    let second = bytes[start + 1]
    guard second >= low && second <= high else {
      throw fail(.invalidUTF8, at: start, "invalid UTF-8 sequence in a string")
    }
    var position = start + 2
    while position < start + length {
      guard bytes[position] & 0xC0 == 0x80 else {
        throw fail(.invalidUTF8, at: start, "invalid UTF-8 sequence in a string")
      }
      position += 1
    }
    index = start + length
  }

  /// Decodes one escape sequence at the index (a backslash) into `scratch` and skips it.
  mutating func parseEscape() throws(JSONParseError) {
    let start = index
    guard start + 1 < end else {
      throw fail(.unexpectedEnd, at: start + 1, "unexpected end of input in an escape sequence")
    }
    let decoded: UInt8
    switch bytes[start + 1] {
    case ASCII.quote: decoded = ASCII.quote
    case ASCII.backslash: decoded = ASCII.backslash
    case ASCII.slash: decoded = ASCII.slash
    case ASCII.lowerB: decoded = 0x08
    case ASCII.lowerF: decoded = 0x0C
    case ASCII.lowerN: decoded = ASCII.lineFeed
    case ASCII.lowerR: decoded = ASCII.carriageReturn
    case ASCII.lowerT: decoded = ASCII.tab
    case ASCII.lowerU:
      try parseUnicodeEscape()
      return
    default:
      throw fail(.invalidEscape, at: start, "invalid escape sequence '\\' followed by \(JSONTextParser.describe(bytes[start + 1]))")
    }
    scratch.append(decoded)
    index = start + 2
  }

  /// Decodes `\uXXXX` (or a `\uD8xx\uDCxx` surrogate pair) at the index into `scratch` as UTF-8.
  mutating func parseUnicodeEscape() throws(JSONParseError) {
    let start = index
    var scalarValue = try readHex4(escapeStart: start)
    index = start + 6
    if (0xD800...0xDBFF).contains(scalarValue) {
      guard index + 1 < end, bytes[index] == ASCII.backslash, bytes[index + 1] == ASCII.lowerU else {
        throw fail(.invalidEscape, at: start, "lone high surrogate in a \\u escape")
      }
      let low = try readHex4(escapeStart: index)
      guard (0xDC00...0xDFFF).contains(low) else {
        throw fail(.invalidEscape, at: start, "high surrogate not followed by a low surrogate in a \\u escape")
      }
      scalarValue = 0x10000 + ((scalarValue - 0xD800) << 10) + (low - 0xDC00)
      index += 6
    } else if (0xDC00...0xDFFF).contains(scalarValue) {
      throw fail(.invalidEscape, at: start, "lone low surrogate in a \\u escape")
    }
    guard let scalar = Unicode.Scalar(scalarValue) else {
      throw fail(.invalidEscape, at: start, "invalid \\u escape")
    }
    appendUTF8(scalar)
  }

  /// Appends the UTF-8 encoding of a scalar to `scratch`.
  mutating func appendUTF8(_ scalar: Unicode.Scalar) {
    let value = scalar.value
    switch value {
    case 0..<0x80:
      scratch.append(UInt8(value))
    case 0x80..<0x800:
      scratch.append(UInt8(0xC0 | value >> 6))
      scratch.append(UInt8(0x80 | value & 0x3F))
    case 0x800..<0x10000:
      scratch.append(UInt8(0xE0 | value >> 12))
      scratch.append(UInt8(0x80 | value >> 6 & 0x3F))
      scratch.append(UInt8(0x80 | value & 0x3F))
    default:
      scratch.append(UInt8(0xF0 | value >> 18))
      scratch.append(UInt8(0x80 | value >> 12 & 0x3F))
      scratch.append(UInt8(0x80 | value >> 6 & 0x3F))
      scratch.append(UInt8(0x80 | value & 0x3F))
    }
  }

  /// Reads the four hex digits of the `\u` escape whose backslash is at `escapeStart`.
  func readHex4(escapeStart: Int) throws(JSONParseError) -> UInt32 {
    var value: UInt32 = 0
    for position in (escapeStart + 2)..<(escapeStart + 6) {
      guard position < end else {
        throw fail(.unexpectedEnd, at: position, "unexpected end of input in a \\u escape")
      }
      let byte = bytes[position]
      let digit: UInt8
      switch byte {
      case 0x30...0x39: digit = byte - 0x30
      case 0x41...0x46: digit = byte - 0x41 + 10
      case 0x61...0x66: digit = byte - 0x61 + 10
      default:
        throw fail(.invalidEscape, at: escapeStart, "expected four hex digits in a \\u escape, found \(JSONTextParser.describe(byte))")
      }
      value = value << 4 | UInt32(digit)
    }
    return value
  }
}
