// Strings, numbers, dates and times: the scalar values of TOML 1.0, read from the bytes.

extension Parser {
  // MARK: Strings

  /// `"…"` with escapes, on one line.
  mutating func basicString() throws(TOMLError) -> String {
    index += 1
    var text: [UInt8] = []
    while true {
      guard let b = peek else { throw fail("the string is not closed with \" before the end of the file") }
      switch b {
      case Byte.quote:
        index += 1
        return String(decoding: text, as: UTF8.self)
      case Byte.backslash: try escape(into: &text)
      case Byte.newline, Byte.carriageReturn:
        throw fail("the string is not closed with \" on its line (use \"\"\" for a string of several lines)")
      case _ where Byte.isControl(b):
        throw fail("a string cannot hold the control character 0x\(String(b, radix: 16, uppercase: true)); write it as an escape (\\u…)")
      default:
        text.append(b)
        index += 1
      }
    }
  }

  /// `'…'`, as written, on one line.
  mutating func literalString() throws(TOMLError) -> String {
    index += 1
    let start = index
    while true {
      guard let b = peek else { throw fail("the string is not closed with ' before the end of the file") }
      switch b {
      case Byte.apostrophe:
        index += 1
        return String(decoding: bytes[start..<index - 1], as: UTF8.self)
      case Byte.newline, Byte.carriageReturn:
        throw fail("the string is not closed with ' on its line (use ''' for a string of several lines)")
      case _ where Byte.isControl(b):
        throw fail("a literal string cannot hold the control character 0x\(String(b, radix: 16, uppercase: true))")
      default: index += 1
      }
    }
  }

  /// `"""…"""` (escapes, and a backslash at a line's end joins lines) or `'''…'''` (as written).
  /// A newline right after the opening quotes is dropped; CRLF becomes LF.
  mutating func multiLineString(literal: Bool) throws(TOMLError) -> String {
    let opened = here
    let delimiter = literal ? Byte.apostrophe : Byte.quote
    index += 3
    if peek == Byte.newline || (peek == Byte.carriageReturn && peek(1) == Byte.newline) { try newline() }
    var text: [UInt8] = []
    while true {
      guard let b = peek else {
        throw fail("the multi-line string opened on line \(opened.line) is not closed before the end of the file", at: opened)
      }
      switch b {
      case delimiter:
        var run = 0
        while peek == delimiter {
          run += 1
          index += 1
        }
        guard run >= 3 else {
          text.append(contentsOf: repeatElement(delimiter, count: run))
          continue
        }
        // Up to two quotes may sit against the closing three.
        guard run <= 5 else { throw fail("a multi-line string holds at most two quotes in a row before its closing three") }
        text.append(contentsOf: repeatElement(delimiter, count: run - 3))
        return String(decoding: text, as: UTF8.self)
      case Byte.backslash where !literal: try escape(into: &text, multiLine: true)
      case Byte.newline, Byte.carriageReturn:
        try newline()
        text.append(Byte.newline)
      case _ where Byte.isControl(b):
        throw fail("a string cannot hold the control character 0x\(String(b, radix: 16, uppercase: true))")
      default:
        text.append(b)
        index += 1
      }
    }
  }

  /// Reads the escape at the cursor (`\n`, `\u00E9`, …) into `text`; in a multi-line string, a
  /// backslash that ends its line drops it and every space and newline after it.
  mutating func escape(into text: inout [UInt8], multiLine: Bool = false) throws(TOMLError) {
    let mark = here
    index += 1
    guard let b = peek else { throw fail("the string ends in a lone backslash") }
    index += 1
    switch b {
    case 0x62: text.append(0x08)  // \b
    case 0x74: text.append(Byte.tab)  // \t
    case 0x6E: text.append(Byte.newline)  // \n
    case 0x66: text.append(0x0C)  // \f
    case 0x72: text.append(Byte.carriageReturn)  // \r
    case Byte.quote, Byte.backslash: text.append(b)
    case 0x75, 0x55:  // \uXXXX, \UXXXXXXXX
      let count = b == 0x75 ? 4 : 8
      var code: UInt32 = 0
      for _ in 0..<count {
        guard let digit = peek.flatMap(Self.hexValue) else {
          throw fail("\\\(b == 0x75 ? "u" : "U") takes exactly \(count) hexadecimal digits", at: mark)
        }
        code = code << 4 | UInt32(digit)
        index += 1
      }
      guard let scalar = Unicode.Scalar(code) else {
        throw fail("\\\(b == 0x75 ? "u" : "U")\(String(code, radix: 16, uppercase: true)) is not a Unicode scalar value", at: mark)
      }
      UTF8.encode(scalar) { text.append($0) }
    case Byte.space, Byte.tab, Byte.newline, Byte.carriageReturn:
      // A line-ending backslash (multi-line strings only): only spaces may follow it on its line.
      index -= 1
      guard multiLine else {
        throw fail("a backslash before \(found) is not an escape; write \\\\ for a backslash, or use \"\"\" to join lines", at: mark)
      }
      skipSpaces()
      guard peek == Byte.newline || peek == Byte.carriageReturn else {
        throw fail("a backslash followed by a space must end its line (to join lines); write \\\\ for a backslash", at: mark)
      }
      while let next = peek, next == Byte.space || next == Byte.tab || next == Byte.newline || next == Byte.carriageReturn {
        if next == Byte.space || next == Byte.tab { index += 1 } else { try newline() }
      }
    default:
      let shown = b >= 0x21 && b < 0x7F ? "\\" + String(Character(Unicode.Scalar(b))) : "a backslash before \(found)"
      throw fail(
        "\(shown) is not an escape; TOML has \\b \\t \\n \\f \\r \\\" \\\\ \\uXXXX and \\UXXXXXXXX (write \\\\ for a backslash)", at: mark)
    }
  }

