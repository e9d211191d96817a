import CuePosix
import CueProtocol
import CueProtocolFuzzing
import Testing

/// The fuzzer's committed corpus (`Fuzz/corpus/`) as a regression suite: every input goes through
/// `ProtocolFuzzing.check`, the function `cued-fuzz` fuzzes (scripts/fuzz.sh), so an input that once
/// crashed it, or broke one of its invariants, is checked on every `make test`. (A crash still takes
/// the test process down; that fails the run too.)
@Suite("Fuzz corpus")
struct FuzzCorpusTests {
  /// `Fuzz/corpus` of this checkout (no Foundation here: it would change `String`'s methods for the
  /// whole test module).
  static let corpus: String = {
    var path = #filePath
    for _ in 0..<3 { path = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)]) }
    return path + "/Fuzz/corpus"
  }()

  static func inputs() throws -> [String] {
    try Files.list(directory: corpus).filter { !$0.hasPrefix(".") }
  }

  @Test func everyCorpusInputKeepsTheInvariants() throws {
    let names = try Self.inputs()
    // The seeds alone are about 50 files: far fewer means the corpus went missing.
    #expect(names.count >= 30, "Fuzz/corpus holds \(names.count) files")
    var total = ProtocolFuzzing.Outcome()
    for name in names {
      let bytes = try Files.read(path: Self.corpus + "/" + name, limit: 16 << 20)
      do {
        total += try ProtocolFuzzing.check(bytes)
      } catch {
        Issue.record("Fuzz/corpus/\(name): \(error)")
      }
    }
    // The seeds cover each kind of line; a check that silently stopped decoding would show here.
    #expect(total.requests > 50)
    #expect(total.carouselMessages > 5)
    #expect(total.errorReplies > 50)
    #expect(total.oversizeLines >= 2)
  }

  /// The function counts what the daemon would do with a short session: blank lines skipped, one
  /// request, one carousel message, one parse error, one oversize line with its reply.
  @Test func aSessionIsFramedAndDecodedAsTheDaemonDoes() throws {
    var input = Array(#"{"id":1,"op":"ping"}"#.utf8) + [0x0D, 0x0A, 0x0A, 0x20, 0x09, 0x0A]
    input += Array(#"{"carousel":"default","event":"drag-began"}"#.utf8) + [0x0A]
    input += Array("{bad".utf8) + [0x0A]
    input += [UInt8](repeating: 0x20, count: ProtocolFuzzing.maxLineBytes + 1) + [0x0A]
    input += Array(#"{"id":2,"op":"play""#.utf8)  // unterminated: never decoded
    let outcome = try ProtocolFuzzing.check(input)
    #expect(outcome.lines == 3)
    #expect(outcome.requests == 1)
    #expect(outcome.carouselMessages == 1)
    #expect(outcome.errorReplies == 2)
    #expect(outcome.oversizeLines == 1)
  }
}
