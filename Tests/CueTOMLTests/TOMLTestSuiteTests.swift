import Foundation
import Testing

@testable import CueTOML

/// toml-test (https://github.com/toml-lang/toml-test), the language-neutral TOML suite, as Debian's
/// golang-github-burntsushi-toml-dev installs it: each `valid/**.toml` parses to the tagged JSON of
/// the `.json` beside it (with each key's position where the key is written), and each
/// `invalid/**.toml` is refused with a `TOMLError`. One case a file.
@Suite(
  "toml-test, the TOML suite",
  .enabled(
    if: TOMLTestSuite.isInstalled,
    "toml-test is not installed: apt-get install golang-github-burntsushi-toml-dev (scripts/install-deps.sh --test)"))
struct TOMLTestSuiteTests {
  @Test("a valid document gives the expected tagged JSON", arguments: TOMLTestSuite.cases(under: "valid"))
  func validDocument(_ name: String) throws {
    let bytes = try #require(FileManager.default.contents(atPath: TOMLTestSuite.root + "/" + name + ".toml"))
    if let reason = TOMLTestSuite.newerThanTOML1[name] {
      #expect(throws: TOMLError.self, "\(name) is refused: \(reason)") { try TOMLParser.parse(Array(bytes)) }
      return
    }
    let json = try #require(FileManager.default.contents(atPath: TOMLTestSuite.root + "/" + name + ".json"))
    let expected = try TaggedJSON(json: JSONSerialization.jsonObject(with: json, options: [.fragmentsAllowed]))
    let document: TOMLDocument
    do {
      document = try TOMLParser.parseDocument(Array(bytes))
    } catch {
      Issue.record("\(name): refused, \(error)")
      return
    }
    if let difference = expected.difference(from: TaggedJSON(.table(document.root))) {
      Issue.record("\(name): \(difference)")
    }
    // And each key is filed where it is written.
    if let problem = positionProblem(in: Array(bytes), document) {
      Issue.record("\(name): \(problem)")
    }
  }

  @Test("an invalid document is refused", arguments: TOMLTestSuite.cases(under: "invalid"))
  func invalidDocument(_ name: String) throws {
    let bytes = try #require(FileManager.default.contents(atPath: TOMLTestSuite.root + "/" + name + ".toml"))
    do {
      let document = try TOMLParser.parse(Array(bytes))
      Issue.record("\(name): accepted, as \(document)")
    } catch {
      #expect(!error.message.isEmpty && error.line >= 1 && error.column >= 1, "\(name): \(error)")
    }
  }

  /// The walk finds the suite: a suite that lost its files would pass with no cases.
  @Test func theSuiteHasItsDocuments() {
    #expect(TOMLTestSuite.cases(under: "valid").count >= 100)
    #expect(TOMLTestSuite.cases(under: "invalid").count >= 200)
    for name in TOMLTestSuite.newerThanTOML1.keys {
      #expect(TOMLTestSuite.cases(under: "valid").contains(name), "\(name) is listed as newer than TOML 1.0 but is not in the suite")
    }
  }
}

/// The comparison the cases above rely on: it must tell documents apart, by toml-test's rules.
@Suite("toml-test's tagged JSON comparison")
struct TaggedJSONTests {
  static func tagged(_ json: String) throws -> TaggedJSON {
    try TaggedJSON(json: JSONSerialization.jsonObject(with: Data(json.utf8)))
  }

  static func scalar(_ type: String, _ value: String) -> TaggedJSON { .scalar(type: type, value: value) }

