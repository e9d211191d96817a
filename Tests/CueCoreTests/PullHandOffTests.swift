import CueCore
import Foundation
import Synchronization
import Testing

/// A sink a server pulls (it has no write to call); it can be told its stream failed.
final class PulledSink: PullSink, @unchecked Sendable {
  let failure = Atomic<Int32>(0)
  func pullFailure() -> Int32 { failure.load(ordering: .acquiring) }
  /// Starts queued while the engine was handed over (`startQueued` pokes).
  let pokes = Atomic<Int>(0)
  func startQueued() { pokes.add(1, ordering: .relaxed) }
  /// Whether it can pause (PipeWire's inactive stream); while paused a test's "server" stops pulling.
  let canPause: Bool
  let paused = Atomic<Bool>(false)
  let pauses = Atomic<Int>(0)
  let resumes = Atomic<Int>(0)
  init(canPause: Bool = false) { self.canPause = canPause }
  func pausePulling() -> Bool {
    guard canPause else { return false }
    paused.store(true, ordering: .releasing)
    pauses.add(1, ordering: .relaxed)
    return true
  }
  func resumePulling() {
    resumes.add(1, ordering: .relaxed)
    paused.store(false, ordering: .releasing)
  }
  /// What the sink calls when its stream fails (`fail`).
  private var failureWake: (@Sendable () -> Void)? = nil
  func notifyFailure(_ wake: @escaping @Sendable () -> Void) { failureWake = wake }
  /// The stream fails with `code`, as a server that went away makes it, and says so.
  func fail(_ code: Int32) {
    failure.store(code, ordering: .releasing)
    failureWake?()
  }
}

/// Real parking on a condition, so the engine's driver can run on a thread of its own.
final class ConditionSignals: EngineSignals, @unchecked Sendable {
  private let condition = NSCondition()
  private var woken = false
  /// Parks that ended by their timeout rather than a wake-up: the audio thread's idle wake-ups.
  let timedOut = Atomic<Int>(0)
  func wakeAudioThread() {
    condition.lock()
    woken = true
    condition.signal()
    condition.unlock()
  }
  func parkAudioThread(timeoutMilliseconds: Int32) {
    condition.lock()
    let deadline = Date().addingTimeInterval(timeoutMilliseconds < 0 ? 3600 : Double(timeoutMilliseconds) / 1000)
    while !woken && condition.wait(until: deadline) {}
    if !woken { timedOut.add(1, ordering: .relaxed) }
    woken = false
    condition.unlock()
  }
  func notifyControl() {}
  func nowNanoseconds() -> UInt64 { DispatchTime.now().uptimeNanoseconds }
}

/// The driver the sink calls for (`Engine.makeDriver`: `PullSupervisor`) on its own thread (the
/// daemon's audio thread), and a way to wait for it to return.
final class EngineThread: @unchecked Sendable {
  let finished = Atomic<Bool>(false)
  init(_ engine: Engine<PulledSink>) {
    let driver = engine.makeDriver()
    Thread.detachNewThread {
      driver.run()
      self.finished.store(true, ordering: .releasing)
    }
  }
  func waitUntilFinished(seconds: Double = 5) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
      if finished.load(ordering: .acquiring) { return true }
      usleep(1000)
    }
    return false
  }
}

/// Waits for an event matching `match`, collecting the others.
func waitForEvent(_ engine: Engine<PulledSink>, seconds: Double = 5, _ match: (EngineEvent) -> Bool) -> [EngineEvent]? {
  var seen: [EngineEvent] = []
  let deadline = Date().addingTimeInterval(seconds)
  while Date() < deadline {
    while let event = engine.nextEvent() {
      seen.append(event)
      if match(event) { return seen }
    }
    usleep(1000)
  }
  return nil
}

@Suite("The engine handed to a server's callback and back")
struct PullHandOffTests {
  let cue = makeCue(frames: 300, left: { Float($0 + 1) / 512 }, right: { -Float($0 + 1) / 512 })

  func makeEngine(idleFrames: Int, pullPause: EngineConfiguration.PullPause? = nil) -> (Engine<PulledSink>, PulledSink) {
    let sink = PulledSink(canPause: pullPause != nil)
    let engine = Engine(
      configuration: EngineConfiguration(periodFrames: 64, idleFrames: idleFrames, voiceCapacity: 4, pullPause: pullPause),
      sink: sink, signals: ConditionSignals())
    return (engine, sink)
  }

