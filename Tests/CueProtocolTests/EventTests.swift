import CueProtocol
import Testing

/// One event, the exact line the daemon writes for it today, and the ids a subscription filter matches.
struct EventSample: Sendable, CustomTestStringConvertible {
  var event: Event
  var line: String
  var ids: [UInt64]
  var testDescription: String { line }
}

/// Every kind, and each shape a kind takes (optional fields present and absent), as the daemon writes them.
let eventSamples: [EventSample] = [
  EventSample(
    event: .meters(.init(mix: .init(peak: 0.5, rms: 0.25), voices: [.init(voice: 3, level: .init(peak: 0.5, rms: 0.125))])),
    line: #"{"event":"meters","mix":{"peak":0.5,"rms":0.25},"voices":[{"voice":3,"peak":0.5,"rms":0.125}]}"#, ids: []),
  EventSample(
    event: .meters(.init(mix: .init(peak: 0, rms: 0), voices: [])),
    line: #"{"event":"meters","mix":{"peak":0,"rms":0},"voices":[]}"#, ids: []),
  EventSample(
    event: .started(.init(voice: 3, cue: "pico", deviceTime: 1.5, heardIn: 0.02)),
    line: #"{"event":"started","voice":3,"cue":"pico","deviceTime":1.5,"heardIn":0.02}"#, ids: [3]),
  EventSample(
    event: .started(.init(voice: 4, cue: "hum", origin: .player(2), deviceTime: 0, heardIn: 0)),
    line: #"{"event":"started","voice":4,"cue":"hum","player":2,"deviceTime":0,"heardIn":0}"#, ids: [4, 2]),
  EventSample(
    event: .finished(.init(voice: 3, cue: "pico", reason: .end)),
    line: #"{"event":"finished","voice":3,"cue":"pico","reason":"end","successfully":true}"#, ids: [3]),
  EventSample(
    event: .finished(.init(voice: 5, cue: "tick", origin: .sound(1), reason: .deviceLost)),
    line: #"{"event":"finished","voice":5,"cue":"tick","sound":1,"reason":"device-lost","successfully":false}"#, ids: [5, 1]),
  EventSample(
    event: .finished(.decodeFailed(player: 2)),
    line: #"{"event":"finished","player":2,"reason":"error","successfully":false}"#, ids: [2]),
  EventSample(
    event: .completion(.init(sound: 1, voice: 5, reason: .end)),
    line: #"{"event":"completion","sound":1,"voice":5,"played":true,"reason":"end"}"#, ids: [1, 5]),
  EventSample(
    event: .completion(.init(sound: 1, voice: 6, reason: .disposed)),
    line: #"{"event":"completion","sound":1,"voice":6,"played":false,"reason":"disposed"}"#, ids: [1, 6]),
  EventSample(
    event: .completion(.muted(sound: 7)),
    line: #"{"event":"completion","sound":7,"played":false,"reason":"muted"}"#, ids: [7]),
  EventSample(
    event: .device(.init(state: .lost, device: "default", error: "No such device")),
    line: #"{"event":"device","state":"lost","device":"default","error":"No such device"}"#, ids: []),
  EventSample(
    event: .device(.init(state: .closedIdle, device: "hw:0")),
    line: #"{"event":"device","state":"closed-idle","device":"hw:0"}"#, ids: []),
  EventSample(
    event: .reloaded(.init(cues: 3, added: ["a"], changed: [], removed: ["b", "c"])),
    line: #"{"event":"reloaded","cues":3,"added":["a"],"changed":[],"removed":["b","c"]}"#, ids: []),
  EventSample(
    event: .decodeError(.init(player: 2, path: "/srv/sounds/x.mp3", reason: "not an MPEG stream")),
    line: #"{"event":"decode-error","player":2,"path":"/srv/sounds/x.mp3","reason":"not an MPEG stream"}"#, ids: [2]),
  EventSample(
    event: .decodeError(.init(player: nil, path: "/srv/sounds/new.mp3", reason: "not an MPEG stream")),
    line: #"{"event":"decode-error","path":"/srv/sounds/new.mp3","reason":"not an MPEG stream"}"#, ids: []),
  EventSample(
    event: .eventsDropped(.init(count: 12)),
    line: #"{"event":"events-dropped","count":12}"#, ids: []),
  EventSample(
    event: .paging(
      .init(
        carousel: "default", message: "page-changed", from: 0, to: 1,
        outcome: PagingOutcome(decision: .played, cue: "page-next", voice: 9))),
    line: #"{"event":"paging","carousel":"default","message":"page-changed","from":0,"to":1,"decision":"played","cue":"page-next","voice":9}"#,
    ids: [9]),
  EventSample(
    event: .paging(.init(carousel: "menu", message: "page-changed", outcome: PagingOutcome(decision: .unchanged))),
    line: #"{"event":"paging","carousel":"menu","message":"page-changed","decision":"unchanged"}"#, ids: []),
  EventSample(
    event: .paging(.init(carousel: "menu", message: "drag-began", outcome: PagingOutcome(decision: .tooSoon, cue: "grab"))),
    line: #"{"event":"paging","carousel":"menu","message":"drag-began","decision":"too-soon","cue":"grab"}"#, ids: []),
  EventSample(
    event: .level(.init(level: .quiet, previous: .full, setBy: "quiet-hours")),
    line: #"{"event":"level","level":"quiet","previous":"full","setBy":"quiet-hours"}"#, ids: []),
  EventSample(
    event: .finished(.init(voice: 11, cue: "tick", reason: .level)),
    line: #"{"event":"finished","voice":11,"cue":"tick","reason":"level","successfully":false}"#, ids: [11]),
]

@Suite("Typed events")
struct EventTests {
  @Test("encodes to the daemon's exact bytes", arguments: eventSamples)
  func encodesToTheDaemonsBytes(_ sample: EventSample) {
    // Compared as text, so that a failure shows the two lines.
    #expect(String(decoding: sample.event.line, as: UTF8.self) == sample.line + "\n")
  }

  @Test("decodes the daemon's line and round-trips", arguments: eventSamples)
  func decodesAndRoundTrips(_ sample: EventSample) throws {
    let parsed = try Event(json: JSONParser.parse(Array(sample.line.utf8)))
    #expect(parsed == sample.event)
    #expect(try Event(json: sample.event.json) == sample.event)
  }

  @Test("names the ids a subscription filter matches", arguments: eventSamples)
  func subjectIDs(_ sample: EventSample) {
    #expect(sample.event.subjectIDs == sample.ids)
  }

  @Test func theSamplesCoverEveryKind() {
    #expect(Set(eventSamples.compactMap(\.event.kind)) == Set(EventKind.allCases))
  }

  @Test func anUnknownKindDecodesToTheUnknownCase() throws {
    let value = try JSONParser.parse(Array(#"{"event":"volume-changed","level":0.5}"#.utf8))
    let event = try Event(json: value)
    #expect(event == .unknown(kind: "volume-changed", value))
    #expect(event.kind == nil)
    #expect(event.kindName == "volume-changed")
    #expect(event.json == value)
  }

  @Test("refuses a known kind it cannot read", arguments: [
    #"{"event":"finished","voice":1,"cue":"a","reason":"exploded","successfully":false}"#,
    #"{"event":"started","cue":"a","deviceTime":0,"heardIn":0}"#,
    #"{"event":"device","state":"opened"}"#,
    #"{"event":"events-dropped","count":"many"}"#,
    #"{"kind":"started"}"#,
  ])
  func refusesAKnownKindItCannotRead(_ line: String) throws {
    #expect(throws: ProtocolError.self) { try Event(json: JSONParser.parse(Array(line.utf8))) }
  }

  @Test func newFieldsFromANewerDaemonAreIgnored() throws {
    let line = #"{"event":"events-dropped","count":2,"since":17}"#
    #expect(try Event(json: JSONParser.parse(Array(line.utf8))) == .eventsDropped(.init(count: 2)))
  }

  @Test func subscriptionKindsAreTheSubscribableEventKinds() {
    #expect(EventFilter.knownKinds == ["started", "finished", "completion", "device", "reloaded", "decode-error", "paging", "level"])
    #expect(EventKind.allCases.map(\.rawValue).contains("events-dropped"))
  }

  @Test func completionReasonsAreTheFinishReasonsMutedAmongThem() {
    #expect(CompletionReason.allCases.map(\.rawValue) == FinishReason.allCases.map(\.rawValue))
    #expect(FinishReason.allCases.map(\.rawValue).contains("muted"))
    // Every silent-play reason but `unknown` (an error reply, never a finish) is a finish reason.
    for reason in SilenceReason.allCases where reason != .unknown { #expect(FinishReason(reason).rawValue == reason.rawValue) }
    for reason in FinishReason.allCases { #expect(CompletionReason(reason).rawValue == reason.rawValue) }
  }
}

@Suite("The op list")
struct OpTests {
  /// The smallest valid request line for each op.
  static func minimalLine(_ op: Op) -> String {
    let name = op.rawValue
    return switch name {
    case "play", "stop", "player.create", "sound.create": #"{"op":"\#(name)","cue":"pico"}"#
    case "meters": #"{"op":"meters","rate":30}"#
    case "prepare": #"{"op":"prepare","event":"bell"}"#
    case _ where name.hasPrefix("player."): #"{"op":"\#(name)","player":1}"#
    case _ where name.hasPrefix("sound."): #"{"op":"\#(name)","sound":1}"#
    default: #"{"op":"\#(name)"}"#
    }
  }

  @Test("the decoder accepts every op, as that op", arguments: Op.allCases)
  func theDecoderAcceptsEveryOp(_ op: Op) throws {
    let request = try decode(Self.minimalLine(op)).get().request
    #expect(request.op == op)
    #expect(try decode(String(decoding: request.json(id: nil).line.dropLast(), as: UTF8.self)).get().request == request)
  }

  @Test func theKnownOpsAreTheOpEnum() {
    #expect(Request.knownOps == Op.allCases.map(\.rawValue))
    #expect(Set(Request.knownOps).count == Request.knownOps.count)
  }

  @Test("the decoder refuses every other op", arguments: ["player", "player.", "sound.stop", "Play", "ping ", "player.open", ""])
  func theDecoderRefusesOtherOps(_ name: String) {
    guard case .failure(let failure) = decode(#"{"op":"\#(name)"}"#) else {
      Issue.record("\(name) was accepted")
      return
    }
    #expect(failure.error.code == .unknownOp)
    #expect(failure.error.message.hasPrefix("unknown op"))
  }
}

extension OpTests {
  @Test("an unknown op of a family is told that family's ops, as docs/PROTOCOL.md shows", arguments: [
    (
      "player.resume",
      #"unknown op "player.resume"; the player ops are player.create, player.prepare, player.play, player.pause, player.stop, player.set, player.get, player.destroy"#
    ),
    ("sound.stop", #"unknown op "sound.stop"; the sound ops are sound.create, sound.play, sound.completion, sound.dispose"#),
    (
      "dance",
      #"unknown op "dance"; this daemon knows: hello, ping, play, stop, list, status, reload, subscribe, unsubscribe, voices, prepare, player.create, player.prepare, player.play, player.pause, player.stop, player.set, player.get, player.destroy, sound.create, sound.play, sound.completion, sound.dispose, system, level, group, meters, clients"#
    ),
  ])
  func unknownOpMessages(_ name: String, _ message: String) {
    guard case .failure(let failure) = decode(#"{"id":14,"op":"\#(name)","player":1}"#) else {
      Issue.record("\(name) was accepted")
      return
    }
    #expect(failure.error == ProtocolError(.unknownOp, message))
  }
}
