import CuePosix
import CueProtocol
import CueProtocolDocs
import Testing

/// The generated parts of docs/protocol.schema.json and docs/PROTOCOL.md are what the op table and
/// the field declarations make now: a new op, field or rule fails here until `make protocol-docs`
/// has rewritten them.
@Suite("The generated protocol docs")
struct GeneratedDocsTests {
  static let root: String = {
    var path = #filePath
    for _ in 0..<3 { path = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)]) }
    return path
  }()

  static func committed(_ path: String) throws -> String {
    String(decoding: try Files.read(path: root + "/" + path, limit: 16 << 20), as: UTF8.self)
  }

  @Test func theSchemasRequestsAreTheDeclarations() throws {
    let text = try Self.committed(ProtocolDocs.schemaPath)
    #expect(
      try ProtocolDocs.schema(updating: text) == text,
      "\(ProtocolDocs.schemaPath) differs from the declarations: run `\(ProtocolDocs.command)` and commit the result")
  }

  @Test func protocolMdsOpListAndFieldTablesAreTheDeclarations() throws {
    let text = try Self.committed(ProtocolDocs.protocolPath)
    #expect(
      try ProtocolDocs.protocolDocument(updating: text) == text,
      "\(ProtocolDocs.protocolPath) differs from the declarations: run `\(ProtocolDocs.command)` and commit the result")
  }

  @Test func theCanberraDriversHeaderIsTheProtocolsWords() throws {
    let text = try Self.committed(ProtocolDocs.headerPath)
    #expect(
      try ProtocolDocs.header(updating: text) == text,
      "\(ProtocolDocs.headerPath) differs from CueProtocol: run `\(ProtocolDocs.command)` and commit the result")
    for code in ErrorCode.allCases { #expect(text.contains("\"\(code.rawValue)\"\n"), "no \(code.rawValue)") }
    #expect(text.contains("#define CUED_ROLE_MAX_BYTES \(PlayParameters.maximumRoleBytes)\n"))
  }

  /// The generated request schema holds what the readers hold: each op's object, its fields and
  /// no other, the required ones.
  @Test func theGeneratedRequestSchemaFollowsEachDeclaration() throws {
    let schema = try JSONParser.parse(Array(ProtocolDocs.schema(updating: Self.committed(ProtocolDocs.schemaPath)).utf8), maxDepth: 64)
    let requests = try #require(schema["$defs"]?["requests"])
    #expect(requests.objectKeys == Op.allCases.map(\.rawValue))
    for op in Op.allCases {
      let request = try #require(requests[op.rawValue])
      let specs = op.declaration.fieldSpecs
      #expect(request["properties"]?.objectKeys == specs.map(\.name) + ["id", "op"])
      #expect(request["additionalProperties"] == false)
      #expect(request["required"] == .array((["op"] + specs.filter(\.isRequired).map(\.name)).map { .string($0) }))
    }
    #expect(requests["meters"]?["properties"]?["rate"]?["maximum"] == .number(MetersRequest.maximumRate))
    #expect(requests["play"]?["oneOf"]?.arrayValue?.count == 3)
  }

  @Test func aMissingMarkerIsNamedWithWhereItGoes() {
    #expect(throws: ProtocolDocs.Problem.self) { try ProtocolDocs.protocolDocument(updating: "# no markers\n") }
  }
}
