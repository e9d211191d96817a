import CueClient
import CueProtocol
import Foundation
import Synchronization
import Testing

@Suite("CueClient's connection: matching, ordering, losses, reconnection", .timeLimit(.minutes(1)))
struct ConnectionTests {
  // MARK: Against a scripted stand-in

  @Test func aRequestWaitingWhenTheConnectionDropsFailsWithDisconnected() async throws {
    let fake = try FakeDaemon { peer in
      _ = peer.readRequest()  // and close without answering
    }
    let client = CueClient(socketPath: fake.socket)
    let error = await clientError { try await client.send(.ping) }
    guard case .disconnected(let path)? = error else {
      Issue.record("expected .disconnected, got \(String(describing: error))")
      return
    }
    #expect(path == fake.socket)
  }

  @Test func repliesAreMatchedByIDAndEventsKeepTheirOrder() async throws {
    let fake = try FakeDaemon { peer in
      guard let subscribe = peer.readRequest(), subscribe["op"]?.stringValue == "subscribe" else { return }
      peer.write(.object([("id", subscribe["id"]!), ("ok", true)]))
      guard let first = peer.readRequest(), let second = peer.readRequest() else { return }
      func reply(_ request: JSONValue) -> JSONValue {
        .object([("id", request["id"]!), ("ok", true), ("client", request["client"] ?? .null)])
      }
      // Answer the second request first, with events around the replies.
      peer.write(.object([("event", "reloaded"), ("n", 1)]))
      peer.write(reply(second))
      peer.write(.object([("event", "reloaded"), ("n", 2)]))
      peer.write(reply(first))
      peer.write(.object([("event", "reloaded"), ("n", 3)]))
      while peer.readRequest() != nil {}
    }
    let client = CueClient(socketPath: fake.socket)
    let events = EventRecorder(try await client.events())
    async let a = client.send(.hello(client: "a"))
    async let b = client.send(.hello(client: "b"))
    let (replyA, replyB) = try await (a, b)
    #expect(replyA["client"]?.stringValue == "a")
    #expect(replyB["client"]?.stringValue == "b")
    #expect(await eventually { events.events.count == 3 })
    #expect(events.events.map { $0.body["n"]?.intValue } == [1, 2, 3])
  }

  @Test func anErrorReplyWithoutIDAnswersTheOldestRequest() async throws {
    let fake = try FakeDaemon { peer in
      _ = peer.readRequest()
      peer.write(
        .object([
          ("id", .null), ("ok", false), ("error", .object([("code", "limit-reached"), ("message", "cued already serves 1 clients")])),
        ]))
    }
    let client = CueClient(socketPath: fake.socket)
    let error = await clientError { try await client.send(.ping) }
    #expect(error.flatMap(refusalCode) == .limitReached)
  }

  @Test func aLineThatIsNotJSONIsAProtocolViolation() async throws {
    let fake = try FakeDaemon { peer in
      _ = peer.readRequest()
      try? peer.fd.writeAll(Array("this is not json\n".utf8))
      while peer.readRequest() != nil {}
    }
    let client = CueClient(socketPath: fake.socket)
    let error = await clientError { try await client.send(.ping) }
    guard case .protocolViolation? = error else {
      Issue.record("expected .protocolViolation, got \(String(describing: error))")
      return
    }
  }

  @Test func theSubscriptionIsTheUnionOfTheOpenStreamsAndNarrowsWhenOneEnds() async throws {
    let requests = Mutex<[JSONValue]>([])
    let fake = try FakeDaemon { peer in
      while let request = peer.readRequest() {
        requests.withLock { $0.append(request) }
        peer.write(.object([("id", request["id"]!), ("ok", true)]))
      }
    }
    let client = CueClient(socketPath: fake.socket)
    var finished: AsyncStream<CueEvent>? = try await client.events(EventFilter(kinds: ["finished"]))
    let started = try await client.events(EventFilter(kinds: ["started"], ids: [7]))
    #expect(finished != nil)
    finished = nil  // its consumer is gone: the subscription narrows
    #expect(await eventually { requests.withLock { $0.count } == 3 })
    let sent = requests.withLock { $0 }
    #expect(sent.map { $0["op"]?.stringValue } == ["subscribe", "subscribe", "subscribe"])
    #expect(sent[0]["kinds"] == ["finished"])
    #expect(sent[0]["ids"] == nil)
    #expect(sent[1]["kinds"] == ["finished", "started"])
    #expect(sent[1]["ids"] == nil)  // one stream wants every id
    #expect(sent[2]["kinds"] == ["started"])
    #expect(sent[2]["ids"] == [7])
    _ = started
  }

