/// A JSON value. Objects keep their keys in insertion order (an array of pairs), so output is deterministic.
///
/// Every JSON number is held as a `Double`; integers are exact up to 2^53.
/// Two values are equal when they have the same case and equal payloads; objects compare
/// their pairs in order, so `{"a":1,"b":2}` and `{"b":2,"a":1}` are different values.
/// Strings (and object keys) compare with Swift's `String` equality, that is by Unicode
/// canonical equivalence.
public enum JSONValue: Sendable, Equatable {
  /// The JSON literal `null`.
  case null
  /// The JSON literals `true` and `false`.
  case bool(Bool)
  /// Any JSON number; integers are exact up to 2^53.
  case number(Double)
  /// A JSON string.
  case string(String)
  /// A JSON array.
  case array([JSONValue])
  /// A JSON object as its members in insertion order.
  case object([(String, JSONValue)])

  /// Compares two values case by case; object members are compared pairwise in order.
  public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
    switch (lhs, rhs) {
    case (.null, .null):
      return true
    case (.bool(let a), .bool(let b)):
      return a == b
    case (.number(let a), .number(let b)):
      return a == b
    case (.string(let a), .string(let b)):
      return a == b
    case (.array(let a), .array(let b)):
      return a == b
    case (.object(let a), .object(let b)):
      guard a.count == b.count else { return false }
      for (left, right) in zip(a, b) where left.0 != right.0 || left.1 != right.1 {
        return false
      }
      return true
    default:
      return false
    }
  }
}

extension JSONValue {
  /// Returns the value of the first member named `key`, or nil when absent or when this is not an object.
  public subscript(key: String) -> JSONValue? {
    guard case .object(let members) = self else { return nil }
    for (name, value) in members where name == key {
      return value
    }
    return nil
  }

  /// The object's keys in stored order, or nil when this is not an object.
  public var objectKeys: [String]? {
    guard case .object(let members) = self else { return nil }
    return members.map(\.0)
  }

  /// The object's members in stored order, or nil when this is not an object.
  public var objectValue: [(String, JSONValue)]? {
    guard case .object(let members) = self else { return nil }
    return members
  }

  /// The string payload, or nil when this is not a string.
  public var stringValue: String? {
    guard case .string(let string) = self else { return nil }
    return string
  }

  /// The number payload, or nil when this is not a number.
  public var doubleValue: Double? {
    guard case .number(let number) = self else { return nil }
    return number
  }

  /// The number as an `Int`, non-nil only when it is integral and within ±2^53 (inclusive).
  public var intValue: Int? {
    guard case .number(let number) = self else { return nil }
    // Comparisons are false for NaN; the Int round trip tests integrality without libm.
    let limit = 9_007_199_254_740_992.0  // 2^53
    guard number >= -limit, number <= limit else { return nil }
    let integer = Int(number)
    return Double(integer) == number ? integer : nil
  }

  /// The boolean payload, or nil when this is not a boolean.
  public var boolValue: Bool? {
    guard case .bool(let bool) = self else { return nil }
    return bool
  }

  /// The array elements, or nil when this is not an array.
  public var arrayValue: [JSONValue]? {
    guard case .array(let elements) = self else { return nil }
    return elements
  }

  /// True when this is `null`.
  public var isNull: Bool {
    if case .null = self { return true }
    return false
  }
}

extension JSONValue: CustomStringConvertible {
  /// Renders the value as compact JSON text (the same as `JSONWriter.write(_:)`).
  public var description: String {
    JSONWriter.write(self)
  }
}

extension JSONValue: ExpressibleByNilLiteral {
  /// Creates `null` from the `nil` literal.
  public init(nilLiteral: ()) {
    self = .null
  }
}

extension JSONValue: ExpressibleByBooleanLiteral {
  /// Creates a boolean from a `true`/`false` literal.
  public init(booleanLiteral value: Bool) {
    self = .bool(value)
  }
}

extension JSONValue: ExpressibleByIntegerLiteral {
  /// Creates a number from an integer literal (exact up to 2^53).
  public init(integerLiteral value: Int) {
    self = .number(Double(value))
  }
}

extension JSONValue: ExpressibleByFloatLiteral {
  /// Creates a number from a floating-point literal.
  public init(floatLiteral value: Double) {
    self = .number(value)
  }
}

extension JSONValue: ExpressibleByStringLiteral {
  /// Creates a string from a string literal.
  public init(stringLiteral value: String) {
    self = .string(value)
  }
}

extension JSONValue: ExpressibleByArrayLiteral {
  /// Creates an array from an array literal.
  public init(arrayLiteral elements: JSONValue...) {
    self = .array(elements)
  }
}

extension JSONValue: ExpressibleByDictionaryLiteral {
  /// Creates an object from a dictionary literal, keeping the members in the order written.
  public init(dictionaryLiteral elements: (String, JSONValue)...) {
    self = .object(elements)
  }
}
