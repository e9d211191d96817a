import CuePosix
import Testing

/// README.md and docs/*.md point at one another by link (`[text](docs/OUTPUT.md#device-states)`)
/// and by name (docs/OUTPUT.md, "Device states"): a document renamed, split or a section retitled
/// fails here with the reference that no longer leads anywhere.
@Suite("The documents' links and references resolve")
struct DocumentLinksTests {
  /// The checkout (no Foundation in this test module, as DocumentationTests says).
  static let root = GeneratedDocsTests.root

  /// README.md, then every docs/*.md, as paths from the checkout.
  static let documents: [String] = {
    let names = (try? Files.list(directory: root + "/docs")) ?? []
    return ["README.md"] + names.filter { $0.hasSuffix(".md") }.map { "docs/" + $0 }
  }()

  static func text(_ path: String) -> String? {
    guard let bytes = try? Files.read(path: root + "/" + path, limit: 8 << 20) else { return nil }
    return String(decoding: bytes, as: UTF8.self)
  }

  /// The lines outside fenced code blocks.
  static func proseLines(_ text: String) -> [Substring] {
    var inFence = false
    return text.split(separator: "\n", omittingEmptySubsequences: false).filter { line in
      if line.hasPrefix("```") {
        inFence.toggle()
        return false
      }
      return !inFence
    }
  }

  /// The text of each heading (`## 3. Requests` gives `3. Requests`).
  static func headings(_ text: String) -> [String] {
    proseLines(text).compactMap { line in
      let marks = line.prefix { $0 == "#" }
      guard (1...6).contains(marks.count), line.dropFirst(marks.count).first == " " else { return nil }
      return String(line.dropFirst(marks.count + 1))
    }
  }

  /// A heading's anchor as GitHub makes it: lower case, spaces to hyphens, other punctuation dropped.
  static func anchor(_ heading: String) -> String {
    String(
      heading.lowercased().compactMap { character -> Character? in
        if character == " " { return "-" }
        if character == "-" || character == "_" || character.isLetter || character.isNumber { return character }
        return nil
      })
  }

  /// `path` (relative to the document at `from`, or from the checkout for `docs/…`), normalised.
  static func resolve(_ path: String, from document: String) -> String {
    let directory = document.split(separator: "/").dropLast()
    var parts: [Substring] = path.hasPrefix("docs/") ? [] : Array(directory)
    for part in path.split(separator: "/") where part != "." {
      if part == ".." { _ = parts.popLast() } else { parts.append(part) }
    }
    return parts.joined(separator: "/")
  }

  /// Every `](target)` of a document's prose that is not a URL.
  static func links(in text: String) -> [String] {
    var found: [String] = []
    for line in proseLines(text) {
      var rest = line[...]
      while let start = rest.firstRange(of: "](") {
        rest = rest[start.upperBound...]
        guard let end = rest.firstIndex(where: { $0 == ")" || $0 == " " }) else { break }
        let target = String(rest[..<end])
        let isURL = target.contains(":") && target.prefix { $0 != ":" }.allSatisfy { $0.isLetter }
        if !isURL && !target.isEmpty { found.append(target) }
        rest = rest[end...]
      }
    }
    return found
  }

  /// What a path to a document may be spelt with.
  static func isNameCharacter(_ character: Character) -> Bool {
    character.isLetter || character.isNumber || character == "-" || character == "_" || character == "/"
  }

  @Test(arguments: documents)
  func everyRelativeLinkLeadsToAFileAndItsHeading(document: String) throws {
    let text = try #require(Self.text(document), "\(document) cannot be read")
    for link in Self.links(in: text) {
      let path = String(link.prefix { $0 != "#" })
      let target = path.isEmpty ? document : Self.resolve(path, from: document)
      #expect(Files.kind(of: Self.root + "/" + target) != .missing, "\(document) links to \(link): there is no \(target)")
      guard link.contains("#"), target.hasSuffix(".md"), let linked = Self.text(target) else { continue }
      let fragment = String(link.drop { $0 != "#" }.dropFirst())
      #expect(Self.headings(linked).map(Self.anchor).contains(fragment), "\(document) links to \(link): \(target) has no heading whose anchor is #\(fragment)")
    }
  }

  /// A name such as `docs/OUTPUT.md` or `CONFIG.md` (a bare name means one beside the document, or in
  /// docs/), and the section a quotation right after it names (`docs/OUTPUT.md, "Device states"`,
  /// `docs/PERFORMANCE.md ("Heard first")`), which must be part of one of that document's headings.
  @Test(arguments: documents)
  func everyNamedDocumentExistsWithTheSectionNamed(document: String) throws {
    let text = try #require(Self.text(document), "\(document) cannot be read")
    let prose = Self.proseLines(text).joined(separator: " ")
    var rest = prose[...]
    while let end = rest.firstRange(of: ".md") {
      let before = rest[..<end.lowerBound]
      let start = before.lastIndex(where: { !Self.isNameCharacter($0) }).map { before.index(after: $0) } ?? before.startIndex
      var name = String(before[start...])
      rest = rest[end.upperBound...]
      // Only the documents' own names: an upper-case name (not README), bare, under docs/ or docs/notes/.
      let parts = name.split(separator: "/", omittingEmptySubsequences: false)
      guard let file = parts.last, !file.isEmpty, file.allSatisfy({ $0.isUppercase || $0 == "-" }), file != "README",
        parts.count == 1 || (parts[0] == "docs" && (parts.count == 2 || (parts.count == 3 && parts[1] == "notes")))
      else { continue }
      name += ".md"
      let candidates = name.contains("/") ? [Self.resolve(name, from: document)] : [Self.resolve(name, from: document), "docs/" + name]
      guard let target = candidates.first(where: { Files.kind(of: Self.root + "/" + $0) == .regular }) else {
        Issue.record("\(document) names \(name), which is not there")
        continue
      }
      // The section, when a quotation follows: `, "…"`, ` "…"` or ` ("…"`.
      var after = rest.drop { $0 == "," || $0 == " " || $0 == "(" }
      guard after.first == "\"" else { continue }
      after = after.dropFirst()
      guard let close = after.firstIndex(of: "\"") else { continue }
      let section = after[..<close].split(whereSeparator: { $0 == " " }).joined(separator: " ")
      let headings = Self.headings(Self.text(target) ?? "")
      #expect(
        headings.contains { $0.lowercased().contains(section.lowercased()) },
        "\(document) names the section \"\(section)\" of \(target), which has no such heading")
    }
  }
}
