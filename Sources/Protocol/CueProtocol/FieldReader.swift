/// Reads fields of a request (or reply) object, remembering which were read so extra ones can be named.
///
/// Public only as the argument of `RequestFields.init(fields:)`: every op is declared in this
/// module, and outside it a reader can be neither made nor read.
public struct FieldReader {
  private let members: [(String, JSONValue)]
  private var read: Set<String> = ["id"]
  /// The keys a request's op declares (`RequestFields.fieldSpecs`); nil for a reply or a carousel
  /// line, whose reader takes any key.
  private var declared: Set<String>?

  init(_ value: JSONValue) {
    members = value.objectValue ?? []
  }

  /// From now on, only these keys are read: any other is left unread, so `rejectUnread` refuses it,
  /// even when an op's reader asks for it.
  mutating func declare(_ keys: [String]) {
    declared = Set(keys)
  }

  mutating func take(_ key: String) -> JSONValue? {
    if let declared, !declared.contains(key) { return nil }
    read.insert(key)
    guard let value = members.first(where: { $0.0 == key })?.1 else { return nil }
    if case .null = value { return nil }
    return value
  }

  mutating func string(_ key: String) throws(ProtocolError) -> String? {
    guard let value = take(key) else { return nil }
    guard let s = value.stringValue else { throw ProtocolError(.invalidRequest, "\"\(key)\" must be a string") }
    return s
  }

  mutating func bool(_ key: String) throws(ProtocolError) -> Bool? {
    guard let value = take(key) else { return nil }
    guard let b = value.boolValue else { throw ProtocolError(.invalidRequest, "\"\(key)\" must be true or false") }
    return b
  }

  mutating func optionalNumber(_ key: String, in range: ClosedRange<Double>) throws(ProtocolError) -> Double? {
    guard let value = take(key) else { return nil }
    guard let x = value.doubleValue else { throw ProtocolError(.invalidRequest, "\"\(key)\" must be a number") }
    guard x.isFinite, range.contains(x) else {
      throw ProtocolError(
        .outOfRange,
        "\"\(key)\" is \(Self.format(x)); it must be between \(Self.format(range.lowerBound)) and \(Self.format(range.upperBound))")
    }
    return x
  }

  mutating func integer(_ key: String) throws(ProtocolError) -> Int? {
    guard let value = take(key) else { return nil }
    guard let x = value.doubleValue else { throw ProtocolError(.invalidRequest, "\"\(key)\" must be an integer") }
    guard let n = value.intValue else {
      // Not an integer within ±2^53: either a fraction or too large to be exact.
      let tooLarge = abs(x) >= 9_007_199_254_740_992
      throw ProtocolError(
        tooLarge ? .outOfRange : .invalidRequest,
        tooLarge ? "\"\(key)\" is too large" : "\"\(key)\" must be an integer, not \(x)")
    }
    return n
  }

  /// A non-negative id field (player, sound, voice).
  mutating func id(_ key: String) throws(ProtocolError) -> UInt64? {
    guard let n = try integer(key) else { return nil }
    guard n >= 0 else { throw ProtocolError(.outOfRange, "\"\(key)\" must be an id (0 or more)") }
    return UInt64(n)
  }

  mutating func stringArray(_ key: String) throws(ProtocolError) -> [String]? {
    guard let value = take(key) else { return nil }
    guard let array = value.arrayValue, array.allSatisfy({ $0.stringValue != nil }) else {
      throw ProtocolError(.invalidRequest, "\"\(key)\" must be an array of strings")
    }
    return array.compactMap(\.stringValue)
  }

  mutating func idArray(_ key: String) throws(ProtocolError) -> [UInt64]? {
    guard let value = take(key) else { return nil }
    guard let array = value.arrayValue else { throw ProtocolError(.invalidRequest, "\"\(key)\" must be an array of ids") }
    var ids: [UInt64] = []
    for element in array {
      guard let n = element.intValue else { throw ProtocolError(.invalidRequest, "\"\(key)\" must be an array of ids") }
      guard n >= 0 else { throw ProtocolError(.outOfRange, "\"\(key)\" holds \(n); ids are 0 or more") }
      ids.append(UInt64(n))
    }
    return ids
  }

  mutating func integer(_ key: String, default fallback: Int) throws(ProtocolError) -> Int {
    try integer(key) ?? fallback
  }

  /// True when the request has a non-null `key` (without marking it read).
  func has(_ key: String) -> Bool {
    if let declared, !declared.contains(key) { return false }
    guard let value = members.first(where: { $0.0 == key })?.1 else { return false }
    if case .null = value { return false }
    return true
  }

  /// AVAudioPlayer's numberOfLoops: any negative number (however large) means "until stopped".
  mutating func loopCount(_ key: String) throws(ProtocolError) -> Int {
    guard let value = take(key) else { return 0 }
    if let x = value.doubleValue, x < -9_007_199_254_740_992 { return -1 }
    return try integer(key, default: 0)
  }

  func rejectUnread(op: String) throws(ProtocolError) {
    if let extra = members.first(where: { !read.contains($0.0) }) {
      throw ProtocolError(.invalidRequest, "\(op) has no field \"\(extra.0.prefix(64))\"; see docs/PROTOCOL.md")
    }
  }

  /// A bound as messages and the field tables write it: `1`, not `1.0`.
  static func format(_ x: Double) -> String {
    abs(x) < 1e15 && Double(Int(x)) == x ? String(Int(x)) : String(x)
  }
}