  @Test func objectsOfTypeAndValueAreScalarsAndOthersAreTables() throws {
    let document = try Self.tagged(#"{"a": {"type": "integer", "value": "1"}, "type": {"value": {"type": "bool", "value": "true"}}, "b": []}"#)
    let expected = TaggedJSON(.table(["a": .integer(1), "type": .table(["value": .boolean(true)]), "b": .array([])]))
    #expect(document.difference(from: expected) == nil)
  }

  @Test func missingExtraAndMistypedKeysDiffer() throws {
    let expected = try Self.tagged(#"{"t": {"a": {"type": "integer", "value": "1"}}}"#)
    #expect(expected.difference(from: TaggedJSON(.table(["t": .table([:])]))) == #"t has no key "a""#)
    #expect(expected.difference(from: TaggedJSON(.table(["t": .table(["a": .integer(1), "b": .integer(2)])]))) == #"t has an unexpected key "b""#)
    #expect(expected.difference(from: TaggedJSON(.table(["t": .table(["a": .string("1")])]))) == #"t.a is string "1", expected integer "1""#)
    #expect(expected.difference(from: TaggedJSON(.table(["t": .table(["a": .integer(2)])]))) != nil)
    #expect(Self.scalar("x", "1").difference(from: .array([])) != nil)
    #expect(TaggedJSON.array([Self.scalar("integer", "1")]).difference(from: .array([])) == "the document has 0 elements, expected 1")
  }

  @Test func floatsCompareAsNumbersAndNaNEqualsNaN() {
    #expect(Self.scalar("float", "0.1").difference(from: TaggedJSON(.float(1e-1))) == nil)
    #expect(Self.scalar("float", "5e+22").difference(from: TaggedJSON(.float(5e22))) == nil)
    #expect(Self.scalar("float", "-inf").difference(from: TaggedJSON(.float(-.infinity))) == nil)
    #expect(Self.scalar("float", "nan").difference(from: TaggedJSON(.float(.nan))) == nil)
    #expect(Self.scalar("float", "nan").difference(from: TaggedJSON(.float(1))) != nil)
    #expect(Self.scalar("float", "1.5").difference(from: TaggedJSON(.float(1))) != nil)
  }

  @Test func datesAndTimesCompareAsTheMomentTheyName() {
    let utc = Self.scalar("datetime", "1979-05-27T07:32:00Z")
    #expect(utc.difference(from: Self.scalar("datetime", "1979-05-27T00:32:00-07:00")) == nil)
    #expect(utc.difference(from: Self.scalar("datetime", "1979-05-27 07:32:00.000z")) == nil)
    #expect(utc.difference(from: Self.scalar("datetime", "1979-05-27T07:32:01Z")) != nil)
    #expect(utc.difference(from: Self.scalar("datetime-local", "1979-05-27T07:32:00")) != nil)
    #expect(Self.scalar("time-local", "10:32:00.5550").difference(from: Self.scalar("time-local", "10:32:00.555")) == nil)
    #expect(Self.scalar("date-local", "2000-02-29").difference(from: Self.scalar("date-local", "2000-03-01")) != nil)
    #expect(Self.scalar("date-local", "2000-02-29").difference(from: Self.scalar("date-local", "not a date")) != nil)
  }
}

enum TOMLTestSuite {
  /// Where golang-github-burntsushi-toml-dev (1.2.0 in Debian 12) installs toml-test's documents.
  static let root = "/usr/share/gocode/src/github.com/BurntSushi/toml/internal/toml-test/tests"

  /// Valid documents of a TOML newer than 1.0, which CueTOML reads (docs/CONFIG.md): each is
  /// checked to be refused instead. toml-test's own 1.0.0 selection (version.go) leaves out the same.
  static let newerThanTOML1 = [
    "valid/string/escape-esc": "\\e (escape, U+001B) is TOML 1.1; TOML 1.0 has no such escape"
  ]

  static var isInstalled: Bool { FileManager.default.fileExists(atPath: root + "/valid") }

  /// The suite's documents under `folder` (`valid` or `invalid`), each as its path below `root`
  /// without `.toml` (`valid/string/escapes`), sorted. toml-test's `.multi` files are the sources it
  /// generated some invalid documents from, not documents.
  static func cases(under folder: String) -> [String] {
    guard let walker = FileManager.default.enumerator(atPath: root + "/" + folder) else { return [] }
    var names: [String] = []
    while let path = walker.nextObject() as? String {
      guard path.hasSuffix(".toml") else { continue }
      names.append(folder + "/" + path.dropLast(".toml".count))
    }
    return names.sorted()
  }
}