  // MARK: Against the real daemon

  @Test func theNextCallAfterADaemonRestartSucceedsAndAPlayerIsMadeAgain() async throws {
    let daemon = try TestDaemon()
    let client = CueClient(socketPath: daemon.socket)
    _ = try await client.play(cue: "tick")
    let player = try await client.makePlayer(cue: "wrap")
    try await player.setVolume(0.3)
    try await player.setPan(0.5)
    try await player.setNumberOfLoops(-1)
    try await player.play()
    await sleep(milliseconds: 50)
    let firstPID = try await client.send(.status)["pid"]?.intValue

    daemon.stop()
    try daemon.start()

    let voice = try await client.play(cue: "pico")
    #expect(voice >= 1)
    let status = try await client.send(.status)
    #expect(status["pid"]?.intValue != firstPID)
    #expect(status["players"]?.intValue == 0)

    // The player is made again on the new daemon when next used: settings kept, position and playing lost.
    let restored = try await player.status()
    #expect(restored.volume == 0.3)
    #expect(restored.pan == 0.5)
    #expect(restored.numberOfLoops == -1)
    #expect(!restored.isPlaying)
    #expect(restored.currentTime == 0)
    #expect(try await client.send(.status)["players"]?.intValue == 1)
    try await player.setNumberOfLoops(0)
    #expect(try await within { try await player.playToEnd() })
  }

  @Test func aCallWhileTheDaemonComesBackWaitsForIt() async throws {
    let daemon = try TestDaemon()
    let client = CueClient(socketPath: daemon.socket)
    _ = try await client.send(.ping)
    daemon.stop()
    let restarter = Thread {
      usleep(300_000)
      try? daemon.start(wait: false)
    }
    restarter.start()
    let began = Date()
    let voice = try await client.play(cue: "pico")
    #expect(voice >= 1)
    #expect(Date().timeIntervalSince(began) >= 0.25)
  }

  @Test func reconnectionGivesUpWithUnreachableAfterAboutTwoAndAHalfSeconds() async throws {
    let daemon = try TestDaemon()
    let client = CueClient(socketPath: daemon.socket)
    _ = try await client.send(.ping)
    daemon.stop()
    let began = Date()
    let error = await clientError { try await client.send(.ping) }
    let elapsed = Date().timeIntervalSince(began)
    guard case .unreachable? = error else {
      Issue.record("expected .unreachable, got \(String(describing: error))")
      return
    }
    // About 2.5 s of retries: at least 2 s; the upper bound only catches retrying forever.
    #expect(elapsed > 2 && elapsed < 15)
  }

  @Test func anEventStreamFollowsTheDaemonAcrossARestart() async throws {
    let daemon = try TestDaemon()
    let watcher = CueClient(socketPath: daemon.socket)
    let events = EventRecorder(try await watcher.events(EventFilter(kinds: ["finished"])))
    daemon.stop()
    #expect(await events.first { $0.kind == "disconnected" } != nil)
    try daemon.start()
    // Nobody calls the watcher: it reconnects by itself and subscribes again.
    let reconnected = await events.first(timeout: 3) { $0.kind == "reconnected" }
    #expect(reconnected?.body["restarted"]?.boolValue == true)

    let player = CueClient(socketPath: daemon.socket)
    let voice = try await player.play(cue: "tick")
    let finished = await events.first { $0.kind == "finished" && $0.voice == voice }
    #expect(finished?.successfully == true)
  }

  @Test func closingKeepsDetachedPlayersAndRemakesTheOthers() async throws {
    let daemon = try TestDaemon()
    let client = CueClient(socketPath: daemon.socket)
    let kept = try await client.makePlayer(cue: "pico", detached: true)
    let owned = try await client.makePlayer(cue: "pico")
    let keptID = try await kept.id
    let ownedID = try await owned.id
    await client.close()
    // The daemon drops the connection's own player; the detached one stays.
    let status = try await client.send(.status)
    #expect(status["players"]?.intValue == 1)
    #expect(try await kept.id == keptID)
    #expect(try await owned.id != ownedID)
    #expect(try await within { try await kept.playToEnd() })
    #expect(try await within { try await owned.playToEnd() })
    try await kept.destroy()
  }
}
