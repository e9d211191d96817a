import CueProtocol

/// What `make protocol-docs` writes from the op table and each op's field declarations
/// (CueProtocol's `Op.declarations`, `RequestFields.fieldSpecs` and `fieldRules`): the requests
/// of docs/protocol.schema.json (`$defs/requests` and `$defs/clientLine`; its replies and events
/// are kept by hand), and in docs/PROTOCOL.md the op list of section 2 and each op's field table,
/// between `<!-- generated: … -->` and `<!-- end generated -->`. Text in, text out: the tool
/// (Tools/cued-protocol-docs) reads and writes the files, and a test compares them.
public enum ProtocolDocs {
  /// The files, relative to the repository, and the command that rewrites them.
  public static let schemaPath = "docs/protocol.schema.json"
  public static let protocolPath = "docs/PROTOCOL.md"
  public static let command = "make protocol-docs"

  /// A file that cannot take the generated parts.
  public struct Problem: Error, CustomStringConvertible {
    public let description: String
  }

  // MARK: - The schema

  /// `schema` with its requests and client line made from the declarations.
  public static func schema(updating schema: String) throws(Problem) -> String {
    let parsed: JSONValue
    do {
      parsed = try JSONParser.parse(Array(schema.utf8), maxDepth: 64)
    } catch {
      throw Problem(description: "\(schemaPath) is not JSON (\(error.message)); restore it from git and run \(command) again")
    }
    guard case .object(var members) = parsed, let defsIndex = members.firstIndex(where: { $0.0 == "$defs" }),
      case .object(var defs) = members[defsIndex].1
    else { throw Problem(description: "\(schemaPath) has no \"$defs\" object; restore it from git and run \(command) again") }
    replace("requests", with: requests, in: &defs)
    replace("clientLine", with: clientLine, in: &defs)
    members[defsIndex].1 = .object(defs)
    return PrettyJSON.text(.object(members))
  }

  static func replace(_ key: String, with value: JSONValue, in members: inout [(String, JSONValue)]) {
    if let index = members.firstIndex(where: { $0.0 == key }) { members[index].1 = value } else { members.append((key, value)) }
  }

  /// `$defs/requests`: each op's request, in the op table's order.
  static var requests: JSONValue {
    .object(Op.declarations.map { ($0.op.rawValue, request($0)) })
  }

  /// `$defs/clientLine`: any request, or a carousel line.
  static var clientLine: JSONValue {
    .object([
      ("anyOf", .array(Op.allCases.map { .object([("$ref", .string("#/$defs/requests/\($0.rawValue)"))]) } + [.object([("$ref", "#/$defs/carouselLine")])]))
    ])
  }

  static func request(_ declaration: any RequestFields.Type) -> JSONValue {
    let specs = declaration.fieldSpecs
    var properties = specs.map { ($0.name, property($0)) }
    properties += [("id", .object([("$ref", "#/$defs/requestId")])), ("op", .object([("const", .string(declaration.op.rawValue))]))]
    var members: [(String, JSONValue)] = [
      ("type", "object"), ("properties", .object(properties)), ("additionalProperties", false),
      ("required", .array((["op"] + specs.filter(\.isRequired).map(\.name)).map { .string($0) })),
    ]
    let exactlyOne = declaration.fieldRules.map(\.exactlyOneOf).filter { !$0.isEmpty }
    if let names = exactlyOne.first {
      members.append(("oneOf", .array(names.map { .object([("required", .array([.string($0)]))]) })))
    }
    return .object(members)
  }

  /// The largest id: 2^53, as a double reads it.
  static let idMaximum = JSONValue.number(9_007_199_254_740_992)

  static func property(_ spec: FieldSpec) -> JSONValue {
    var members: [(String, JSONValue)]
    switch spec.type {
    case .string(nil): members = [("type", "string")]
    case .string(let rule?):
      members = [
        ("type", "string"), ("minLength", .number(Double(rule.minLength))), ("maxLength", .number(Double(rule.maxLength))),
        ("pattern", .string(rule.pattern)),
      ]
    case .boolean: members = [("type", "boolean")]
    case .number(let range): members = [("type", "number"), ("minimum", .number(range.lowerBound)), ("maximum", .number(range.upperBound))]
    case .id: members = [("type", "integer"), ("minimum", 0), ("maximum", idMaximum)]
    case .loopCount(let maximum): members = [("type", "integer"), ("maximum", .number(Double(maximum)))]
    case .choice(let words): members = [("enum", .array(words.map { .string($0) }))]
    case .words(let words): members = [("type", "array"), ("items", .object([("enum", .array(words.map { .string($0) }))]))]
    case .ids: members = [("type", "array"), ("items", .object([("type", "integer"), ("minimum", 0), ("maximum", idMaximum)]))]
    }
    if !spec.doc.isEmpty { members.append(("description", .string(spec.doc))) }
    return .object(members)
  }

  // MARK: - PROTOCOL.md

  static func begin(_ part: String) -> String { "<!-- generated: \(part) -->" }
  static let end = "<!-- end generated -->"

  /// `document` with section 2's op list and each op's field table made from the declarations.
  public static func protocolDocument(updating document: String) throws(Problem) -> String {
    var text = try replacing("ops", with: opList, in: document)
    for declaration in Op.declarations where !declaration.fieldSpecs.isEmpty {
      text = try replacing("fields of \(declaration.op.rawValue)", with: fieldTable(declaration), in: text)
    }
    return text
  }

  /// Section 2's list of op names.
  static var opList: String {
    let names = Op.allCases.map { "`\($0.rawValue)`" }
    return "- **`op`** (string, required) names the operation: \(names.dropLast().joined(separator: ", ")) or \(names.last ?? "")"
      + " (the list `hello` returns in `capabilities.ops`, in this order). Names are case-sensitive. Any other value is an"
      + " `unknown-op` error.\n"
  }

  /// An op's field table, and the rules across its fields.
  static func fieldTable(_ declaration: any RequestFields.Type) -> String {
    var lines = ["| field | type | range | default | meaning |", "|---|---|---|---|---|"]
    for spec in declaration.fieldSpecs {
      let cells = ["`\(spec.name)`", typeName(spec.type), spec.range, spec.shownDefault, spec.doc]
      lines.append("|" + cells.map { $0.isEmpty ? " " : " \($0) " }.joined(separator: "|") + "|")
    }
    let rules = declaration.fieldRules.map(\.doc)
    if !rules.isEmpty { lines += [""] + rules }
    return lines.joined(separator: "\n") + "\n"
  }

  static func typeName(_ type: FieldType) -> String {
    switch type {
    case .string, .choice: "string"
    case .boolean: "boolean"
    case .number: "number"
    case .id, .loopCount: "integer"
    case .words: "array of strings"
    case .ids: "array of integers"
    }
  }

  /// `text` with the lines between the markers of `part` replaced by `content`.
  static func replacing(_ part: String, with content: String, in text: String) throws(Problem) -> String {
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
    guard let start = lines.firstIndex(where: { $0 == begin(part) }) else {
      throw Problem(description: "\(protocolPath) has no line \(begin(part)): add it, and \(end) after it, where the \(part) go")
    }
    guard let stop = lines[(start + 1)...].firstIndex(where: { $0 == end }) else {
      throw Problem(description: "\(protocolPath): \(begin(part)) has no \(end) after it")
    }
    let before = lines[...start].joined(separator: "\n")
    let after = lines[stop...].joined(separator: "\n")
    return before + "\n" + content + after
  }
}
