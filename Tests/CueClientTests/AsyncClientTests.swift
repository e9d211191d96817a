import CueClient
import CueProtocol
import Foundation
import Synchronization
import Testing

@Suite("CueClient against cued --device null", .timeLimit(.minutes(1)))
struct AsyncClientTests {
  @Test func playReturnsAVoiceAndASubscribedStreamSeesItsStartedThenFinished() async throws {
    let daemon = try TestDaemon()
    let client = CueClient(socketPath: daemon.socket)
    let all = EventRecorder(try await client.events())
    let finishedOnly = EventRecorder(try await client.events(EventFilter(kinds: ["finished"])))

    let voice = try await client.play(cue: "pico")
    let finished = await all.first { $0.kind == "finished" && $0.voice == voice }
    #expect(finished?.successfully == true)
    #expect(finished?.cue == "pico")
    #expect(finished?.reason == "end")
    let kinds = all.events.filter { $0.voice == voice }.map(\.kind)
    #expect(kinds == ["started", "finished"])
    #expect(all.events.first { $0.kind == "started" }?.deviceTime != nil)

    // The narrower stream gets the finished event and nothing else.
    #expect(await finishedOnly.first { $0.voice == voice } != nil)
    #expect(finishedOnly.events.allSatisfy { $0.kind == "finished" })

    // Voice ids go up.
    let second = try await client.play(cue: "tick", volume: 0.5, pan: -0.5)
    #expect(second > voice)
  }

  @Test func streamsWithIDFiltersGetOnlyTheirVoices() async throws {
    let daemon = try TestDaemon()
    let client = CueClient(socketPath: daemon.socket)
    let first = try await client.play(cue: "tick")
    // Voice ids come from one counter: the next play is first + 1.
    let watched = EventRecorder(try await client.events(EventFilter(kinds: ["finished"], ids: [first + 1])))
    let everything = EventRecorder(try await client.events())
    let mine = try await client.play(cue: "tick")
    let other = try await client.play(cue: "tick")
    #expect(mine == first + 1)
    #expect(await everything.first { $0.kind == "finished" && $0.voice == other } != nil)
    #expect(await watched.first { $0.voice == mine } != nil)
    #expect(watched.events.map(\.voice) == [mine])
  }

  @Test func aPlayerPlaysReportsIsPlayingAndItsEventsStreamGetsFinished() async throws {
    let daemon = try TestDaemon()
    let client = CueClient(socketPath: daemon.socket)
    let player = try await client.makePlayer(cue: "pico")
    let events = EventRecorder(player.events)
    #expect(try await player.isPlaying == false)
    #expect(abs(try await player.duration - 0.1) < 0.001)
    #expect(try await player.numberOfChannels == 1)

    // Many loops, so it is surely still playing when asked (machines here are shared and slow at times)...
    try await player.setNumberOfLoops(1000)
    try await player.play()
    #expect(try await player.isPlaying)
    // ...then the count applies to the play under way, and it ends after this pass.
    try await player.setNumberOfLoops(0)
    let finished = await events.first { $0.kind == "finished" }
    #expect(finished?.successfully == true)
    #expect(finished?.isFinished(successfully: true) == true)
    #expect(try finished?.player == (await player.id))
    #expect(try await player.isPlaying == false)
    // As AVAudioPlayer: back to the start after playing to the end.
    #expect(try await player.currentTime == 0)
  }

  @Test func playToEndWaitsForTheFinishedEvent() async throws {
    let daemon = try TestDaemon()
    let client = CueClient(socketPath: daemon.socket)
    let player = try await client.makePlayer(cue: "page-next")
    let began = Date()
    #expect(try await within { try await player.playToEnd() })
    #expect(Date().timeIntervalSince(began) >= 0.1)
    #expect(try await player.isPlaying == false)
  }

  @Test func pauseKeepsCurrentTimeAndPlayResumesFromThere() async throws {
    let daemon = try TestDaemon()
    let client = CueClient(socketPath: daemon.socket)
    let player = try await client.makePlayer(cue: "wrap")
    try await player.setNumberOfLoops(-1)
    try await player.play()
    await sleep(milliseconds: 120)
    try await player.pause()
    // The pause reply comes once the audio thread has said where the voice stopped.
    let paused = try await player.currentTime
    #expect(paused > 0)
    #expect(try await player.isPlaying == false)
    await sleep(milliseconds: 100)
    #expect(try await player.currentTime == paused)

    try await player.play()
    #expect(try await player.isPlaying)
    // It resumes from `paused`; the looped 0.27 s cue may have wrapped by the time we ask.
    let resumed = try await player.currentTime
    let duration = try await player.duration
    #expect(resumed >= 0 && resumed <= duration)
    #expect(await eventually { (try? await player.currentTime) != paused })
    try await player.stop()
  }

