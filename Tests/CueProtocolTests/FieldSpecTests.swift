@testable import CueProtocol
import Testing

/// Each op's request fields are declared once (`fieldSpecs`); the reader takes those keys and no
/// other, and each op's reader reads every key it declares.
@Suite("Declared request fields")
struct FieldSpecTests {
  /// A request type whose reader asks for a key it does not declare.
  struct Undeclaring: FieldlessRequest {
    static let op = Op("undeclaring", owner: .daemon)
    typealias Reply = EmptyReply
    static let loud = Field.boolean("loud", "Not declared below.")
    var loud: Bool?
    init() {}
    init(fields: inout FieldReader) throws(ProtocolError) { loud = try fields.read(Self.loud) }
  }

  @Test func aKeyAbsentFromTheDeclarationsCannotBeReadEvenWhenAsked() throws {
    var fields = FieldReader(try JSONParser.parse(#"{"op":"undeclaring","loud":true}"#))
    _ = try fields.string("op")
    fields.declare(Undeclaring.fieldSpecs.map(\.name))
    let request = try Undeclaring(fields: &fields)
    #expect(request.loud == nil, "the reader handed out a key the op does not declare")
    #expect(throws: ProtocolError(.invalidRequest, #"undeclaring has no field "loud"; see docs/PROTOCOL.md"#)) {
      try fields.rejectUnread(op: "undeclaring")
    }
  }

  @Test("a key no declaration of the op names is refused", arguments: Op.allCases)
  func anUndeclaredKeyIsRefused(_ op: Op) {
    let declared = op.declaration.fieldSpecs.map(\.name)
    #expect(Set(declared).count == declared.count, "\(op) declares a field twice")
    for key in ["undeclared", "Volume"] + (declared.contains("player") ? ["sound"] : ["player"]) {
      let line = #"{"op":"\#(op.rawValue)",\#(Self.validRequired(op))"\#(key)":1}"#
      guard case .failure(let failure) = decode(line) else {
        Issue.record("\(line) was read")
        continue
      }
      #expect(failure.error.message.hasPrefix(#"\#(op.rawValue) has no field "\#(key)""#), "\(line): \(failure.error.message)")
    }
  }

  /// Each declared field is read: a value of the wrong type in it is refused naming it (with the
  /// op's required fields present, so that their absence is not what is reported).
  @Test("every declared field is read by its op's reader", arguments: Op.allCases)
  func everyDeclaredFieldIsRead(_ op: Op) {
    for spec in op.declaration.fieldSpecs {
      let others = Self.validRequired(op, except: spec.name)
      let line = #"{"op":"\#(op.rawValue)",\#(others)"\#(spec.name)":{}}"#
      guard case .failure(let failure) = decode(line) else {
        Issue.record("\(line) was read")
        continue
      }
      #expect(failure.error.message.contains(#""\#(spec.name)""#), "\(line): \(failure.error.message)")
      #expect(!failure.error.message.contains("has no field"), "\(line): \(failure.error.message)")
    }
  }

  @Test func theSchemaFormsOfTheDeclarationsAreTheReadersBounds() {
    let play = PlayRequest.fieldSpecs
    #expect(play.map(\.name) == ["cue", "event", "file", "volume", "pan", "loops", "notify", "role"])
    #expect(play.first { $0.name == "volume" }?.range == "0 … 1")
    #expect(play.first { $0.name == "volume" }?.shownDefault == "`1`")
    #expect(PlayerGetRequest.fieldSpecs.map(\.isRequired) == [true])
    #expect(MetersRequest.fieldSpecs.first?.isRequired == true)
    #expect(PlayRequest.fieldRules.first?.exactlyOneOf == ["cue", "event", "file"])
  }

  /// A string field's pattern and lengths (what the schema states) admit exactly what its reader
  /// admits, for every printable ASCII character alone, at the start, and at each length bound.
  @Test("a string rule's pattern is its reader's check", arguments: ["play", "prepare"])
  func aStringRulesPatternIsItsReadersCheck(_ name: String) throws {
    let specs = try #require(Op(rawValue: name)).declaration.fieldSpecs
    let rules = specs.compactMap { spec -> StringRule? in if case .string(let rule?) = spec.type { rule } else { nil } }
    #expect(!rules.isEmpty)
    for rule in rules {
      let pattern = try Regex(rule.pattern)
      var samples = [""]
      for byte in UInt8(0x20)...0x7e {
        let c = String(UnicodeScalar(byte))
        samples += [c, c + "a", "a" + c, "/" + c]
      }
      samples += [rule.minLength, rule.maxLength, rule.maxLength + 1].flatMap {
        [String(repeating: "a", count: $0), "/" + String(repeating: "a", count: max($0 - 1, 0))]
      }
      for sample in samples {
        let stated = (try? pattern.firstMatch(in: sample)) != nil && (rule.minLength...rule.maxLength).contains(sample.utf8.count)
        #expect(stated == rule.admits(sample), "\(rule.pattern): \"\(sample.prefix(8))\" (\(sample.utf8.count) bytes)")
      }
    }
  }

  /// The least a valid request of `op` has, but the field `except`, as `"KEY":VALUE,` pairs: its
  /// required ids, the first field of an exactly-one rule, `stop`'s target.
  static func validRequired(_ op: Op, except: String = "") -> String {
    var pairs = op.declaration.fieldSpecs.filter(\.isRequired).map { ($0.name, "1") }
    pairs += op.declaration.fieldRules.compactMap(\.exactlyOneOf.first).map { ($0, #""a""#) }
    if op == StopRequest.op { pairs.append(("all", "true")) }
    return pairs.filter { $0.0 != except }.map { #""\#($0.0)":\#($0.1),"# }.joined()
  }
}
