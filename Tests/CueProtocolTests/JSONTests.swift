import Testing

@testable import CueProtocol

// MARK: - Helpers

/// A tiny deterministic xorshift64* generator, so random tests are reproducible.
struct XorShift: RandomNumberGenerator {
  var state: UInt64
  init(seed: UInt64) { state = seed == 0 ? 0x9E37_79B9_7F4A_7C15 : seed }
  mutating func next() -> UInt64 {
    state ^= state >> 12
    state ^= state << 25
    state ^= state >> 27
    return state &* 0x2545_F491_4F6C_DD1D
  }
}

/// Parses and returns the error, or nil (recording an issue) when parsing succeeded.
private func parseError(_ bytes: [UInt8], maxDepth: Int = 32) -> JSONParseError? {
  do {
    let value = try JSONParser.parse(bytes, maxDepth: maxDepth)
    Issue.record("expected a parse error, got \(value)")
    return nil
  } catch {
    return error
  }
}

private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

// MARK: - Valid documents

struct ValidCase: Sendable, CustomTestStringConvertible {
  var text: String
  var expected: JSONValue
  var testDescription: String { text }
}

@Test(arguments: [
  ValidCase(text: "null", expected: .null),
  ValidCase(text: "true", expected: true),
  ValidCase(text: "false", expected: false),
  ValidCase(text: "0", expected: 0),
  ValidCase(text: "-12", expected: -12),
  ValidCase(text: "3.25", expected: 3.25),
  ValidCase(text: "-1.5E+2", expected: -150),
  ValidCase(text: "2e-3", expected: 0.002),
  ValidCase(text: "\"\"", expected: ""),
  ValidCase(text: "\"héllo wörld ✓\"", expected: "héllo wörld ✓"),
  ValidCase(text: "[]", expected: []),
  ValidCase(text: "{}", expected: [:]),
  ValidCase(text: " \t\r\n[ 1 , \"two\" , [ ] , { } , null ] \n", expected: [1, "two", [], [:], nil]),
  ValidCase(
    text: #"{"cue":"bell","gain":-6.5,"loop":false,"tags":["a","b"],"opts":{"fade":{"ms":250}},"x":null}"#,
    expected: [
      "cue": "bell", "gain": -6.5, "loop": false, "tags": ["a", "b"],
      "opts": ["fade": ["ms": 250]], "x": nil,
    ]),
  ValidCase(text: "[[[[[\"deep\"]]]]]", expected: [[[[["deep"]]]]]),
])
func parsesValidDocumentsOfEveryKind(_ testCase: ValidCase) throws {
  #expect(try JSONParser.parse(testCase.text) == testCase.expected)
  // The byte-collection entry point agrees, also for a non-contiguous collection.
  #expect(try JSONParser.parse(bytes(testCase.text)) == testCase.expected)
  #expect(try JSONParser.parse(bytes(testCase.text).lazy.map { $0 }) == testCase.expected)
}

// MARK: - Invalid documents

struct InvalidCase: Sendable, CustomTestStringConvertible {
  var name: String
  var input: [UInt8]
  var reason: JSONParseError.Reason
  var offset: Int?

  init(_ text: String, _ reason: JSONParseError.Reason, at offset: Int? = nil) {
    name = text
    input = Array(text.utf8)
    self.reason = reason
    self.offset = offset
  }

  init(name: String, bytes: [UInt8], _ reason: JSONParseError.Reason, at offset: Int? = nil) {
    self.name = name
    input = bytes
    self.reason = reason
    self.offset = offset
  }

  var testDescription: String { name }
}

