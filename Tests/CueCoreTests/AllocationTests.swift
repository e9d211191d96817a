import CAllocCounter
import CueCore
import Testing

/// A sink that keeps nothing: the engine's write path without a device.
final class DiscardingSink: PushSink, @unchecked Sendable {
  var writes = 0
  func write(_ interleaved: UnsafePointer<Float>, frameCount: Int) -> SinkStatus {
    writes += 1
    return .ok
  }
  func delayFrames() -> Int { 0 }
}

final class QuietSignals: EngineSignals, @unchecked Sendable {
  func wakeAudioThread() {}
  func parkAudioThread(timeoutMilliseconds: Int32) {}
  func notifyControl() {}
  func nowNanoseconds() -> UInt64 { 42 }
}

/// nil when the counting interposer is linked in; why not when it is left out (under AddressSanitizer
/// or ThreadSanitizer, whose runtimes own malloc: scripts/sanitize.sh). Then the suite is reported as
/// skipped with this reason rather than passing on a counter that sees nothing.
let allocationCounterUnavailable: String? = cued_alloc_counter_unavailable_reason().map { String(cString: $0) }

@Suite(
  "The render path allocates nothing",
  .enabled(if: allocationCounterUnavailable == nil, Comment(rawValue: allocationCounterUnavailable ?? "")))
struct AllocationTests {
  @Test func theCounterSeesAllocations() {
    #expect(cued_alloc_counter_is_active() == 1)
  }

  @Test func renderingAPeriodAllocatesNothing() {
    let cue = makeCue(frames: 4800, left: { Float($0 % 100) / 100 }, right: { -Float($0 % 50) / 50 })
    let mixer = Mixer(voiceCapacity: 64)
    for i in 0..<48 {
      let gain = StereoGain.voice(volume: 0.5, pan: Double(i % 5) / 2 - 1, sourceIsMono: i % 2 == 0)
      _ = mixer.start(
        VoiceStart(
          id: VoiceID(UInt64(i)), samples: cue.samples, gain: gain, loops: .count(3), fadeInFrames: i,
          rate: i % 3 == 0 ? 1.5 : 1))
    }
    let bus = UnsafeMutablePointer<Float>.allocate(capacity: 480)
    defer { bus.deallocate() }
    mixer.render(into: bus, frameCount: 240)  // warm up
    cued_alloc_counter_start()
    for period in 0..<200 {
      if period == 50 { mixer.stop(VoiceID(3), fadeFrames: 100, reason: .stopped) }
      if period == 60 { mixer.setGain(VoiceID(4), to: .silent, rampFrames: 300) }
      if period == 70 { mixer.seek(VoiceID(5), to: 1000) }
      if period == 80 { mixer.setRate(VoiceID(6), to: 0.75) }
      mixer.render(into: bus, frameCount: 240)
      mixer.drainStarted { _, _ in true }
      mixer.drainEnded { _ in true }
    }
    let allocations = cued_alloc_counter_stop()
    #expect(allocations == 0)
  }

  @Test func aMeteredRenderAllocatesNothing() {
    // Meters on (a client subscribed): each voice is mixed alone into the scratch and measured, the
    // mix too, and a block longer than the scratch is mixed in pieces.
    let cue = makeCue(frames: 4800, left: { Float($0 % 100) / 100 }, right: { -Float($0 % 50) / 50 })
    let mixer = Mixer(voiceCapacity: 64)
    mixer.meters.isEnabled = true
    for i in 0..<48 {
      _ = mixer.start(
        VoiceStart(id: VoiceID(UInt64(i)), samples: cue.samples, gain: .unity, loops: .count(3), fadeInFrames: i, rate: i % 3 == 0 ? 1.5 : 1))
    }
    let bus = UnsafeMutablePointer<Float>.allocate(capacity: 10_000 * 2)
    defer { bus.deallocate() }
    mixer.render(into: bus, frameCount: 240)  // warm up
    let blocks = [240, 64, 10_000, 1024]
    cued_alloc_counter_start()
    for period in 0..<200 {
      mixer.render(into: bus, frameCount: blocks[period % blocks.count])
      if period % 8 == 0 {
        _ = mixer.meters.takeMix()
        for slot in 0..<mixer.voiceCapacity { _ = mixer.meters.takeVoice(slot: slot) }
      }
      mixer.drainStarted { _, _ in true }
      mixer.drainEnded { _ in true }
    }
    let allocations = cued_alloc_counter_stop()
    #expect(allocations == 0)
  }

