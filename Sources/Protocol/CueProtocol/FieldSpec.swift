/// The request fields of every op, declared as values, as the daemon's settings table declares its
/// options: a field's name, type, range, default, pattern and whether it is required, with its one
/// line of documentation. Each request type lists its fields (`fieldSpecs`) and reads through them
/// (`fields.read(Self.volume)`), so the checks and their error messages come from the declaration;
/// docs/protocol.schema.json's requests and PROTOCOL.md's field tables are generated from the same
/// values (`make protocol-docs`, Tools/CueProtocolDocs).

/// What a field holds, as the schema and the field tables show it.
public enum FieldType: Sendable {
  /// A string; `rule` bounds its length and characters (nil: any string).
  case string(StringRule?)
  case boolean
  /// Any finite number within the range.
  case number(ClosedRange<Double>)
  /// An id (voice, player, sound): an integer, 0 or more.
  case id
  /// AVAudioPlayer's numberOfLoops: an integer up to `maximum`; any negative value means "until stopped".
  case loopCount(maximum: Int)
  /// One of these words.
  case choice([String])
  /// An array of these words.
  case words([String])
  /// An array of ids.
  case ids
}

/// The length and characters a string field allows: what the schema states (`pattern`, in
/// JSON Schema's regular expressions) and what the reader checks (`admits`), with the message
/// that says what to send instead.
public struct StringRule: Sendable {
  public let pattern: String
  public let minLength: Int
  public let maxLength: Int
  /// The range column of the field table.
  public let range: String
  let admits: @Sendable (String) -> Bool
  let message: String
}

/// One request field, as the schema and PROTOCOL.md's tables show it.
public struct FieldSpec: Sendable {
  /// The key on the wire.
  public let name: String
  public let type: FieldType
  /// A request without it is refused.
  public let isRequired: Bool
  /// The default column: what an absent field means.
  public let shownDefault: String
  /// The range column.
  public let range: String
  /// The meaning column: one line.
  public let doc: String

  /// The same field, documented for another op (`player.create`'s initial properties are
  /// `player.set`'s changes).
  public func documented(_ doc: String, default shownDefault: String? = nil) -> FieldSpec {
    FieldSpec(name: name, type: type, isRequired: isRequired, shownDefault: shownDefault ?? self.shownDefault, range: range, doc: doc)
  }
}

extension FieldSpec {
  /// A field of words from a closed set, which its range column lists.
  static func listing(_ words: [String], _ name: String, _ type: FieldType, _ shown: String, _ doc: String) -> FieldSpec {
    FieldSpec(name: name, type: type, isRequired: false, shownDefault: shown, range: words.map { "`\($0)`" }.joined(separator: ", "), doc: doc)
  }
}

/// A rule over several fields (play's "exactly one of cue, event, file"), checked in code by the
/// request type that declares it, documented under its field table.
public struct FieldRule: Sendable {
  /// One sentence for the docs.
  public let doc: String
  /// The fields of which a request must name exactly one, when the rule is that and the schema
  /// can state it (`oneOf`); empty otherwise.
  public let exactlyOneOf: [String]

  public init(_ doc: String, exactlyOneOf: [String] = []) {
    self.doc = doc
    self.exactlyOneOf = exactlyOneOf
  }
}

/// A declared field that reads as a `Value`: its spec, its type check (and range), and the rule
/// checked after it (a string's characters, a word from a closed set), kept apart so that a
/// cross-field rule can come between them as it did before fields were declared.
public struct Field<Value: Sendable>: Sendable {
  public let spec: FieldSpec
  let decode: @Sendable (inout FieldReader, String) throws(ProtocolError) -> Value?
  let check: @Sendable (Value) throws(ProtocolError) -> Void

  init(
    _ spec: FieldSpec, decode: @escaping @Sendable (inout FieldReader, String) throws(ProtocolError) -> Value?,
    check: @escaping @Sendable (Value) throws(ProtocolError) -> Void = { _ in }
  ) {
    self.spec = spec
    self.decode = decode
    self.check = check
  }

