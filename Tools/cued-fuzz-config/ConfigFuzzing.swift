import CueTOML

/// The config file's parser as one checked function of arbitrary bytes, for the fuzzer and the
/// replayer: whatever the bytes, `TOMLParser.parse` returns a tree or a `TOMLError`, never traps,
/// and an error points inside the file (a line and column that exist, a message to show).
enum ConfigFuzzing {
  struct Broken: Error, CustomStringConvertible {
    var description: String
  }

  struct Outcome {
    var parsed = 0
    var refused = 0
    static func += (left: inout Outcome, right: Outcome) {
      left.parsed += right.parsed
      left.refused += right.refused
    }
  }

  static func check(_ bytes: [UInt8]) throws(Broken) -> Outcome {
    let lines = bytes.reduce(1) { $1 == 0x0A ? $0 + 1 : $0 }
    let tree: [String: TOMLValue]
    do {
      tree = try TOMLParser.parse(bytes)
    } catch {
      guard (1...lines).contains(error.line) else {
        throw Broken(description: "error on line \(error.line) of a \(lines)-line input: \(error)")
      }
      guard error.column >= 1, !error.message.isEmpty else { throw Broken(description: "error without a column or message: \(error)") }
      return Outcome(refused: 1)
    }
    // The same bytes give the same tree: no state survives a parse.
    guard let again = try? TOMLParser.parse(bytes), same(.table(again), .table(tree)) else {
      throw Broken(description: "a second parse gave another tree")
    }
    return Outcome(parsed: 1)
  }

  /// Equality in which NaN equals NaN (bit for bit), so a tree with `nan` in it compares with itself.
  static func same(_ left: TOMLValue, _ right: TOMLValue) -> Bool {
    switch (left, right) {
    case (.float(let a), .float(let b)): return a.bitPattern == b.bitPattern
    case (.array(let a), .array(let b)): return a.count == b.count && zip(a, b).allSatisfy { same($0, $1) }
    case (.table(let a), .table(let b)):
      return a.count == b.count && a.allSatisfy { key, value in b[key].map { same(value, $0) } ?? false }
    default: return left == right
    }
  }
}
