import CueProtocol
import Testing

@testable import CueDaemon

/// Requests reach the owner their op names: every op has one handler, and each answers.
@Suite("Ops routed to their owners, in process")
struct OpRoutingTests {
  @Test func everyOpOfTheTableHasAHandler() throws {
    let embedded = try EmbeddedDaemon()
    #expect(embedded.daemon.routes.ops == Set(Op.allCases))
  }

  /// The smallest request of each op that its owner carries out (ids of a player and a sound made first).
  static func line(_ op: Op, player: Int, sound: Int) -> String {
    let name = op.rawValue
    return switch name {
    case "play", "player.create", "sound.create": #"{"id":1,"op":"\#(name)","cue":"pico"}"#
    case "stop": #"{"id":1,"op":"stop","all":true}"#
    case "meters": #"{"id":1,"op":"meters","rate":10}"#
    case "prepare": #"{"id":1,"op":"prepare","file":"\#(EmbeddedDaemon.repositorySounds)/pico.mp3"}"#
    case _ where name.hasPrefix("player."): #"{"id":1,"op":"\#(name)","player":\#(player)}"#
    case _ where name.hasPrefix("sound."): #"{"id":1,"op":"\#(name)","sound":\#(sound)}"#
    default: #"{"id":1,"op":"\#(name)"}"#
    }
  }

  @Test("each op is answered by its owner with its reply type", arguments: Op.allCases.filter { $0.rawValue != "reload" })
  func eachOpIsAnswered(_ op: Op) throws {
    let embedded = try EmbeddedDaemon()
    let client = embedded.connect()
    let player = try #require(client.reply(#"{"id":0,"op":"player.create","cue":"pico"}"#)["player"]?.intValue)
    let sound = try #require(client.reply(#"{"id":0,"op":"sound.create","cue":"pico"}"#)["sound"]?.intValue)
    var reply = client.reply(Self.line(op, player: player, sound: sound))
    if reply == .null {
      // A deferred reply (prepare's, once the file is decoded on a worker).
      embedded.finishBackgroundWork()
      reply = client.received().first { $0["event"] == nil } ?? .null
    }
    #expect(reply["ok"] == .bool(true), "\(op): \(reply)")
    #expect(throws: Never.self) { try ReplyBody(op: op, reply: reply) }
  }
}
