/// Reads a TOML 1.0 document (https://toml.io/en/v1.0.0) from its bytes into a table of values.
///
/// One pass over the bytes, no Foundation. Every rule of the specification is checked, the
/// redefinition rules included (a key set twice, a table defined twice, an inline table extended,
/// a key then a table of the same name); the first problem is thrown as a `TOMLError` with its
/// line and column. Strings are built from the bytes between their quotes, so the document must
/// be UTF-8 (it is checked first). `parseDocument` also gives each key's line and column, so what
/// checks the values can point at the key it refuses. toml-test, the TOML suite, holds it to all this
/// (Tests/CueTOMLTests/TOMLTestSuiteTests.swift).
public enum TOMLParser {
  /// The document's root table. Throws the first problem found.
  public static func parse(_ bytes: [UInt8]) throws(TOMLError) -> [String: TOMLValue] {
    try parseDocument(bytes).root
  }

  /// The document's root table, and where each of its keys is written. Throws the first problem found.
  public static func parseDocument(_ bytes: [UInt8]) throws(TOMLError) -> TOMLDocument {
    try checkUTF8(bytes)
    var parser = Parser(bytes: bytes)
    try parser.document()
    return TOMLDocument(root: parser.root.value, positions: parser.positions)
  }

  /// Throws naming the first line that is not UTF-8.
  static func checkUTF8(_ bytes: [UInt8]) throws(TOMLError) {
    if String(validating: bytes, as: UTF8.self) != nil { return }
    var line = 1
    for slice in bytes.split(separator: 0x0A, omittingEmptySubsequences: false) {
      if String(validating: slice, as: UTF8.self) == nil {
        throw TOMLError(line: line, column: 1, message: "the line is not valid UTF-8 (a TOML file is UTF-8 text)")
      }
      line += 1
    }
  }
}

/// A table while the document is read: where it came from decides what may still add to it.
final class TableNode {
  enum Origin {
    /// Made on the way to a `[a.b]` header (`a`); a later `[a]` may still define it.
    case implicit
    /// Defined by a `[header]` (or the root, or an element of `[[header]]`).
    case header
    /// Made by a dotted key (`a.b = 1` makes `a`); later dotted keys in the same table add to it.
    case dotted
  }

  enum Entry {
    /// A value given with `=` (an inline table or array included: they are closed once written).
    case value(TOMLValue)
    case table(TableNode)
    /// `[[name]]`: the last element is the one later headers and keys add to.
    case tables(TableArray)
  }

  var origin: Origin
  /// Its keys from the root: where `TOMLDocument.positions` files the keys set in it.
  let path: TOMLKeyPath
  var entries: [String: Entry] = [:]
  init(_ origin: Origin, path: TOMLKeyPath) {
    self.origin = origin
    self.path = path
  }

  var value: [String: TOMLValue] {
    entries.mapValues { entry in
      switch entry {
      case .value(let value): return value
      case .table(let table): return .table(table.value)
      case .tables(let array): return .array(array.tables.map { .table($0.value) })
      }
    }
  }
}

final class TableArray {
  var tables: [TableNode] = []
}

/// ASCII bytes by name.
enum Byte {
  static let tab: UInt8 = 0x09, newline: UInt8 = 0x0A, carriageReturn: UInt8 = 0x0D, space: UInt8 = 0x20
  static let quote: UInt8 = 0x22, hash: UInt8 = 0x23, apostrophe: UInt8 = 0x27, plus: UInt8 = 0x2B
  static let comma: UInt8 = 0x2C, minus: UInt8 = 0x2D, dot: UInt8 = 0x2E, colon: UInt8 = 0x3A, equals: UInt8 = 0x3D
  static let openBracket: UInt8 = 0x5B, backslash: UInt8 = 0x5C, closeBracket: UInt8 = 0x5D, underscore: UInt8 = 0x5F
  static let openBrace: UInt8 = 0x7B, closeBrace: UInt8 = 0x7D, delete: UInt8 = 0x7F