  static func hexValue(_ b: UInt8) -> UInt8? {
    if Byte.isDigit(b) { return b - 0x30 }
    let lower = b | 0x20
    if lower >= 0x61 && lower <= 0x66 { return lower - 0x61 + 10 }
    return nil
  }

  // MARK: Numbers, dates and times

  /// An integer, float, date, time or date-time: the run of bytes that can make one, then its form.
  mutating func numberOrDate() throws(TOMLError) -> TOMLValue {
    let mark = here
    let start = index
    while let b = peek, Byte.isBareKey(b) || b == Byte.plus || b == Byte.dot || b == Byte.colon { index += 1 }
    var token = Array(bytes[start..<index])
    if Self.isDate(token[...]), peek == Byte.space, let h = peek(1), Byte.isDigit(h), let m = peek(2), Byte.isDigit(m), peek(3) == Byte.colon {
      // `1979-05-27 07:32:00`: a space may stand for the T.
      index += 1
      token.append(0x54)
      while let b = peek, Byte.isBareKey(b) || b == Byte.plus || b == Byte.dot || b == Byte.colon {
        token.append(b)
        index += 1
      }
    }
    if token.contains(Byte.colon) || Self.isDate(token[...]) { return .dateTime(try dateTime(token, at: mark)) }
    return try number(token[...], at: mark)
  }

  static func isDate(_ token: ArraySlice<UInt8>) -> Bool {
    let t = Array(token.prefix(10))
    return t.count == 10 && t[4] == Byte.minus && t[7] == Byte.minus && [0, 1, 2, 3, 5, 6, 8, 9].allSatisfy { Byte.isDigit(t[$0]) }
  }

  func number(_ token: ArraySlice<UInt8>, at mark: TOMLPosition) throws(TOMLError) -> TOMLValue {
    let text = String(decoding: token, as: UTF8.self)
    var digits = token
    let negative = digits.first == Byte.minus
    let signed = negative || digits.first == Byte.plus
    if signed { digits = digits.dropFirst() }
    if digits.elementsEqual("inf".utf8) { return .float(negative ? -.infinity : .infinity) }
    if digits.elementsEqual("nan".utf8) { return .float(.nan) }
    // 0x, 0o, 0b: no sign, digits of the base with single underscores between them.
    if digits.count > 2, digits.first == 0x30, let radix = [0x78: 16, 0x6F: 8, 0x62: 2][digits[digits.startIndex + 1]] {
      if signed { throw fail("\(text): a hexadecimal, octal or binary integer takes no sign", at: mark) }
      let body = digits.dropFirst(2)
      guard Self.separated(body, by: { Self.hexValue($0).map { Int($0) < radix } ?? false }) else {
        throw fail("\(text) is not a valid base-\(radix) integer", at: mark)
      }
      var value: UInt64 = 0
      for b in body where b != Byte.underscore {
        let (shifted, overflow) = value.multipliedReportingOverflow(by: UInt64(radix))
        guard !overflow, shifted | UInt64(Self.hexValue(b)!) <= UInt64(Int64.max) else {
          throw fail("\(text) is out of range for a 64-bit integer", at: mark)
        }
        value = shifted | UInt64(Self.hexValue(b)!)
      }
      return .integer(Int64(value))
    }
    // Decimal: an integer part without leading zeros, then a fraction and/or an exponent for a float.
    let integerEnd = digits.firstIndex { $0 == Byte.dot || $0 == 0x65 || $0 == 0x45 } ?? digits.endIndex
    let integerPart = digits[..<integerEnd]
    guard Self.separated(integerPart, by: Byte.isDigit) else { throw fail("\(text) is not a valid number", at: mark) }
    if integerPart.count > 1 && integerPart.first == 0x30 { throw fail("\(text): a number cannot start with 0 (leading zeros are not allowed)", at: mark) }
    if integerEnd == digits.endIndex {
      var magnitude: UInt64 = 0
      for b in integerPart where b != Byte.underscore {
        let (times10, overflow) = magnitude.multipliedReportingOverflow(by: 10)
        let (sum, overflow2) = times10.addingReportingOverflow(UInt64(b - 0x30))
        guard !overflow, !overflow2 else { throw fail("\(text) is out of range for a 64-bit integer", at: mark) }
        magnitude = sum
      }
      let limit = negative ? UInt64(Int64.max) + 1 : UInt64(Int64.max)
      guard magnitude <= limit else { throw fail("\(text) is out of range for a 64-bit integer", at: mark) }
      return .integer(negative ? Int64(truncatingIfNeeded: 0 &- magnitude) : Int64(magnitude))
    }
    var rest = digits[integerEnd...]
    if rest.first == Byte.dot {
      let fractionEnd = rest.dropFirst().firstIndex { $0 == 0x65 || $0 == 0x45 } ?? rest.endIndex
      guard Self.separated(rest[(rest.startIndex + 1)..<fractionEnd], by: Byte.isDigit) else {
        throw fail("\(text): a float needs digits on both sides of its point", at: mark)
      }
      rest = rest[fractionEnd...]
    }
    if let e = rest.first, e == 0x65 || e == 0x45 {
      var exponent = rest.dropFirst()
      if exponent.first == Byte.plus || exponent.first == Byte.minus { exponent = exponent.dropFirst() }
      guard Self.separated(exponent, by: Byte.isDigit) else { throw fail("\(text): the exponent needs digits", at: mark) }
    } else if !rest.isEmpty {
      throw fail("\(text) is not a valid number", at: mark)
    }
    guard let value = Double(String(decoding: token.filter { $0 != Byte.underscore }, as: UTF8.self)) else {
      throw fail("\(text) is not a valid number", at: mark)
    }
    return .float(value)
  }

