// The bodies need the testing library's expectations; a release build (make install) builds this
// target without it, and then it holds only the surface.
#if canImport(Testing)
import CueProtocol
import Testing

/// A connection as a client sees it: bad lines get their error and the connection keeps working,
/// pipelined requests are answered in order, a client that hangs up or stops sending is still
/// served, the voice limit steals and says so. Written once against `DaemonUnderTest`:
/// CueDaemonTests runs them in process, EndToEndTests live (`CUED_TEST_LIVE=1`).
public enum Connections {
  /// Every body, for the suites that run them.
  public static let all: [Behaviour] = [
    Behaviour("theVoiceLimitStealsTheOldestAndSaysSo", theVoiceLimitStealsTheOldestAndSaysSo),
    Behaviour("malformedLinesGetErrorsAndTheConnectionKeepsWorking", malformedLinesGetErrorsAndTheConnectionKeepsWorking),
    Behaviour("aValueOutOfRangeIsRefusedByTheDaemon", aValueOutOfRangeIsRefusedByTheDaemon),
    Behaviour("aClientThatPipelinesManyRequestsGetsEveryReplyInOrder", aClientThatPipelinesManyRequestsGetsEveryReplyInOrder),
    Behaviour("requestsFromAClientThatHangsUpAtOnceAreStillCarriedOut", requestsFromAClientThatHangsUpAtOnceAreStillCarriedOut),
    Behaviour(
      "aClientThatShutsDownItsSendingSideStillGetsItsRepliesAndEvents", aClientThatShutsDownItsSendingSideStillGetsItsRepliesAndEvents),
    Behaviour("everyBadLineGetsItsErrorAndNothingElseIsDisturbed", everyBadLineGetsItsErrorAndNothingElseIsDisturbed),
    Behaviour("aLineNeverTerminatedIsDiscardedPastTheLimitAndTheNextOneWorks", aLineNeverTerminatedIsDiscardedPastTheLimitAndTheNextOneWorks),
    Behaviour("stopEndsALoopingVoiceAndItsOwnerHearsWhy", stopEndsALoopingVoiceAndItsOwnerHearsWhy),
  ]

  /// A short tone and a loop, as the end-to-end daemon tests had.
  static let cues = ["pico": "tone-48000-mono.mp3", "loop": "loop-48000-stereo.mp3"]

  static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