  /// Pulls quanta of `frames` (as PipeWire's thread would) until `count` frames of sound were rendered or time runs out.
  func pullUntilSound(_ engine: Engine<PulledSink>, frames: Int, count: Int) -> [Float] {
    let output = UnsafeMutablePointer<Float>.allocate(capacity: frames * 2)
    defer { output.deallocate() }
    var heard: [Float] = []
    let deadline = Date().addingTimeInterval(5)
    while heard.count < count * 2 && Date() < deadline {
      engine.pull(into: output, frameCount: frames, delayFrames: frames)
      let block = Array(UnsafeBufferPointer(start: output, count: frames * 2))
      if !heard.isEmpty || block.contains(where: { $0 != 0 }) { heard += block }
      usleep(200)
    }
    return heard
  }

  @Test func theCallbackPlaysWhatTheEngineThreadHandsOverAndGivesItBackWhenIdle() {
    let (engine, _) = makeEngine(idleFrames: 256)
    let thread = EngineThread(engine)
    // Before the hand-over the callback writes silence and takes no command.
    #expect(engine.send(.start(VoiceStart(id: VoiceID(1), samples: cue.samples, gain: .unity, loops: .count(0)))))
    #expect(engine.send(.attach))
    let heard = pullUntilSound(engine, frames: 128, count: 300 + 512)
    #expect(Array(heard.prefix(600)) == cue.toArray())
    #expect(heard[600...].allSatisfy { $0 == 0 })
    let news = waitForEvent(engine) { $0 == .released(.idle) }
    #expect(news?.contains(.ended(VoiceEnd(id: VoiceID(1), reason: .end, position: 300))) == true)
    // Given back: the engine's own thread runs again and takes the shutdown (no callback needed).
    usleep(20_000)
    #expect(engine.send(.shutdown(fadeFrames: 0)))
    #expect(thread.waitUntilFinished())
    #expect(waitForEvent(engine) { $0 == .released(.shutdown) } != nil)
  }

  @Test func aFailedStreamIsTakenBackAndReleasedAsLostWithItsCode() {
    let (engine, sink) = makeEngine(idleFrames: 48_000)
    let thread = EngineThread(engine)
    #expect(engine.send(.start(VoiceStart(id: VoiceID(7), samples: cue.samples, gain: .unity, loops: .forever))))
    #expect(engine.send(.attach))
    #expect(!pullUntilSound(engine, frames: 64, count: 64).isEmpty)
    // The server goes away: no more callbacks, and the sink says so.
    sink.failure.store(-32, ordering: .releasing)
    #expect(waitForEvent(engine) { $0 == .released(.lost(code: -32)) } != nil)
    // A late callback finds the engine taken back: silence, and the voice keeps its place for the reopen.
    let output = UnsafeMutablePointer<Float>.allocate(capacity: 128)
    defer { output.deallocate() }
    output.update(repeating: 1, count: 128)
    engine.pull(into: output, frameCount: 64, delayFrames: 0)
    #expect(UnsafeBufferPointer(start: output, count: 128).allSatisfy { $0 == 0 })
    // Reattached (the controller reconnected), the callback plays the waiting voice again.
    sink.failure.store(0, ordering: .releasing)
    #expect(engine.send(.attach))
    #expect(!pullUntilSound(engine, frames: 64, count: 64).isEmpty)
    #expect(engine.send(.shutdown(fadeFrames: 0)))
    for _ in 0..<4 { engine.pull(into: output, frameCount: 64, delayFrames: 0) }
    #expect(thread.waitUntilFinished())
  }

  @Test func aStreamThatStopsAskingIsLostAfterTheStallLimit() {
    let (engine, _) = makeEngine(idleFrames: 48_000)
    let thread = EngineThread(engine)
    #expect(engine.send(.attach))
    let started = Date()
    // No callback ever comes (a target that never links, a server that hangs).
    #expect(waitForEvent(engine, seconds: 10) { $0 == .released(.lost(code: -110)) } != nil)
    #expect(Date().timeIntervalSince(started) >= Double(PullSupervisor<PulledSink>.stallNanoseconds) / 1e9 * 0.9)
    #expect(engine.send(.shutdown(fadeFrames: 0)))
    #expect(thread.waitUntilFinished())
  }

