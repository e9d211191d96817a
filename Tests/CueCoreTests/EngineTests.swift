import CueCore
import Testing

/// A sink that records every frame written and can be told to fail.
final class RecordingSink: PushSink, @unchecked Sendable {
  var frames: [Float] = []
  var nextStatuses: [SinkStatus] = []
  func write(_ interleaved: UnsafePointer<Float>, frameCount: Int) -> SinkStatus {
    let status = nextStatuses.isEmpty ? .ok : nextStatuses.removeFirst()
    if case .lost = status { return status }
    frames.append(contentsOf: UnsafeBufferPointer(start: interleaved, count: frameCount * 2))
    return status
  }
  func delayFrames() -> Int { 480 }
}

final class CountingSignals: EngineSignals, @unchecked Sendable {
  var wakes = 0
  var notifications = 0
  func wakeAudioThread() { wakes += 1 }
  func parkAudioThread(timeoutMilliseconds: Int32) {}
  func notifyControl() { notifications += 1 }
  func nowNanoseconds() -> UInt64 { 1000 }
}

func events<S>(_ engine: Engine<S>) -> [EngineEvent] {
  var list: [EngineEvent] = []
  while let e = engine.nextEvent() { list.append(e) }
  return list
}

func events<S>(_ loop: PushLoop<S>) -> [EngineEvent] { events(loop.engine) }

/// The tests below name the push loop `engine`: what they send and read goes to the engine it drives.
extension PushLoop {
  func send(_ command: EngineCommand) -> Bool { engine.send(command) }
  var counters: EngineCounters { engine.counters }
}

@Suite("Engine cycle")
struct EngineTests {
  let cue = makeCue(frames: 100, left: { Float($0) / 128 }, right: { Float($0) / 256 })

  func makeEngine(idleFrames: Int = 1000, voices: Int = 8) -> (PushLoop<RecordingSink>, RecordingSink, CountingSignals) {
    let sink = RecordingSink()
    let signals = CountingSignals()
    let engine = Engine(
      configuration: EngineConfiguration(periodFrames: 64, idleFrames: idleFrames, voiceCapacity: voices),
      sink: sink, signals: signals)
    return (PushLoop(engine), sink, signals)
  }

  @Test func withoutADeviceTheEngineWritesNothingAndAsksToPark() {
    let (engine, sink, _) = makeEngine()
    #expect(engine.runCycle() == .detached)
    #expect(sink.frames.isEmpty)
  }

  @Test func aStartQueuedBeforeAttachSoundsFromTheFirstFrame() {
    let (engine, sink, signals) = makeEngine()
    #expect(engine.send(.start(VoiceStart(id: VoiceID(1), samples: cue.samples, gain: .unity, loops: .count(0)))))
    #expect(engine.send(.attach))
    #expect(engine.runCycle() == .wrote)
    #expect(engine.runCycle() == .wrote)
    #expect(Array(sink.frames[0..<200]) == cue.toArray())
    let reported = events(engine)
    #expect(reported.first == .started(VoiceID(1), frame: 0, clock: 64, delayFrames: 480, handedAt: 1000))
    #expect(reported.last == .ended(VoiceEnd(id: VoiceID(1), reason: .end, position: 100)))
    #expect(signals.notifications >= 1)
  }

  @Test func silenceForTheIdleWindowReleasesTheDevice() {
    let (engine, _, _) = makeEngine(idleFrames: 256)
    _ = engine.send(.attach)
    var outcomes: [PushLoop<RecordingSink>.CycleOutcome] = []
    for _ in 0..<5 { outcomes.append(engine.runCycle()) }
    #expect(outcomes == [.wrote, .wrote, .wrote, .wrote, .detached])
    #expect(events(engine) == [.released(.idle)])
  }

