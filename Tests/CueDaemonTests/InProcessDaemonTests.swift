import CueOutput
import CueCore
import CueProtocol
import Testing

@testable import CueDaemon

/// The daemon's request handling, voices, players, sounds, paging and device states, in process:
/// an `EmbeddedDaemon` with a test sink and a hand-moved clock, no sockets and no processes.
@Suite("The daemon, in process")
struct InProcessDaemonTests {
  @Test func aPlayIsWrittenSampleExactAndEndsWithFinished() throws {
    let embedded = try EmbeddedDaemon()
    let client = embedded.connect()
    let reply = client.reply(#"{"id":1,"op":"play","cue":"pico","notify":true}"#)
    #expect(reply["ok"] == .bool(true))
    let voice = try #require(reply["voice"]?.intValue)
    #expect(embedded.daemon.device.reportedState == .open)
    #expect(embedded.sink.opens == 1)
    embedded.runCycles(until: { embedded.daemon.voices.voices.isEmpty })
    let expected = embedded.samples(of: "pico")
    #expect(Array(embedded.sink.written.prefix(expected.count)) == expected)
    let finished = client.received().filter { $0["event"] == .string("finished") }
    #expect(finished.count == 1)
    #expect(finished.first?["voice"]?.intValue == voice)
    #expect(finished.first?["reason"] == .string("end"))
    #expect(finished.first?["successfully"] == .bool(true))
  }

  @Test func statusShowsEachRaiseOfTheFillTargetWithItsCauseAndTheUnderrunsThatDidNotRaiseIt() throws {
    let embedded = try EmbeddedDaemon(idleSeconds: 5) { $0.backendOptions.fillTargetFrames = 480 }
    let client = embedded.connect()
    #expect(client.reply(#"{"id":1,"op":"play","cue":"pico","loops":-1}"#)["ok"] == .bool(true))
    embedded.runCycles(4)
    embedded.sink.nextWriteStatus = .recoveredUnderrun  // the device ran dry under the loop
    embedded.runCycles(2)
    #expect(client.reply(#"{"id":2,"op":"stop","all":true,"fade":0}"#)["ok"] == .bool(true))
    embedded.runCycles(4)
    embedded.sink.nextWriteStatus = .recoveredUnderrun  // and once in the silence after it
    embedded.runCycles(2)
    let device = try StatusReply(reply: client.reply(#"{"id":3,"op":"status"}"#)).device
    #expect(device.fillTargetFrames == 960)
    #expect(device.latencyRaises == 1)
    #expect(device.recentRaises?.map { [$0.fromFrames, $0.toFrames, $0.voices] } == [[480, 960, 1]])
    #expect(device.recentRaises?.first?.cause == "underrun")
    #expect(device.ignoredXruns == StatusReply.Device.IgnoredXruns(silent: 1))
  }

  @Test func eventsARequestCausesComeAfterItsReply() throws {
    let embedded = try EmbeddedDaemon()
    let client = embedded.connect()
    client.request(#"{"op":"subscribe","kinds":["device"]}"#)
    let lines = client.request(#"{"id":"p","op":"play","cue":"tick"}"#)
    #expect(lines.count == 2)
    #expect(lines.first?["id"] == .string("p"))
    #expect(lines.last?["event"] == .string("device"))
    #expect(lines.last?["state"] == .string("opened"))
  }

  @Test func pastTheVoiceLimitTheOldestIsStolenWithAFade() throws {
    let embedded = try EmbeddedDaemon(voiceLimit: 2)
    let client = embedded.connect()
    let first = client.reply(#"{"id":1,"op":"play","cue":"pico","loops":-1}"#)["voice"]
    _ = client.reply(#"{"id":2,"op":"play","cue":"pico","loops":-1}"#)
    let third = client.reply(#"{"id":3,"op":"play","cue":"pico","loops":-1}"#)
    #expect(third["stole"] == first)
    #expect(embedded.daemon.voices.soundingCount == 2)
  }

  @Test func aFullCommandRingRefusesAPlayWithBusyAndChangesNothing() throws {
    let embedded = try EmbeddedDaemon()
    let client = embedded.connect()
    _ = client.reply(#"{"id":0,"op":"play","cue":"tick"}"#)
    let plays = embedded.daemon.voices.playsStarted
    while embedded.daemon.engine.send(.seek(VoiceID(1 << 40), position: 0)) {}
    let reply = client.reply(#"{"id":1,"op":"play","cue":"tick"}"#)
    #expect(reply["error"]?["code"] == .string("busy"))
    #expect(embedded.daemon.voices.playsStarted == plays)
    let stop = client.reply(#"{"id":2,"op":"stop","all":true}"#)
    #expect(stop["error"]?["code"] == .string("busy"))
    #expect(embedded.daemon.voices.soundingCount == 1)
  }

  @Test func aPlayerSetThatDoesNotFitTheRingIsRefusedAndThePlayerKeepsItsVolume() throws {
    let embedded = try EmbeddedDaemon()
    let client = embedded.connect()
    let player = try #require(client.reply(#"{"id":1,"op":"player.create","cue":"pico","numberOfLoops":-1}"#)["player"]?.intValue)
    _ = client.reply(#"{"id":2,"op":"player.play","player":\#(player)}"#)
    embedded.runCycles(2)
    while embedded.daemon.engine.send(.seek(VoiceID(1 << 40), position: 0)) {}
    let reply = client.reply(#"{"id":3,"op":"player.set","player":\#(player),"volume":0.25}"#)
    #expect(reply["error"]?["code"] == .string("busy"))
    #expect(embedded.daemon.players.players[UInt64(player)]?.volume == 1)
  }

  @Test func thePlayerMovesThroughIdlePlayingEndingAndBack() throws {
    let embedded = try EmbeddedDaemon()
    let client = embedded.connect()
    let player = try #require(client.reply(#"{"id":1,"op":"player.create","cue":"pico"}"#)["player"]?.intValue)
    let state = try #require(embedded.daemon.players.players[UInt64(player)])
    #expect(state.phase == .idle)
    #expect(client.reply(#"{"id":2,"op":"player.play","player":\#(player)}"#)["playing"] == .bool(true))
    guard case .playing(let voice, 0, nil) = state.phase else {
      Issue.record("not playing: \(state.phase)")
      return
    }
    embedded.runCycles(4)
    #expect(state.phase == .playing(voice: voice, startPosition: 0, firstFrame: 0))
    // pause: the reply waits for the engine's word on the exact frame.
    #expect(client.request(#"{"id":3,"op":"player.pause","player":\#(player)}"#).isEmpty)
    #expect(state.phase == .ending(voice: voice, startPosition: 0))
    embedded.runCycles(1)
    let paused = client.received().first { $0["id"] == .number(3) }
    #expect(paused?["isPlaying"] == .bool(false))
    #expect(state.phase == .idle)
    // Four periods were played before the pause, and the position says so exactly.
    let period = embedded.daemon.configuration.backendOptions.periodFrames
    #expect(state.position == 4 * period)
    #expect(paused?["currentTime"] == .number(Double(4 * period) / 48000))
    _ = client.reply(#"{"id":4,"op":"player.play","player":\#(player)}"#)
    embedded.runCycles(until: { state.phase == .idle })
    let finished = client.received().filter { $0["event"] == .string("finished") }
    #expect(finished.map { $0["player"] } == [.number(Double(player))])
    #expect(state.position == 0)
  }

  /// currentTime is what is heard: after a seek while playing, it reads the target until the block
  /// holding it has gone through the device's queue, then advances from there.
  @Test func currentTimeAfterASeekWhilePlayingFollowsWhatIsHeard() throws {
    let embedded = try EmbeddedDaemon()
    embedded.sink.delay = 960  // four periods queued in the device
    let client = embedded.connect()
    let player = try #require(client.reply(#"{"id":1,"op":"player.create","cue":"pico","numberOfLoops":-1}"#)["player"]?.intValue)
    _ = client.reply(#"{"id":2,"op":"player.play","player":\#(player)}"#)
    embedded.runCycles(8)
    let period = embedded.daemon.configuration.backendOptions.periodFrames
    func currentTime(_ id: Int) -> Double? { client.reply(#"{"id":\#(id),"op":"player.get","player":\#(player)}"#)["currentTime"]?.doubleValue }
    #expect(client.reply(#"{"id":3,"op":"player.set","player":\#(player),"currentTime":0.05}"#)["currentTime"] == .number(0.05))
    embedded.runCycles(2)  // the seek is mixed, but not heard yet
    #expect(currentTime(4) == 0.05)
    embedded.runCycles(6)  // eight periods mixed since the seek, four of them heard
    #expect(currentTime(5) == 0.05 + Double(4 * period) / 48000)
  }

  @Test func aDeferredPlayThatCannotStartEndsInFinishedWithReasonError() throws {
    let embedded = try EmbeddedDaemon()
    let client = embedded.connect()
    let player = try #require(client.reply(#"{"id":1,"op":"player.create","cue":"pico"}"#)["player"]?.intValue)
    _ = client.reply(#"{"id":2,"op":"player.play","player":\#(player)}"#)
    embedded.runCycles(2)
    #expect(client.request(#"{"id":3,"op":"player.pause","player":\#(player)}"#).isEmpty)
    // Play again while the paused voice is still ending: it waits for that end.
    #expect(client.reply(#"{"id":4,"op":"player.play","player":\#(player)}"#)["playing"] == .bool(true))
    _ = embedded.audioLoop.runCycle()  // the voice ends; its news is not read yet
    while embedded.daemon.engine.send(.seek(VoiceID(1 << 40), position: 0)) {}  // and the ring fills
    embedded.daemon.drainEngineEvents()
    let lines = client.received()
    #expect(lines.first?["id"] == .number(3))
    let finished = lines.filter { $0["event"] == .string("finished") }
    #expect(finished.count == 1)
    #expect(finished.first?["reason"] == .string("error"))
    #expect(finished.first?["successfully"] == .bool(false))
    #expect(embedded.daemon.players.players[UInt64(player)]?.isPlaying == false)
  }

  @Test func aPathPlayerDecodesInTheBackgroundAndAnswersPrepareWhenDone() throws {
    let embedded = try EmbeddedDaemon()
    let client = embedded.connect()
    let path = EmbeddedDaemon.repositorySounds + "/wrap.mp3"
    let player = try #require(client.reply(#"{"id":1,"op":"player.create","path":"\#(path)"}"#)["player"]?.intValue)
    let state = try #require(embedded.daemon.players.players[UInt64(player)])
    #expect(client.request(#"{"id":2,"op":"player.prepare","player":\#(player)}"#).isEmpty)
    #expect(state.phase == .decoding)
    embedded.finishBackgroundWork()
    let reply = client.received().first { $0["id"] == .number(2) }
    #expect(reply?["duration"] == .number(Double(embedded.cue("wrap").frameCount) / 48000))
    #expect(state.phase == .idle)
  }

  @Test func aLostDeviceIsReportedRetriedWithBackoffAndLateOneShotsAreDropped() throws {
    let embedded = try EmbeddedDaemon()
    let watcher = embedded.connect()
    watcher.request(#"{"op":"subscribe","kinds":["device","finished"]}"#)
    let client = embedded.connect()
    let oneShot = client.reply(#"{"id":1,"op":"play","cue":"pico"}"#)["voice"]
    let loop = client.reply(#"{"id":2,"op":"play","cue":"tick","loops":-1}"#)["voice"]
    embedded.runCycles(1)
    embedded.sink.nextWriteStatus = .lost(code: -19)
    embedded.runCycles(1)
    #expect(embedded.daemon.device.reportedState == .lost)
    #expect(watcher.received().contains { $0["state"] == .string("lost") })
    // A play now, inside the backoff, says when the next try is.
    let refused = client.reply(#"{"id":3,"op":"play","cue":"tick"}"#)
    #expect(refused["error"]?["code"] == .string("device-unavailable"))
    // The backoff passes; the one-shot is by now too old to play and is dropped, the loop carries on.
    embedded.clock.advance(milliseconds: 600)
    embedded.daemon.device.retryIfDue()
    #expect(embedded.daemon.device.reportedState == .open)
    embedded.runCycles(2)
    let events = watcher.received()
    #expect(events.contains { $0["state"] == .string("restored") })
    let dropped = events.first { $0["event"] == .string("finished") }
    #expect(dropped?["voice"] == oneShot)
    #expect(dropped?["reason"] == .string("device-lost"))
    #expect(embedded.daemon.voices.isSounding(VoiceID(UInt64(loop?.intValue ?? 0))))
  }

  @Test func aDeviceThatWillNotOpenBacksOffDoublingToOneSecond() throws {
    let embedded = try EmbeddedDaemon()
    let client = embedded.connect()
    embedded.sink.openFailure = AudioDeviceError(device: "test", step: "open", code: -16, detail: "busy")
    #expect(client.reply(#"{"id":1,"op":"play","cue":"tick"}"#)["error"]?["code"] == .string("device-unavailable"))
    guard case .lost(let first) = embedded.daemon.device.state else {
      Issue.record("not lost")
      return
    }
    #expect(first.backoffNanoseconds == DeviceController.firstBackoff)
    var backoffs: [UInt64] = []
    for _ in 0..<5 {
      embedded.clock.advance(milliseconds: 1000)
      _ = client.reply(#"{"id":2,"op":"play","cue":"tick"}"#)
      if case .lost(let loss) = embedded.daemon.device.state { backoffs.append(loss.backoffNanoseconds) }
    }
    #expect(backoffs == [200_000_000, 400_000_000, 800_000_000, 1_000_000_000, 1_000_000_000])
    embedded.sink.openFailure = nil
    embedded.clock.advance(milliseconds: 1000)
    #expect(client.reply(#"{"id":3,"op":"play","cue":"tick"}"#)["ok"] == .bool(true))
  }

  @Test func anIdleDeviceIsClosedAndTheNextCueOpensItAgain() throws {
    let embedded = try EmbeddedDaemon(idleSeconds: 0.01)
    let client = embedded.connect()
    client.request(#"{"op":"subscribe","kinds":["device"]}"#)
    let opened = client.request(#"{"id":1,"op":"play","cue":"tick"}"#).compactMap { $0["state"] }
    embedded.runCycles(until: { embedded.daemon.device.reportedState == .closed })
    #expect(!embedded.sink.isOpen)
    #expect(opened + client.received().compactMap { $0["state"] } == [.string("opened"), .string("closed-idle")])
    _ = client.reply(#"{"id":2,"op":"play","cue":"tick"}"#)
    #expect(embedded.sink.opens == 2)
  }

  @Test func aSoundDisposedRightAfterPlayIsHeardWholeThenFreed() throws {
    let embedded = try EmbeddedDaemon()
    let client = embedded.connect()
    let sound = try #require(client.reply(#"{"id":1,"op":"sound.create","cue":"pico"}"#)["sound"]?.intValue)
    _ = client.reply(#"{"id":2,"op":"sound.completion","sound":\#(sound),"enabled":true}"#)
    _ = client.reply(#"{"id":3,"op":"sound.play","sound":\#(sound)}"#)
    #expect(client.reply(#"{"id":4,"op":"sound.dispose","sound":\#(sound)}"#)["playing"] == .number(1))
    #expect(client.reply(#"{"id":5,"op":"sound.play","sound":\#(sound)}"#)["error"]?["code"] == .string("unknown-sound"))
    embedded.runCycles(until: { embedded.daemon.sounds.count == 0 })
    let expected = embedded.samples(of: "pico")
    #expect(Array(embedded.sink.written.prefix(expected.count)) == expected)
    let completion = client.received().first { $0["event"] == .string("completion") }
    #expect(completion?["played"] == .bool(true))
  }

  @Test func aCarouselPageChangePlaysItsBindingAndReportsTheDecision() throws {
    let embedded = try EmbeddedDaemon()
    let client = embedded.connect()
    client.request(#"{"op":"subscribe","kinds":["paging"]}"#)
    let lines = client.request(#"{"id":7,"carousel":"main","event":"page-changed","from":0,"to":1,"count":5}"#)
    #expect(lines.first?["decision"] == .string("played"))
    #expect(lines.first?["cue"] == .string("page-next"))
    #expect(lines.last?["event"] == .string("paging"))
    #expect(embedded.daemon.voices.soundingCount == 1)
    // Without an id, no reply: only the event.
    let quiet = client.request(#"{"carousel":"main","event":"page-changed","from":1,"to":1,"count":5}"#)
    #expect(quiet.count == 1)
    #expect(quiet.first?["decision"] == .string("unchanged"))
  }

  @Test func aHalfClosedClientStaysUntilItsNotifiedVoiceFinishes() throws {
    let embedded = try EmbeddedDaemon()
    let client = embedded.connect()
    _ = client.reply(#"{"id":1,"op":"play","cue":"tick","notify":true}"#)
    client.transport.finishedSending = true
    embedded.daemon.clients.service(client.connection, events: .readable)
    embedded.daemon.clients.retireHalfClosed()
    #expect(embedded.daemon.clients.connection(client.serial) != nil)
    embedded.runCycles(until: { embedded.daemon.voices.voices.isEmpty })
    embedded.daemon.clients.retireHalfClosed()
    #expect(embedded.daemon.clients.connection(client.serial) == nil)
    #expect(client.transport.closed)
    #expect(client.received().contains { $0["event"] == .string("finished") })
  }

  @Test func aConnectionsPlayersGoWithItUnlessDetached() throws {
    let embedded = try EmbeddedDaemon()
    let client = embedded.connect()
    _ = client.reply(#"{"id":1,"op":"player.create","cue":"pico"}"#)
    let kept = try #require(client.reply(#"{"id":2,"op":"player.create","cue":"pico","detached":true}"#)["player"]?.intValue)
    embedded.daemon.clients.disconnect(client.connection)
    #expect(Array(embedded.daemon.players.players.keys) == [UInt64(kept)])
  }

  @Test func reloadAnswersWhenTheScanIsDoneAndABadConfigChangesNothing() throws {
    let embedded = try EmbeddedDaemon()
    let client = embedded.connect()
    #expect(client.request(#"{"id":1,"op":"reload"}"#).isEmpty)
    embedded.finishBackgroundWork()
    let reply = client.received().first { $0["id"] == .number(1) }
    #expect(reply?["cues"] == .number(5))
    embedded.daemon.configReader = { () throws(ConfigError) -> ConfigValues in
      throw ConfigError(path: "/x/cued.toml", line: 3, message: "max-voices must be a whole number")
    }
    let refused = client.reply(#"{"id":2,"op":"reload"}"#)
    #expect(refused["error"]?["code"] == .string("config-error"))
    #expect(refused["error"]?["message"]?.stringValue?.contains("/x/cued.toml:3") == true)
    #expect(embedded.daemon.voices.limit == 32)
  }

  @Test func aReloadedConfigReachesEveryOwner() throws {
    let embedded = try EmbeddedDaemon()
    let client = embedded.connect()
    embedded.daemon.configReader = { () throws(ConfigError) -> ConfigValues in
      var values = ConfigValues()
      values["max-voices"] = 3
      values["max-players"] = 7
      values.systemVolume = 0.5
      values["rate"] = 44100  // restart-only: kept
      return values
    }
    #expect(client.request(#"{"id":1,"op":"reload"}"#).isEmpty)
    #expect(embedded.daemon.voices.limit == 3)
    #expect(embedded.daemon.players.maximum == 7)
    #expect(embedded.daemon.groups.volume(CueRule.systemGroup) == 0.5)
    #expect(embedded.daemon.configuration.sampleRate == 48000)
    embedded.finishBackgroundWork()
  }

  @Test func badLinesGetErrorsNamingTheProblemAndTheConnectionCarriesOn() throws {
    let embedded = try EmbeddedDaemon()
    let client = embedded.connect()
    #expect(client.reply("{nope")["error"]?["code"] == .string("parse-error"))
    #expect(client.reply(#"{"id":1,"op":"fly"}"#)["error"]?["code"] == .string("unknown-op"))
    #expect(client.reply(#"{"id":2,"op":"play","cue":"nothing"}"#)["error"]?["message"]?.stringValue?.hasPrefix("no cue named 'nothing'; loaded: ") == true)
    client.send(String(repeating: "x", count: 70_000))
    #expect(client.received().first?["error"]?["code"] == .string("line-too-long"))
    #expect(client.reply(#"{"id":3,"op":"ping"}"#)["pong"] == .bool(true))
  }

  @Test func statusCountsWhatTheOwnersHold() throws {
    let embedded = try EmbeddedDaemon()
    let client = embedded.connect()
    _ = client.reply(#"{"id":1,"op":"play","cue":"tick","loops":-1}"#)
    _ = client.reply(#"{"id":2,"op":"player.create","cue":"pico"}"#)
    _ = client.reply(#"{"id":3,"op":"sound.create","cue":"pico"}"#)
    let status = client.reply(#"{"id":4,"op":"status"}"#)
    #expect(status["voices"] == .number(1))
    #expect(status["plays"] == .number(1))
    #expect(status["players"] == .number(1))
    #expect(status["sounds"] == .number(1))
    #expect(status["clients"] == .number(1))
    #expect(status["cues"] == .number(5))
    #expect(status["device"]?["state"] == .string("open"))
    #expect(status["device"]?["opens"] == .number(1))
    #expect(status["device"]?["backend"] == .string("test"))
    // No audio thread runs in process: nothing was asked of the scheduler.
    #expect(status["scheduling"] == .object([("policy", .string("other"))]))
  }

  @Test func voicesListsWhatSoundsOldestFirstWithItsOrigin() throws {
    let embedded = try EmbeddedDaemon()
    let client = embedded.connect()
    #expect(client.reply(#"{"id":1,"op":"voices"}"#)["voices"] == .array([]))
    let loop = try #require(client.reply(#"{"id":2,"op":"play","cue":"tick","loops":-1}"#)["voice"])
    let player = try #require(client.reply(#"{"id":3,"op":"player.create","cue":"pico"}"#)["player"])
    _ = client.reply(#"{"id":4,"op":"player.play","player":\#(player.intValue ?? 0)}"#)
    embedded.clock.advance(milliseconds: 250)
    let voices = try #require(client.reply(#"{"id":5,"op":"voices"}"#)["voices"]?.arrayValue)
    #expect(voices.count == 2)
    #expect(voices.first?["voice"] == loop)
    #expect(voices.first?["loops"] == .number(-1))
    #expect(voices.first?["seconds"] == .number(0.25))
    #expect(voices.last?["player"] == player)
    #expect(voices.last?["stopping"] == .bool(false))
    _ = client.reply(#"{"id":6,"op":"stop","voice":\#(loop.intValue ?? 0)}"#)
    let after = try #require(client.reply(#"{"id":7,"op":"voices"}"#)["voices"]?.arrayValue)
    #expect(after.first?["stopping"] == .bool(true))
  }
}
