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
    var parser = JSONTextParser(bytes: buffer, maxDepth: maxDepth)
    do {
      return .success(try parser.parseDocument())
    } catch {
      return .failure(error)
    }
  }
}

// MARK: - Implementation

enum ASCII {
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
let exactPowersOfTen: [Double] = [
  1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
  1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
]

/// Objects with more members than this switch from a linear duplicate-key scan to a set.
private let linearKeyScanLimit = 12

/// The parser's state and its grammar; numbers and strings are in JSONParser+Scalars.swift.
struct JSONTextParser {
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
    return fail(.unexpectedByte(byte), at: index, "expected \(expected), found \(JSONTextParser.describe(byte))")
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
            throw fail(.trailingData, at: index, "unexpected data after the JSON value, found \(JSONTextParser.describe(bytes[index]))")
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
            if JSONTextParser.isDuplicate(key, in: objectStack[top], keySet: &keySetStack[top]) {
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
}
