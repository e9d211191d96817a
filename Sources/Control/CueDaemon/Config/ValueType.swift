import CuePosix
import CueProtocol

// What a value of the config file (or a flag) may be, and its one check: the top-level settings
// (Settings.swift), the backends' options (adapted from `BackendOption`, Setting.init(_:)) and the
// keys of the file's tables (TableKeys.swift) all declare a `ValueType`, so a kind of value is
// checked, and its problem worded, in one place.

/// A setting's value once checked, in the config file's units (MiB, KiB, seconds).
public enum SettingValue: Sendable, Equatable {
  case integer(Int)
  case number(Double)
  case string(String)
  case strings([String])
  case bool(Bool)

  var int: Int {
    switch self {
    case .integer(let n): n
    case .number(let x): Int(x)
    default: 0
    }
  }
  var double: Double {
    switch self {
    case .integer(let n): Double(n)
    case .number(let x): x
    default: 0
    }
  }
  var string: String { if case .string(let s) = self { s } else { "" } }
  var strings: [String] { if case .strings(let list) = self { list } else { [] } }
  var bool: Bool { if case .bool(let b) = self { b } else { false } }

  /// As `--help` and the man page show it: `2`, not `2.0`.
  var shown: String {
    switch self {
    case .integer(let n): "\(n)"
    case .number(let x): x == x.rounded() && abs(x) < 1e15 ? "\(Int(x))" : "\(x)"
    case .string(let s): s
    case .strings(let list): list.joined(separator: ", ")
    case .bool(let b): "\(b)"
    }
  }
}

extension SettingValue: ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral, ExpressibleByStringLiteral,
  ExpressibleByBooleanLiteral
{
  public init(integerLiteral value: Int) { self = .integer(value) }
  public init(floatLiteral value: Double) { self = .number(value) }
  public init(stringLiteral value: String) { self = .string(value) }
  public init(booleanLiteral value: Bool) { self = .bool(value) }
}

/// What a setting or a table key takes, and how it is checked (the same check for a flag and a key).
public enum ValueType: Sendable, Equatable {
  case integer(ClosedRange<Int>)
  /// A number in the range, of the unit (`dB`, `seconds`) when given.
  case number(ClosedRange<Double>, unit: String? = nil)
  /// A number above the range's lower bound, at most its upper one.
  case numberAbove(ClosedRange<Double>)
  /// true or false; on the command line, a flag that takes no value.
  case boolean
  /// A non-empty string.
  case text
  /// A non-empty string; the message says what it names.
  case name(String)
  /// A non-empty string; `~/` is the home directory.
  case path
  /// One of these words, each with what it does ("" or absent: nothing said).
  case choice([String], glosses: [String] = [])
  /// A group name or number that exists on this system.
  case group
  /// A list of directories (`~/` expanded); on the command line the flag is repeated.
  case directories
  /// `"HH:MM"`, 24-hour.
  case timeOfDay
  /// Something with its own shape (a list, an inline table), as docs/CONFIG.md's type column says it;
  /// the key's own reader checks it.
  case structured(String)

  /// `value` checked for the key `name` (as messages call it: `rate`, `duck's by`); a range's
  /// problem ends with the default, `shownDefault`, when there is one. The problem says what to write.
  func check(_ value: JSONValue, name: String, shownDefault: String?) throws(SettingProblem) -> SettingValue {
    let byDefault = shownDefault.map { " (default \($0))" } ?? ""
    switch self {
    case .integer(let range):
      guard let n = value.intValue, range.contains(n) else {
        throw SettingProblem("\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound)\(byDefault)")
      }
      return .integer(n)
    case .number(let range, let unit):
      guard let x = value.doubleValue, x.isFinite, range.contains(x) else {
        throw SettingProblem("\(name) must be a number\(unit.map { " of " + $0 } ?? "") from \(range.lowerBound) to \(range.upperBound)\(byDefault)")
      }
      return .number(x)
    case .numberAbove(let range):
      guard let x = value.doubleValue, x.isFinite, x > range.lowerBound, x <= range.upperBound else {
        let (low, high) = (SettingValue.number(range.lowerBound).shown, SettingValue.number(range.upperBound).shown)
        throw SettingProblem("\(name) must be a number above \(low), at most \(high)\(byDefault)")
      }
      return .number(x)
    case .boolean:
      guard let b = value.boolValue else { throw SettingProblem("\(name) must be true or false") }
      return .bool(b)
    case .name(let what):
      guard let s = value.stringValue, !s.isEmpty else { throw SettingProblem("\(name) must be \(what)") }
      return .string(s)
    case .choice(let words, let glosses):
      guard let s = value.stringValue, words.contains(s) else {
        let listed = words.indices.map { i in
          "\"\(words[i])\"" + (i < glosses.count && !glosses[i].isEmpty ? " (\(glosses[i]))" : "")
        }
        throw SettingProblem("\(name) must be \(listed.spoken("or"))")
      }
      return .string(s)
    case .text, .path, .group:
      guard let s = value.stringValue, !s.isEmpty else {
        throw SettingProblem("\(name) must be a non-empty string in quotes, e.g. \(name) = \"…\"")
      }
      if self == .path { return .string(Settings.expandHome(s)) }
      if self == .group && Users.groupID(named: s) == nil {
        throw SettingProblem("\(name) names no group on this system: \(s); give a group name from /etc/group or a number")
      }
      return .string(s)
    case .directories:
      guard let list = value.arrayValue, list.allSatisfy({ $0.stringValue?.isEmpty == false }) else {
        throw SettingProblem("\(name) must be a list of directories, e.g. \(name) = [\"~/.local/share/cued/sounds\"]")
      }
      return .strings(list.compactMap(\.stringValue).map(Settings.expandHome))
    case .timeOfDay:
      let usage = "\(name) must be a time of day as \"HH:MM\" (24-hour, local time)"
      guard let text = value.stringValue else { throw SettingProblem(usage) }
      let parts = text.split(separator: ":")
      guard parts.count == 2, parts.allSatisfy({ $0.count == 2 }), let h = Int(parts[0]), let m = Int(parts[1]), (0..<24).contains(h),
        (0..<60).contains(m)
      else { throw SettingProblem(usage) }
      return .integer(h * 60 + m)
    case .structured: return .bool(false)  // read by the key's own reader
    }
  }

  /// How docs/CONFIG.md's type column states it (a table key's row must contain this).
  public var documented: String {
    func range(_ low: Double, _ high: Double) -> String { SettingValue.number(low).shown + "–" + SettingValue.number(high).shown }
    switch self {
    case .number(let r, let unit): return (unit.map { $0 + ", " } ?? "") + range(r.lowerBound, r.upperBound)
    case .numberAbove(let r): return "above \(SettingValue.number(r.lowerBound).shown), at most \(SettingValue.number(r.upperBound).shown)"
    case .integer(let r): return "\(r.lowerBound)–\(r.upperBound)"
    case .boolean: return "boolean"
    case .text, .name, .path: return "string"
    case .choice(let words, _): return words.map { "`\"\($0)\"`" }.joined(separator: ", ")
    case .group: return "group name or number"
    case .directories: return "list of directories"
    case .timeOfDay: return "`\"HH:MM\"`"
    case .structured(let text): return text
    }
  }
}

/// Why a value does not fit its setting.
public struct SettingProblem: Error, Sendable {
  public var message: String
  init(_ message: String) { self.message = message }
}

