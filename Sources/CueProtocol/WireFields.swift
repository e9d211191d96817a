/// Helpers shared by the typed events and replies: numbers and ids as JSON, required and enum fields.
extension JSONValue {
  /// One wire line: the compact JSON (`JSONWriter`) and a newline; what requests, replies and events are sent as.
  public var line: [UInt8] {
    var bytes: [UInt8] = []
    JSONWriter.write(self, into: &bytes)
    bytes.append(0x0A)
    return bytes
  }

  /// An id (voice, player, sound) as a JSON number; exact below 2^53, as every id the daemon hands out.
  static func id(_ value: UInt64) -> JSONValue { .number(Double(value)) }

  /// An integer (a count, a page index) as a JSON number; exact below 2^53.
  static func int(_ value: Int) -> JSONValue { .number(Double(value)) }

  /// An array of strings.
  static func strings(_ values: [String]) -> JSONValue { .array(values.map { .string($0) }) }
}

/// The value of a field a message must have, or an error naming the field and the message.
func required<T>(_ value: T?, _ key: String, in what: String) throws(ProtocolError) -> T {
  guard let value else { throw ProtocolError(.invalidRequest, "\(what) has no \"\(key)\" field") }
  return value
}

extension FieldReader {
  /// Any finite number, unbounded (what the daemon reports: times, levels).
  mutating func double(_ key: String) throws(ProtocolError) -> Double? {
    try optionalNumber(key, in: -Double.greatestFiniteMagnitude...Double.greatestFiniteMagnitude)
  }

  /// A string field that must be one of a closed set's raw values.
  mutating func value<E: RawRepresentable & CaseIterable>(_ key: String, as type: E.Type) throws(ProtocolError) -> E?
  where E.RawValue == String {
    guard let raw = try string(key) else { return nil }
    guard let value = E(rawValue: raw) else {
      throw ProtocolError(
        .invalidRequest,
        "\"\(key)\" is \"\(raw.prefix(64))\"; it must be one of \(E.allCases.map(\.rawValue).joined(separator: ", "))")
    }
    return value
  }
}

extension FieldReader {
  /// A nested object, as a value (read it with a `FieldReader` of its own).
  mutating func object(_ key: String) throws(ProtocolError) -> JSONValue? {
    guard let value = take(key) else { return nil }
    guard case .object = value else { throw ProtocolError(.invalidRequest, "\"\(key)\" must be an object") }
    return value
  }

  /// An array of nested objects, each decoded by `decode`.
  mutating func objects<T>(_ key: String, _ decode: (JSONValue) throws(ProtocolError) -> T) throws(ProtocolError) -> [T]? {
    guard let value = take(key) else { return nil }
    guard let array = value.arrayValue else { throw ProtocolError(.invalidRequest, "\"\(key)\" must be an array of objects") }
    var decoded: [T] = []
    for element in array {
      guard case .object = element else { throw ProtocolError(.invalidRequest, "\"\(key)\" must be an array of objects") }
      decoded.append(try decode(element))
    }
    return decoded
  }

  /// An array of numbers.
  mutating func numbers(_ key: String) throws(ProtocolError) -> [Double]? {
    guard let value = take(key) else { return nil }
    guard let array = value.arrayValue, array.allSatisfy({ $0.doubleValue != nil }) else {
      throw ProtocolError(.invalidRequest, "\"\(key)\" must be an array of numbers")
    }
    return array.compactMap(\.doubleValue)
  }
}