@Test(arguments: [
  // Numbers
  InvalidCase("01", .invalidNumber, at: 0),
  InvalidCase("-01", .invalidNumber, at: 0),
  InvalidCase("[00]", .invalidNumber, at: 1),
  InvalidCase("+1", .unexpectedByte(UInt8(ascii: "+")), at: 0),
  InvalidCase("NaN", .unexpectedByte(UInt8(ascii: "N")), at: 0),
  InvalidCase("Infinity", .unexpectedByte(UInt8(ascii: "I")), at: 0),
  InvalidCase("-Infinity", .invalidNumber, at: 1),
  InvalidCase("1.", .invalidNumber, at: 2),
  InvalidCase("1.e5", .invalidNumber, at: 2),
  InvalidCase(".5", .unexpectedByte(UInt8(ascii: ".")), at: 0),
  InvalidCase("1e", .invalidNumber, at: 2),
  InvalidCase("1e+", .invalidNumber, at: 3),
  InvalidCase("-", .invalidNumber, at: 1),
  InvalidCase("0x10", .trailingData, at: 1),
  InvalidCase("1e400", .numberOutOfRange, at: 0),
  InvalidCase("[-1e400]", .numberOutOfRange, at: 1),
  // Structure
  InvalidCase("[1,]", .unexpectedByte(UInt8(ascii: "]")), at: 3),
  InvalidCase("{\"a\":1,}", .unexpectedByte(UInt8(ascii: "}")), at: 7),
  InvalidCase("{'a':1}", .unexpectedByte(UInt8(ascii: "'")), at: 1),
  InvalidCase("{\"a\" 1}", .unexpectedByte(UInt8(ascii: "1")), at: 5),
  InvalidCase("{\"a\":1 \"b\":2}", .unexpectedByte(UInt8(ascii: "\"")), at: 7),
  InvalidCase("[1 2]", .unexpectedByte(UInt8(ascii: "2")), at: 3),
  InvalidCase("{1:2}", .unexpectedByte(UInt8(ascii: "1")), at: 1),
  InvalidCase("[1", .unexpectedEnd, at: 2),
  InvalidCase("{\"a\":", .unexpectedEnd, at: 5),
  InvalidCase("tru", .unexpectedEnd, at: 3),
  InvalidCase("nul1", .unexpectedByte(UInt8(ascii: "1")), at: 3),
  InvalidCase("True", .unexpectedByte(UInt8(ascii: "T")), at: 0),
  InvalidCase("", .unexpectedEnd, at: 0),
  InvalidCase(" \n\t ", .unexpectedEnd, at: 4),
  InvalidCase("{} x", .trailingData, at: 3),
  InvalidCase("1 2", .trailingData, at: 2),
  InvalidCase("[]]", .trailingData, at: 2),
  InvalidCase("{\"a\":1,\"a\":2}", .duplicateKey("a"), at: 7),
  InvalidCase("{\"a\":{\"b\":1,\"b\":2}}", .duplicateKey("b"), at: 12),
  // Whitespace other than space/tab/CR/LF
  InvalidCase(name: "form feed as whitespace", bytes: [0x0C, 0x31], .unexpectedByte(0x0C), at: 0),
  InvalidCase(name: "byte order mark", bytes: [0xEF, 0xBB, 0xBF, 0x31], .unexpectedByte(0xEF), at: 0),
  // Strings
  InvalidCase("\"abc", .unexpectedEnd, at: 4),
  InvalidCase("\"a\\", .unexpectedEnd, at: 3),
  InvalidCase(name: "raw newline in string", bytes: [0x22, 0x61, 0x0A, 0x22], .controlCharacterInString, at: 2),
  InvalidCase(name: "raw NUL in string", bytes: [0x22, 0x00, 0x22], .controlCharacterInString, at: 1),
  InvalidCase(name: "raw tab in string", bytes: [0x22, 0x09, 0x22], .controlCharacterInString, at: 1),
  InvalidCase(#""\x41""#, .invalidEscape, at: 1),
  InvalidCase(#""\'""#, .invalidEscape, at: 1),
  InvalidCase(#""\u12G4""#, .invalidEscape, at: 1),
  InvalidCase(#""\u12""#, .invalidEscape, at: 1),
  InvalidCase(#""\ud800""#, .invalidEscape, at: 1),
  InvalidCase(#""\ud800x""#, .invalidEscape, at: 1),
  InvalidCase(#""\ud800\n""#, .invalidEscape, at: 1),
  InvalidCase(#""\ud800\u0041""#, .invalidEscape, at: 1),
  InvalidCase(#""\udc00""#, .invalidEscape, at: 1),
  InvalidCase(#""\ude00\ud83d""#, .invalidEscape, at: 1),
  // UTF-8
  InvalidCase(name: "invalid continuation C3 28", bytes: [0x22, 0xC3, 0x28, 0x22], .invalidUTF8, at: 1),
  InvalidCase(name: "overlong C0 AF", bytes: [0x22, 0xC0, 0xAF, 0x22], .invalidUTF8, at: 1),
  InvalidCase(name: "overlong E0 80 AF", bytes: [0x22, 0xE0, 0x80, 0xAF, 0x22], .invalidUTF8, at: 1),
  InvalidCase(name: "overlong F0 80 80 AF", bytes: [0x22, 0xF0, 0x80, 0x80, 0xAF, 0x22], .invalidUTF8, at: 1),
  InvalidCase(name: "UTF-8 encoded surrogate ED A0 80", bytes: [0x22, 0xED, 0xA0, 0x80, 0x22], .invalidUTF8, at: 1),
  InvalidCase(name: "above U+10FFFF F4 90 80 80", bytes: [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22], .invalidUTF8, at: 1),
  InvalidCase(name: "lead byte F5", bytes: [0x22, 0xF5, 0x80, 0x80, 0x80, 0x22], .invalidUTF8, at: 1),
  InvalidCase(name: "FF in string", bytes: [0x22, 0xFF, 0x22], .invalidUTF8, at: 1),
  InvalidCase(name: "lone continuation byte", bytes: [0x22, 0x80, 0x22], .invalidUTF8, at: 1),
  InvalidCase(name: "truncated sequence at end", bytes: [0x22, 0xE2, 0x82], .invalidUTF8, at: 1),
  InvalidCase(name: "truncated sequence before quote", bytes: [0x22, 0xE2, 0x82, 0x22], .invalidUTF8, at: 1),
  InvalidCase(name: "FF outside a string", bytes: [0xFF], .unexpectedByte(0xFF), at: 0),
  InvalidCase(name: "FF after a value", bytes: [0x5B, 0x31, 0x5D, 0xFF], .trailingData, at: 3),
])
func rejectsInvalidInputWithTheExpectedReason(_ testCase: InvalidCase) {
  guard let error = parseError(testCase.input) else { return }
  #expect(error.reason == testCase.reason, "\(error.message)")
  if let offset = testCase.offset {
    #expect(error.offset == offset, "\(error.message)")
  }
  #expect(error.message.hasPrefix("invalid JSON at byte \(error.offset): "))
}

@Test func errorMessageNamesTheByteOffsetAndWhatWasExpected() {
  let error = parseError(bytes(#"{"volume": 1 x}"#))
  #expect(error?.offset == 13)
  #expect(error?.message == "invalid JSON at byte 13: expected ',' or '}' after an object member, found 'x' (0x78)")
}

@Test func duplicateKeysAreFoundInLargeObjects() throws {
  // Past the linear-scan limit the parser switches to a set; both must catch duplicates.
  let members = (0..<100).map { "\"k\($0)\":\($0)" }
  let valid = "{" + members.joined(separator: ",") + "}"
  #expect(try JSONParser.parse(valid).objectKeys?.count == 100)

  for duplicate in [0, 11, 12, 13, 50, 99] {
    let text = "{" + (members + ["\"k\(duplicate)\":0"]).joined(separator: ",") + "}"
    #expect(parseError(bytes(text))?.reason == .duplicateKey("k\(duplicate)"))
  }
}

// MARK: - Nesting

@Test func deepNestingIsRejectedWithoutExhaustingTheStack() {
  let input = [UInt8](repeating: UInt8(ascii: "["), count: 100_000)
  let error = parseError(input)
  #expect(error?.reason == .nestingTooDeep)
  #expect(error?.offset == 32)

  let objects = Array(String(repeating: "{\"a\":", count: 100_000).utf8)
  #expect(parseError(objects)?.reason == .nestingTooDeep)
}

@Test func nestingUpToMaxDepthIsAcceptedAndOneMoreIsNot() throws {
  func nested(_ depth: Int) -> String {
    String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
  }
  #expect(try JSONParser.parse(nested(32)).arrayValue != nil)
  #expect(parseError(bytes(nested(33)))?.reason == .nestingTooDeep)
  #expect(try JSONParser.parse(nested(5), maxDepth: 5).arrayValue != nil)
  #expect(parseError(bytes(nested(6)), maxDepth: 5)?.reason == .nestingTooDeep)
  #expect(try JSONParser.parse("7", maxDepth: 0) == 7)
  #expect(parseError(bytes("[]"), maxDepth: 0)?.reason == .nestingTooDeep)
}

@Test func aHugeMaxDepthStillCannotOverflowTheStack() {
  // The parser is iterative: 100k unclosed brackets with no depth limit just run out of input.
  let input = [UInt8](repeating: UInt8(ascii: "["), count: 100_000)
  #expect(parseError(input, maxDepth: .max)?.reason == .unexpectedEnd)
}

// MARK: - Numbers

struct NumberCase: Sendable, CustomTestStringConvertible {
  var text: String
  var expected: Double
  var testDescription: String { text }
}

@Test(arguments: [
  NumberCase(text: "0", expected: 0),
  NumberCase(text: "0.1", expected: 0.1),
  NumberCase(text: "-0.0", expected: -0.0),
  NumberCase(text: "123456789", expected: 123_456_789),
  NumberCase(text: "9007199254740992", expected: 9_007_199_254_740_992),
  NumberCase(text: "9007199254740993", expected: 9_007_199_254_740_992),  // rounds to even
  NumberCase(text: "9007199254740995", expected: 9_007_199_254_740_996),
  NumberCase(text: "1e22", expected: 1e22),
  NumberCase(text: "1e23", expected: 1e23),
  NumberCase(text: "1.7976931348623157e308", expected: .greatestFiniteMagnitude),
  NumberCase(text: "2.2250738585072014e-308", expected: .leastNormalMagnitude),
  NumberCase(text: "4.9406564584124654e-324", expected: .leastNonzeroMagnitude),
  NumberCase(text: "1e-400", expected: 0),
  NumberCase(text: "0e999999999999", expected: 0),
  NumberCase(text: "0.30000000000000004", expected: 0.30000000000000004),
  NumberCase(text: "123456789012345678901234567890", expected: 123456789012345678901234567890.0),
  NumberCase(text: "0.000001234", expected: 0.000001234),
  NumberCase(text: "1234.5678e-2", expected: 12.345678),
  NumberCase(text: "1E+2", expected: 100),
])
func parsesNumbersToTheCorrectlyRoundedDouble(_ testCase: NumberCase) throws {
  let value = try JSONParser.parse(testCase.text)
  let parsed = try #require(value.doubleValue)
  #expect(parsed.bitPattern == testCase.expected.bitPattern)
  // Agrees with the standard library's conversion too.
  #expect(parsed.bitPattern == Double(testCase.text)?.bitPattern)
}

@Test func negativeZeroKeepsItsSign() throws {
  let value = try #require(try JSONParser.parse("-0").doubleValue)
  #expect(value == 0)
  #expect(value.sign == .minus)
}

@Test func randomDecimalTextsParseLikeTheStandardLibraryOrAreOutOfRange() throws {
  var random = XorShift(seed: 42)
  for _ in 0..<5_000 {
    let integerDigits = Int.random(in: 1...20, using: &random)
    var text = Int.random(in: 0...1, using: &random) == 0 ? "" : "-"
    text += String(Int.random(in: 1...9, using: &random))
    for _ in 1..<integerDigits { text += String(Int.random(in: 0...9, using: &random)) }
    if Bool.random(using: &random) {
      text += "."
      for _ in 0..<Int.random(in: 1...20, using: &random) { text += String(Int.random(in: 0...9, using: &random)) }
    }
    if Bool.random(using: &random) {
      text += "e" + String(Int.random(in: -330...300, using: &random))
    }
    let reference = try #require(Double(text))
    if reference.isFinite {
      let parsed = try #require(try JSONParser.parse(text).doubleValue)
      #expect(parsed.bitPattern == reference.bitPattern, "\(text)")
    } else {
      #expect(parseError(bytes(text))?.reason == .numberOutOfRange, "\(text)")
    }
  }
}

struct IntValueCase: Sendable, CustomTestStringConvertible {
  var value: JSONValue
  var expected: Int?
  var testDescription: String { "\(value)" }
}

@Test(arguments: [
  IntValueCase(value: .number(1.0), expected: 1),
  IntValueCase(value: .number(-42), expected: -42),
  IntValueCase(value: .number(-0.0), expected: 0),
  IntValueCase(value: .number(1.5), expected: nil),
  IntValueCase(value: .number(1e300), expected: nil),
  IntValueCase(value: .number(9_007_199_254_740_992), expected: 9_007_199_254_740_992),
  IntValueCase(value: .number(-9_007_199_254_740_992), expected: -9_007_199_254_740_992),
  IntValueCase(value: .number(9_007_199_254_740_994), expected: nil),
  IntValueCase(value: .number(.nan), expected: nil),
  IntValueCase(value: .number(.infinity), expected: nil),
  IntValueCase(value: .string("1"), expected: nil),
  IntValueCase(value: .bool(true), expected: nil),
])
func intValueIsOnlyForIntegralNumbersWithinTwoToThe53(_ testCase: IntValueCase) {
  #expect(testCase.value.intValue == testCase.expected)
}

// MARK: - Strings

struct StringCase: Sendable, CustomTestStringConvertible {
  var json: String
  var expected: String
  var testDescription: String { json }
}

@Test(arguments: [
  StringCase(json: #""\"\\\/\b\f\n\r\t""#, expected: "\"\\/\u{08}\u{0C}\n\r\t"),
  StringCase(json: #""\u0041\u00e9\u20AC""#, expected: "Aé€"),
  StringCase(json: #""\u0000""#, expected: "\u{0}"),
  StringCase(json: #""\ud83d\ude00""#, expected: "😀"),
  StringCase(json: #""a\uD834\uDD1Eb""#, expected: "a𝄞b"),
  StringCase(json: #""plain 😀 text""#, expected: "plain 😀 text"),
  StringCase(json: #""mixed é\n😀\u2028end""#, expected: "mixed é\n😀\u{2028}end"),
  StringCase(json: "\"\u{7F}\u{10FFFF}\"", expected: "\u{7F}\u{10FFFF}"),
])
func decodesStringEscapesAndUTF8(_ testCase: StringCase) throws {
  #expect(try JSONParser.parse(testCase.json) == .string(testCase.expected))
}

@Test func objectKeysAreDecodedLikeStrings() throws {
  let value = try JSONParser.parse(#"{"caf\u00e9":1,"\ud83d\ude00":2}"#)
  #expect(value.objectKeys == ["café", "😀"])
  #expect(value["😀"] == 2)
}

// MARK: - JSONValue conveniences

@Test func objectsKeepInsertionOrderAndSubscriptFindsTheFirstMatch() throws {
  let value = try JSONParser.parse(#"{"zeta":1,"alpha":2,"mid":{"x":true}}"#)
  #expect(value.objectKeys == ["zeta", "alpha", "mid"])
  #expect(value["alpha"]?.intValue == 2)
  #expect(value["mid"]?["x"]?.boolValue == true)
  #expect(value["missing"] == nil)
  #expect(JSONValue.array([1])["a"] == nil)

  let duplicated = JSONValue.object([("k", 1), ("k", 2)])
  #expect(duplicated["k"] == 1)
}

@Test func objectEqualityComparesPairsInOrder() {
  let ab: JSONValue = ["a": 1, "b": 2]
  #expect(ab == .object([("a", 1), ("b", 2)]))
  #expect(ab != .object([("b", 2), ("a", 1)]))
  #expect(ab != .object([("a", 1)]))
  #expect(ab != .object([("a", 1), ("b", 3)]))
  #expect(JSONValue.number(1) != .string("1"))
  #expect(JSONValue.null != .bool(false))
}

@Test func accessorsReturnNilForOtherKinds() {
  let string: JSONValue = "s"
  #expect(string.stringValue == "s")
  #expect(string.doubleValue == nil)
  #expect(string.boolValue == nil)
  #expect(string.arrayValue == nil)
  #expect(string.objectKeys == nil)
  let number: JSONValue = 2.5
  #expect(number.doubleValue == 2.5)
  #expect(number.stringValue == nil)
  let array: JSONValue = [true, nil]
  #expect(array.arrayValue == [.bool(true), .null])
  #expect(JSONValue.null.isNull)
  #expect(!array.isNull)
}

// MARK: - Writer

struct WriteCase: Sendable, CustomTestStringConvertible {
  var value: JSONValue
  var expected: String
  var testDescription: String { expected }
}

@Test(arguments: [
  WriteCase(value: nil, expected: "null"),
  WriteCase(value: true, expected: "true"),
  WriteCase(value: false, expected: "false"),
  WriteCase(value: 3, expected: "3"),
  WriteCase(value: -7, expected: "-7"),
  WriteCase(value: 0, expected: "0"),
  WriteCase(value: .number(-0.0), expected: "-0"),
  WriteCase(value: 1.0, expected: "1"),
  WriteCase(value: 9_007_199_254_740_991, expected: "9007199254740991"),
  WriteCase(value: -9_007_199_254_740_991, expected: "-9007199254740991"),
  WriteCase(value: 0.5, expected: "0.5"),
  WriteCase(value: -2.25, expected: "-2.25"),
  WriteCase(value: 1e-7, expected: "1e-07"),
  WriteCase(value: 1e300, expected: "1e+300"),
  WriteCase(value: .number(.nan), expected: "null"),
  WriteCase(value: .number(.infinity), expected: "null"),
  WriteCase(value: .number(-.infinity), expected: "null"),
  WriteCase(value: "", expected: #""""#),
  WriteCase(value: "a\"b\\c/", expected: #""a\"b\\c/""#),
  WriteCase(value: "\n\r\t\u{08}\u{0C}", expected: #""\n\r\t\b\f""#),
  WriteCase(value: "\u{0}\u{1}\u{1F}\u{7F}", expected: "\"\\u0000\\u0001\\u001f\u{7F}\""),
  WriteCase(value: "x\u{2028}y\u{2029}z", expected: #""x\u2028y\u2029z""#),
  WriteCase(value: "é😀\u{2027}", expected: "\"é😀\u{2027}\""),
  WriteCase(value: [], expected: "[]"),
  WriteCase(value: [:], expected: "{}"),
  WriteCase(value: [1, "a", nil, [true]], expected: #"[1,"a",null,[true]]"#),
  WriteCase(value: ["z": 1, "a": ["n\n": false], "m": []], expected: #"{"z":1,"a":{"n\n":false},"m":[]}"#),
])
func writesCompactJSON(_ testCase: WriteCase) {
  #expect(JSONWriter.write(testCase.value) == testCase.expected)
  var bytes: [UInt8] = [UInt8(ascii: ">")]
  JSONWriter.write(testCase.value, into: &bytes)
  #expect(bytes == [UInt8(ascii: ">")] + Array(testCase.expected.utf8))
  #expect(testCase.value.description == testCase.expected)
}

@Test func writerEscapesEveryControlCharacterAndNeverEmitsALineBreak() throws {
  var scalars = (0..<0x20).map { Character(Unicode.Scalar(UInt8($0))) }
  scalars += ["\u{2028}", "\u{2029}", "\u{85}", "\"", "\\"]
  let text = String(scalars)
  let value: JSONValue = ["key\n\u{2028}": .string(text), "list": [.string(text)]]
  let written = JSONWriter.write(value)
  #expect(!written.utf8.contains { $0 < 0x20 })
  #expect(!written.unicodeScalars.contains("\u{2028}"))
  #expect(!written.unicodeScalars.contains("\u{2029}"))
  #expect(try JSONParser.parse(written) == value)
}

@Test func writerProducesLargeIntegersAndFractionsThatParseBackExactly() throws {
  for number in [9_007_199_254_740_992.0, 1e16, -1e20, 123456.789, 1e-300, .leastNonzeroMagnitude, .greatestFiniteMagnitude] {
    let written = JSONWriter.write(.number(number))
    #expect(try JSONParser.parse(written).doubleValue?.bitPattern == number.bitPattern, "\(written)")
  }
}

// MARK: - Round trip

@Test(arguments: [
  JSONValue.null,
  true,
  -0.0,
  42,
  0.1,
  -1.5e-10,
  6.02214076e23,
  "",
  "tab\there \"quoted\" back\\slash \u{0}\u{1F} é 😀 \u{2028}",
  [],
  [:],
  [1, 2.5, "three", nil, false, [[], [:]]],
  ["b": ["y": [1, 2], "x": nil], "a": "", "": 0, "😀": ["\n": true]],
])
func parseOfWriteReturnsTheSameValue(_ value: JSONValue) throws {
  #expect(try JSONParser.parse(JSONWriter.write(value)) == value)
}

@Test func randomDoublesRoundTripBitExactly() throws {
  var random = XorShift(seed: 7)
  var checked = 0
  while checked < 20_000 {
    let number = Double(bitPattern: random.next())
    guard number.isFinite else { continue }
    let written = JSONWriter.write(.number(number))
    let parsed = try #require(try JSONParser.parse(written).doubleValue)
    #expect(parsed.bitPattern == number.bitPattern, "\(written)")
    checked += 1
  }
}

@Test func randomValuesRoundTrip() throws {
  var random = XorShift(seed: 2024)
  func randomString() -> String {
    let pool: [Unicode.Scalar] = ["a", "Z", " ", "\"", "\\", "/", "\n", "\u{0}", "\u{1F}", "é", "€", "😀", "\u{2028}", "\u{FFFF}"]
    var scalars = String.UnicodeScalarView()
    for _ in 0..<Int.random(in: 0...8, using: &random) { scalars.append(pool.randomElement(using: &random)!) }
    return String(scalars)
  }
  func randomValue(depth: Int) -> JSONValue {
    switch Int.random(in: 0...(depth > 4 ? 3 : 5), using: &random) {
    case 0: return .null
    case 1: return .bool(Bool.random(using: &random))
    case 2: return .number(Double(Int.random(in: -1000...1000, using: &random)) / 8)
    case 3: return .string(randomString())
    case 4: return .array((0..<Int.random(in: 0...4, using: &random)).map { _ in randomValue(depth: depth + 1) })
    default:
      var members: [(String, JSONValue)] = []
      for index in 0..<Int.random(in: 0...4, using: &random) {
        members.append(("\(index)" + randomString(), randomValue(depth: depth + 1)))
      }
      return .object(members)
    }
  }
  for _ in 0..<2_000 {
    let value = randomValue(depth: 0)
    let written = JSONWriter.write(value)
    #expect(!written.utf8.contains(0x0A))
    #expect(try JSONParser.parse(written) == value, "\(written)")
  }
}

// MARK: - Robustness

@Test func mutatedDocumentsNeverCrashTheParser() throws {
  let seeds = [
    #"{"cue":"bell","gain":-6.5,"tags":["a","\u00e9\ud83d\ude00"],"opts":{"n":[1e3,0.25,null,true]}}"#,
    #"[[[{"a":[]}]],"\\\"",-0.0e-0,"é😀"]"#,
  ].map { Array($0.utf8) }
  let interesting: [UInt8] = [0x00, 0x0A, 0x22, 0x5C, 0x5B, 0x5D, 0x7B, 0x7D, 0x2C, 0x3A, 0x30, 0x2D, 0x65, 0x2E, 0x75, 0x80, 0xC3, 0xED, 0xF0, 0xFF]
  var random = XorShift(seed: 99)
  for _ in 0..<20_000 {
    var input = seeds.randomElement(using: &random)!
    for _ in 0..<Int.random(in: 1...4, using: &random) {
      let position = Int.random(in: 0..<input.count, using: &random)
      switch Int.random(in: 0...3, using: &random) {
      case 0: input[position] = interesting.randomElement(using: &random)!
      case 1: input[position] = UInt8.random(in: 0...255, using: &random)
      case 2: input.remove(at: position)
      default: input.insert(interesting.randomElement(using: &random)!, at: position)
      }
      if input.isEmpty { break }
    }
    if Bool.random(using: &random) { input = Array(input.prefix(Int.random(in: 0...input.count, using: &random))) }
    let result = Result { () throws(JSONParseError) in try JSONParser.parse(input) }
    switch result {
    case .success(let value):
      #expect(try JSONParser.parse(JSONWriter.write(value)) == value)
    case .failure(let error):
      #expect(error.offset >= 0 && error.offset <= input.count)
    }
  }
}