  /// Pulls quanta of `frames` as a server does while the stream is active: until the sink is paused
  /// (or `seconds` pass); returns what was rendered and whether it paused.
  func pullUntilPaused(_ engine: Engine<PulledSink>, _ sink: PulledSink, frames: Int, seconds: Double = 5) -> ([Float], Bool) {
    let output = UnsafeMutablePointer<Float>.allocate(capacity: frames * 2)
    defer { output.deallocate() }
    var rendered: [Float] = []
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
      if sink.paused.load(ordering: .acquiring) { return (rendered, true) }
      engine.pull(into: output, frameCount: frames, delayFrames: frames)
      rendered += UnsafeBufferPointer(start: output, count: frames * 2)
      usleep(300)
    }
    return (rendered, false)
  }

  @Test func aSilentStreamIsPausedTheNextCommandResumesItAndThePausedStreamIsReleasedAfterTheIdleWindow() {
    let (engine, sink) = makeEngine(
      idleFrames: 10_000_000, pullPause: EngineConfiguration.PullPause(afterFrames: 256, releaseAfterNanoseconds: 400_000_000))
    let thread = EngineThread(engine)
    #expect(engine.send(.start(VoiceStart(id: VoiceID(1), samples: cue.samples, gain: .unity, loops: .count(0)))))
    #expect(engine.send(.attach))
    // The cue, then at least 256 silent frames, then the sink is paused (the server stops asking).
    var (rendered, paused) = pullUntilPaused(engine, sink, frames: 64)
    #expect(paused)
    var first = rendered.firstIndex { $0 != 0 } ?? 0
    #expect(Array(rendered[first...].prefix(600)) == cue.toArray())
    // Silence is counted from the end of the block in which the voice ended.
    #expect(rendered.count - first - 600 >= (256 - 64) * 2, "paused only after the silence it was given")
    let pausedNow = engine.isPullPaused
    #expect(pausedNow)
    // Paused: no callback for longer than the stall limit would allow a running stream is not a loss,
    // and the next command resumes the sink; the cue plays from its first frame.
    usleep(200_000)
    #expect(engine.send(.start(VoiceStart(id: VoiceID(2), samples: cue.samples, gain: .unity, loops: .count(0)))))
    #expect(sink.resumes.load(ordering: .relaxed) >= 1)
    let pausedAfterSend = sink.paused.load(ordering: .acquiring)
    #expect(!pausedAfterSend)
    (rendered, paused) = pullUntilPaused(engine, sink, frames: 64)
    #expect(paused)
    first = rendered.firstIndex { $0 != 0 } ?? 0
    #expect(Array(rendered[first...].prefix(600)) == cue.toArray())
    #expect(sink.pauses.load(ordering: .relaxed) == 2)
    // Paused for the rest of the idle window (400 ms here) with nothing to play: released as idle.
    let pausedAt = Date()
    let news = waitForEvent(engine) { $0 == .released(.idle) || $0 == .released(.lost(code: -110)) }
    #expect(news?.last == .released(.idle))
    #expect(Date().timeIntervalSince(pausedAt) >= 0.35)
    let pausedAfterRelease = engine.isPullPaused
    #expect(!pausedAfterRelease)
    #expect(engine.send(.shutdown(fadeFrames: 0)))
    #expect(thread.waitUntilFinished())
  }

  @Test func aSinkThatCannotPauseKeepsBeingPulledUntilTheIdleWindow() {
    let sink = PulledSink(canPause: false)
    let engine = Engine(
      configuration: EngineConfiguration(
        periodFrames: 64, idleFrames: 2048, voiceCapacity: 4,
        pullPause: EngineConfiguration.PullPause(afterFrames: 128, releaseAfterNanoseconds: 1_000_000)),
      sink: sink, signals: ConditionSignals())
    let thread = EngineThread(engine)
    #expect(engine.send(.attach))
    let (_, paused) = pullUntilPaused(engine, sink, frames: 64, seconds: 0.5)
    #expect(!paused)
    #expect(engine.counters.pullPauses.load(ordering: .relaxed) == 0)
    #expect(waitForEvent(engine) { $0 == .released(.idle) } != nil, "released by the idle window it was pulled through")
    #expect(engine.send(.shutdown(fadeFrames: 0)))
    #expect(thread.waitUntilFinished())
  }

  @Test func aPausedStreamStaysConnectedWithNoWakeUpsAndAFailureWakesItsSupervisor() {
    let sink = PulledSink(canPause: true)
    let signals = ConditionSignals()
    let engine = Engine(
      configuration: EngineConfiguration(
        periodFrames: 64, idleFrames: 2048, voiceCapacity: 4, pullPause: EngineConfiguration.PullPause(afterFrames: 128)),
      sink: sink, signals: signals)
    let thread = EngineThread(engine)
    #expect(engine.send(.attach))
    let (_, paused) = pullUntilPaused(engine, sink, frames: 64)
    #expect(paused)
    // Paused far past the idle window (2048 frames): still attached, and the supervisor sleeps
    // without a timeout (a timed-out park is a wake-up while quiet).
    let wakeUps = signals.timedOut.load(ordering: .relaxed)
    usleep(400_000)
    #expect(signals.timedOut.load(ordering: .relaxed) == wakeUps)
    #expect(!engine.isParked && engine.isPullPaused)
    #expect(waitForEvent(engine, seconds: 0.1) { _ in true } == nil, "nothing released")
    // The server goes away under the paused stream: the sink's failure wakes the supervisor.
    sink.fail(-32)
    #expect(waitForEvent(engine) { $0 == .released(.lost(code: -32)) } != nil)
    #expect(engine.send(.shutdown(fadeFrames: 0)))
    #expect(thread.waitUntilFinished())
  }

  @Test func aPauseDueAtTheEndOfTheIdleWindowPausesTheStreamInsteadOfReleasingIt() {
    let (engine, sink) = makeEngine(idleFrames: 256, pullPause: EngineConfiguration.PullPause(afterFrames: 256))
    let thread = EngineThread(engine)
    #expect(engine.send(.attach))
    let (_, paused) = pullUntilPaused(engine, sink, frames: 64)
    #expect(paused && engine.isPullPaused)
    #expect(waitForEvent(engine, seconds: 0.2) { $0 == .released(.idle) } == nil, "paused, not closed")
    #expect(engine.send(.shutdown(fadeFrames: 0)))
    #expect(thread.waitUntilFinished())
  }

  @Test func aPulledSinksXrunsAreCountedByWhatTheyCut() {
    let (engine, _) = makeEngine(idleFrames: 1_000_000)
    let thread = EngineThread(engine)
    #expect(engine.send(.start(VoiceStart(id: VoiceID(1), samples: cue.samples, gain: .unity, loops: .forever))))
    #expect(engine.send(.attach))
    let output = UnsafeMutablePointer<Float>.allocate(capacity: 128)
    defer { output.deallocate() }
    // Pull until the loop sounds, then a gap: it cut one voice.
    let deadline = Date().addingTimeInterval(5)
    while engine.counters.voicesSounding.load(ordering: .relaxed) == 0 && Date() < deadline {
      engine.pull(into: output, frameCount: 64, delayFrames: 64)
      usleep(300)
    }
    engine.xrun(afterResume: false, graphWide: false)
    engine.xrun(afterResume: true, graphWide: false)
    engine.xrun(afterResume: false, graphWide: true)
    #expect(engine.counters.audibleXruns.load(ordering: .relaxed) == 1)
    #expect(engine.counters.lastAudibleXrunVoices.load(ordering: .relaxed) == 1)
    #expect(engine.counters.xrunsAfterResume.load(ordering: .relaxed) == 1)
    #expect(engine.counters.graphWideXruns.load(ordering: .relaxed) == 1)
    // Stopped and silent: a gap now cuts nothing.
    #expect(engine.send(.stop(VoiceID(1), fadeFrames: 0, reason: .stopped)))
    engine.pull(into: output, frameCount: 64, delayFrames: 64)
    while engine.counters.voicesSounding.load(ordering: .relaxed) != 0 && Date() < deadline {
      engine.pull(into: output, frameCount: 64, delayFrames: 64)
      usleep(300)
    }
    engine.xrun(afterResume: false, graphWide: false)
    #expect(engine.counters.silentXruns.load(ordering: .relaxed) == 1)
    #expect(engine.counters.audibleXruns.load(ordering: .relaxed) == 1)
    #expect(engine.send(.shutdown(fadeFrames: 0)))
    while !thread.finished.load(ordering: .acquiring) && Date() < deadline {
      engine.pull(into: output, frameCount: 64, delayFrames: 64)
      usleep(300)
    }
    #expect(thread.waitUntilFinished())
  }
}