  static func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }
  static func isLetter(_ b: UInt8) -> Bool { (b | 0x20) >= 0x61 && (b | 0x20) <= 0x7A }
  static func isBareKey(_ b: UInt8) -> Bool { isLetter(b) || isDigit(b) || b == minus || b == underscore }
  /// A control character TOML allows nowhere but as an escape (tab is allowed; newlines are handled apart).
  static func isControl(_ b: UInt8) -> Bool { (b < 0x20 && b != tab) || b == delete }
}

struct Parser {
  let bytes: [UInt8]
  var index = 0
  var line = 1
  var lineStart = 0
  let root = TableNode(.header, path: [])
  /// Where each key was written, filed by its path (`TOMLDocument.positions`).
  var positions: [TOMLKeyPath: TOMLPosition] = [:]
  /// The table key/value lines add to: the root, then that of the last header.
  var current: TableNode

  init(bytes: [UInt8]) {
    self.bytes = bytes
    current = root
  }

  // MARK: Position and errors

  var peek: UInt8? { index < bytes.count ? bytes[index] : nil }
  func peek(_ offset: Int) -> UInt8? { index + offset < bytes.count ? bytes[index + offset] : nil }
  var here: TOMLPosition { TOMLPosition(line: line, column: index - lineStart + 1) }

  func fail(_ message: String, at mark: TOMLPosition? = nil) -> TOMLError {
    let mark = mark ?? here
    return TOMLError(line: mark.line, column: mark.column, message: message)
  }

  /// What is at the cursor, for messages: `'x'`, "the end of the line", "the end of the file".
  var found: String {
    guard let b = peek else { return "the end of the file" }
    if b == Byte.newline || b == Byte.carriageReturn { return "the end of the line" }
    if b >= 0x21 && b < 0x7F { return "'\(Character(Unicode.Scalar(b)))'" }
    if b == Byte.space || b == Byte.tab { return "a space" }
    if b >= 0x80 { return "a non-ASCII character" }
    return "the control character 0x" + String(b, radix: 16, uppercase: true)
  }

  // MARK: Lines