  @Test func anEngineCycleAllocatesNothing() {
    let cue = makeCue(frames: 2400, left: { _ in 0.25 }, right: { _ in 0.25 })
    let sink = DiscardingSink()
    let engine = Engine(
      configuration: EngineConfiguration(periodFrames: 240, idleFrames: 48000, voiceCapacity: 64),
      sink: sink, signals: QuietSignals())
    let loop = PushLoop(engine)
    #expect(engine.send(.attach))
    _ = loop.runCycle()
    for i in 0..<40 {
      #expect(engine.send(.start(VoiceStart(id: VoiceID(UInt64(i)), samples: cue.samples, gain: .unity, loops: .count(1)))))
    }
    cued_alloc_counter_start()
    for _ in 0..<100 { _ = loop.runCycle() }
    let allocations = cued_alloc_counter_stop()
    #expect(allocations == 0)
    #expect(sink.writes == 101)
    var ended = 0
    while let event = engine.nextEvent() { if case .ended = event { ended += 1 } }
    #expect(ended == 40)
  }

  @Test func twoHundredPullCallbacksAllocateNothing() {
    // The pull model: a sound server's real-time thread asks for a quantum at a time, of any size,
    // through `pull` (the hand-over's atomic exchange, commands, mix, events).
    let cue = makeCue(frames: 2400, left: { _ in 0.25 }, right: { _ in 0.25 })
    let engine = Engine(
      configuration: EngineConfiguration(periodFrames: 240, idleFrames: 480_000, voiceCapacity: 64),
      sink: PulledSink(), signals: QuietSignals())
    let output = UnsafeMutablePointer<Float>.allocate(capacity: 2048 * 2)
    defer { output.deallocate() }
    #expect(engine.send(.attach))
    #expect(PullSupervisor(engine).runCycle() == .pulled)  // the audio thread hands over
    engine.pull(into: output, frameCount: 64, delayFrames: 0)
    for i in 0..<40 {
      #expect(engine.send(.start(VoiceStart(id: VoiceID(UInt64(i)), samples: cue.samples, gain: .unity, loops: .count(1)))))
    }
    let quanta = [64, 128, 256, 1024, 2048, 240, 37]
    cued_alloc_counter_start()
    for n in 0..<200 { engine.pull(into: output, frameCount: quanta[n % quanta.count], delayFrames: 256) }
    let allocations = cued_alloc_counter_stop()
    #expect(allocations == 0)
    var ended = 0
    while let event = engine.nextEvent() { if case .ended = event { ended += 1 } }
    #expect(ended == 40)
  }
}

@Suite("Rewriting a pulled stream's queued silence")
struct RewriteQueuedSilenceTests {
  /// An engine handed to a pulled sink that has rendered `silentFrames` of silence.
  static func handedOver(silentFrames: Int) -> (Engine<PulledSink>, PulledSink) {
    let sink = PulledSink()
    let engine = Engine(
      configuration: EngineConfiguration(periodFrames: 240, idleFrames: 480_000, voiceCapacity: 64), sink: sink,
      signals: QuietSignals())
    #expect(engine.send(.attach))
    #expect(PullSupervisor(engine).runCycle() == .pulled)
    let output = UnsafeMutablePointer<Float>.allocate(capacity: silentFrames * 2)
    defer { output.deallocate() }
    engine.pull(into: output, frameCount: silentFrames, delayFrames: 0)
    return (engine, sink)
  }

  @Test func aStartOverQueuedSilenceIsRenderedThereAndTheClockEndsWhereItWas() throws {
    let (engine, sink) = Self.handedOver(silentFrames: 512)
    let cue = makeCue(frames: 2400, left: { _ in 0.25 }, right: { _ in -0.5 })
    #expect(engine.send(.start(VoiceStart(id: VoiceID(1), samples: cue.samples, gain: .unity, loops: .count(1)))))
    #expect(sink.pokes.load(ordering: .relaxed) == 1, "a start while handed over pokes the sink")
    let output = UnsafeMutablePointer<Float>.allocate(capacity: 2048 * 2)
    defer { output.deallocate() }
    // The sink can replace 300 of the 512 silent frames it holds: the voice goes there.
    #expect(engine.rewriteQueuedSilence(into: output, maxFrameCount: 300, delayFrames: 480) == 300)
    #expect(output[0] == 0.25 && output[1] == -0.5 && output[599] == -0.5)
    #expect(engine.counters.mixerClock.load(ordering: .relaxed) == 512, "the write position did not move")
    #expect(engine.counters.rewoundFrames.load(ordering: .relaxed) == 300)
    // Its first frame is mixer frame 212, heard 480 − (512 − 212) = 180 frames after the post.
    var started: (frame: UInt64, clock: UInt64, delay: Int)? = nil
    while let event = engine.nextEvent() {
      if case .started(_, let frame, let clock, let delay, _) = event { started = (frame, clock, delay) }
    }
    let first = try #require(started)
    #expect(first.frame == 212 && first.clock == 512 && first.delay == 480)
    // The next request carries on from the 300 frames already rendered.
    engine.pull(into: output, frameCount: 4, delayFrames: 0)
    #expect(output[0] == 0.25 && output[7] == -0.5)
    // With a voice sounding, the queue's tail is not silence: nothing is rewritten.
    #expect(engine.send(.start(VoiceStart(id: VoiceID(2), samples: cue.samples, gain: .unity, loops: .count(1)))))
    #expect(engine.rewriteQueuedSilence(into: output, maxFrameCount: 300, delayFrames: 480) == 0)
  }

