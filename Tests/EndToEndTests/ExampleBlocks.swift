import DaemonTestSupport
import Foundation

/// The fenced code blocks of the documents a new user follows, read at test time, each with the
/// marker comment on the line before its fence that says how the test runs it:
///
///     <!-- example: run heard=SECONDS [OPTION=VALUE ...] -->   run as written, and heard
///     <!-- example: not run: REASON -->                        why it cannot be run here
///
/// A block without a marker fails `DocumentedExampleTests`, so a new example is either run or
/// says why not. Values with spaces are quoted with '…'. Options of `run` (DocumentedExampleTests
/// says what each does): `heard`, `cues`, `prints`, `files`, `call`, `canberra`, `installed`,
/// `interrupt`.
struct ExampleBlock: Sendable, CustomStringConvertible {
  /// The document's path in the repository, and the line of the opening fence (from 1).
  let document: String
  let line: Int
  /// The fence's language (`sh`, `python`, `swift`; empty for a bare fence).
  let language: String
  /// The lines between the fences, verbatim, each ending in a line feed.
  let code: String
  let marker: ExampleMarker?

  var description: String { "\(document):\(line)" }

  /// The options of a `run` marker (none for another).
  var options: [String: String] {
    if case .run(let options)? = marker { options } else { [:] }
  }
}

enum ExampleMarker: Sendable, Equatable {
  case run([String: String])
  case notRun(reason: String)
}

enum ExampleBlocks {
  /// The documents whose every example runs: the README, the client guide, the Python package's README.
  static let documents = ["README.md", "docs/CLIENT.md", "clients/python/README.md"]

  static let markerPrefix = "<!-- example:"

  /// Every fenced block of every document, in order.
  static func all() throws -> [ExampleBlock] {
    try documents.flatMap { try read($0) }
  }

  static func read(_ document: String) throws -> [ExampleBlock] {
    let text = try String(contentsOfFile: TestPaths.repositoryRoot + "/" + document, encoding: .utf8)
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    var blocks: [ExampleBlock] = []
    var index = 0
    while index < lines.count {
      guard lines[index].hasPrefix("```") else {
        index += 1
        continue
      }
      let opening = index
      let language = String(lines[opening].dropFirst(3)).trimmingCharacters(in: .whitespaces)
      var code = ""
      index += 1
      while index < lines.count, !lines[index].hasPrefix("```") {
        code += lines[index] + "\n"
        index += 1
      }
      let before = opening > 0 ? lines[opening - 1].trimmingCharacters(in: .whitespaces) : ""
      blocks.append(
        ExampleBlock(document: document, line: opening + 1, language: language, code: code, marker: marker(before)))
      index += 1
    }
    return blocks
  }

  /// The marker a comment line holds, or nil when it is none (or not well formed).
  static func marker(_ line: String) -> ExampleMarker? {
    guard line.hasPrefix(markerPrefix), line.hasSuffix("-->") else { return nil }
    let body = line.dropFirst(markerPrefix.count).dropLast(3).trimmingCharacters(in: .whitespaces)
    if body.hasPrefix("not run:") {
      let reason = body.dropFirst("not run:".count).trimmingCharacters(in: .whitespaces)
      return reason.isEmpty ? nil : .notRun(reason: reason)
    }
    guard body.hasPrefix("run") else { return nil }
    var options: [String: String] = [:]
    for word in words(String(body.dropFirst(3))) {
      let parts = word.split(separator: "=", maxSplits: 1).map(String.init)
      options[parts[0]] = parts.count > 1 ? parts[1] : ""
    }
    return .run(options)
  }

  /// `text` split at spaces, as a shell splits it with single quotes only.
  static func words(_ text: String) -> [String] {
    var words: [String] = []
    var current = ""
    var quoted = false
    var inWord = false
    for character in text {
      if character == "'" {
        quoted.toggle()
        inWord = true
      } else if character == " " && !quoted {
        if inWord { words.append(current) }
        current = ""
        inWord = false
      } else {
        current.append(character)
        inWord = true
      }
    }
    if inWord { words.append(current) }
    return words
  }
}
