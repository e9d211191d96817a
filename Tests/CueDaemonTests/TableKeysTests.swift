@testable import CueDaemon
import CueProtocol
import CueTOML
import Foundation
import Testing

/// The declared keys of the config file's own tables (TableSettings.swift): every key reads into
/// its field, a missing key leaves the struct's default, a value out of range names the file, the
/// line, the table, the key and the range, and docs/CONFIG.md agrees with the declarations. Each
/// test runs over the declarations, so a new key is checked without a new test.
@Suite("The tables' keys")
struct TableKeysTests {
  /// Reads `[kind.t]` (or `[kind]` when it is not named) holding `key = value`, as the file `test.toml`
  /// would with the header on line 1 and the key on line 3.
  static func read(_ kind: String, named: Bool, _ key: String, _ value: JSONValue) throws(ConfigError) -> ConfigValues {
    let table: JSONValue = .object([(key, value)])
    let document: JSONValue = .object([(kind, named ? .object([("t", table)]) : table)])
    let header: TOMLKeyPath = named ? [.key(kind), .key("t")] : [.key(kind)]
    let positions = [header: TOMLPosition(line: 1, column: 2), header + [.key(key)]: TOMLPosition(line: 3, column: 1)]
    return try ConfigFile.interpret(document, path: "test.toml", positions: positions)
  }

  /// For each table: its kind, its keys, where its struct is in the values, and what it needs besides.
  struct Case<Target: Equatable & Sendable> {
    let kind: String
    let named: Bool
    let keys: TableKeys<Target>
    let found: (ConfigValues) -> Target?
  }

  /// A value each simple key accepts that is not its default.
  static func sample(_ type: ValueType, default shown: SettingValue?) -> JSONValue? {
    switch type {
    case .number(let range, _):
      return .number(shown == .number(range.upperBound) || shown == .integer(Int(range.upperBound)) ? range.lowerBound : range.upperBound)
    case .numberAbove(let range): return .number(range.upperBound)
    case .integer(let range): return .number(Double(shown == .integer(range.upperBound) ? range.lowerBound : range.upperBound))
    case .boolean: return .bool(shown != .bool(true))
    case .choice(let words, _): return words.first { .string($0) != shown }.map(JSONValue.string)
    case .name, .timeOfDay, .structured, .text, .path, .group, .directories: return nil
    }
  }

  /// Values each simple key refuses.
  static func refused(_ type: ValueType) -> [JSONValue] {
    switch type {
    case .number(let range, _): return [.number(range.lowerBound - 1), .number(range.upperBound + 1), .string("x")]
    case .numberAbove(let range): return [.number(range.lowerBound), .number(range.upperBound + 1)]
    case .integer(let range): return [.number(Double(range.lowerBound - 1)), .number(Double(range.upperBound + 1)), .number(0.5)]
    case .boolean: return [.number(1), .string("true")]
    case .choice: return [.string("not-a-choice"), .number(1)]
    case .name: return [.string(""), .number(1)]
    case .text, .path: return [.string(""), .number(1)]
    case .group: return [.string("no-such-group-table-keys-test"), .number(1)]
    case .directories: return [.array([.string("")]), .string("x")]
    case .timeOfDay: return [.string("24:00"), .string("7:00")]
    case .structured: return []
    }
  }

  /// The range as the message states it.
  static func range(_ type: ValueType) -> String? {
    switch type {
    case .number(let r, let unit): return "must be a number\(unit.map { " of " + $0 } ?? "") from \(r.lowerBound) to \(r.upperBound)"
    case .integer(let r): return "must be a whole number from \(r.lowerBound) to \(r.upperBound)"
    default: return nil
    }
  }

