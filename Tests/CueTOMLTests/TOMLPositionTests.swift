import Testing

@testable import CueTOML

/// `TOMLParser.parseDocument` files each key where it is written, so the config's checks can name the
/// line of the key they refuse without reading the text again.
@Suite("Where each key is written")
struct TOMLPositionTests {
  static func positions(_ text: String) throws -> [TOMLKeyPath: TOMLPosition] {
    try TOMLParser.parseDocument(Array(text.utf8)).positions
  }

  static func at(_ line: Int, _ column: Int) -> TOMLPosition { TOMLPosition(line: line, column: column) }

  @Test func keysDottedKeysAndHeaders() throws {
    let text = """
      top = 1
        "quoted key" = 2
      a . b.c = 3
      [t]
      x = 4
      [ u . 'v' ]
      y = { z = 5, w.q = 6 }

      """
    #expect(
      try Self.positions(text) == [
        [.key("top")]: Self.at(1, 1),
        [.key("quoted key")]: Self.at(2, 3),
        [.key("a")]: Self.at(3, 1), [.key("a"), .key("b")]: Self.at(3, 5), [.key("a"), .key("b"), .key("c")]: Self.at(3, 7),
        [.key("t")]: Self.at(4, 2), [.key("t"), .key("x")]: Self.at(5, 1),
        [.key("u")]: Self.at(6, 3), [.key("u"), .key("v")]: Self.at(6, 7),
        [.key("u"), .key("v"), .key("y")]: Self.at(7, 1),
        [.key("u"), .key("v"), .key("y"), .key("z")]: Self.at(7, 7),
        [.key("u"), .key("v"), .key("y"), .key("w")]: Self.at(7, 14),
        [.key("u"), .key("v"), .key("y"), .key("w"), .key("q")]: Self.at(7, 16),
      ])
  }

  /// A table implied by a header or a dotted key is filed where it is first named, until its own
  /// header defines it.
  @Test func anImpliedTableMovesToItsOwnHeader() throws {
    let positions = try Self.positions("[a.b]\nx = 1\n[a]\ny = 2\n[c.d]\n")
    #expect(positions[[.key("a")]] == Self.at(3, 2))
    #expect(positions[[.key("a"), .key("b")]] == Self.at(1, 4))
    #expect(positions[[.key("a"), .key("y")]] == Self.at(4, 1))
    #expect(positions[[.key("c")]] == Self.at(5, 2))
  }

  @Test func arraysOfTablesAndInlineTablesInArraysFileEachElement() throws {
    let positions = try Self.positions("[[s]]\nk = 1\n[[s]]\nk = 2\n[s.sub]\nm = 3\nr = [{ e = 1 }, { e = 2 }]\n")
    #expect(positions[[.key("s")]] == Self.at(1, 3))
    #expect(positions[[.key("s"), .index(0)]] == Self.at(1, 3))
    #expect(positions[[.key("s"), .index(0), .key("k")]] == Self.at(2, 1))
    #expect(positions[[.key("s"), .index(1)]] == Self.at(3, 3))
    #expect(positions[[.key("s"), .index(1), .key("k")]] == Self.at(4, 1))
    #expect(positions[[.key("s"), .index(1), .key("sub"), .key("m")]] == Self.at(6, 1))
    #expect(positions[[.key("s"), .index(1), .key("sub"), .key("r"), .index(1), .key("e")]] == Self.at(7, 19))
  }

  @Test func linesCountCRLFMultiLineStringsAndArrays() throws {
    let positions = try Self.positions("\u{FEFF}a = \"\"\"\r\none\r\ntwo\"\"\"\r\nb = [\n  1,\n]\nc = 3\n")
    #expect(positions[[.key("a")]] == Self.at(1, 1))
    #expect(positions[[.key("b")]] == Self.at(4, 1))
    #expect(positions[[.key("c")]] == Self.at(7, 1))
  }

  @Test func parseGivesTheSameTreeAsParseDocument() throws {
    let bytes = Array("a.b = 1\n[[c]]\nd = [1, { e = 'f' }]\n".utf8)
    #expect(try TOMLParser.parse(bytes) == TOMLParser.parseDocument(bytes).root)
  }
}

/// Checks a valid document's positions against its text and tree: every key of every table in the
/// tree is filed, every filed path is in the tree, and the text at each position starts the key
/// (its name, or the quote of a quoted key). Returns the first problem, or nil.
func positionProblem(in bytes: [UInt8], _ document: TOMLDocument) -> String? {
  var lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false).map(Array.init)
  if lines.first?.starts(with: [0xEF, 0xBB, 0xBF]) == true { lines[0].removeFirst(3) }
  var keys: [TOMLKeyPath] = []
  func walk(_ value: TOMLValue, _ path: TOMLKeyPath) {
    switch value {
    case .table(let table):
      for (key, inner) in table {
        keys.append(path + [.key(key)])
        walk(inner, path + [.key(key)])
      }
    case .array(let elements): for (index, element) in elements.enumerated() { walk(element, path + [.index(index)]) }
    default: break
    }
  }
  walk(.table(document.root), [])
  if let missing = keys.first(where: { document.positions[$0] == nil }) { return "no position for \(missing)" }
  for (path, position) in document.positions {
    var value = TOMLValue.table(document.root)
    for component in path {
      switch (component, value) {
      case (.key(let key), .table(let table)) where table[key] != nil: value = table[key]!
      case (.index(let index), .array(let elements)) where elements.indices.contains(index): value = elements[index]
      default: return "\(path) is filed at \(position) but is not in the tree"
      }
    }
    guard position.line <= lines.count, position.column >= 1, position.column <= lines[position.line - 1].count else {
      return "\(path) is filed at \(position), outside the text"
    }
    let text = lines[position.line - 1].dropFirst(position.column - 1)
    let key: String
    switch path.last {
    case .key(let name)?: key = name
    case .index?, nil:
      // An element of [[a]]: the position of the a in its header.
      guard case .key(let name)? = path.dropLast().last else { return "\(path) has no key" }
      key = name
    }
    guard text.starts(with: key.utf8) || text.first == 0x22 || text.first == 0x27 else {
      return "\(path) is filed at \(position), where the text is \(String(decoding: text.prefix(20), as: UTF8.self).debugDescription)"
    }
  }
  return nil
}
