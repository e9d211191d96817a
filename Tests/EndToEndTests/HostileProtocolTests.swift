import CuePosix
import CueProtocol
import DaemonTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Every kind of bad input on the socket gets a clear error, and the daemon keeps serving:
/// the same connection, a bystander, and the audio (no underruns).
@Suite("Hostile protocol input", .serialized)
struct HostileProtocolTests {
  /// A line, the error code it must get, and a word the message must contain (naming the problem).
  static let lines: [(String, ErrorCode, String)] = [
    (#"{"id":1,"op":"play","cue":"pico","volume":NaN}"#, .parseError, "byte"),
    (#"{"id":2,"op":"play","cue":"pico","volume":Infinity}"#, .parseError, "byte"),
    (#"{"id":3,"op":"play","cue":"pico","volume":1e400}"#, .parseError, "byte"),
    (#"{"id":4,"op":"play","cue":"pico","volume":-0.5}"#, .outOfRange, "volume"),
    (#"{"id":5,"op":"play","cue":"pico","pan":-1.0000001}"#, .outOfRange, "pan"),
    (#"{"id":6,"op":"play","cue":"pico","loops":1e300}"#, .outOfRange, "loops"),
    (#"{"id":8,"op":"play","cue":"pico","loops":1.5}"#, .invalidRequest, "loops"),
    (#"{"id":9,"op":"play","cue":"pico","volume":"0.5"}"#, .invalidRequest, "volume"),
    (#"{"id":10,"op":"play","cue":7}"#, .invalidRequest, "cue"),
    (#"{"id":11,"op":5}"#, .invalidRequest, "op"),
    (#"{"id":12}"#, .invalidRequest, "op"),
    (#"{"id":13,"op":"play","cue":"pico","cue":"pico"}"#, .parseError, "cue"),
    (#"{"id":14,"op":"player.set","player":1,"volume":true}"#, .invalidRequest, "volume"),
    (#"{"id":15,"op":"sound.play","sound":-1}"#, .outOfRange, "sound"),
    (#"{"id":16,"op":"stop","voice":18446744073709551616}"#, .outOfRange, "voice"),
    (#"{"id":7,"op":"sound.play","sound":424242}"#, .unknownSound, "424242"),
    (#""just a string""#, .invalidRequest, "object"),
    ("null", .invalidRequest, "object"),
    (String(repeating: "[", count: 5000), .parseError, "deep"),
    (#"{"id":17,"op":"play","cue":""# + String(repeating: "x", count: 60_000) + #""}"#, .unknownCue, "xxx"),
    ("\u{FEFF}" + #"{"id":18,"op":"ping"}"#, .parseError, "byte"),
  ]

  @Test func everyBadLineGetsItsErrorAndNothingElseIsDisturbed() throws {
    let (daemon, _) = try DaemonTests.start()
    defer { daemon.stop() }
    #expect(try daemon.cuectl(["play", "loop", "--loops", "-1", "--volume", "0"]).status == 0)
    let hostile = try RawClient(socket: daemon.socket)
    let bystander = try ProtocolClient(socket: daemon.socket)
    for (line, code, mentions) in Self.lines {
      try hostile.send(line + "\n")
      let reply = try hostile.receive()
      let shown = line.prefix(80)
      #expect(reply["ok"] == false, "\(shown)")
      #expect(reply["error"]?["code"]?.stringValue == code.rawValue, "\(shown): \(reply)")
      let message = reply["error"]?["message"]?.stringValue ?? ""
      #expect(message.lowercased().contains(mentions.lowercased()), "\(shown): \(message.prefix(300))")
      #expect(message.utf8.count < 2000, "\(shown): the message repeats the whole request")
      #expect(try bystander.request("ping")["pong"] == true)
    }
    // Binary garbage with NUL bytes and a lone continuation byte, then a good request on the same connection.
    try hostile.send(bytes: [0x00, 0x01, 0xFF, 0x80, 0x7B, 0x00, 0x0A])
    #expect(try hostile.receive()["error"]?["code"] == "parse-error")
    try hostile.send(#"{"id":99,"op":"ping"}"# + "\n")
    #expect(try hostile.receive()["id"] == 99)
    let status = try daemon.status()
    Harness.expectNoUnderruns(status)
    #expect(status["voices"] as? Int == 1)
  }

  @Test func aLineNeverTerminatedIsDiscardedPastTheLimitAndTheNextOneWorks() throws {
    let (daemon, _) = try DaemonTests.start()
    defer { daemon.stop() }
    let endless = try RawClient(socket: daemon.socket)
    let bystander = try ProtocolClient(socket: daemon.socket)
    // Half the limit, then nothing: the daemon holds it and serves others meanwhile.
    try endless.send(bytes: Array(repeating: 0x41, count: 32 * 1024))
    #expect(try bystander.request("ping")["pong"] == true)
    // Past the limit: told at once, without waiting for a newline that may never come.
    try endless.send(bytes: Array(repeating: 0x41, count: 40 * 1024))
    let reply = try endless.receive()
    #expect(reply["error"]?["code"] == "line-too-long")
    #expect(reply["id"] == .null)
    // Megabytes more of it cost the daemon nothing (discarded as they come).
    for _ in 0..<32 { try endless.send(bytes: Array(repeating: 0x41, count: 64 * 1024)) }
    #expect(try bystander.request("ping")["pong"] == true)
    try endless.send("\n" + #"{"id":5,"op":"ping"}"# + "\n")
    #expect(try endless.receive()["id"] == 5)
  }

  @Test func aClientThatConnectsAndStaysSilentCostsNothing() throws {
    let (daemon, _) = try DaemonTests.start()
    defer { daemon.stop() }
    let silent = try (0..<50).map { _ in try RawClient(socket: daemon.socket) }
    #expect(try daemon.cuectl(["play", "pico", "--wait"]).status == 0)
    usleep(600_000)  // past the idle timeout (0.3 s): the device closes
    try Harness.expectIdle(daemon.pid, for: 1)
    #expect((try daemon.status()["clients"] as? Int) == 51)
    _ = silent
  }
}
