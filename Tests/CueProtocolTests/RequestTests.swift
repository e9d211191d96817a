import CueProtocol
import Testing

func decode(_ text: String) -> Result<RequestEnvelope, RequestFailure> {
  RequestDecoder.decode(line: Array(text.utf8))
}

@Suite("Request decoding")
struct RequestTests {
  @Test func aPlayRequestWithEveryField() throws {
    let envelope = try decode(#"{"id":7,"op":"play","cue":"pico","volume":0.5,"pan":-0.25,"loops":-1,"notify":true}"#).get()
    #expect(envelope.id == .number(7))
    #expect(envelope.request == .play(PlayParameters(cue: "pico", volume: 0.5, pan: -0.25, loops: -1, notify: true)))
  }

  @Test func aPlayOfAFileTakesAnAbsolutePathAndRoundTrips() throws {
    let line = #"{"id":7,"op":"play","file":"/usr/share/sounds/a b.wav","volume":0.5,"loops":2,"notify":true}"#
    let expected = Request.play(PlayParameters(file: "/usr/share/sounds/a b.wav", volume: 0.5, loops: 2, notify: true))
    #expect(try decode(line).get().request == expected)
    // What a client writes reads back as the same request.
    #expect(try decode(JSONWriter.write(expected.json(id: .number(7)))).get().request == expected)
  }

  @Test func everyKindOfPlayTakesARoleAndRoundTrips() throws {
    for (what, parameters) in [
      (#""cue":"pico""#, PlayParameters(cue: "pico")), (#""event":"bell""#, PlayParameters(event: "bell")),
      (#""file":"/a.wav""#, PlayParameters(file: "/a.wav")),
    ] {
      var expected = parameters
      expected.role = "a11y"
      let request = Request.play(expected)
      #expect(try decode(#"{"op":"play",\#(what),"role":"a11y"}"#).get().request == request)
      #expect(try decode(JSONWriter.write(request.json(id: .number(1)))).get().request == request)
    }
    // Without one, none; the longest and every character allowed.
    #expect(try decode(#"{"op":"play","cue":"pico"}"#).get().request.body(as: PlayRequest.self)?.parameters.role == nil)
    let longest = String(repeating: "a", count: 60) + "-_.9"
    #expect(try decode(#"{"op":"play","cue":"pico","role":"\#(longest)"}"#).get().request.body(as: PlayRequest.self)?.parameters.role == longest)
  }

  @Test func defaultsFollowAVAudioPlayer() throws {
    let envelope = try decode(#"{"op":"play","cue":"pico"}"#).get()
    #expect(envelope.id == nil)
    #expect(envelope.request == .play(PlayParameters(cue: "pico", volume: 1, pan: 0, loops: 0, notify: false)))
  }

  @Test("every op decodes", arguments: [
    (#"{"op":"ping"}"#, Request.ping), (#"{"op":"list"}"#, .list), (#"{"op":"status"}"#, .status),
    (#"{"op":"reload"}"#, .reload), (#"{"op":"hello","client":"tui"}"#, .hello(client: "tui")),
    (#"{"op":"stop","voice":3}"#, .stop(.voice(3), fadeSeconds: nil)),
    (#"{"op":"stop","cue":"hum","fade":0.5}"#, .stop(.cue("hum"), fadeSeconds: 0.5)),
    (#"{"op":"stop","all":true}"#, .stop(.all, fadeSeconds: nil)),
  ])
  func everyOpDecodes(_ text: String, _ expected: Request) throws {
    #expect(try decode(text).get().request == expected)
  }

  @Test func anyNegativeLoopCountMeansUntilStopped() throws {
    let envelope = try decode(#"{"op":"play","cue":"a","loops":-1e300}"#).get()
    guard let p = envelope.request.body(as: PlayRequest.self)?.parameters else { Issue.record("not play"); return }
    #expect(p.loops < 0)
  }

  @Test func idsBeyondExactIntegersAreRefused() {
    guard case .failure(let failure) = decode(#"{"id":9007199254740992,"op":"ping"}"#) else { Issue.record("accepted"); return }
    #expect(failure.error.code == .invalidRequest)
  }

  @Test func stringIdsAreEchoed() throws {
    #expect(try decode(#"{"id":"abc","op":"ping"}"#).get().id == .string("abc"))
  }

  struct Bad: Sendable, CustomTestStringConvertible {
    var line: String
    var code: ErrorCode
    var mentions: String
    var testDescription: String { line }
  }

  @Test(
    "bad requests get a code and a message naming the problem",
    arguments: [
      Bad(line: "{", code: .parseError, mentions: "byte"),
      Bad(line: "", code: .parseError, mentions: "byte"),
      Bad(line: "42", code: .invalidRequest, mentions: "object"),
      Bad(line: #"{"id":1}"#, code: .invalidRequest, mentions: "op"),
      Bad(line: #"{"id":1,"op":"dance"}"#, code: .unknownOp, mentions: "dance"),
      Bad(line: #"{"id":1,"op":7}"#, code: .invalidRequest, mentions: "op"),
      Bad(line: #"{"id":1,"op":"play"}"#, code: .invalidRequest, mentions: "cue"),
      Bad(line: #"{"id":1,"op":"play","cue":3}"#, code: .invalidRequest, mentions: "cue"),
      Bad(line: #"{"id":1,"op":"play","cue":"a","volume":-0.1}"#, code: .outOfRange, mentions: "volume"),
      Bad(line: #"{"id":1,"op":"play","cue":"a","volume":1.0001}"#, code: .outOfRange, mentions: "volume"),
      Bad(line: #"{"id":1,"op":"play","cue":"a","pan":2}"#, code: .outOfRange, mentions: "pan"),
      Bad(line: #"{"id":1,"op":"play","cue":"a","pan":"left"}"#, code: .invalidRequest, mentions: "pan"),
      Bad(line: #"{"id":1,"op":"play","cue":"a","loops":1.5}"#, code: .invalidRequest, mentions: "loops"),
      Bad(line: #"{"id":1,"op":"play","cue":"a","loops":1e300}"#, code: .outOfRange, mentions: "loops"),
      Bad(line: #"{"id":1,"op":"play","cue":"a","loops":2000000}"#, code: .outOfRange, mentions: "loops"),
      Bad(line: #"{"id":1,"op":"play","cue":"a","extra":1}"#, code: .invalidRequest, mentions: "extra"),
      Bad(line: #"{"id":1,"op":"play","event":".bell"}"#, code: .invalidRequest, mentions: "not starting with '.'"),
      Bad(line: #"{"id":1,"op":"play","cue":"a","notify":"yes"}"#, code: .invalidRequest, mentions: "notify"),
      Bad(line: #"{"id":1,"op":"play","cue":"a","role":7}"#, code: .invalidRequest, mentions: "role"),
      Bad(line: #"{"id":1,"op":"play","cue":"a","role":""}"#, code: .invalidRequest, mentions: "media role"),
      Bad(line: #"{"id":1,"op":"play","cue":"a","role":"screen reader"}"#, code: .invalidRequest, mentions: "media role"),
      Bad(line: #"{"id":1,"op":"play","event":"bell","role":"a/b"}"#, code: .invalidRequest, mentions: "media role"),
      Bad(line: #"{"id":1,"op":"play","cue":"a","role":"\#(String(repeating: "r", count: 65))"}"#, code: .invalidRequest, mentions: "64 bytes"),
      Bad(line: #"{"id":1,"op":"play","file":"ding.wav"}"#, code: .invalidRequest, mentions: "absolute path"),
      Bad(line: #"{"id":1,"op":"play","file":""}"#, code: .invalidRequest, mentions: "absolute path"),
      Bad(line: #"{"id":1,"op":"play","file":"/tmp/a\u0000b"}"#, code: .invalidRequest, mentions: "no NUL"),
      Bad(line: #"{"id":1,"op":"play","file":7}"#, code: .invalidRequest, mentions: "file"),
      Bad(line: #"{"id":1,"op":"play","event":"bell","file":"/a.wav"}"#, code: .invalidRequest, mentions: "exactly one"),
      Bad(line: #"{"id":1,"op":"stop"}"#, code: .invalidRequest, mentions: "exactly one"),
      Bad(line: #"{"id":1,"op":"stop","voice":1,"cue":"a"}"#, code: .invalidRequest, mentions: "exactly one"),
      Bad(line: #"{"id":1,"op":"stop","voice":-4}"#, code: .outOfRange, mentions: "voice"),
      Bad(line: #"{"id":1,"op":"stop","all":true,"fade":1e9}"#, code: .outOfRange, mentions: "fade"),
      Bad(line: #"{"id":[1],"op":"ping"}"#, code: .invalidRequest, mentions: "id"),
      Bad(line: #"{"id":1,"op":"ping","op":"ping"}"#, code: .parseError, mentions: "op"),
    ])
  func badRequests(_ bad: Bad) {
    switch decode(bad.line) {
    case .success(let envelope):
      Issue.record("decoded \(envelope) from \(bad.line)")
    case .failure(let failure):
      #expect(failure.error.code == bad.code)
      #expect(failure.error.message.contains(bad.mentions), "\(failure.error.message)")
    }
  }

  @Test func theIdSurvivesAFieldError() {
    guard case .failure(let failure) = decode(#"{"id":"x1","op":"play","cue":"a","pan":9}"#) else {
      Issue.record("accepted")
      return
    }
    #expect(failure.id == .string("x1"))
  }

  @Test("a request round-trips through its JSON form", arguments: [
    Request.play(PlayParameters(cue: "pico", volume: 0.25, pan: 1, loops: 3, notify: true)),
    .stop(.cue("a b"), fadeSeconds: 0.2), .stop(.voice(12), fadeSeconds: nil), .stop(.all, fadeSeconds: 0),
    .hello(client: "x"), .ping, .list, .status, .reload,
  ])
  func requestsRoundTrip(_ request: Request) throws {
    let line = request.line(id: .number(5))
    #expect(line.last == 0x0A)
    let decoded = try RequestDecoder.decode(line: line.dropLast()).get()
    #expect(decoded.request == request)
    #expect(decoded.id == .number(5))
  }

  @Test func repliesAndEventsAreToldApart() throws {
    let reply = try ServerMessage.parse(ReplyEnvelope.success(id: .number(3), ReplyBody(PlayReply(voice: 9))).line.dropLast())
    guard case .reply(let id, .success(let body)) = reply else { Issue.record("not a reply"); return }
    #expect(id == .number(3))
    #expect(try PlayReply(reply: body) == PlayReply(voice: 9))
    let failure = try ServerMessage.parse(ReplyEnvelope.failure(id: nil, ProtocolError(.unknownCue, "no")).line.dropLast())
    #expect(failure == .reply(id: nil, result: .failure(ProtocolError(.unknownCue, "no"))))
    let finished = Event.finished(.init(voice: 1, cue: "pico", reason: .stopped))
    #expect(try ServerMessage.parse(finished.line.dropLast()) == .event(finished, object: finished.json))
  }

  @Test func anEventThisVersionCannotReadArrivesAsUnknown() throws {
    let line = #"{"event":"finished","voice":1,"cue":"pico","reason":"faded-away","successfully":false}"#
    let object = try JSONParser.parse(Array(line.utf8))
    #expect(try ServerMessage.parse(Array(line.utf8)) == .event(.unknown(kind: "finished", object), object: object))
    let newKind = #"{"event":"volume-changed","volume":0.5}"#
    let newObject = try JSONParser.parse(Array(newKind.utf8))
    #expect(try ServerMessage.parse(Array(newKind.utf8)) == .event(.unknown(kind: "volume-changed", newObject), object: newObject))
  }
}
