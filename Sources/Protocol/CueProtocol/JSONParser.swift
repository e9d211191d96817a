/// Describes why and where a JSON text was rejected.
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The kind of problem found.
  public enum Reason: Sendable, Equatable {
    /// The input ended where more was required (including an unterminated string and empty input).
    case unexpectedEnd
    /// A byte that the grammar does not allow at this point (outside strings, any non-ASCII byte is reported so).
    case unexpectedByte(UInt8)
    /// A string contains bytes that are not well-formed UTF-8.
    case invalidUTF8
    /// A string contains an unknown escape, malformed `\u` hex digits or a lone surrogate.
    case invalidEscape
    /// A number does not follow the JSON number grammar.
    case invalidNumber
    /// A number is well formed but its value is not a finite `Double`.
    case numberOutOfRange
    /// A string contains a raw byte below 0x20.
    case controlCharacterInString
    /// Something other than whitespace follows the top-level value.
    case trailingData
    /// Arrays/objects are nested deeper than the allowed maximum.
    case nestingTooDeep
    /// An object has the same key twice.
    case duplicateKey(String)
  }

  /// Byte offset in the input where the problem is.
  public var offset: Int
  /// The kind of problem.
  public var reason: Reason
  /// A human-readable explanation, e.g. "invalid JSON at byte 12: expected ',' or '}' after an object member, found 'x'".
  public var message: String

  /// Creates an error at `offset`; its message is "invalid JSON at byte `offset`: `detail`".
  public init(offset: Int, reason: Reason, detail: String) {
    self.offset = offset
    self.reason = reason
    message = "invalid JSON at byte \(offset): \(detail)"
  }

  /// The human-readable message.
  public var description: String { message }
}

/// Parses strict RFC 8259 JSON text from UTF-8 bytes into `JSONValue`s.
///
/// The parser is iterative (an explicit container stack, no recursion), so no input can exhaust
/// the call stack whatever `maxDepth` is. Only space, tab, CR and LF count as whitespace; a byte
/// order mark is rejected. Objects with duplicate keys are rejected.
public enum JSONParser {
  /// Parses one complete JSON text (RFC 8259) from UTF-8 bytes.
  ///
  /// - Parameters:
  ///   - bytes: the whole text; nothing but whitespace may follow the value.
  ///   - maxDepth: the maximum number of nested arrays/objects; a scalar at the top is depth 0, `[]` is depth 1.
  /// - Throws: `JSONParseError` with the byte offset and reason of the first problem.
  public static func parse(_ bytes: some Collection<UInt8>, maxDepth: Int = 32) throws(JSONParseError) -> JSONValue {
    let result =
      bytes.withContiguousStorageIfAvailable { parse(buffer: $0, maxDepth: maxDepth) }
      ?? Array(bytes).withUnsafeBufferPointer { parse(buffer: $0, maxDepth: maxDepth) }
    return try result.get()
  }

  /// Parses one complete JSON text (RFC 8259) from a string's UTF-8 encoding.
  public static func parse(_ text: String, maxDepth: Int = 32) throws(JSONParseError) -> JSONValue {
    try parse(text.utf8, maxDepth: maxDepth)
  }

  private static func parse(buffer: UnsafeBufferPointer<UInt8>, maxDepth: Int) -> Result<JSONValue, JSONParseError> {
    var parser = Parser(bytes: buffer, maxDepth: maxDepth)
    do {
      return .success(try parser.parseDocument())
    } catch {
      return .failure(error)
    }
  }
}

// MARK: - Implementation

private enum ASCII {
  static let tab: UInt8 = 0x09
  static let lineFeed: UInt8 = 0x0A
  static let carriageReturn: UInt8 = 0x0D
  static let space: UInt8 = 0x20
  static let quote: UInt8 = 0x22
  static let plus: UInt8 = 0x2B
  static let comma: UInt8 = 0x2C
  static let minus: UInt8 = 0x2D
  static let period: UInt8 = 0x2E
  static let slash: UInt8 = 0x2F
  static let zero: UInt8 = 0x30
  static let nine: UInt8 = 0x39
  static let colon: UInt8 = 0x3A
  static let upperE: UInt8 = 0x45
  static let openBracket: UInt8 = 0x5B
  static let backslash: UInt8 = 0x5C
  static let closeBracket: UInt8 = 0x5D
  static let lowerB: UInt8 = 0x62
  static let lowerE: UInt8 = 0x65
  static let lowerF: UInt8 = 0x66
  static let lowerN: UInt8 = 0x6E
  static let lowerR: UInt8 = 0x72
  static let lowerT: UInt8 = 0x74
  static let lowerU: UInt8 = 0x75
  static let openBrace: UInt8 = 0x7B
  static let closeBrace: UInt8 = 0x7D
}

