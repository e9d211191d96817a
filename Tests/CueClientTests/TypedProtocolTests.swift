import CueClient
import CueProtocol
import Testing

/// The typed protocol against the real daemon: every reply and event it sends reads as its type,
/// and that type writes the very object the daemon sent (fields and their order).
@Suite("Typed replies and events against cued --device null", .timeLimit(.minutes(1)))
struct TypedProtocolTests {
  /// Reads `reply` as the body of `op` and writes it again: it must be the object the daemon sent.
  private func expectRewrittenExactly(_ op: Op?, _ reply: JSONValue) {
    do {
      let body: ReplyBody
      if let op { body = try ReplyBody(op: op, reply: reply) } else { body = ReplyBody(try PagingOutcome(reply: reply)) }
      let id = reply["id"]?.intValue.map { RequestID.number($0) }
      #expect(ReplyEnvelope.success(id: id, body).json == reply, "\(op?.rawValue ?? "carousel"): \(reply)")
    } catch {
      Issue.record("\(op?.rawValue ?? "carousel"): \(error): \(reply)")
    }
  }

  @Test func helloSaysWhichOpsEventsFeaturesAndLimitsThisDaemonHas() throws {
    let daemon = try TestDaemon()
    let connection = try CueConnection.connect(socketPath: daemon.socket)
    let hello = try connection.send(.hello(client: "capabilities"), as: HelloReply.self)
    #expect(hello.protocolVersion == 1)
    let capabilities = try #require(hello.capabilities)
    #expect(capabilities.ops == Op.allCases.map(\.rawValue))
    #expect(capabilities.ops.contains("player.play") && capabilities.ops.contains("sound.dispose"))
    #expect(capabilities.events == EventKind.allCases.map(\.rawValue))
    #expect(capabilities.events.contains("paging") && capabilities.events.contains("events-dropped"))
    #expect(capabilities.carousel.contains("page-changed") && capabilities.carousel.contains("wrapped"))
    #expect(capabilities.features == ProtocolFeature.allCases.map(\.rawValue))
    #expect(capabilities.limit("lineBytes") == 65536)
    #expect(capabilities.limit("idMagnitude") == 9_007_199_254_740_991)
    #expect(capabilities.limit("idStringBytes") == 256)
    #expect(capabilities.limit("loops") == 1_000_000)
    #expect(capabilities.limit("players") == 1024 && capabilities.limit("sounds") == 1024 && capabilities.limit("clients") == 1024)
    #expect(capabilities.limit("voices") == 32)
    daemon.stop()  // the hello reply fits docs/protocol.schema.json
  }

  @Test func everyReplyAndEventOfASessionIsWrittenBackByteForByte() throws {
    let daemon = try TestDaemon()
    let connection = try CueConnection.connect(socketPath: daemon.socket)
    func ask(_ request: Request) throws -> JSONValue {
      let reply = try connection.send(request)
      expectRewrittenExactly(request.op, reply)
      return reply
    }

    _ = try ask(.subscribe(EventFilter()))
    _ = try ask(.hello(client: "typed-protocol-test"))
    _ = try ask(.ping)
    _ = try ask(.list)
    _ = try ask(.status)
    _ = try ask(.play(PlayParameters(cue: "pico", notify: true)))
    _ = try ask(.play(PlayParameters(cue: "tick", loops: -1)))
    _ = try ask(.stop(.cue("tick"), fadeSeconds: nil))

    let player = try connection.send(Request(PlayerCreateRequest(PlayerCreation(source: .cue("pico"), meteringEnabled: true))), as: PlayerCreateReply.self)
    _ = try ask(Request(PlayerCreateRequest(PlayerCreation(source: .cue("tick"), enableRate: true))))
    _ = try ask(Request(PlayerPrepareRequest(player: player.player)))
    _ = try ask(Request(PlayerSetRequest(player: player.player, PlayerSettings(volume: 0.5, numberOfLoops: 3))))
    _ = try ask(Request(PlayerPlayRequest(player: player.player, atDeviceTime: nil)))
    _ = try ask(Request(PlayerGetRequest(player: player.player)))
    _ = try ask(Request(PlayerPauseRequest(player: player.player)))
    _ = try ask(Request(PlayerPlayRequest(player: player.player, atDeviceTime: nil)))
    _ = try ask(Request(PlayerStopRequest(player: player.player)))
    _ = try ask(Request(PlayerDestroyRequest(player: player.player)))

    let sound = try connection.send(Request(SoundCreateRequest(.cue("pico"), detached: false)), as: SoundCreateReply.self).sound
    _ = try ask(Request(SoundCompletionRequest(sound: sound, enabled: true)))
    _ = try ask(Request(SoundPlayRequest(sound: sound)))
    _ = try ask(.system(volume: 0.5, muted: true))
    _ = try ask(Request(SoundPlayRequest(sound: sound)))
    _ = try ask(.system(volume: nil, muted: false))
    _ = try ask(Request(SoundDisposeRequest(sound: sound, now: false)))
    _ = try ask(.reload)
    expectRewrittenExactly(nil, try connection.send(CarouselMessage(event: .pageChanged(from: 0, to: 1, count: 3, reason: .key))))
    expectRewrittenExactly(nil, try connection.send(CarouselMessage(event: .dragBegan)))
    _ = try ask(.status)

    var events: [CueEvent] = []
    while let event = try? connection.nextEvent(timeoutSeconds: 0.5) { events.append(event) }
    _ = try ask(.unsubscribe)

    for event in events {
      guard let typed = event.daemonEvent, typed.kind != nil else {
        Issue.record("not read as a known event: \(event.body)")
        continue
      }
      #expect(typed.json == event.body)
      #expect(typed.line == Array((JSONWriter.write(event.body) + "\n").utf8))
    }
    let kinds = Set(events.compactMap { $0.daemonEvent?.kind })
    for kind in [EventKind.started, .finished, .completion, .reloaded, .paging] {
      #expect(kinds.contains(kind), "no \(kind.rawValue) event in \(events.map(\.kind))")
    }
    #expect(events.contains { if case .completion(let c)? = $0.daemonEvent { c.reason == .muted } else { false } })
    // And every one of those lines fits docs/protocol.schema.json.
    daemon.stop()
  }
}
