/// Serialises `JSONValue`s as compact, single-line JSON text.
///
/// Output rules:
/// - no insignificant whitespace; object members in stored order;
/// - strings escape `"`, `\`, every control character below U+0020 (`\n \r \t \b \f`, otherwise `\u00XX`)
///   and U+2028/U+2029, so the text never contains a raw line break of any kind;
/// - integral numbers with magnitude below 2^53 are written without a decimal point (`3`, `-7`, `0`,
///   and `-0` for negative zero); other finite numbers use Swift's shortest round-trip form
///   (`0.5`, `1e-07`, `1e+300`); non-finite numbers (NaN, ±infinity) are written as `null`.
///
/// For every value without non-finite numbers, `JSONParser.parse(JSONWriter.write(v)) == v`.
public enum JSONWriter {
  /// Serialises a value compactly (no spaces), object keys in stored order, into one line: never emits a raw newline.
  public static func write(_ value: JSONValue) -> String {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(64)
    write(value, into: &bytes)
    return String(decoding: bytes, as: UTF8.self)
  }

  /// Appends the compact serialisation of a value to `bytes` (same format as `write(_:)`).
  public static func write(_ value: JSONValue, into bytes: inout [UInt8]) {
    switch value {
    case .null:
      bytes.append(contentsOf: "null".utf8)
    case .bool(let bool):
      bytes.append(contentsOf: bool ? "true".utf8 : "false".utf8)
    case .number(let number):
      writeNumber(number, into: &bytes)
    case .string(let string):
      writeString(string, into: &bytes)
    case .array(let elements):
      bytes.append(UInt8(ascii: "["))
      for (position, element) in elements.enumerated() {
        if position > 0 { bytes.append(UInt8(ascii: ",")) }
        write(element, into: &bytes)
      }
      bytes.append(UInt8(ascii: "]"))
    case .object(let members):
      bytes.append(UInt8(ascii: "{"))
      for (position, member) in members.enumerated() {
        if position > 0 { bytes.append(UInt8(ascii: ",")) }
        writeString(member.0, into: &bytes)
        bytes.append(UInt8(ascii: ":"))
        write(member.1, into: &bytes)
      }
      bytes.append(UInt8(ascii: "}"))
    }
  }

  /// Appends a number: integral below 2^53 without a decimal point, non-finite as `null`.
  static func writeNumber(_ number: Double, into bytes: inout [UInt8]) {
    guard number.isFinite else {
      bytes.append(contentsOf: "null".utf8)
      return
    }
    // The Int64 round trip tests integrality without calling libm's trunc.
    if number.magnitude < 9_007_199_254_740_992, Double(Int64(number)) == number {
      if number == 0 {
        bytes.append(contentsOf: number.sign == .minus ? "-0".utf8 : "0".utf8)
      } else {
        writeInteger(Int64(number), into: &bytes)
      }
    } else {
      // Swift's shortest round-trip form, e.g. "0.5", "1e-07", "1e+300", "9007199254740992.0":
      // always valid JSON for finite values.
      bytes.append(contentsOf: number.description.utf8)
    }
  }

  /// Appends the decimal digits of an integer whose magnitude is below 2^53.
  static func writeInteger(_ integer: Int64, into bytes: inout [UInt8]) {
    if integer < 0 { bytes.append(UInt8(ascii: "-")) }
    var magnitude = integer.magnitude
    let firstDigit = bytes.count
    repeat {
      bytes.append(UInt8(ascii: "0") + UInt8(magnitude % 10))
      magnitude /= 10
    } while magnitude > 0
    bytes[firstDigit...].reverse()
  }

  /// Appends a quoted, escaped string.
  static func writeString(_ string: String, into bytes: inout [UInt8]) {
    bytes.append(UInt8(ascii: "\""))
    var string = string
    string.withUTF8 { utf8 in
      let hexDigits: StaticString = "0123456789abcdef"
      var runStart = 0
      var position = 0
      let count = utf8.count
      while position < count {
        let byte = utf8[position]
        var escape: StaticString? = nil
        var skip = 1
        switch byte {
        case UInt8(ascii: "\""): escape = "\\\""
        case UInt8(ascii: "\\"): escape = "\\\\"
        case 0x0A: escape = "\\n"
        case 0x0D: escape = "\\r"
        case 0x09: escape = "\\t"
        case 0x08: escape = "\\b"
        case 0x0C: escape = "\\f"
        case 0x00..<0x20:
          bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<position]))
          bytes.append(contentsOf: "\\u00".utf8)
          bytes.append(hexDigits.utf8Start[Int(byte >> 4)])
          bytes.append(hexDigits.utf8Start[Int(byte & 0xF)])
          position += 1
          runStart = position
          continue
        case 0xE2:
          // U+2028 LINE SEPARATOR is E2 80 A8, U+2029 PARAGRAPH SEPARATOR is E2 80 A9.
          if position + 2 < count && utf8[position + 1] == 0x80 {
            if utf8[position + 2] == 0xA8 {
              escape = "\\u2028"
              skip = 3
            } else if utf8[position + 2] == 0xA9 {
              escape = "\\u2029"
              skip = 3
            }
          }
        default:
          break
        }
        if let escape {
          bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<position]))
          escape.withUTF8Buffer { bytes.append(contentsOf: $0) }
          position += skip
          runStart = position
        } else {
          position += 1
        }
      }
      bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<count]))
    }
    bytes.append(UInt8(ascii: "\""))
  }
}
