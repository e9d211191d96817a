/// A TOML 1.0 value, as `TOMLParser` reads it: tables and arrays hold values; integers and floats
/// stay apart; dates and times keep their RFC 3339 text.
public enum TOMLValue: Sendable, Equatable {
  case string(String)
  case integer(Int64)
  /// Any double, infinities and NaN included (NaN compares unequal to itself, as Double does).
  case float(Double)
  case boolean(Bool)
  case dateTime(TOMLDateTime)
  case array([TOMLValue])
  case table([String: TOMLValue])
}

/// A TOML date, time or date-time, checked (month, day of month, hour, minute, second, offset) and
/// kept as text: cued gives dates no meaning, so nothing converts them.
public struct TOMLDateTime: Sendable, Equatable, CustomStringConvertible {
  public enum Kind: Sendable, Equatable {
    /// `1979-05-27T07:32:00Z`, `1979-05-27 07:32:00-07:00`.
    case offsetDateTime
    /// `1979-05-27T07:32:00`.
    case localDateTime
    /// `1979-05-27`.
    case localDate
    /// `07:32:00.5`.
    case localTime
  }

  public var kind: Kind
  /// As written, with the date-time separator made `T` and a `z` offset made `Z` (RFC 3339).
  public var text: String

  public init(_ kind: Kind, _ text: String) {
    self.kind = kind
    self.text = text
  }

  public var description: String { text }
}

/// A parsed document: its root table, and where each key in it is written.
public struct TOMLDocument: Sendable {
  public var root: [String: TOMLValue]
  /// Each key's position, by its path from the root: `[.key("cues"), .key("tick"), .key("volume")]`
  /// for `volume` under `[cues.tick]`, `[.key("a"), .index(0), .key("b")]` for `b` in the first
  /// `[[a]]` (or in `a = [{ b = 1 }]`). Every part of a dotted key is filed (`a.b = 1` files `a` and
  /// `a.b`); a table is filed where its `[header]` names it, or, when only implied (by `[a.b]` or
  /// `a.b = 1`), where it is first named; an element of `[[a]]` where its header names it.
  public var positions: [TOMLKeyPath: TOMLPosition]

  public init(root: [String: TOMLValue], positions: [TOMLKeyPath: TOMLPosition]) {
    self.root = root
    self.positions = positions
  }
}

/// One step from a table to what it holds: a key, or an array's element.
public enum TOMLPathComponent: Sendable, Hashable {
  case key(String)
  case index(Int)
}

/// The steps from the root table to a key.
public typealias TOMLKeyPath = [TOMLPathComponent]

/// A place in the document: the 1-based line, and the 1-based byte column on it.
public struct TOMLPosition: Sendable, Hashable {
  public var line: Int
  public var column: Int

  public init(line: Int, column: Int) {
    self.line = line
    self.column = column
  }
}

/// Why a TOML document was refused, and where: the 1-based line and byte column of the problem.
public struct TOMLError: Error, Sendable, Equatable, CustomStringConvertible {
  public var line: Int
  public var column: Int
  public var message: String

  public var description: String { "line \(line), column \(column): \(message)" }
}