  func checkEveryKey<Target: Equatable & Sendable>(_ table: Case<Target>) throws {
    let section = table.named ? table.kind + ".t" : table.kind
    for key in table.keys.keys {
      // Out of range: the file, the key's line (3), the table, the key, the range.
      for value in Self.refused(key.type) {
        do {
          _ = try Self.read(table.kind, named: table.named, key.key, value)
          Issue.record("[\(section)] \(key.key) = \(value) was accepted")
        } catch {
          #expect(error.description.hasPrefix("test.toml:3: [\(section)] \(key.key) must be "), "\(error)")
          if let range = Self.range(key.type) {
            #expect(error.message.contains(range), "\(error)")
            if let shown = key.messageDefault(table.keys.blank) { #expect(error.message.hasSuffix("(default \(shown))"), "\(error)") }
          }
        }
      }
      // In range: it reaches the field (the struct is not the blank one any more).
      guard let value = Self.sample(key.type, default: key.defaultValue(table.keys.blank)) else { continue }
      let members: [(String, JSONValue)] =
        table.kind == "quiet-hours" && key.key != "from" && key.key != "to"
        ? [(key.key, value), ("from", .string("22:00")), ("to", .string("07:00"))] : [(key.key, value)]
      let document: JSONValue = .object([(table.kind, table.named ? .object([("t", .object(members))]) : .object(members))])
      let read = try ConfigFile.interpret(document, path: "test.toml")
      let target = try #require(table.found(read))
      var blank = table.keys.blank
      if table.kind == "quiet-hours" { blank = try #require(Self.quietHours(table.found, from: 22 * 60, to: 7 * 60)) }
      #expect(target != blank, "[\(section)] \(key.key) = \(value) did not change \(Target.self)")
    }
    // Nothing given: every field is the struct's default.
    if table.named {
      let empty = try ConfigFile.interpret(.object([(table.kind, .object([("t", .object([]))]))]), path: "test.toml")
      #expect(table.found(empty) == table.keys.blank)
    }
  }

  static func quietHours<Target>(_ found: (ConfigValues) -> Target?, from: Int, to: Int) -> Target? {
    var values = ConfigValues()
    values.quietHours = QuietHours(from: from, to: to)
    return found(values)
  }

  @Test func cueKeys() throws { try checkEveryKey(Case(kind: "cues", named: true, keys: Settings.cueRuleKeys) { $0.cueRules?["t"] }) }
  @Test func groupKeys() throws { try checkEveryKey(Case(kind: "groups", named: true, keys: Settings.groupKeys) { $0.groups?["t"] }) }
  @Test func clientKeys() throws { try checkEveryKey(Case(kind: "clients", named: true, keys: Settings.clientKeys) { $0.clients?["t"] }) }
  @Test func carouselKeys() throws { try checkEveryKey(Case(kind: "carousel", named: true, keys: Settings.carouselKeys) { $0.carousels?["t"] }) }
  @Test func quietHourKeys() throws { try checkEveryKey(Case(kind: "quiet-hours", named: false, keys: Settings.quietHourKeys) { $0.quietHours }) }

  @Test func inlineTablesHaveTheirDefaultsAndNameTheirKeyLine() throws {
    // A binding given as a table: what it leaves out is PagingBinding's default.
    let text = "[carousel.t]\nwrap = \"wrap\"\npage-next = { cue = \"tick\", volume = 0.5 }\n"
    let binding = try #require(try ConfigFile.read(Array(text.utf8), path: "c.toml").carousels?["t"]?.bindings["page-next"])
    var expected = PagingBinding(cue: "tick", volume: 0.5)
    expected.line = 3
    #expect(binding == expected)
    // Out of range in it: the binding's line, and the binding named.
    do {
      _ = try ConfigFile.read(Array("[carousel.t]\npage-next = { cue = \"tick\", deadline = 0 }\n".utf8), path: "c.toml")
      Issue.record("deadline = 0 was accepted")
    } catch {
      #expect(error.description == "c.toml:2: [carousel.t] page-next's deadline must be a number of seconds from 0.001 to 10.0 (default 0.03)")
    }
    // A required key missing: what the table says of it.
    do {
      _ = try ConfigFile.read(Array("[carousel.t]\npage-next = { volume = 0.5 }\n".utf8), path: "c.toml")
      Issue.record("a binding without its cue was accepted")
    } catch {
      #expect(error.description == "c.toml:2: [carousel.t] page-next needs cue = \"…\" (the cue to play), or false for nothing")
    }
    // A duck that gives only its group: Ducking's defaults.
    let duck: JSONValue = .object([("groups", .object([("a", .object([("duck", .object([("group", .string("default"))]))]))]))])
    #expect(try ConfigFile.interpret(duck, path: "c.toml").groups?["a"]?.duck == Ducking(group: "default"))
    do {
      _ = try ConfigFile.read(Array("[groups.a]\nvolume = 1\nduck = { group = \"default\", by = 6 }\n".utf8), path: "c.toml")
      Issue.record("by = 6 was accepted")
    } catch {
      #expect(error.description == "c.toml:3: [groups.a] duck's by must be a number of dB from -60.0 to 0.0 (default -12)")
    }
    // A variation's weight: Variation's default.
    let set: JSONValue = .object([("cues", .object([("s", .object([("variations", .array([.string("a"), .object([("cue", .string("b"))])]))]))]))])
    #expect(try ConfigFile.interpret(set, path: "c.toml").cueRules?["s"]?.variations == [Variation(cue: "a"), Variation(cue: "b")])
  }

  /// docs/CONFIG.md's tables headed `| TITLE key |`: each row's keys (`a`, `b`), type cell, default cell and meaning.
  static func documentedTables() throws -> [String: [String: (type: String, default: String, meaning: String)]] {
    let doc = try String(contentsOfFile: SettingsTests.repositoryRoot + "/docs/CONFIG.md", encoding: .utf8)
    var tables: [String: [String: (String, String, String)]] = [:]
    var title: String?
    for line in doc.split(separator: "\n", omittingEmptySubsequences: false) {
      guard line.hasPrefix("|") else {
        title = nil
        continue
      }
      let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
      guard cells.count == 4 else { continue }
      if cells[0].hasSuffix(" key") && cells[1] == "type" {
        title = String(cells[0].dropLast(4)).trimmingCharacters(in: ["`"])
        continue
      }
      guard let title, !cells[0].hasPrefix("---") else { continue }
      for key in cells[0].components(separatedBy: ", ") {
        tables[title, default: [:]][key.trimmingCharacters(in: ["`"])] = (cells[1], cells[2], cells[3])
      }
    }
    return tables
  }

  @Test func configDocumentationHasEveryTableKeyWithItsTypeAndDefault() throws {
    let documented = try Self.documentedTables()
    for (title, rows) in Settings.tableDocumentation {
      let table = try #require(documented[title], "docs/CONFIG.md has no table headed `\(title)` key")
      for row in rows {
        let cells = try #require(table[row.key], "docs/CONFIG.md's \(title) table has no row for \(row.key)")
        #expect(cells.type.contains(row.type), "docs/CONFIG.md: \(title) \(row.key) is '\(cells.type)', the declaration says \(row.type)")
        #expect(cells.default.hasPrefix(row.default), "docs/CONFIG.md: \(title) \(row.key) defaults to '\(cells.default)', the struct to \(row.default)")
        #expect(cells.meaning.hasPrefix(row.help), "docs/CONFIG.md: \(title) \(row.key)'s meaning does not start with its help, '\(row.help)'")
      }
      #expect(Set(table.keys) == Set(rows.map(\.key)), "docs/CONFIG.md's \(title) table has keys that are not declared")
    }
  }
}