  /// This field with a value for when it is absent, shown in the field table as `shown`.
  func defaulting(to value: Value, shown: String) -> DefaultedField<Value> {
    DefaultedField(field: self.with(default: shown), value: value)
  }

  /// This field required: without it the request is refused with `missing`.
  func required(_ missing: String) -> RequiredField<Value> {
    let spec = FieldSpec(name: spec.name, type: spec.type, isRequired: true, shownDefault: "**required**", range: spec.range, doc: spec.doc)
    return RequiredField(field: Field(spec, decode: decode, check: check), missing: missing)
  }

  func with(default shown: String) -> Field {
    Field(spec.documented(spec.doc, default: shown), decode: decode, check: check)
  }
}

/// A field with a default: it always reads as a value.
public struct DefaultedField<Value: Sendable>: Sendable {
  let field: Field<Value>
  let value: Value
  public var spec: FieldSpec { field.spec }
}

/// A field a request must have.
public struct RequiredField<Value: Sendable>: Sendable {
  let field: Field<Value>
  let missing: String
  public var spec: FieldSpec { field.spec }
}

// MARK: - The kinds of field

extension Field where Value == String {
  /// Any string; `range` says what it names.
  static func string(_ name: String, range: String = "any", default shown: String = "absent", _ doc: String) -> Field {
    Field(FieldSpec(name: name, type: .string(nil), isRequired: false, shownDefault: shown, range: range, doc: doc)) {
      (fields, key) throws(ProtocolError) in try fields.string(key)
    }
  }

  /// A string held to `rule`.
  static func string(_ name: String, _ rule: StringRule, default shown: String = "absent", _ doc: String) -> Field {
    Field(FieldSpec(name: name, type: .string(rule), isRequired: false, shownDefault: shown, range: rule.range, doc: doc)) {
      (fields, key) throws(ProtocolError) in try fields.string(key)
    } check: { (value) throws(ProtocolError) in
      guard rule.admits(value) else { throw ProtocolError(.invalidRequest, rule.message) }
    }
  }

  /// One of `words`; any other is refused with `message(value)`.
  static func choice(
    _ name: String, _ words: [String], default shown: String = "absent", _ doc: String,
    refusing message: @escaping @Sendable (String) -> ProtocolError
  ) -> Field {
    Field(.listing(words, name, .choice(words), shown, doc)) {
      (fields, key) throws(ProtocolError) in try fields.string(key)
    } check: { (value) throws(ProtocolError) in
      guard words.contains(value) else { throw message(value) }
    }
  }
}

extension Field where Value == [String] {
  /// An array of `words`; any other is refused with `message(value)`.
  static func words(
    _ name: String, _ words: [String], default shown: String = "absent", _ doc: String,
    refusing message: @escaping @Sendable (String) -> ProtocolError
  ) -> Field {
    Field(.listing(words, name, .words(words), shown, doc)) {
      (fields, key) throws(ProtocolError) in try fields.stringArray(key)
    } check: { (values) throws(ProtocolError) in
      if let unknown = values.first(where: { !words.contains($0) }) { throw message(unknown) }
    }
  }
}

extension Field where Value == [UInt64] {
  static func ids(_ name: String, default shown: String = "absent", _ doc: String) -> Field {
    Field(FieldSpec(name: name, type: .ids, isRequired: false, shownDefault: shown, range: "each ≥ 0", doc: doc)) {
      (fields, key) throws(ProtocolError) in try fields.idArray(key)
    }
  }
}

extension Field where Value == Bool {
  static func boolean(_ name: String, default shown: String = "absent", _ doc: String) -> Field {
    Field(FieldSpec(name: name, type: .boolean, isRequired: false, shownDefault: shown, range: "", doc: doc)) {
      (fields, key) throws(ProtocolError) in try fields.bool(key)
    }
  }
}