  @Test func noMoreThanTheSilenceTheEngineRenderedIsRewritten() {
    let (engine, _) = Self.handedOver(silentFrames: 100)
    let cue = makeCue(frames: 2400, left: { _ in 0.25 }, right: { _ in 0.25 })
    #expect(engine.send(.start(VoiceStart(id: VoiceID(1), samples: cue.samples, gain: .unity, loops: .count(1)))))
    let output = UnsafeMutablePointer<Float>.allocate(capacity: 2048 * 2)
    defer { output.deallocate() }
    #expect(engine.rewriteQueuedSilence(into: output, maxFrameCount: 1000, delayFrames: 480) == 100)
  }

  @Test(.enabled(if: allocationCounterUnavailable == nil, Comment(rawValue: allocationCounterUnavailable ?? "")))
  func aHundredRewritesAllocateNothing() {
    let (engine, _) = Self.handedOver(silentFrames: 512)
    let cue = makeCue(frames: 96, left: { _ in 0.25 }, right: { _ in 0.25 })
    let output = UnsafeMutablePointer<Float>.allocate(capacity: 2048 * 2)
    defer { output.deallocate() }
    var rewritten = 0
    cued_alloc_counter_start()
    for round in 0..<100 {
      _ = engine.send(.start(VoiceStart(id: VoiceID(UInt64(round)), samples: cue.samples, gain: .unity, loops: .count(1))))
      if engine.rewriteQueuedSilence(into: output, maxFrameCount: 200, delayFrames: 480) > 0 { rewritten += 1 }
      for _ in 0..<4 { engine.pull(into: output, frameCount: 128, delayFrames: 480) }  // the voice ends, silence follows
    }
    let allocations = cued_alloc_counter_stop()
    #expect(allocations == 0)
    #expect(rewritten == 100)
    while engine.nextEvent() != nil {}
  }
}

/// A sink that waits (reporting an underrun now and then) and rewinds, without keeping anything.
final class WaitingRewindingSink: PushSink, @unchecked Sendable {
  var waits = 0
  var rewound = 0
  func write(_ interleaved: UnsafePointer<Float>, frameCount: Int) -> SinkStatus { .ok }
  func delayFrames() -> Int { 256 }
  func waitForRoom(frameCount: Int, fillTargetFrames: Int) -> SinkStatus {
    waits += 1
    return waits % 17 == 0 ? .recoveredUnderrun : .ok
  }
  func rewind(maxFrames: Int) -> Int {
    let frames = maxFrames / 2
    rewound += frames
    return frames
  }
}

@Suite(
  "The wait, the watermark and the rewind allocate nothing",
  .enabled(if: allocationCounterUnavailable == nil, Comment(rawValue: allocationCounterUnavailable ?? "")))
struct FillTargetAllocationTests {
  @Test func cyclesThatWaitRaiseTheTargetAndRewindAllocateNothing() {
    let cue = makeCue(frames: 200, left: { _ in 0.25 }, right: { _ in 0.25 })
    let sink = WaitingRewindingSink()
    let policy = LatencyAdapter.Policy(minimumFrames: 256, maximumFrames: 1024, decay: 640)
    let engine = Engine(
      configuration: EngineConfiguration(periodFrames: 64, idleFrames: 480_000, voiceCapacity: 16, fillTarget: policy),
      sink: sink, signals: QuietSignals())
    let loop = PushLoop(engine)
    #expect(engine.send(.attach))
    _ = loop.runCycle()
    cued_alloc_counter_start()
    for cycle in 0..<400 {
      // A start every 10 cycles after silence: each is a rewind.
      if cycle % 10 == 5 {
        _ = engine.send(.start(VoiceStart(id: VoiceID(UInt64(cycle)), samples: cue.samples, gain: .unity, loops: .count(0))))
      }
      _ = loop.runCycle()
      while engine.nextEvent() != nil {}
    }
    let allocations = cued_alloc_counter_stop()
    #expect(allocations == 0)
    #expect(sink.rewound > 0)
    #expect(engine.counters.underruns.load(ordering: .relaxed) > 0)
  }
}
