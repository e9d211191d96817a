import CuePosix
import CueProtocol
import Testing

/// docs/PROTOCOL.md covers everything the protocol types have: a new op, event kind, error code,
/// feature or paging decision without its documentation fails here.
@Suite("PROTOCOL.md covers every op, kind, code, feature and decision")
struct DocumentationTests {
  /// docs/PROTOCOL.md of this checkout (no Foundation in this test module: it would change
  /// `String`'s methods for all of it, as FuzzCorpusTests says).
  static let document: String = {
    var path = #filePath
    for _ in 0..<3 { path = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)]) }
    let bytes = (try? Files.read(path: path + "/docs/PROTOCOL.md", limit: 4 << 20)) ?? []
    return String(decoding: bytes, as: UTF8.self)
  }()

  /// The lines of the section that starts with `heading` (up to the next heading of that level).
  static func section(_ heading: String) -> [Substring] {
    let lines = document.split(separator: "\n", omittingEmptySubsequences: false)
    guard let start = lines.firstIndex(where: { $0.hasPrefix(heading) }) else { return [] }
    let level = heading.prefix { $0 == "#" }
    let end = lines[(start + 1)...].firstIndex { $0.hasPrefix(level + " ") } ?? lines.endIndex
    return Array(lines[start..<end])
  }

  @Test func everyOpHasItsHeading() {
    for op in Op.allCases {
      #expect(Self.document.contains("\n### \(op.rawValue)\n") || Self.document.contains("\n#### \(op.rawValue)\n"), "no section for \(op.rawValue)")
    }
  }

  @Test func everyEventKindIsInTheEventsTableAndHasItsSection() {
    let table = Self.section("## 4. Events").filter { $0.hasPrefix("| [`") }
    for kind in EventKind.allCases {
      #expect(table.contains { $0.hasPrefix("| [`\(kind.rawValue)`]") }, "the events table has no row for \(kind.rawValue)")
      #expect(Self.document.contains("\n### \(kind.rawValue)\n") || Self.document.contains("\n### \(kind.rawValue) (event)\n"))
    }
    #expect(table.count == EventKind.allCases.count, "rows for kinds that do not exist")
  }

  @Test func everyErrorCodeHasItsRowWithTheOpsThatReturnIt() {
    let rows = Self.section("## 5. Error codes").filter { $0.hasPrefix("| `") }
    for code in ErrorCode.allCases {
      let row = rows.first { $0.hasPrefix("| `\(code.rawValue)` |") }
      #expect(row != nil, "section 5 has no row for \(code.rawValue)")
      #expect(row.map { $0.split(separator: "|").count >= 4 } == true, "\(code.rawValue): no ops column")
    }
    #expect(rows.count == ErrorCode.allCases.count, "rows for codes that do not exist")
  }

  @Test func everyFeatureAndPagingDecisionIsExplained() {
    let hello = Self.section("### hello").joined(separator: "\n")
    for feature in ProtocolFeature.allCases { #expect(hello.contains("`\(feature.rawValue)`"), "hello does not explain \(feature.rawValue)") }
    let carousel = Self.section("## 4b. Carousel messages").joined(separator: "\n")
    for decision in PagingDecision.allCases { #expect(carousel.contains("| `\(decision.rawValue)` |"), "no row for the decision \(decision.rawValue)") }
    for name in CarouselMessage.eventNames { #expect(carousel.contains("| `\(name)` |"), "no row for the carousel message \(name)") }
  }
}