  @Test func aLostDeviceKeepsTheVoicesForWhenItReturns() {
    let (engine, sink, _) = makeEngine()
    _ = engine.send(.start(VoiceStart(id: VoiceID(1), samples: cue.samples, gain: .unity, loops: .forever)))
    _ = engine.send(.attach)
    sink.nextStatuses = [.ok, .lost(code: -5)]
    #expect(engine.runCycle() == .wrote)
    #expect(engine.runCycle() == .detached)
    let reported = events(engine)
    #expect(reported.contains(.released(.lost(code: -5))))
    #expect(!reported.contains { if case .ended = $0 { true } else { false } })
    _ = engine.send(.attach)
    #expect(engine.runCycle() == .wrote)
    #expect(sink.frames.count == 4 * 64)  // two good periods; the lost one was not kept
  }

  @Test func underrunsAreRecoveredAndCounted() {
    let (engine, sink, _) = makeEngine()
    _ = engine.send(.attach)
    sink.nextStatuses = [.recoveredUnderrun, .ok, .recoveredUnderrun]
    for _ in 0..<3 { _ = engine.runCycle() }
    #expect(engine.counters.underruns.load(ordering: .relaxed) == 2)
  }

  @Test func stoppingWithoutADeviceEndsAtOnce() {
    let (engine, _, _) = makeEngine()
    _ = engine.send(.start(VoiceStart(id: VoiceID(4), samples: cue.samples, gain: .unity, loops: .forever)))
    _ = engine.send(.stop(VoiceID(4), fadeFrames: 480, reason: .deviceLost))
    #expect(engine.runCycle() == .detached)
    #expect(events(engine) == [.ended(VoiceEnd(id: VoiceID(4), reason: .deviceLost, position: 0, loopsLeft: -1))])
  }

  @Test func shutdownFadesOutReleasesAndFinishes() {
    let constant = makeCue(frames: 10_000, left: { _ in 0.5 }, right: { _ in 0.5 })
    let (engine, sink, _) = makeEngine()
    _ = engine.send(.start(VoiceStart(id: VoiceID(1), samples: constant.samples, gain: .unity, loops: .forever)))
    _ = engine.send(.attach)
    _ = engine.runCycle()
    _ = engine.send(.shutdown(fadeFrames: 100))
    var outcome = PushLoop<RecordingSink>.CycleOutcome.wrote
    var cycles = 0
    while outcome == .wrote && cycles < 10 {
      outcome = engine.runCycle()
      cycles += 1
    }
    #expect(outcome == .finished)
    let reported = events(engine)
    #expect(reported.contains(.ended(VoiceEnd(id: VoiceID(1), reason: .stopped, position: 64, loopsLeft: -1))))
    #expect(reported.last == .released(.shutdown))
    // The fade: the first period after shutdown starts at full level and reaches silence in 100 frames.
    let afterShutdown = Array(sink.frames[128...])
    #expect(afterShutdown[0] == 0.5)
    #expect(afterShutdown[2 * 100] == 0)
  }

  @Test func aFullVoiceTableRefusesAndSaysSo() {
    let (engine, _, _) = makeEngine(voices: 1)
    _ = engine.send(.start(VoiceStart(id: VoiceID(1), samples: cue.samples, gain: .unity, loops: .forever)))
    _ = engine.send(.start(VoiceStart(id: VoiceID(2), samples: cue.samples, gain: .unity, loops: .forever)))
    _ = engine.runCycle()
    #expect(events(engine) == [.refused(VoiceID(2))])
  }