/// Exact powers of ten representable in a Double (10^0 ... 10^22), for the fast number path.
private let exactPowersOfTen: [Double] = [
  1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
  1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
]

/// Objects with more members than this switch from a linear duplicate-key scan to a set.
private let linearKeyScanLimit = 12

private struct Parser {
  let bytes: UnsafeBufferPointer<UInt8>
  let end: Int
  let maxDepth: Int
  var index = 0
  /// Reused buffer for decoding strings that contain escapes.
  var scratch: [UInt8] = []

  init(bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
    self.bytes = bytes
    self.end = bytes.count
    self.maxDepth = maxDepth
  }

  // MARK: Errors

  func fail(_ reason: JSONParseError.Reason, at offset: Int, _ detail: String) -> JSONParseError {
    JSONParseError(offset: offset, reason: reason, detail: detail)
  }

  /// The error for "expected X" at the current index: unexpectedEnd at the end, unexpectedByte otherwise.
  func unexpected(expected: String) -> JSONParseError {
    guard index < end else {
      return fail(.unexpectedEnd, at: index, "unexpected end of input, expected \(expected)")
    }
    let byte = bytes[index]
    return fail(.unexpectedByte(byte), at: index, "expected \(expected), found \(Parser.describe(byte))")
  }

  static func describe(_ byte: UInt8) -> String {
    let hexDigits = Array("0123456789ABCDEF".utf8)
    let hex = String(decoding: [hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0xF)]], as: UTF8.self)
    if byte > 0x20 && byte < 0x7F {
      return "'\(String(decoding: [byte], as: UTF8.self))' (0x\(hex))"
    }
    return "byte 0x\(hex)"
  }

  // MARK: Document and containers

  mutating func parseDocument() throws(JSONParseError) -> JSONValue {
    // The container stack: one entry per open array/object (true = object), with the
    // partial contents kept in separate stacks so they can be appended to in place.
    var isObjectStack: [Bool] = []
    var arrayStack: [[JSONValue]] = []
    var objectStack: [[(String, JSONValue)]] = []
    var keySetStack: [Set<String>] = []
    var pendingKeyStack: [String] = []

    while true {
      // Parse the start of a value: either a complete scalar/empty container, or open a container.
      var value: JSONValue
      skipWhitespace()
      guard index < end else { throw unexpected(expected: "a value") }
      switch bytes[index] {
      case ASCII.openBrace:
        guard isObjectStack.count < maxDepth else {
          throw fail(.nestingTooDeep, at: index, "nesting deeper than \(maxDepth) levels")
        }
        index += 1
        skipWhitespace()
        if index < end && bytes[index] == ASCII.closeBrace {
          index += 1
          value = .object([])
        } else {
          let key = try parseKey(expected: "a string key or '}'")
          isObjectStack.append(true)
          objectStack.append([])
          keySetStack.append([])
          pendingKeyStack.append(key)
          continue
        }
      case ASCII.openBracket:
        guard isObjectStack.count < maxDepth else {
          throw fail(.nestingTooDeep, at: index, "nesting deeper than \(maxDepth) levels")
        }
        index += 1
        skipWhitespace()
        if index < end && bytes[index] == ASCII.closeBracket {
          index += 1
          value = .array([])
        } else {
          isObjectStack.append(false)
          arrayStack.append([])
          continue
        }
      case ASCII.quote:
        value = .string(try parseString())
      case ASCII.lowerT:
        try parseLiteral("true")
        value = .bool(true)
      case ASCII.lowerF:
        try parseLiteral("false")
        value = .bool(false)
      case ASCII.lowerN:
        try parseLiteral("null")
        value = .null
      case ASCII.minus, ASCII.zero...ASCII.nine:
        value = .number(try parseNumber())
      default:
        throw unexpected(expected: "a value")
      }

      // A value is complete: hand it to the enclosing containers, closing as many as end here.
      while true {
        guard let isObject = isObjectStack.last else {
          skipWhitespace()
          guard index == end else {
            throw fail(.trailingData, at: index, "unexpected data after the JSON value, found \(Parser.describe(bytes[index]))")
          }
          return value
        }
        skipWhitespace()
        if isObject {
          let top = objectStack.count - 1
          objectStack[top].append((pendingKeyStack.removeLast(), value))
          guard index < end else { throw unexpected(expected: "',' or '}' after an object member") }
          if bytes[index] == ASCII.comma {
            index += 1
            skipWhitespace()
            let keyOffset = index
            let key = try parseKey(expected: "a string key")
            if Parser.isDuplicate(key, in: objectStack[top], keySet: &keySetStack[top]) {
              throw fail(.duplicateKey(key), at: keyOffset, "duplicate key \"\(key)\" in an object")
            }
            pendingKeyStack.append(key)
            break
          } else if bytes[index] == ASCII.closeBrace {
            index += 1
            isObjectStack.removeLast()
            keySetStack.removeLast()
            value = .object(objectStack.removeLast())
          } else {
            throw unexpected(expected: "',' or '}' after an object member")
          }
        } else {
          let top = arrayStack.count - 1
          arrayStack[top].append(value)
          guard index < end else { throw unexpected(expected: "',' or ']' after an array element") }
          if bytes[index] == ASCII.comma {
            index += 1
            break
          } else if bytes[index] == ASCII.closeBracket {
            index += 1
            isObjectStack.removeLast()
            value = .array(arrayStack.removeLast())
          } else {
            throw unexpected(expected: "',' or ']' after an array element")
          }
        }
      }
    }
  }

  /// Whether `key` already names a member; small objects are scanned, larger ones use (and fill) `keySet`.
  static func isDuplicate(_ key: String, in members: [(String, JSONValue)], keySet: inout Set<String>) -> Bool {
    if members.count < linearKeyScanLimit {
      for (name, _) in members where name == key {
        return true
      }
      return false
    }
    if keySet.isEmpty {
      keySet.reserveCapacity(members.count * 2)
      for (name, _) in members {
        keySet.insert(name)
      }
    }
    return !keySet.insert(key).inserted
  }

  /// Parses `"key"` followed by optional whitespace and `:`, leaving the index after the colon.
  mutating func parseKey(expected: String) throws(JSONParseError) -> String {
    guard index < end, bytes[index] == ASCII.quote else { throw unexpected(expected: expected) }
    let key = try parseString()
    skipWhitespace()
    guard index < end, bytes[index] == ASCII.colon else { throw unexpected(expected: "':' after an object key") }
    index += 1
    return key
  }

  mutating func skipWhitespace() {
    while index < end {
      switch bytes[index] {
      case ASCII.space, ASCII.lineFeed, ASCII.carriageReturn, ASCII.tab:
        index += 1
      default:
        return
      }
    }
  }

  mutating func parseLiteral(_ literal: StaticString) throws(JSONParseError) {
    let start = index
    let count = literal.utf8CodeUnitCount
    for offset in 0..<count {
      let position = start + offset
      guard position < end, bytes[position] == literal.utf8Start[offset] else {
        index = position
        throw unexpected(expected: "the literal '\(literal)'")
      }
    }
    index = start + count
  }

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
    guard index < end, Parser.isDigit(bytes[index]) else {
      throw fail(.invalidNumber, at: index, "expected a digit in a number")
    }
    if bytes[index] == ASCII.zero {
      index += 1
      if index < end && Parser.isDigit(bytes[index]) {
        throw fail(.invalidNumber, at: start, "a number must not have leading zeros")
      }
    } else {
      while index < end && Parser.isDigit(bytes[index]) {
        accumulate(bytes[index])
        index += 1
      }
    }

    // Fraction.
    if index < end && bytes[index] == ASCII.period {
      index += 1
      guard index < end, Parser.isDigit(bytes[index]) else {
        throw fail(.invalidNumber, at: index, "expected a digit after '.' in a number")
      }
      while index < end && Parser.isDigit(bytes[index]) {
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
      guard index < end, Parser.isDigit(bytes[index]) else {
        throw fail(.invalidNumber, at: index, "expected a digit in a number's exponent")
      }
      var exponent = 0
      while index < end && Parser.isDigit(bytes[index]) {
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
        throw fail(.controlCharacterInString, at: index, "raw control character \(Parser.describe(byte)) in a string")
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
      throw fail(.invalidUTF8, at: start, "invalid UTF-8 in a string: \(Parser.describe(lead)) cannot start a character")
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
      throw fail(.invalidEscape, at: start, "invalid escape sequence '\\' followed by \(Parser.describe(bytes[start + 1]))")
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
        throw fail(.invalidEscape, at: escapeStart, "expected four hex digits in a \\u escape, found \(Parser.describe(byte))")
      }
      value = value << 4 | UInt32(digit)
    }
    return value
  }
}
