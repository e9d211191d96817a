import CueProtocol
import Testing

/// The op table: each op declared once, by its request type, and everything else derived from it.
@Suite("The op table")
struct OpTableTests {
  @Test func everyOpIsFoundByItsNameAndDeclaredByOneType() {
    #expect(Op.declarations.count == Op.allCases.count)
    #expect(Set(Op.allCases.map(\.rawValue)).count == Op.allCases.count, "two ops share a name")
    for op in Op.allCases {
      let found = Op(rawValue: op.rawValue)
      #expect(found == op)
      #expect(found?.owner == op.owner)
      #expect(op.declaration.op == op)
    }
    #expect(Op(rawValue: "player") == nil && Op(rawValue: "Play") == nil)
  }

  /// Which daemon owner answers which op: the `player.` and `sound.` families, the groups, the level, reload, and the daemon for the rest.
  @Test("each op names the owner that carries it out", arguments: Op.allCases)
  func eachOpNamesItsOwner(_ op: Op) {
    let expected: OpOwner =
      switch op.rawValue {
      case let name where name.hasPrefix("player."): .players
      case let name where name.hasPrefix("sound."): .sounds
      case "system", "group": .groups
      case "level": .levels
      case "reload": .reloader
      default: .daemon
      }
    #expect(op.owner == expected)
  }

  @Test func aRequestIsItsOpsTypeAndEqualOnlyToTheSameOpsRequest() throws {
    let get = Request(PlayerGetRequest(player: 1))
    #expect(get.op == PlayerGetRequest.op)
    #expect(get.body(as: PlayerGetRequest.self) == PlayerGetRequest(player: 1))
    #expect(get.body(as: PlayerStopRequest.self) == nil)
    // The same fields, another op: not equal, and written with the other op's name.
    #expect(get != Request(PlayerStopRequest(player: 1)))
    #expect(get == Request(PlayerGetRequest(player: 1)))
    #expect(get != Request(PlayerGetRequest(player: 2)))
    #expect(String(decoding: get.line(id: .number(4)), as: UTF8.self) == #"{"id":4,"op":"player.get","player":1}"# + "\n")
    #expect(try RequestDecoder.decode(line: get.line(id: nil).dropLast()).get().request == get)
  }

  @Test func aReplyIsReadAsTheReplyTypeItsOpDeclares() throws {
    let object = try JSONParser.parse(Array(#"{"id":1,"ok":true,"playing":true}"#.utf8))
    let body = try ReplyBody(op: PlayerPlayRequest.op, reply: object)
    #expect(body.value(as: PlayerPlayReply.self) == PlayerPlayReply(playing: true))
    #expect(body == ReplyBody(PlayerPlayReply()))
    #expect(body != ReplyBody(EmptyReply()))
    // A reply another op's type cannot read is refused.
    #expect(throws: ProtocolError.self) { try ReplyBody(op: PlayerDestroyRequest.op, reply: object) }
  }

  @Test func helloListsTheOpsOfTheTableInItsOrder() {
    let capabilities = HelloReply.Capabilities.current(limits: [])
    #expect(capabilities.ops == Op.declarations.map { $0.op.rawValue })
    #expect(capabilities.ops.first == "hello" && capabilities.ops.last == "clients")
  }
}
