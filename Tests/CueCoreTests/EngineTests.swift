import CueCore
import Testing

/// A sink that records every frame written and can be told to fail.
final class RecordingSink: AudioSink, @unchecked Sendable {
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

@Suite("Engine cycle")
struct EngineTests {
  let cue = makeCue(frames: 100, left: { Float($0) / 128 }, right: { Float($0) / 256 })

  func makeEngine(idleFrames: Int = 1000, voices: Int = 8) -> (Engine<RecordingSink>, RecordingSink, CountingSignals) {
    let sink = RecordingSink()
    let signals = CountingSignals()
    let engine = Engine(
      configuration: EngineConfiguration(periodFrames: 64, idleFrames: idleFrames, voiceCapacity: voices),
      sink: sink, signals: signals)
    return (engine, sink, signals)
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
    var outcomes: [Engine<RecordingSink>.CycleOutcome] = []
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
    var outcome = Engine<RecordingSink>.CycleOutcome.wrote
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
    let (engine, sink, _) = makeEngine()
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
    let (engine, _, _) = makeEngine(idleFrames: 256)
    let output = UnsafeMutablePointer<Float>.allocate(capacity: 256)
    defer { output.deallocate() }
    #expect(engine.send(.attach))
    for _ in 0..<2 { #expect(engine.render(into: output, frameCount: 128, delayFrames: 0)) }
    #expect(events(engine) == [.released(.idle)])
    #expect(!engine.render(into: output, frameCount: 128, delayFrames: 0))
  }
}