  mutating func document() throws(TOMLError) {
    if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3; lineStart = 3 }
    while true {
      skipSpaces()
      guard let b = peek else { return }
      switch b {
      case Byte.newline, Byte.carriageReturn: try newline()
      case Byte.hash: try comment()
      case Byte.openBracket:
        try header()
        try endOfLine(after: "the table header")
      default:
        try keyValue(into: current)
        try endOfLine(after: "the value")
      }
    }
  }

  mutating func skipSpaces() {
    while let b = peek, b == Byte.space || b == Byte.tab { index += 1 }
  }

  /// Consumes LF or CRLF.
  mutating func newline() throws(TOMLError) {
    if peek == Byte.carriageReturn {
      guard peek(1) == Byte.newline else { throw fail("a carriage return must be followed by a line feed") }
      index += 1
    }
    index += 1
    line += 1
    lineStart = index
  }

  /// Consumes `# …` up to (not including) the line's end.
  mutating func comment() throws(TOMLError) {
    index += 1
    while let b = peek, b != Byte.newline {
      if b == Byte.carriageReturn && peek(1) == Byte.newline { return }
      if Byte.isControl(b) { throw fail("a comment cannot hold the control character 0x" + String(b, radix: 16, uppercase: true)) }
      index += 1
    }
  }

  /// After a value or header: spaces, an optional comment, then the line's end or the file's.
  mutating func endOfLine(after what: String) throws(TOMLError) {
    skipSpaces()
    if peek == Byte.hash { try comment() }
    guard peek != nil else { return }
    guard peek == Byte.newline || peek == Byte.carriageReturn else {
      throw fail("expected the end of the line after \(what), found \(found)")
    }
    try newline()
  }

  /// Skips spaces, newlines and comments (inside arrays).
  mutating func skipBlank() throws(TOMLError) {
    while let b = peek {
      switch b {
      case Byte.space, Byte.tab: index += 1
      case Byte.newline, Byte.carriageReturn: try newline()
      case Byte.hash: try comment()
      default: return
      }
    }
  }

  // MARK: Keys

  /// A dotted key: `a`, `a.b`, `"a b".'c'`; its parts, and where each is written.
  mutating func key() throws(TOMLError) -> (parts: [String], marks: [TOMLPosition]) {
    var marks = [here]
    var parts = [try keyPart()]
    while true {
      skipSpaces()
      guard peek == Byte.dot else { return (parts, marks) }
      index += 1
      skipSpaces()
      marks.append(here)
      parts.append(try keyPart())
    }
  }

  /// Files `path` as written at `mark`; a position already filed stays unless `replacing`.
  mutating func place(_ path: TOMLKeyPath, at mark: TOMLPosition, replacing: Bool = false) {
    if replacing || positions[path] == nil { positions[path] = mark }
  }

  mutating func keyPart() throws(TOMLError) -> String {
    switch peek {
    case Byte.quote:
      if peek(1) == Byte.quote && peek(2) == Byte.quote { throw fail("a key cannot be a multi-line string") }
      return try basicString()
    case Byte.apostrophe:
      if peek(1) == Byte.apostrophe && peek(2) == Byte.apostrophe { throw fail("a key cannot be a multi-line string") }
      return try literalString()
    case let b? where Byte.isBareKey(b):
      let start = index
      while let b = peek, Byte.isBareKey(b) { index += 1 }
      return String(decoding: bytes[start..<index], as: UTF8.self)
    default:
      throw fail("expected a key (letters, digits, - and _, or a quoted string), found \(found)")
    }
  }

  static func spoken(_ key: some Sequence<String>) -> String {
    key.map { part in part.utf8.allSatisfy(Byte.isBareKey) && !part.isEmpty ? part : "\"\(part)\"" }.joined(separator: ".")
  }

  // MARK: Values

  /// The value at the cursor, which is the value of `path` (an inline table's keys are filed under it).
  mutating func value(at path: TOMLKeyPath) throws(TOMLError) -> TOMLValue {
    guard let b = peek else { throw fail("expected a value, found the end of the file") }
    switch b {
    case Byte.quote:
      if peek(1) == Byte.quote && peek(2) == Byte.quote { return .string(try multiLineString(literal: false)) }
      return .string(try basicString())
    case Byte.apostrophe:
      if peek(1) == Byte.apostrophe && peek(2) == Byte.apostrophe { return .string(try multiLineString(literal: true)) }
      return .string(try literalString())
    case Byte.openBracket: return try array(at: path)
    case Byte.openBrace: return try inlineTable(at: path)
    case 0x74, 0x66, 0x54, 0x46:  // t, f (T, F: a hint)
      if keyword("true") { return .boolean(true) }
      if keyword("false") { return .boolean(false) }
      throw fail("expected a value, found \(found) (true and false are lowercase)")
    case _ where Byte.isDigit(b) || b == Byte.plus || b == Byte.minus || b == 0x69 || b == 0x6E:  // i(nf), n(an)
      return try numberOrDate()
    default:
      throw fail("expected a value (a string, number, boolean, date, array or inline table), found \(found)")
    }
  }

  /// Consumes `word` when it is next and not the start of a longer word.
  mutating func keyword(_ word: StaticString) -> Bool {
    let count = word.utf8CodeUnitCount
    guard index + count <= bytes.count else { return false }
    let matches = word.withUTF8Buffer { expected in bytes[index..<index + count].elementsEqual(expected) }
    guard matches, index + count == bytes.count || !Byte.isBareKey(bytes[index + count]) else { return false }
    index += count
    return true
  }

  mutating func array(at path: TOMLKeyPath) throws(TOMLError) -> TOMLValue {
    let opened = here
    index += 1
    var elements: [TOMLValue] = []
    while true {
      try skipBlank()
      if peek == Byte.closeBracket {
        index += 1
        return .array(elements)
      }
      if peek == nil { throw fail("the array opened on line \(opened.line) is not closed with ]", at: opened) }
      elements.append(try value(at: path + [.index(elements.count)]))
      try skipBlank()
      switch peek {
      case Byte.comma: index += 1
      case Byte.closeBracket:
        index += 1
        return .array(elements)
      case nil: throw fail("the array opened on line \(opened.line) is not closed with ]", at: opened)
      default: throw fail("expected , or ] in the array, found \(found)")
      }
    }
  }
}