extension Field where Value == Double {
  /// A finite number within `range`.
  static func number(_ name: String, _ range: ClosedRange<Double>, default shown: String = "absent", _ doc: String) -> Field {
    let spec = FieldSpec(
      name: name, type: .number(range), isRequired: false, shownDefault: shown,
      range: "\(FieldReader.format(range.lowerBound)) … \(FieldReader.format(range.upperBound))", doc: doc)
    return Field(spec) { (fields, key) throws(ProtocolError) in try fields.optionalNumber(key, in: range) }
  }
}

extension Field where Value == UInt64 {
  /// An id (an integer, 0 or more).
  static func id(_ name: String, default shown: String = "absent", _ doc: String) -> Field {
    Field(FieldSpec(name: name, type: .id, isRequired: false, shownDefault: shown, range: "≥ 0", doc: doc)) {
      (fields, key) throws(ProtocolError) in try fields.id(key)
    }
  }
}

extension Field where Value == Int {
  /// An id read as any integer, its sign checked after (`stop`'s voice, refused with `negative`
  /// only once the request's rule has passed).
  static func signedID(_ name: String, default shown: String = "absent", _ doc: String, negative: String) -> Field {
    Field(FieldSpec(name: name, type: .id, isRequired: false, shownDefault: shown, range: "≥ 0", doc: doc)) {
      (fields, key) throws(ProtocolError) in try fields.integer(key)
    } check: { (n) throws(ProtocolError) in
      guard n >= 0 else { throw ProtocolError(.outOfRange, negative) }
    }
  }

  /// AVAudioPlayer's numberOfLoops, at most `PlayParameters.maximumLoops`; `hint` ends the
  /// message for a count over it.
  static func loopCount(_ name: String, default shown: String = "absent", _ doc: String, hint: String) -> Field {
    let most = PlayParameters.maximumLoops
    let spec = FieldSpec(name: name, type: .loopCount(maximum: most), isRequired: false, shownDefault: shown, range: "≤ \(most)", doc: doc)
    return Field(spec) { (fields, key) throws(ProtocolError) in
      fields.has(key) ? try fields.loopCount(key) : nil
    } check: { (loops) throws(ProtocolError) in
      guard loops <= most else { throw ProtocolError(.outOfRange, "\"\(name)\" is \(loops); the most is \(most) (\(hint))") }
    }
  }
}

// MARK: - Reading declared fields

extension FieldReader {
  /// The field's value, checked, or nil when it is absent (or null).
  mutating func read<Value>(_ field: Field<Value>) throws(ProtocolError) -> Value? {
    guard let value = try field.decode(&self, field.spec.name) else { return nil }
    try field.check(value)
    return value
  }

  /// The field's value, or its default.
  mutating func read<Value>(_ field: DefaultedField<Value>) throws(ProtocolError) -> Value {
    try read(field.field) ?? field.value
  }

  /// The field's value; its absence is refused.
  mutating func read<Value>(_ field: RequiredField<Value>) throws(ProtocolError) -> Value {
    guard let value = try read(field.field) else { throw ProtocolError(.invalidRequest, field.missing) }
    return value
  }

  /// The field's value with its type checked and its rule not yet (`field.check` later).
  mutating func readType<Value>(_ field: Field<Value>) throws(ProtocolError) -> Value? {
    try field.decode(&self, field.spec.name)
  }

  /// The one field of `fields` the request has, checked, and its value: each is read for its type
  /// in order, then a request with none or more than one is refused with `message`, then the
  /// present one's rule is checked.
  mutating func readExactlyOne(of fields: [Field<String>], _ message: String) throws(ProtocolError) -> (name: String, value: String) {
    var present: [(Field<String>, String)] = []
    for field in fields {
      if let value = try readType(field) { present.append((field, value)) }
    }
    guard present.count == 1, let (field, value) = present.first else { throw ProtocolError(.invalidRequest, message) }
    try field.check(value)
    return (field.spec.name, value)
  }
}

extension RequestFields {
  /// Most ops have no rule across their fields.
  public static var fieldRules: [FieldRule] { [] }
}

extension FieldlessRequest {
  public static var fieldSpecs: [FieldSpec] { [] }
}
