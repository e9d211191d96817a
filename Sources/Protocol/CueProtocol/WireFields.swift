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

/// A reply body made of a few required fields: `fields` and `init(reply:)` come from its `layout`.
protocol FlatReply: ReplyFields {
  typealias Layout = ReplyLayout<Self>
  static var layout: Layout { get }
}

extension FlatReply {
  public var fields: [(String, JSONValue)] { Self.layout.encode(self) }

  public init(reply: JSONValue) throws(ProtocolError) {
    var fields = FieldReader(reply)
    self = try Self.layout.decode(&fields)
  }
}

/// How a `FlatReply` is written and read: its fields in wire order, and its initializer.
struct ReplyLayout<Body> {
  let encode: (Body) -> [(String, JSONValue)]
  let decode: (inout FieldReader) throws(ProtocolError) -> Body

  /// A body of one field; `what` names the reply in errors ("the stop reply").
  init<A>(_ what: String, _ a: ReplyField<Body, A>, _ make: @escaping (A) -> Body) {
    encode = { [a.write($0)] }
    decode = { (fields: inout FieldReader) throws(ProtocolError) -> Body in make(try a.read(&fields, in: what)) }
  }

  /// A body of two fields, in this order on the wire.
  init<A, B>(_ what: String, _ a: ReplyField<Body, A>, _ b: ReplyField<Body, B>, _ make: @escaping (A, B) -> Body) {
    encode = { [a.write($0), b.write($0)] }
    decode = { (fields: inout FieldReader) throws(ProtocolError) -> Body in
      let first = try a.read(&fields, in: what)
      return make(first, try b.read(&fields, in: what))
    }
  }
}

/// One required field of a reply body: its key, where the body keeps it, and its JSON form.
struct ReplyField<Body, Value> {
  let key: String
  let path: KeyPath<Body, Value>
  let encode: (Value) -> JSONValue
  let decode: (inout FieldReader, String) throws(ProtocolError) -> Value?

  func write(_ body: Body) -> (String, JSONValue) { (key, encode(body[keyPath: path])) }

  func read(_ fields: inout FieldReader, in what: String) throws(ProtocolError) -> Value {
    try required(decode(&fields, key), key, in: what)
  }
}

extension ReplyField {
  // The JSON forms of reply values: how `JSONValue` writes them and `FieldReader` reads them.

  static func id(_ key: String, _ path: KeyPath<Body, UInt64>) -> Self where Value == UInt64 {
    Self(key: key, path: path, encode: JSONValue.id) { (fields, key) throws(ProtocolError) in try fields.id(key) }
  }

  static func int(_ key: String, _ path: KeyPath<Body, Int>) -> Self where Value == Int {
    Self(key: key, path: path, encode: JSONValue.int) { (fields, key) throws(ProtocolError) in try fields.integer(key) }
  }

  static func string(_ key: String, _ path: KeyPath<Body, String>) -> Self where Value == String {
    Self(key: key, path: path, encode: JSONValue.string) { (fields, key) throws(ProtocolError) in try fields.string(key) }
  }

  static func bool(_ key: String, _ path: KeyPath<Body, Bool>) -> Self where Value == Bool {
    Self(key: key, path: path, encode: JSONValue.bool) { (fields, key) throws(ProtocolError) in try fields.bool(key) }
  }

  static func number(_ key: String, _ path: KeyPath<Body, Double>) -> Self where Value == Double {
    Self(key: key, path: path, encode: JSONValue.number) { (fields, key) throws(ProtocolError) in try fields.double(key) }
  }
}