  @Test func stopSendsNoFinishedEvent() async throws {
    let daemon = try TestDaemon()
    let client = CueClient(socketPath: daemon.socket)
    let player = try await client.makePlayer(cue: "wrap")
    let events = EventRecorder(player.events)
    try await player.setNumberOfLoops(-1)
    try await player.play()
    await sleep(milliseconds: 80)
    try await player.stop()
    #expect(try await player.isPlaying == false)
    await sleep(milliseconds: 300)
    #expect(!events.events.contains { $0.kind == "finished" })

    // The stream does work: a play to the end is reported.
    try await player.setNumberOfLoops(0)
    try await player.play()
    #expect(await events.first { $0.kind == "finished" }?.successfully == true)
  }

  @Test func settingsAreAppliedAndReportedBack() async throws {
    let daemon = try TestDaemon()
    let client = CueClient(socketPath: daemon.socket)
    let player = try await client.makePlayer(cue: "wrap", enableRate: true)
    try await player.setVolume(0.25, fadeDuration: 0.05)
    try await player.setPan(-0.5)
    try await player.setNumberOfLoops(3)
    try await player.setRate(1.5)
    try await player.setCurrentTime(0.1)
    let status = try await player.status()
    #expect(status.volume == 0.25)
    #expect(status.pan == -0.5)
    #expect(status.numberOfLoops == 3)
    #expect(status.rate == 1.5)
    #expect(abs(status.currentTime - 0.1) < 0.001)
    #expect(status.cue == "wrap")
    #expect(try await player.volume == 0.25)
    #expect(try await player.pan == -0.5)
    #expect(try await player.numberOfLoops == 3)
    #expect(try await player.rate == 1.5)
  }

  @Test func playAtTimeStartsTwoPlayersOnTheSameFrame() async throws {
    let daemon = try TestDaemon()
    let client = CueClient(socketPath: daemon.socket)
    let started = EventRecorder(try await client.events(EventFilter(kinds: ["started"])))
    let p1 = try await client.makePlayer(cue: "page-next")
    let p2 = try await client.makePlayer(cue: "page-prev")
    try await p1.prepareToPlay()
    try await p2.prepareToPlay()
    // Far enough ahead that both requests arrive before it, even on a loaded machine.
    let t = try await p1.deviceCurrentTime + 1.0
    try await p1.play(atTime: t)
    try await p2.play(atTime: t)
    let id1 = try await p1.id
    let id2 = try await p2.id
    let s1 = await started.first { $0.player == id1 }
    let s2 = await started.first { $0.player == id2 }
    let time1 = try #require(s1?.deviceTime)
    let time2 = try #require(s2?.deviceTime)
    #expect(time1 == time2)
    #expect(abs(time1 - t) < 0.001)
  }

