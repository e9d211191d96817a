import Testing

@testable import CueTOML

/// TOML 1.0, feature by feature: each valid document gives exactly its tree.
@Suite("TOML documents that parse")
struct TOMLValidTests {
  static func parse(_ text: String) throws -> [String: TOMLValue] { try TOMLParser.parse(Array(text.utf8)) }

  static let documents: [(String, String, [String: TOMLValue])] = [
    ("an empty document", "", [:]),
    ("comments and blank lines", "# top\n\n  # indented\na = 1 # after a value\n\t\n", ["a": .integer(1)]),
    ("CRLF line ends and a byte-order mark", "\u{FEFF}a = 1\r\n[t]\r\nb = \"x\"\r\n", ["a": .integer(1), "t": .table(["b": .string("x")])]),
    (
      "bare, quoted and dotted keys",
      "bare_key-1 = 1\n1234 = 2\n\"quoted key\" = 3\n'literal.key' = 4\n\"\" = 5\nsite.\"google.com\" = true\n a . b = 6\n",
      [
        "bare_key-1": .integer(1), "1234": .integer(2), "quoted key": .integer(3), "literal.key": .integer(4), "": .integer(5),
        "site": .table(["google.com": .boolean(true)]), "a": .table(["b": .integer(6)]),
      ]
    ),
    ("a float-looking dotted key", "3.14159 = \"pi\"\n", ["3": .table(["14159": .string("pi")])]),
    (
      "basic strings with every escape",
      #"s = "tab\tquote\"backslash\\nl\ncr\rbs\bff\fe\u00E9smile\U0001F600""# + "\n",
      ["s": .string("tab\tquote\"backslash\\nl\ncr\rbs\u{08}ff\u{0C}e\u{E9}smile\u{1F600}")]
    ),
    ("UTF-8 in strings and keys", "\"ʎǝʞ\" = \"déjà vu\"\n", ["ʎǝʞ": .string("déjà vu")]),
    ("literal strings", #"p = 'C:\Users\nodejs\templates'"# + "\nq = '<\\i\\c*\\s*>'\n", ["p": .string(#"C:\Users\nodejs\templates"#), "q": .string(#"<\i\c*\s*>"#)]),
    ("a multi-line basic string drops its first newline", "s = \"\"\"\nRoses\nViolets\"\"\"\n", ["s": .string("Roses\nViolets")]),
    (
      "a line-ending backslash joins lines",
      "s = \"\"\"\nThe quick \\\n\n   brown \\   \r\n  fox.\\\n\"\"\"\n",
      ["s": .string("The quick brown fox.")]
    ),
    ("quotes against the closing three", "s = \"\"\"a\"\"b\"\"\"\"\"\nt = \"\"\"\"x\"\"\"\"\n", ["s": .string("a\"\"b\"\""), "t": .string("\"x\"")]),
    ("CRLF in a multi-line string becomes LF", "s = \"\"\"a\r\nb\"\"\"\n", ["s": .string("a\nb")]),
    ("multi-line literal strings", "r = '''\nfirst\n  \\raw \"\" \n'''\nq = '''it's''''\n", ["r": .string("first\n  \\raw \"\" \n"), "q": .string("it's'")]),
    (
      "decimal integers",
      "a = +99\nb = 42\nc = 0\nd = -17\ne = 1_000\nf = 5_349_221\ng = -0\nh = +0\ni = 9223372036854775807\nj = -9223372036854775808\n",
      [
        "a": .integer(99), "b": .integer(42), "c": .integer(0), "d": .integer(-17), "e": .integer(1000), "f": .integer(5_349_221),
        "g": .integer(0), "h": .integer(0), "i": .integer(.max), "j": .integer(.min),
      ]
    ),
    (
      "hexadecimal, octal and binary integers",
      "a = 0xDEADBEEF\nb = 0xdead_beef\nc = 0o755\nd = 0b1101_0110\ne = 0x7FFFFFFFFFFFFFFF\nf = 0o0\n",
      ["a": .integer(0xDEAD_BEEF), "b": .integer(0xDEAD_BEEF), "c": .integer(0o755), "d": .integer(0b1101_0110), "e": .integer(.max), "f": .integer(0)]
    ),
    (
      "floats",
      "a = +1.0\nb = 3.1415\nc = -0.01\nd = 5e+22\ne = 1e06\nf = -2E-2\ng = 6.626e-34\nh = 224_617.445_991_228\ni = 0.0\nj = 1e1_0\n",
      [
        "a": .float(1), "b": .float(3.1415), "c": .float(-0.01), "d": .float(5e22), "e": .float(1e6), "f": .float(-0.02),
        "g": .float(6.626e-34), "h": .float(224_617.445_991_228), "i": .float(0), "j": .float(1e10),
      ]
    ),
    ("infinities", "a = inf\nb = +inf\nc = -inf\n", ["a": .float(.infinity), "b": .float(.infinity), "c": .float(-.infinity)]),
    ("booleans", "t = true\nf = false\n", ["t": .boolean(true), "f": .boolean(false)]),
    (
      "dates and times",
      """
      odt1 = 1979-05-27T07:32:00Z
      odt2 = 1979-05-27T00:32:00-07:00
      odt3 = 1979-05-27T00:32:00.999999+05:30
      odt4 = 1979-05-27 07:32:00z
      ldt1 = 1979-05-27t07:32:00
      ldt2 = 1979-05-27T00:32:00.999999
      ld = 2000-02-29
      lt1 = 07:32:00
      lt2 = 00:32:00.999999

      """,
      [
        "odt1": .dateTime(.init(.offsetDateTime, "1979-05-27T07:32:00Z")),
        "odt2": .dateTime(.init(.offsetDateTime, "1979-05-27T00:32:00-07:00")),
        "odt3": .dateTime(.init(.offsetDateTime, "1979-05-27T00:32:00.999999+05:30")),
        "odt4": .dateTime(.init(.offsetDateTime, "1979-05-27T07:32:00Z")),
        "ldt1": .dateTime(.init(.localDateTime, "1979-05-27T07:32:00")),
        "ldt2": .dateTime(.init(.localDateTime, "1979-05-27T00:32:00.999999")),
        "ld": .dateTime(.init(.localDate, "2000-02-29")),
        "lt1": .dateTime(.init(.localTime, "07:32:00")),
        "lt2": .dateTime(.init(.localTime, "00:32:00.999999")),
      ]
    ),
    (
      "arrays: mixed, nested, trailing commas, newlines and comments",
      "a = [ 1, 2, ]\nb = [\"x\", 'y', 1.5, true, [1, [2]], { k = 1 }]\nc = [\n  1, # one\n  # between\n  2\n  ,\n]\nd = []\ne = [ [ ], ]\n",
      [
        "a": .array([.integer(1), .integer(2)]),
        "b": .array([.string("x"), .string("y"), .float(1.5), .boolean(true), .array([.integer(1), .array([.integer(2)])]), .table(["k": .integer(1)])]),
        "c": .array([.integer(1), .integer(2)]), "d": .array([]), "e": .array([.array([])]),
      ]
    ),
    (
      "inline tables",
      "name = { first = \"Tom\", last = \"Preston-Werner\" }\npoint = {x=1,y=2}\nanimal = { type.name = \"pug\", type.size = 1 }\nempty = {}\nnested = { a = { b = [1, \"\"\"x\ny\"\"\"] } }\n",
      [
        "name": .table(["first": .string("Tom"), "last": .string("Preston-Werner")]),
        "point": .table(["x": .integer(1), "y": .integer(2)]),
        "animal": .table(["type": .table(["name": .string("pug"), "size": .integer(1)])]),
        "empty": .table([:]),
        "nested": .table(["a": .table(["b": .array([.integer(1), .string("x\ny")])])]),
      ]
    ),
    (
      "table headers, spaced and quoted",
      "[table-1]\nkey1 = \"some string\"\n[a.b.c]\n[ d.e.f ]\n[ j . \"ʞ\" . 'l' ]\n[\"x y\"]\n",
      [
        "table-1": .table(["key1": .string("some string")]),
        "a": .table(["b": .table(["c": .table([:])])]),
        "d": .table(["e": .table(["f": .table([:])])]),
        "j": .table(["ʞ": .table(["l": .table([:])])]),
        "x y": .table([:]),
      ]
    ),
    (
      "a super-table defined after its sub-table",
      "[x.y.z.w]\na = 1\n[x]\nb = 2\n",
      ["x": .table(["b": .integer(2), "y": .table(["z": .table(["w": .table(["a": .integer(1)])])])])]
    ),
    (
      "sub-tables of a table made by dotted keys",
      "[fruit]\napple.color = \"red\"\napple.taste.sweet = true\n[fruit.apple.texture]\nsmooth = true\n",
      [
        "fruit": .table([
          "apple": .table(["color": .string("red"), "taste": .table(["sweet": .boolean(true)]), "texture": .table(["smooth": .boolean(true)])])
        ])
      ]
    ),
    (
      "arrays of tables, nested",
      """
      [[products]]
      name = "Hammer"
      [[products]]
      [[products]]
      name = "Nail"

      [[fruits]]
      name = "apple"
      [fruits.physical]
      color = "red"
      [[fruits.varieties]]
      name = "red delicious"
      [[fruits.varieties]]
      name = "granny smith"
      [[fruits]]
      name = "banana"
      [[fruits.varieties]]
      name = "plantain"

      """,
      [
        "products": .array([.table(["name": .string("Hammer")]), .table([:]), .table(["name": .string("Nail")])]),
        "fruits": .array([
          .table([
            "name": .string("apple"), "physical": .table(["color": .string("red")]),
            "varieties": .array([.table(["name": .string("red delicious")]), .table(["name": .string("granny smith")])]),
          ]),
          .table(["name": .string("banana"), "varieties": .array([.table(["name": .string("plantain")])])]),
        ]),
      ]
    ),
  ]

  @Test("a valid document gives its tree", arguments: documents)
  func validDocumentGivesItsTree(_ name: String, _ text: String, _ expected: [String: TOMLValue]) throws {
    #expect(try Self.parse(text) == expected, "\(name)")
  }

  @Test func nanIsAFloat() throws {
    for text in ["a = nan", "a = +nan", "a = -nan"] {
      guard case .float(let value) = try Self.parse(text)["a"] else {
        Issue.record("\(text) gave no float")
        continue
      }
      #expect(value.isNaN)
    }
  }

  @Test func aValueMayEndTheFileWithoutANewline() throws {
    #expect(try Self.parse("a = \"x\" # no newline") == ["a": .string("x")])
    #expect(try Self.parse("[t]") == ["t": .table([:])])
  }
}

/// TOML 1.0's errors: each invalid document is refused on the right line, saying what is wrong.
@Suite("TOML documents that are refused")
struct TOMLInvalidTests {
  static let documents: [(String, Int, String)] = [
    // Lines and comments
    ("a = 1 b = 2\n", 1, "expected the end of the line after the value, found 'b'"),
    ("a = 1\nb = 2\rc = 3\n", 2, "a carriage return must be followed by a line feed"),
    ("a = 1\n# bad \u{7F} comment\n", 2, "a comment cannot hold the control character 0x7F"),
    ("# fine\n\na = \"\u{01}\"\n", 3, "a string cannot hold the control character 0x1"),
    // Keys
    ("= 1\n", 1, "expected a key"),
    ("a\n", 1, "expected = after the key a, found the end of the line"),
    ("a.  = 1\n", 1, "expected a key"),
    ("\"\"\"k\"\"\" = 1\n", 1, "a key cannot be a multi-line string"),
    ("a = \n", 1, "expected a value (a string, number, boolean, date, array or inline table), found the end of the line"),
    ("a = loud\n", 1, "expected a value"),
    ("a = True\n", 1, "true and false are lowercase"),
    ("a = truely\n", 1, "true and false are lowercase"),
    // Strings
    (#"a = "\x41""# + "\n", 1, #"\x is not an escape"#),
    (#"a = "\e""# + "\n", 1, #"\e is not an escape"#),
    ("a = \"\\ \"\n", 1, "is not an escape"),
    (#"a = "\uD800""# + "\n", 1, #"\uD800 is not a Unicode scalar value"#),
    (#"a = "\U00110000""# + "\n", 1, #"\U110000 is not a Unicode scalar value"#),
    (#"a = "\u12""# + "\n", 1, #"\u takes exactly 4 hexadecimal digits"#),
    ("a = \"unterminated\nb = 1\n", 1, "the string is not closed with \" on its line"),
    ("a = 'unterminated\n", 1, "the string is not closed with ' on its line"),
    ("x = 1\na = \"\"\"\nnever\nclosed\n", 2, "the multi-line string opened on line 2 is not closed"),
    ("a = '''\nnever'\n", 1, "the multi-line string opened on line 1 is not closed"),
    ("a = \"\"\"x\"\"\"\"\"\"\n", 1, "at most two quotes in a row"),
    ("a = \"\"\"\nok\\ x\"\"\"\n", 2, "a backslash followed by a space must end its line"),
    ("a = \"\"\"\nok \u{7F}\"\"\"\n", 2, "a string cannot hold the control character 0x7F"),
    // Integers
    ("a = 9223372036854775808\n", 1, "out of range for a 64-bit integer"),
    ("a = -9223372036854775809\n", 1, "out of range for a 64-bit integer"),
    ("a = 0x8000000000000000\n", 1, "out of range for a 64-bit integer"),
    ("a = 99999999999999999999999\n", 1, "out of range for a 64-bit integer"),
    ("a = 01\n", 1, "leading zeros are not allowed"),
    ("a = 1__0\n", 1, "1__0 is not a valid number"),
    ("a = _1\n", 1, "expected a value"),
    ("a = 1_\n", 1, "1_ is not a valid number"),
    ("a = +0x10\n", 1, "takes no sign"),
    ("a = 0xG1\n", 1, "is not a valid base-16 integer"),
    ("a = 0o8\n", 1, "is not a valid base-8 integer"),
    ("a = 0b102\n", 1, "is not a valid base-2 integer"),
    ("a = 0X10\n", 1, "0X10 is not a valid number"),
    // Floats
    ("a = 1.\n", 1, "a float needs digits on both sides of its point"),
    ("a = .5\n", 1, "expected a value"),
    ("a = 1.e5\n", 1, "a float needs digits on both sides of its point"),
    ("a = 1e\n", 1, "the exponent needs digits"),
    ("a = 1.5.2\n", 1, "a float needs digits on both sides of its point"),
    ("a = 03.14\n", 1, "leading zeros are not allowed"),
    ("a = infinity\n", 1, "infinity is not a valid number"),
    // Dates and times
    ("a = 1979-02-29\n", 1, "no such day"),
    ("a = 1979-13-01\n", 1, "no such day"),
    ("a = 24:00:00\n", 1, "out of range"),
    ("a = 07:32\n", 1, "a time is HH:MM:SS"),
    ("a = 07:32:00Z\n", 1, "a time without a date takes no offset"),
    ("a = 1979-05-27T07:32:00+25:00\n", 1, "an offset is Z or ±HH:MM"),
    ("a = 1979-05-27X07:32:00\n", 1, "joined by T or a space"),
    ("a = 1979-05-27T07:32:00.\n", 1, "a fraction of a second needs digits"),
    // Arrays and inline tables
    ("a = [1, 2\nb = 3\n", 2, "expected , or ] in the array, found 'b'"),
    ("a = [\n1,\n", 1, "the array opened on line 1 is not closed with ]"),
    ("a = [1 2]\n", 1, "expected , or ] in the array, found '2'"),
    ("a = [,]\n", 1, "expected a value"),
    ("a = [1,,2]\n", 1, "expected a value"),
    ("a = { b = 1, }\n", 1, "an inline table takes no comma after its last key"),
    ("a = { b = 1\n}\n", 1, "an inline table stays on one line"),
    ("a = {\nb = 1 }\n", 1, "an inline table stays on one line"),
    ("a = { b = 1 c = 2 }\n", 1, "expected , or } in the inline table, found 'c'"),
    ("a = { b = 1, b = 2 }\n", 1, "the key b is set twice"),
    ("a = { b = { c = 1 }, b.d = 2 }\n", 1, "b is an inline table, which cannot be extended"),
    // Headers
    ("[a\n", 1, "expected ] to close the header [a]"),
    ("[[a]\n", 1, "expected ]] to close the header [[a]]"),
    ("[[a] ]\n", 1, "expected ]] to close the header [[a]]"),
    ("[]\n", 1, "expected a key"),
    ("[a] b = 1\n", 1, "expected the end of the line after the table header"),
    // Redefinition
    ("a = 1\na = 2\n", 2, "the key a is set twice"),
    ("a = 1\n\"a\" = 2\n", 2, "the key a is set twice"),
    ("[t]\nb.c = 1\nb.c = 2\n", 3, "the key b.c is set twice"),
    ("a.b = 1\na = 2\n", 2, "a is already a table; it cannot also be set with ="),
    ("a = 1\na.b = 2\n", 2, "a is already set to an integer, not a table"),
    ("[a]\nb = 1\n\n[a]\nc = 2\n", 4, "the table [a] is defined twice"),
    ("[a.b]\n[a.b]\n", 2, "the table [a.b] is defined twice"),
    ("[a]\nb = 1\n[a.b]\n", 3, "[a.b]: a.b is already set to an integer, not a table"),
    ("a = 1\n[a]\n", 2, "[a]: a is already set to an integer, not a table"),
    ("a = 1\n[a.b]\n", 2, "a is already set to an integer, not a table"),
    ("a = { b = 1 }\n[a]\n", 2, "[a]: a is an inline table, which cannot be extended"),
    ("a = { b = 1 }\n[a.c]\n", 2, "a is an inline table, which cannot be extended"),
    ("a = { b = 1 }\na.c = 2\n", 2, "a is an inline table, which cannot be extended"),
    ("[t]\na.b = 1\n[t.a]\n", 3, "the table [t.a] is already defined by dotted keys"),
    ("[a.b.c]\nz = 9\n[a]\nb.c.t = 1\n", 4, "the table b is defined by a [header]; a dotted key cannot add to it"),
    ("a = [1]\n[[a]]\n", 2, "[[a]]: a is an array given with =, which cannot be extended"),
    ("[[a]]\n[a]\n", 2, "[a]: a is an array of tables; add to it with [[a]]"),
    ("[a]\n[[a]]\n", 2, "[[a]]: a is already a table, not an array of tables"),
    ("[[a]]\nb.c = 1\n[a.b]\n", 3, "the table [a.b] is already defined by dotted keys"),
    ("a = 1\nb.a = 2\n[[b]]\n", 3, "[[b]]: b is already a table, not an array of tables"),
  ]

  @Test("an invalid document is refused on its line", arguments: documents)
  func invalidDocumentIsRefused(_ text: String, _ line: Int, _ message: String) {
    #expect {
      try TOMLParser.parse(Array(text.utf8))
    } throws: { error in
      guard let error = error as? TOMLError else { return false }
      #expect(error.line == line, "\(text.debugDescription): \(error)")
      #expect(error.message.contains(message), "\(text.debugDescription): \(error)")
      return true
    }
  }

  @Test func theErrorNamesTheColumn() {
    #expect(throws: TOMLError(line: 2, column: 10, message: "expected a value (a string, number, boolean, date, array or inline table), found the end of the line")) {
      try TOMLParser.parse(Array("x = 1\ndevice = \n".utf8))
    }
    #expect(throws: TOMLError(line: 1, column: 7, message: "2001-02-30 is not a valid date or time: no such day (RFC 3339: 1979-05-27, 07:32:00, 1979-05-27T07:32:00Z)")) {
      try TOMLParser.parse(Array("  d = 2001-02-30\n".utf8))
    }
  }

  @Test func invalidUTF8IsRefusedOnItsLine() {
    var bytes = Array("a = 1\nb = \"".utf8)
    bytes += [0xC3, 0x28]
    bytes += Array("\"\n".utf8)
    #expect(throws: TOMLError(line: 2, column: 1, message: "the line is not valid UTF-8 (a TOML file is UTF-8 text)")) {
      try TOMLParser.parse(bytes)
    }
  }
}

/// A dotted key under a later header makes a table of that header's own, whatever other tables share its name.
@Test func aDottedKeyUnderAHeaderIsThatHeadersOwn() throws {
  #expect(
    try TOMLParser.parse(Array("[[a]]\n[t]\na.b = 1\n".utf8))
      == ["a": .array([.table([:])]), "t": .table(["a": .table(["b": .integer(1)])])])
}