  /// Non-empty, every byte `isDigit` or an underscore, each underscore between two digits.
  static func separated(_ run: ArraySlice<UInt8>, by isDigit: (UInt8) -> Bool) -> Bool {
    guard let first = run.first, let last = run.last, isDigit(first), isDigit(last) else { return false }
    var previous = first
    for b in run {
      if b == Byte.underscore {
        if previous == Byte.underscore { return false }
      } else if !isDigit(b) {
        return false
      }
      previous = b
    }
    return true
  }

  /// `YYYY-MM-DD`, `HH:MM:SS[.frac]`, or both joined by `T` with an optional `Z` or `±HH:MM`.
  func dateTime(_ token: [UInt8], at mark: TOMLPosition) throws(TOMLError) -> TOMLDateTime {
    let text = String(decoding: token, as: UTF8.self)
    func invalid(_ why: String) -> TOMLError {
      fail("\(text) is not a valid date or time: \(why) (RFC 3339: 1979-05-27, 07:32:00, 1979-05-27T07:32:00Z)", at: mark)
    }
    var t = token
    var position = 0
    func number(_ count: Int, _ separator: UInt8?) -> Int? {
      guard position + count <= t.count, t[position..<position + count].allSatisfy(Byte.isDigit) else { return nil }
      let value = t[position..<position + count].reduce(0) { $0 * 10 + Int($1 - 0x30) }
      position += count
      if let separator {
        guard position < t.count, t[position] == separator else { return nil }
        position += 1
      }
      return value
    }
    func time() throws(TOMLError) {
      guard let hour = number(2, Byte.colon), let minute = number(2, Byte.colon), let second = number(2, nil) else {
        throw invalid("a time is HH:MM:SS")
      }
      guard hour < 24, minute < 60, second <= 60 else { throw invalid("the hour, minute or second is out of range") }
      if position < t.count, t[position] == Byte.dot {
        position += 1
        let digits = t[position...].prefix(while: Byte.isDigit).count
        guard digits > 0 else { throw invalid("a fraction of a second needs digits") }
        position += digits
      }
    }
    var hasDate = false
    if Self.isDate(t[...]) {
      hasDate = true
      let year = number(4, Byte.minus)!, month = number(2, Byte.minus)!, day = number(2, nil)!
      let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
      let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
      guard (1...12).contains(month), day >= 1, day <= days[month - 1] else { throw invalid("no such day") }
      if position == t.count { return TOMLDateTime(.localDate, text) }
      guard t[position] == 0x54 || t[position] == 0x74 else { throw invalid("a date and a time are joined by T or a space") }
      t[position] = 0x54
      position += 1
    }
    try time()
    if position == t.count { return TOMLDateTime(hasDate ? .localDateTime : .localTime, String(decoding: t, as: UTF8.self)) }
    guard hasDate else { throw invalid("a time without a date takes no offset") }
    if t[position] == 0x5A || t[position] == 0x7A {
      t[position] = 0x5A
      position += 1
    } else if t[position] == Byte.plus || t[position] == Byte.minus {
      position += 1
      guard let hour = number(2, Byte.colon), let minute = number(2, nil), hour < 24, minute < 60 else {
        throw invalid("an offset is Z or ±HH:MM")
      }
    }
    guard position == t.count else { throw invalid("unexpected text after the time") }
    return TOMLDateTime(.offsetDateTime, String(decoding: t, as: UTF8.self))
  }
}
