// Key/value lines, `[table]` and `[[array]]` headers, and inline tables: where values go, the
// redefinition rules, and where each key is written.

extension Parser {
  // MARK: Key/value pairs and headers

  /// `key = value`, added to `table`: dotted keys make or enter tables of their own.
  mutating func keyValue(into table: TableNode) throws(TOMLError) {
    let mark = here
    let (key, marks) = try key()
    skipSpaces()
    guard peek == Byte.equals else { throw fail("expected = after the key \(Self.spoken(key)), found \(found)") }
    index += 1
    skipSpaces()
    let value = try value(at: table.path + key.map(TOMLPathComponent.key))
    var target = table
    for (position, part) in key.dropLast().enumerated() {
      let path = Self.spoken(key[...position])
      switch target.entries[part] {
      case nil: target = makeTable(.dotted, named: part, in: target, at: marks[position])
      case .table(let inner) where inner.origin == .dotted: target = inner
      case .table: throw fail("the table \(path) is defined by a [header]; a dotted key cannot add to it", at: mark)
      case .tables: throw fail("\(path) is an array of tables; a dotted key cannot add to it", at: mark)
      case .value(let value): throw fail(Self.notATable(path, value), at: mark)
      }
    }
    let name = key[key.count - 1]
    if let existing = target.entries[name] {
      if case .value = existing { throw fail("the key \(Self.spoken(key)) is set twice", at: mark) }
      throw fail("\(Self.spoken(key)) is already a table; it cannot also be set with =", at: mark)
    }
    target.entries[name] = .value(value)
    place(target.path + [.key(name)], at: marks[marks.count - 1])
  }

  /// A new table `name` in `table`, filed as written at `mark`.
  mutating func makeTable(_ origin: TableNode.Origin, named name: String, in table: TableNode, at mark: TOMLPosition) -> TableNode {
    let made = TableNode(origin, path: table.path + [.key(name)])
    table.entries[name] = .table(made)
    place(made.path, at: mark)
    return made
  }

  static func notATable(_ path: String, _ value: TOMLValue) -> String {
    if case .table = value { return "\(path) is an inline table, which cannot be extended: write all its keys inside { }" }
    return "\(path) is already set to \(kindName(value)), not a table"
  }

  static func kindName(_ value: TOMLValue) -> String {
    switch value {
    case .string: return "a string"
    case .integer: return "an integer"
    case .float: return "a float"
    case .boolean: return "a boolean"
    case .dateTime: return "a date or time"
    case .array: return "an array"
    case .table: return "an inline table"
    }
  }

  /// `[a.b]` or `[[a.b]]`: makes the named table (or a new element of the array) current.
  mutating func header() throws(TOMLError) {
    let mark = here
    index += 1
    let isArray = peek == Byte.openBracket
    if isArray { index += 1 }
    skipSpaces()
    let (key, marks) = try key()
    skipSpaces()
    let shown = isArray ? "[[\(Self.spoken(key))]]" : "[\(Self.spoken(key))]"
    guard peek == Byte.closeBracket, !isArray || peek(1) == Byte.closeBracket else {
      throw fail("expected \(isArray ? "]]" : "]") to close the header \(shown), found \(found)")
    }
    index += isArray ? 2 : 1
    var target = root
    for (position, part) in key.dropLast().enumerated() {
      switch target.entries[part] {
      case nil: target = makeTable(.implicit, named: part, in: target, at: marks[position])
      case .table(let inner): target = inner
      case .tables(let array): target = array.tables[array.tables.count - 1]
      case .value(let value): throw fail(Self.notATable(Self.spoken(key[...position]), value), at: mark)
      }
    }
    let name = key[key.count - 1]
    let path = Self.spoken(key)
    let keyPath = target.path + [.key(name)]
    let nameMark = marks[marks.count - 1]
    if isArray {
      switch target.entries[name] {
      case nil:
        let array = TableArray()
        let made = TableNode(.header, path: keyPath + [.index(0)])
        array.tables.append(made)
        target.entries[name] = .tables(array)
        place(keyPath, at: nameMark)
        place(made.path, at: nameMark)
        current = made
      case .tables(let array):
        let made = TableNode(.header, path: keyPath + [.index(array.tables.count)])
        array.tables.append(made)
        place(made.path, at: nameMark)
        current = made
      case .table: throw fail("\(shown): \(path) is already a table, not an array of tables", at: mark)
      case .value(.array): throw fail("\(shown): \(path) is an array given with =, which cannot be extended", at: mark)
      case .value(let value): throw fail("\(shown): " + Self.notATable(path, value), at: mark)
      }
      return
    }
    switch target.entries[name] {
    case nil: current = makeTable(.header, named: name, in: target, at: nameMark)
    case .table(let existing):
      switch existing.origin {
      case .implicit:
        // Defined here: its header is where it is written, not the header that implied it.
        existing.origin = .header
        place(keyPath, at: nameMark, replacing: true)
        current = existing
      case .header: throw fail("the table \(shown) is defined twice", at: mark)
      case .dotted: throw fail("the table \(shown) is already defined by dotted keys (\(path).…)", at: mark)
      }
    case .tables: throw fail("\(shown): \(path) is an array of tables; add to it with [[\(path)]]", at: mark)
    case .value(let value): throw fail("\(shown): " + Self.notATable(path, value), at: mark)
    }
  }

  /// `{ a = 1, b.c = 2 }`: on one line, no trailing comma; closed once written.
  mutating func inlineTable(at path: TOMLKeyPath) throws(TOMLError) -> TOMLValue {
    index += 1
    let table = TableNode(.header, path: path)
    skipSpaces()
    if peek == Byte.closeBrace {
      index += 1
      return .table([:])
    }
    while true {
      skipSpaces()
      if peek == Byte.newline || peek == Byte.carriageReturn || peek == Byte.hash {
        throw fail("an inline table stays on one line (TOML 1.0): close it with } before the line ends")
      }
      if peek == Byte.closeBrace { throw fail("an inline table takes no comma after its last key") }
      try keyValue(into: table)
      skipSpaces()
      switch peek {
      case Byte.comma: index += 1
      case Byte.closeBrace:
        index += 1
        return .table(table.value)
      case Byte.newline, Byte.carriageReturn, Byte.hash, nil:
        throw fail("an inline table stays on one line (TOML 1.0): close it with } before the line ends")
      default: throw fail("expected , or } in the inline table, found \(found)")
      }
    }
  }
}
