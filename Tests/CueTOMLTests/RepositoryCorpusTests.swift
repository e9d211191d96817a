import Foundation
import Testing

@testable import CueTOML

/// Every TOML document the repository ships or shows parses: the files (`*.toml`, `*.toml.example`)
/// and each ```toml block of the Markdown documents.
@Suite("The repository's TOML")
struct RepositoryCorpusTests {
  static let root = #filePath.split(separator: "/", omittingEmptySubsequences: false).dropLast(3).joined(separator: "/")

  /// Repository paths (relative) of the TOML files and of the Markdown files, outside hidden and build directories.
  static func files() -> (toml: [String], markdown: [String]) {
    var toml: [String] = []
    var markdown: [String] = []
    guard let walker = FileManager.default.enumerator(atPath: root) else { return ([], []) }
    while let path = walker.nextObject() as? String {
      if path.split(separator: "/").contains(where: { $0.hasPrefix(".") }) { continue }
      if path.hasSuffix(".toml") || path.hasSuffix(".toml.example") { toml.append(path) }
      if path.hasSuffix(".md") { markdown.append(path) }
    }
    return (toml.sorted(), markdown.sorted())
  }

  /// The ```toml blocks of `text`, each with the line its first line is on.
  static func blocks(_ text: String) -> [(line: Int, text: String)] {
    var blocks: [(Int, String)] = []
    var current: (Int, [Substring])?
    for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
      let trimmed = line.drop { $0 == " " }
      if var open = current {
        if trimmed.hasPrefix("```") {
          blocks.append((open.0, open.1.joined(separator: "\n") + "\n"))
          current = nil
        } else {
          open.1.append(line)
          current = open
        }
      } else if trimmed == "```toml" {
        current = (index + 2, [])
      }
    }
    return blocks
  }

  @Test func everyTOMLFileParses() throws {
    let files = Self.files().toml
    #expect(files.contains("systemd/cued.toml.example"))
    #expect(files.contains("packaging/debian/cued.toml"))
    for file in files {
      let bytes = try #require(FileManager.default.contents(atPath: Self.root + "/" + file))
      #expect(throws: Never.self, "\(file)") { try TOMLParser.parse(Array(bytes)) }
    }
  }

  @Test func everyTOMLBlockOfTheDocsParses() throws {
    var count = 0
    for file in Self.files().markdown {
      let text = try String(contentsOfFile: Self.root + "/" + file, encoding: .utf8)
      for block in Self.blocks(text) {
        count += 1
        do {
          _ = try TOMLParser.parse(Array(block.text.utf8))
        } catch {
          Issue.record("\(file), the block on line \(block.line): \(error)")
        }
      }
    }
    #expect(count >= 3, "found only \(count) ```toml blocks")
  }

  /// The shipped example, as a tree: spot checks that its values keep their types.
  @Test func theShippedExampleKeepsItsTypes() throws {
    let bytes = try #require(FileManager.default.contents(atPath: Self.root + "/systemd/cued.toml.example"))
    let document = try TOMLParser.parse(Array(bytes))
    #expect(document["device"] == .string("auto"))
    #expect(document["max-voices"] == .integer(32))
    #expect(document["idle-timeout"] == .float(2))
    guard case .table(let system)? = document["system-sounds"] else {
      Issue.record("no [system-sounds] table")
      return
    }
    #expect(system["muted"] == .boolean(false))
  }
}