  @Test func aFullCommandQueueRefusesInsteadOfBlocking() {
    let sink = RecordingSink()
    let engine = Engine(
      configuration: EngineConfiguration(periodFrames: 64, idleFrames: 0, voiceCapacity: 4, commandCapacity: 4),
      sink: sink, signals: CountingSignals())
    for _ in 0..<4 { #expect(engine.send(.attach)) }
    #expect(!engine.send(.attach))
  }

  @Test func pulledInQuantaOfAnySizeTheMixIsTheSameSamples() {
    let (loop, sink, _) = makeEngine()
    let engine = loop.engine  // rendered when asked: no loop runs
    let output = UnsafeMutablePointer<Float>.allocate(capacity: 512)
    defer { output.deallocate() }
    #expect(engine.send(.start(VoiceStart(id: VoiceID(1), samples: cue.samples, gain: .unity, loops: .count(0)))))
    // Before the attach arrives the callback gets silence.
    output.update(repeating: 9, count: 512)
    #expect(!engine.render(into: output, frameCount: 16, delayFrames: 0))
    #expect(UnsafeBufferPointer(start: output, count: 32).allSatisfy { $0 == 0 })
    #expect(engine.send(.attach))
    var pulled: [Float] = []
    for frames in [7, 33, 1, 59, 100] {
      #expect(engine.render(into: output, frameCount: frames, delayFrames: 256))
      pulled += UnsafeBufferPointer(start: output, count: frames * 2)
    }
    #expect(Array(pulled[0..<200]) == cue.toArray())
    #expect(pulled[200...].allSatisfy { $0 == 0 })
    #expect(sink.frames.isEmpty)  // the pull path never writes to the sink
    let reported = events(engine)
    // The server's delay for the cycle reaches the started event (heardIn).
    #expect(reported.first == .started(VoiceID(1), frame: 0, clock: 7, delayFrames: 256, handedAt: 1000))
    #expect(reported.last == .ended(VoiceEnd(id: VoiceID(1), reason: .end, position: 100)))
    #expect(engine.counters.mixerClock.load(ordering: .relaxed) == 200)
  }

  @Test func pulledSilencePastTheIdleWindowReleasesTheDevice() {
    let (loop, _, _) = makeEngine(idleFrames: 256)
    let engine = loop.engine
    let output = UnsafeMutablePointer<Float>.allocate(capacity: 256)
    defer { output.deallocate() }
    #expect(engine.send(.attach))
    for _ in 0..<2 { #expect(engine.render(into: output, frameCount: 128, delayFrames: 0)) }
    #expect(events(engine) == [.released(.idle)])
    #expect(!engine.render(into: output, frameCount: 128, delayFrames: 0))
  }
}

/// A sink that models a device's queue: it records what stays queued or played, is told how far
/// the device has played, takes back silence on `rewind` (minus a margin) and lets a test act
/// while the engine waits for room.
final class QueueModelSink: PushSink, @unchecked Sendable {
  /// Every frame written and not taken back, interleaved.
  var frames: [Float] = []
  /// Frames the device has played (the test moves it).
  var playedFrames = 0
  var rewindMarginFrames = 16
  var rewindRequests: [Int] = []
  var waitedTargets: [Int] = []
  var waitStatuses: [SinkStatus] = []
  var duringWait: (() -> Void)? = nil

  func write(_ interleaved: UnsafePointer<Float>, frameCount: Int) -> SinkStatus {
    frames.append(contentsOf: UnsafeBufferPointer(start: interleaved, count: frameCount * 2))
    return .ok
  }
  func delayFrames() -> Int { frames.count / 2 - playedFrames }
  func waitForRoom(frameCount: Int, fillTargetFrames: Int) -> SinkStatus {
    waitedTargets.append(fillTargetFrames)
    duringWait?()
    return waitStatuses.isEmpty ? .ok : waitStatuses.removeFirst()
  }
  func rewind(maxFrames: Int) -> Int {
    rewindRequests.append(maxFrames)
    let frameCount = min(maxFrames, delayFrames() - rewindMarginFrames)
    guard frameCount > 0 else { return 0 }
    frames.removeLast(frameCount * 2)
    return frameCount
  }
}

@Suite("Engine: fill target, late latching, rewinding queued silence")
struct FillTargetEngineTests {
  let cue = makeCue(frames: 100, left: { Float($0 + 1) / 128 }, right: { Float($0 + 1) / 256 })

  func makeEngine(fillTarget: LatencyAdapter.Policy? = nil) -> (PushLoop<QueueModelSink>, QueueModelSink) {
    let sink = QueueModelSink()
    let engine = Engine(
      configuration: EngineConfiguration(periodFrames: 64, idleFrames: 100_000, voiceCapacity: 8, fillTarget: fillTarget),
      sink: sink, signals: CountingSignals())
    return (PushLoop(engine), sink)
  }

  @Test func aCommandThatArrivesWhileTheEngineWaitsIsInTheVeryNextPeriod() {
    let (engine, sink) = makeEngine()
    sink.rewindMarginFrames = 1_000_000  // a device that cannot rewind
    #expect(engine.send(.attach))
    #expect(engine.runCycle() == .wrote)  // frames 0..<64, silence
    sink.duringWait = { [cue] in
      _ = engine.send(.start(VoiceStart(id: VoiceID(1), samples: cue.samples, gain: .unity, loops: .count(0))))
    }
    #expect(engine.runCycle() == .wrote)
    sink.duringWait = nil
    // The start arrived during the second cycle's wait: it sounds from that cycle's first frame.
    #expect(Array(sink.frames[128..<256]) == Array(cue.toArray()[0..<128]))
    #expect(events(engine).first == .started(VoiceID(1), frame: 64, clock: 128, delayFrames: 128, handedAt: 1000))
  }

  @Test func withoutAFillTargetTheSinkIsAskedForItsWholeBuffer() {
    let (engine, sink) = makeEngine()
    #expect(engine.send(.attach))
    for _ in 0..<3 { _ = engine.runCycle() }
    // Once as the device is attached (before its first write), then before every cycle.
    #expect(sink.waitedTargets == [Int.max, Int.max, Int.max])
    #expect(engine.counters.fillTargetFrames.load(ordering: .relaxed) == 0)
  }

  @Test func anUnderrunThatCutsSoundRaisesTheTargetOneStepAndItDecaysAfterACleanWindow() {
    let policy = LatencyAdapter.Policy(minimumFrames: 128, maximumFrames: 512, decay: 640, settle: 0)
    let (engine, sink) = makeEngine(fillTarget: policy)
    #expect(engine.counters.fillTargetFrames.load(ordering: .relaxed) == 128)
    #expect(engine.send(.start(VoiceStart(id: VoiceID(1), samples: cue.samples, gain: .unity, loops: .forever))))
    #expect(engine.send(.attach))
    for _ in 0..<3 { #expect(engine.runCycle() == .wrote) }  // attaches, then plays the loop
    sink.waitStatuses = [.recoveredUnderrun]
    for _ in 0..<11 { #expect(engine.runCycle() == .wrote) }
    // Doubled at the underrun; halved once ten clean periods (640 frames) were written.
    #expect(sink.waitedTargets == [128, 128, 128, 128] + Array(repeating: 256, count: 9) + [128])
    #expect(engine.counters.underruns.load(ordering: .relaxed) == 1)
    #expect(engine.counters.audibleXruns.load(ordering: .relaxed) == 1)
    #expect(engine.counters.fillTargetFrames.load(ordering: .relaxed) == 128)
    // The raise is posted for `status`, with what it cut.
    let raises = events(engine).compactMap { if case .latencyRaised(let raise) = $0 { raise } else { nil } }
    #expect(raises.map { [$0.fromFrames, $0.toFrames, $0.voicesSounding] } == [[128, 256, 1]])
  }

  @Test func anUnderrunInTrailingSilenceOrRightAfterTheDeviceStartedDoesNotRaiseTheTarget() {
    let policy = LatencyAdapter.Policy(minimumFrames: 128, maximumFrames: 512, decay: 640, settle: 0)
    let (engine, sink) = makeEngine(fillTarget: policy)
    #expect(engine.send(.start(VoiceStart(id: VoiceID(1), samples: cue.samples, gain: .unity, loops: .forever))))
    #expect(engine.send(.attach))
    #expect(engine.runCycle() == .wrote)  // attaches and writes the first period
    sink.waitStatuses = [.recoveredUnderrun]  // the device ran dry after its first period: starting up
    #expect(engine.runCycle() == .wrote)
    #expect(engine.counters.xrunsAfterResume.load(ordering: .relaxed) == 1)
    // The loop stops; once the mixer is silent an underrun cuts nothing.
    #expect(engine.send(.stop(VoiceID(1), fadeFrames: 0, reason: .stopped)))
    for _ in 0..<3 { #expect(engine.runCycle() == .wrote) }
    sink.waitStatuses = [.recoveredUnderrun]
    #expect(engine.runCycle() == .wrote)
    #expect(engine.counters.silentXruns.load(ordering: .relaxed) == 1)
    #expect(engine.counters.underruns.load(ordering: .relaxed) == 2)
    #expect(engine.counters.audibleXruns.load(ordering: .relaxed) == 0)
    #expect(Set(sink.waitedTargets) == [128], "never raised")
    #expect(!events(engine).contains { if case .latencyRaised = $0 { true } else { false } })
  }

  @Test func aLostDeviceWhileWaitingReleasesItAndKeepsTheCommands() {
    let (engine, sink) = makeEngine()
    sink.rewindMarginFrames = 1_000_000
    #expect(engine.send(.attach))
    _ = engine.runCycle()
    sink.waitStatuses = [.lost(code: -5)]
    sink.duringWait = { [cue] in
      _ = engine.send(.start(VoiceStart(id: VoiceID(2), samples: cue.samples, gain: .unity, loops: .count(0))))
    }
    #expect(engine.runCycle() == .detached)
    sink.duringWait = nil
    #expect(events(engine) == [.released(.lost(code: -5))])
    #expect(sink.frames.count == 128)
    // The start waited in the queue: it plays on the next device from its first frame.
    #expect(engine.send(.attach))
    sink.frames = []
    #expect(engine.runCycle() == .wrote)
    #expect(Array(sink.frames[0..<128]) == Array(cue.toArray()[0..<128]))
  }

  @Test func aStartRewindsQueuedSilenceAndTheHeardTimingStaysTrue() {
    let (engine, sink) = makeEngine()
    #expect(engine.send(.attach))
    for _ in 0..<4 { #expect(engine.runCycle() == .wrote) }  // 256 frames of silence queued
    sink.playedFrames = 100  // the device has played 100: 156 are queued
    let heardBefore = engine.counters.mixerClock.load(ordering: .relaxed) - UInt64(sink.delayFrames())
    #expect(heardBefore == 100)
    #expect(engine.send(.start(VoiceStart(id: VoiceID(1), samples: cue.samples, gain: .unity, loops: .count(0)))))
    #expect(engine.runCycle() == .wrote)
    // The engine offered all its trailing silence; the sink kept 16 frames next to the play position.
    #expect(sink.rewindRequests == [256])
    #expect(engine.counters.rewoundFrames.load(ordering: .relaxed) == 140)
    // The cue follows 116 frames of silence (100 played, 16 kept), exactly.
    #expect(sink.frames.count == (116 + 64) * 2)
    #expect(sink.frames[0..<232].allSatisfy { $0 == 0 })
    #expect(Array(sink.frames[232...]) == Array(cue.toArray()[0..<128]))
    // The mixer clock moved back with the device: heard = clock − delay has not jumped, and the
    // started event says the first frame is heard 16 frames after it was posted.
    let clock = engine.counters.mixerClock.load(ordering: .relaxed)
    #expect(clock == 180)
    #expect(clock - UInt64(sink.delayFrames()) == heardBefore)
    let reported = events(engine)
    #expect(reported.first == .started(VoiceID(1), frame: 116, clock: 180, delayFrames: 80, handedAt: 1000))
    if case .started(_, let frame, let postedClock, let delay, _)? = reported.first {
      #expect(delay - Int(postedClock - frame) == 16)
    }
  }

  @Test func queuedSoundIsNeverRewound() {
    let long = makeCue(frames: 1000, left: { _ in 0.25 }, right: { _ in 0.25 })
    let (engine, sink) = makeEngine()
    #expect(engine.send(.start(VoiceStart(id: VoiceID(1), samples: long.samples, gain: .unity, loops: .count(0)))))
    #expect(engine.send(.attach))
    for _ in 0..<3 { #expect(engine.runCycle() == .wrote) }
    #expect(engine.send(.start(VoiceStart(id: VoiceID(2), samples: cue.samples, gain: .unity, loops: .count(0)))))
    #expect(engine.runCycle() == .wrote)
    #expect(sink.rewindRequests.isEmpty)
    #expect(sink.frames.count == 4 * 64 * 2)
    // After the sound ends and silence is queued, a new start rewinds only that silence.
    for _ in 0..<16 { _ = engine.runCycle() }  // the long cue ends at frame 1000; 1280 written
    sink.playedFrames = 1200
    _ = events(engine)
    #expect(engine.send(.start(VoiceStart(id: VoiceID(3), samples: cue.samples, gain: .unity, loops: .count(0)))))
    #expect(engine.runCycle() == .wrote)
    #expect(sink.rewindRequests == [256])  // the periods after frame 1024, the first wholly silent one
    #expect(engine.counters.rewoundFrames.load(ordering: .relaxed) == 64)
  }
}

@Suite("Latency adapter")
struct LatencyAdapterTests {
  let policy = LatencyAdapter.Policy(minimumFrames: 128, maximumFrames: 700, decay: 1000, settle: 100)
  let audible = XrunReport(voicesSounding: 1)

  @Test func anXrunThatCutSoundRaisesOneStepAndTheNextOnlyOnceTheRaiseSettled() {
    var adapter = LatencyAdapter(policy: policy)
    #expect(adapter.xrun(audible) == .raised)
    #expect(adapter.targetFrames == 256)
    // The same stall costing more cycles: part of the same evidence.
    #expect(adapter.xrun(audible) == .ignored)
    adapter.elapsed(99)
    #expect(adapter.xrun(audible) == .ignored)
    #expect(adapter.targetFrames == 256)
    adapter.elapsed(1)
    #expect(adapter.xrun(audible) == .raised)
    adapter.elapsed(100)
    #expect(adapter.xrun(audible) == .raised)
    adapter.elapsed(100)
    #expect(adapter.xrun(audible) == .atMaximum)
    #expect(adapter.targetFrames == 700)
    #expect(adapter.raises == 3)
  }

  @Test func xrunsThatCutNoSoundDoNotRaise() {
    var adapter = LatencyAdapter(policy: policy)
    let silent = XrunReport(voicesSounding: 0)
    let afterResume = XrunReport(voicesSounding: 2, afterResume: true)
    let graphWide = XrunReport(voicesSounding: 2, graphWide: true)
    #expect([silent.kind, afterResume.kind, graphWide.kind, audible.kind] == [.silent, .afterResume, .graphWide, .audible])
    for report in [silent, afterResume, graphWide] {
      #expect(adapter.xrun(report) == .ignored)
    }
    #expect(adapter.targetFrames == 128 && adapter.raises == 0)
  }

  @Test func itComesDownAStepPerQuietWindowToTheMinimum() {
    var adapter = LatencyAdapter(policy: policy)
    for _ in 0..<3 {
      adapter.xrun(audible)
      adapter.elapsed(100)
    }
    #expect(adapter.targetFrames == 700)
    var targets: [Int] = []
    for _ in 0..<8 {
      adapter.elapsed(500)
      targets.append(adapter.targetFrames)
    }
    // The last raise came 100 after the quiet window began: 700 until 1000 passed.
    #expect(targets == [700, 350, 350, 175, 175, 128, 128, 128])
    #expect(adapter.untilNextStep == nil)
  }

  @Test func aLongQuietSpellTakesItDownSeveralStepsAtOnce() {
    var adapter = LatencyAdapter(policy: policy)
    for _ in 0..<3 {
      adapter.xrun(audible)
      adapter.elapsed(100)
    }
    #expect(adapter.untilNextStep == 900)
    let changed = adapter.elapsed(3_600_000)
    #expect(changed && adapter.targetFrames == 128)
  }

  @Test func anAudibleXrunRestartsTheQuietWindowAndAnIgnoredOneDoesNot() {
    var adapter = LatencyAdapter(policy: policy)
    adapter.xrun(audible)  // 256
    adapter.elapsed(900)
    adapter.xrun(XrunReport(voicesSounding: 0))
    #expect(adapter.elapsed(100) == true)
    #expect(adapter.targetFrames == 128)
    adapter.elapsed(1000)  // a whole window at the minimum: that step down held
    adapter.xrun(audible)  // 256
    #expect(adapter.decayWindow == 1000)
    adapter.elapsed(900)
    adapter.xrun(audible)  // 512
    #expect(adapter.elapsed(900) == false)
    #expect(adapter.targetFrames == 512)
    #expect(adapter.elapsed(100) == true)
    #expect(adapter.targetFrames == 256)
  }

  @Test func aStepDownThatProvesTooSoonDoublesTheQuietWindowUpToFourTimesAndQuietHalvesItBack() {
    var adapter = LatencyAdapter(policy: policy)
    #expect(adapter.policy.longestDecay == 4000)
    adapter.xrun(audible)  // 256
    adapter.elapsed(1000)  // down to 128
    adapter.elapsed(500)
    #expect(adapter.xrun(audible) == .raised)  // 500 after the step down: it was too soon
    #expect(adapter.targetFrames == 256 && adapter.decayWindow == 2000 && adapter.untilNextStep == 2000)
    adapter.elapsed(200)
    #expect(adapter.xrun(audible) == .raised)  // 512: no step down since, the window stays
    #expect(adapter.decayWindow == 2000)
    adapter.elapsed(1999)
    #expect(adapter.targetFrames == 512)
    adapter.elapsed(1)
    #expect(adapter.targetFrames == 256)  // a step per 2000 now
    adapter.elapsed(1500)
    adapter.xrun(audible)  // 512 again, 1500 after a step down
    #expect(adapter.decayWindow == 4000)
    adapter.elapsed(4000)
    adapter.elapsed(100)
    adapter.xrun(audible)  // too soon again: the window is at its longest
    #expect(adapter.decayWindow == 4000)
    // Under the lasting load, the amount stays up; once it is gone, it comes down and the window
    // shrinks a step for each window spent at the minimum.
    adapter.elapsed(4000)
    adapter.elapsed(4000)
    #expect(adapter.targetFrames == 128 && adapter.decayWindow == 4000 && adapter.untilNextStep == nil)
    adapter.elapsed(4000)
    #expect(adapter.decayWindow == 2000)
    adapter.elapsed(2000)
    #expect(adapter.decayWindow == 1000)
    adapter.elapsed(50_000)
    #expect(adapter.decayWindow == 1000)
  }

  @Test func anXrunAWholeWindowAfterAStepDownLeavesTheWindowAsItIs() {
    var adapter = LatencyAdapter(policy: policy)
    adapter.xrun(audible)
    adapter.elapsed(1000)  // down to 128
    adapter.elapsed(1000)
    adapter.xrun(audible)
    #expect(adapter.targetFrames == 256 && adapter.decayWindow == 1000)
    // A lengthened window shortens a step for each window then spent at the minimum.
    var held = LatencyAdapter(policy: policy)
    held.xrun(audible)
    held.elapsed(1000)
    held.elapsed(10)
    held.xrun(audible)  // window 2000
    held.elapsed(4000)  // 256 → 128 at 2000, then 2000 at the minimum
    #expect(held.targetFrames == 128 && held.decayWindow == 1000)
  }

  @Test func atTheMinimumQuietTimeDoesNotBankADecay() {
    var adapter = LatencyAdapter(policy: policy)
    adapter.elapsed(5000)
    adapter.xrun(audible)  // 256
    adapter.elapsed(999)
    #expect(adapter.targetFrames == 256)
  }

  @Test func aMaximumAtTheMinimumKeepsItFixed() {
    var adapter = LatencyAdapter(policy: LatencyAdapter.Policy(minimumFrames: 480, maximumFrames: 480, decay: 10))
    #expect(!adapter.policy.adapts)
    #expect(adapter.xrun(audible) == .atMaximum)
    #expect(adapter.targetFrames == 480 && adapter.raises == 0)
  }
}