  public static func theVoiceLimitStealsTheOldestAndSaysSo(_ start: DaemonStarter) throws {
    let daemon = try start(DaemonSetup(cues: cues, maxVoices: 2))
    let client = try daemon.connect()
    for i in 1...3 {
      try client.send(#"{"id":\#(i),"op":"play","cue":"loop","loops":-1,"notify":true}"#)
    }
    var replies: [JSONValue] = []
    var events: [JSONValue] = []
    while replies.count < 3 || events.isEmpty {
      let message = try client.receive()
      if message["event"] != nil { events.append(message) } else { replies.append(message) }
    }
    #expect(replies[2]["stole"]?.intValue == replies[0]["voice"]?.intValue)
    #expect(events[0]["reason"] == "stolen")
    #expect(events[0]["voice"] == replies[0]["voice"])
    #expect(try client.request("status")["voices"]?.intValue == 2)
  }

  public static func malformedLinesGetErrorsAndTheConnectionKeepsWorking(_ start: DaemonStarter) throws {
    let daemon = try start(DaemonSetup(cues: cues))
    let client = try daemon.connect()
    let bystander = try daemon.connect()
    let cases: [(String, String)] = [
      ("{not json\n", "parse-error"),
      ("[1,2]\n", "invalid-request"),
      (#"{"id":2,"op":"dance"}"# + "\n", "unknown-op"),
      (#"{"id":3,"op":"play"}"# + "\n", "invalid-request"),
      (#"{"id":4,"op":"play","cue":"pico","volume":"loud"}"# + "\n", "invalid-request"),
      (#"{"id":5,"op":"play","cue":"pico","colour":"red"}"# + "\n", "invalid-request"),
      (#"{"id":6,"op":"play","cue":"pico","loops":1e300}"# + "\n", "out-of-range"),
      (#"{"id":7,"op":"stop","voice":1,"all":true}"# + "\n", "invalid-request"),
    ]
    for (line, code) in cases {
      try client.send(bytes: bytes(line))
      let reply = try client.receive()
      #expect(reply["ok"] == false, "\(line)")
      #expect(reply["error"]?["code"]?.stringValue == code, "\(line)")
    }
    // Invalid UTF-8 and a line over 64 KiB, sent byte-wise.
    try client.send(bytes: [0x7B, 0x22, 0xFF, 0xFE, 0x22, 0x7D, 0x0A])
    #expect(try client.receive()["error"]?["code"] == "parse-error")
    try client.send(bytes: Array(repeating: 0x20, count: 70_000) + [0x0A])
    #expect(try client.receive()["error"]?["code"] == "line-too-long")
    // A request split byte by byte still works.
    for byte in bytes(#"{"id":9,"op":"ping"}"#) + [0x0A] { try client.send(bytes: [byte]) }
    let pong = try client.receive()
    #expect(pong["id"] == 9 && pong["ok"] == true)
    #expect(try bystander.request("ping")["ok"] == true)
  }

  public static func aValueOutOfRangeIsRefusedByTheDaemon(_ start: DaemonStarter) throws {
    let client = try start(DaemonSetup(cues: cues)).connect()
    let error = try client.requestError("play", [("cue", "pico"), ("volume", 1.5)])
    #expect(error["code"] == "out-of-range")
    #expect(error["message"]?.stringValue?.contains("volume") == true)
  }

  public static func aClientThatPipelinesManyRequestsGetsEveryReplyInOrder(_ start: DaemonStarter) throws {
    let client = try start(DaemonSetup(cues: cues)).connect()
    // Enough status replies to pass the point where cued stops reading until the client reads.
    let count = 3000
    var batch: [UInt8] = []
    for i in 0..<count { batch += bytes(#"{"id":\#(i),"op":"status"}"# + "\n") }
    try client.send(bytes: batch)
    for i in 0..<count {
      let reply = try client.receive()
      #expect(reply["id"]?.intValue == i)
      if reply["id"]?.intValue != i { break }
    }
  }

  public static func requestsFromAClientThatHangsUpAtOnceAreStillCarriedOut(_ start: DaemonStarter) throws {
    let daemon = try start(DaemonSetup(cues: cues))
    let watcher = try daemon.connect()
    try watcher.request("subscribe", [("kinds", ["started"])])
    let sender = try daemon.connect()
    try sender.send(bytes: bytes(#"{"op":"play","cue":"pico"}"# + "\n" + #"{"op":"play","cue":"pico"}"# + "\n"))
    try sender.hangUp()
    try watcher.waitForEvent("started")
    try watcher.waitForEvent("started")
    #expect(try watcher.request("status")["plays"]?.intValue == 2)
  }

  public static func aClientThatShutsDownItsSendingSideStillGetsItsRepliesAndEvents(_ start: DaemonStarter) throws {
    let client = try start(DaemonSetup(cues: cues)).connect()
    try client.send(bytes: bytes(#"{"id":1,"op":"play","cue":"pico","notify":true}"# + "\n" + #"{"id":2,"op":"reload"}"# + "\n"))
    try client.finishSending()
    var seen: [String] = []
    while seen.count < 3 {
      let message = try client.receive()
      if let event = message["event"]?.stringValue { seen.append(event) } else { seen.append("reply \(message["id"]?.intValue ?? -1)") }
    }
    #expect(Set(seen) == ["reply 1", "reply 2", "finished"])
  }

  /// A line, the error code it must get, and a word the message must contain (naming the problem).
  static let hostileLines: [(String, ErrorCode, String)] = [
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

  /// Every kind of bad input gets a clear error, and the daemon keeps serving: the same
  /// connection, a bystander, and the audio (no underruns).
  public static func everyBadLineGetsItsErrorAndNothingElseIsDisturbed(_ start: DaemonStarter) throws {
    let daemon = try start(DaemonSetup(cues: cues))
    let hostile = try daemon.connect()
    let bystander = try daemon.connect()
    try bystander.request("play", [("cue", "loop"), ("loops", -1), ("volume", 0)])
    for (line, code, mentions) in hostileLines {
      try hostile.send(line)
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
    try hostile.send(#"{"id":99,"op":"ping"}"#)
    #expect(try hostile.receive()["id"] == 99)
    // The bystander's loop plays on (the output's underruns mean something live; in process the
    // test sink never underruns, and the voice still playing is the check).
    daemon.advance(seconds: 0.1)
    let status = try bystander.request("status")
    #expect(status["underruns"]?.intValue == 0)
    #expect(status["voices"]?.intValue == 1)
  }

  public static func aLineNeverTerminatedIsDiscardedPastTheLimitAndTheNextOneWorks(_ start: DaemonStarter) throws {
    let daemon = try start(DaemonSetup(cues: cues))
    let endless = try daemon.connect()
    let bystander = try daemon.connect()
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
    try endless.send(bytes: bytes("\n" + #"{"id":5,"op":"ping"}"# + "\n"))
    #expect(try endless.receive()["id"] == 5)
  }

  /// Another connection stops a looping voice by its cue: the owner's `finished` says so, and
  /// the voice, gone, cannot be stopped again.
  public static func stopEndsALoopingVoiceAndItsOwnerHearsWhy(_ start: DaemonStarter) throws {
    let daemon = try start(DaemonSetup(cues: cues))
    let owner = try daemon.connect()
    let other = try daemon.connect()
    try owner.send(#"{"id":"a","op":"play","cue":"loop","loops":-1,"notify":true}"#)
    let reply = try owner.receive()
    #expect(reply["id"] == "a")
    let voice = try #require(reply["voice"]?.intValue)
    #expect(try other.request("stop", [("cue", "loop")])["stopped"] == 1)
    let event = try owner.receive()
    #expect(event["event"] == "finished")
    #expect(event["voice"]?.intValue == voice)
    #expect(event["reason"] == "stopped")
    #expect(event["successfully"] == false)
    #expect(try other.requestError("stop", [("voice", .number(Double(voice)))])["code"] == "unknown-voice")
  }
}
#endif