  @Test func metersAreReadAfterUpdateMeters() async throws {
    let daemon = try TestDaemon()
    let client = CueClient(socketPath: daemon.socket)
    let metered = try await client.makePlayer(cue: "wrap", meteringEnabled: true)
    #expect(metered.isMeteringEnabled)
    #expect(metered.averagePower(forChannel: 0) == -160)
    try await metered.setNumberOfLoops(-1)
    try await metered.play()
    // Once it sounds (a loaded machine may take a moment), the meters read its level.
    #expect(await eventually {
      try? await metered.updateMeters()
      return metered.averagePower(forChannel: 0) > -100
    })
    let average = metered.averagePower(forChannel: 0)
    let peak = metered.peakPower(forChannel: 0)
    #expect(average > -100 && average <= 0)
    #expect(peak >= average)
    #expect(metered.averagePower(forChannel: 5) == -160)
    try await metered.stop()

    let plain = try await client.makePlayer(cue: "wrap")
    try await plain.play()
    try await plain.updateMeters()
    #expect(plain.averagePower(forChannel: 0) == -160)
  }

  @Test func aSystemSoundCallsItsCompletionWithTrue() async throws {
    let daemon = try TestDaemon()
    let client = CueClient(socketPath: daemon.socket)
    let sound = try await client.makeSystemSound(cue: "tick")
    let calls = Calls()
    let voice = try await sound.play(completion: calls.handler)
    #expect(voice != nil)
    #expect(await eventually { calls.all == [true] })

    // Disposing of it right after a play does not cut that play.
    try await sound.play(completion: calls.handler)
    try await sound.dispose()
    #expect(await eventually { calls.all == [true, true] })
    await sleep(milliseconds: 50)
    #expect(calls.all == [true, true])
  }

  @Test func playersAndSystemSoundsCanBeMadeFromFiles() async throws {
    let daemon = try TestDaemon()
    let client = CueClient(socketPath: daemon.socket)
    let sound = try await client.makeSystemSound(path: Paths.sounds + "/page-prev.mp3")
    let calls = Calls()
    try await sound.play(completion: calls.handler)
    #expect(await eventually { calls.all == [true] })

    let player = try await client.makePlayer(path: Paths.sounds + "/tick.mp3")
    #expect(try await player.duration == 0)  // decoded on prepareToPlay or play
    try await player.prepareToPlay()  // answers once the file is decoded
    #expect(abs(try await player.duration - 0.03) < 0.001)
    #expect(try await within { try await player.playToEnd() })
  }

  @Test func aMutedSystemSoundCompletesWithFalse() async throws {
    let daemon = try TestDaemon()
    let client = CueClient(socketPath: daemon.socket)
    let settings = try await client.setSystemSounds(muted: true)
    #expect(settings.muted)
    let sound = try await client.makeSystemSound(cue: "pico")
    let calls = Calls()
    let voice = try await sound.play(completion: calls.handler)
    #expect(voice == nil)
    #expect(calls.all == [false])
    try await client.setSystemSounds(volume: 0.5, muted: false)
    try await sound.play(completion: calls.handler)
    #expect(await eventually { calls.all == [false, true] })
  }

  @Test func playingADisposedSystemSoundIsRefusedWithUnknownSound() async throws {
    let daemon = try TestDaemon()
    let client = CueClient(socketPath: daemon.socket)
    let sound = try await client.makeSystemSound(cue: "pico")
    try await sound.dispose(now: true)
    let error = await clientError { try await sound.play() }
    #expect(error.flatMap(refusalCode) == .unknownSound)
  }

  @Test func refusedRequestsCarryTheDaemonsErrorCode() async throws {
    let daemon = try TestDaemon()
    let client = CueClient(socketPath: daemon.socket)
    #expect(await clientError { try await client.play(cue: "no-such-cue") }.flatMap(refusalCode) == .unknownCue)
    #expect(await clientError { try await client.play(cue: "pico", volume: 2) }.flatMap(refusalCode) == .outOfRange)
    #expect(await clientError { _ = try await client.makePlayer(cue: "nope") }.flatMap(refusalCode) == .unknownCue)
    #expect(await clientError { _ = try await client.makeSystemSound(cue: "nope") }.flatMap(refusalCode) == .unknownCue)
    #expect(await clientError { try await client.stop(voice: 999_999) }.flatMap(refusalCode) == .unknownVoice)
    #expect(await clientError { _ = try await client.makePlayer(path: "/etc/passwd") }.flatMap(refusalCode) == .badPath)

    let player = try await client.makePlayer(cue: "pico")
    #expect(await clientError { try await player.setRate(1.5) }.flatMap(refusalCode) == .notEnabled)
    #expect(await clientError { try await player.setVolume(3) }.flatMap(refusalCode) == .outOfRange)
    try await player.destroy()
    #expect(await clientError { try await player.play() }.flatMap(refusalCode) == .unknownPlayer)

    // The message is the daemon's, naming what is wrong.
    if case .refused(let refusal)? = await clientError({ try await client.play(cue: "no-such-cue") }) {
      #expect(refusal.message.contains("no-such-cue"))
    } else {
      Issue.record("expected a refusal")
    }
    // The connection is fine after refusals.
    #expect(try await client.send(.ping)["pong"]?.boolValue == true)
  }

  @Test func destroyEndsTheEventsStream() async throws {
    let daemon = try TestDaemon()
    let client = CueClient(socketPath: daemon.socket)
    let player = try await client.makePlayer(cue: "pico")
    let events = EventRecorder(player.events)
    try await player.destroy()
    #expect(await eventually { events.ended })
    let status = try await client.send(.status)
    #expect(status["players"]?.intValue == 0)
  }

  @Test func releasingAPlayerDestroysItUnlessDetached() async throws {
    let daemon = try TestDaemon()
    let client = CueClient(socketPath: daemon.socket)
    var player: CuePlayer? = try await client.makePlayer(cue: "pico")
    let detached = try await client.makePlayer(cue: "pico", detached: true)
    #expect(try await client.send(.status)["players"]?.intValue == 2)
    _ = player
    player = nil
    #expect(await eventually { (try? await client.send(.status))?["players"]?.intValue == 1 })
    try await detached.destroy()
    #expect(try await client.send(.status)["players"]?.intValue == 0)
  }

  @Test func aPlayersStartedEventReachesItsStreamWhileASubscriptionAdmitsIt() async throws {
    let daemon = try TestDaemon()
    let client = CueClient(socketPath: daemon.socket)
    let player = try await client.makePlayer(cue: "pico")
    let events = EventRecorder(player.events)
    // Without a subscription the owner gets `finished` only (PROTOCOL.md: `started` is owed to nobody).
    #expect(try await within { try await player.playToEnd() })
    #expect(await eventually { events.events.map(\.kind) == ["finished"] })
    let subscription = try await client.events(EventFilter(kinds: ["started"]))
    #expect(try await within { try await player.playToEnd() })
    #expect(await eventually { events.events.map(\.kind) == ["finished", "started", "finished"] })
    await sleep(milliseconds: 20)
    #expect(events.events.map(\.kind) == ["finished", "started", "finished"])
    _ = subscription
  }

  @Test func anUnreachableDaemonFailsAtOnceWithItsPath() async {
    let client = CueClient(socketPath: "/tmp/cued-client-test-no-such.sock")
    let began = Date()
    let error = await clientError { try await client.play(cue: "pico") }
    #expect(Date().timeIntervalSince(began) < 5)  // no retrying: a refused connect is final
    guard case .unreachable(let path, _)? = error else {
      Issue.record("expected .unreachable, got \(String(describing: error))")
      return
    }
    #expect(path == "/tmp/cued-client-test-no-such.sock")
  }
}
