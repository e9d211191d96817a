import Synchronization

// Real-time rules for everything here but `init` (cued's audio thread runs `run`): no
// allocation, no free, no locks, no logging, no awaiting, no untyped throws.

/// The stock wait-render-write loop for a sink that is written (ALSA, null): the push model's
/// driver, on cued's audio thread.
///
/// Each cycle waits until the device has room below the fill target, has the engine apply the
/// commands that arrived meanwhile, mixes one period into its bus, writes it and has the engine
/// report. It owns what only the push model needs: the bus and the fill target (`LatencyAdapter`,
/// raised by the underruns the sink reports that cut sound); when a voice starts over silence queued
/// at the device's end (the engine's count), it takes that back (`PushSink.rewind`). While no sink is attached it parks.
///
/// It uses the sink's push half (`waitForRoom`, `write`, `rewind`, `delayFrames`) and the engine's
/// driver half; the engine knows nothing of it.
public final class PushLoop<Sink: AudioSink>: AudioDriver, @unchecked Sendable {
  public let engine: Engine<Sink>
  private let sink: any PushSink
  private let bus: UnsafeMutablePointer<Float>
  /// The fill target (nil: the sink's whole buffer).
  private var watermark: LatencyAdapter?
  /// Periods written since the sink was attached: an underrun in the first says the device was
  /// starting, not that the target is too small.
  private var periodsSinceAttach = 0
  /// Voices left sounding after the period mixed before this cycle's (what an underrun now cut).
  private var voicesBeforeCycle = 0

  /// Allocates the bus (one period); control side, before the loop runs.
  public init(_ engine: Engine<Sink>) {
    self.engine = engine
    guard let half = engine.pushHalf else { preconditionFailure("PushLoop drives a PushSink") }
    sink = half
    let frames = engine.configuration.periodFrames
    bus = .allocate(capacity: frames * 2)
    bus.initialize(repeating: 0, count: frames * 2)
    watermark = engine.configuration.fillTarget.map(LatencyAdapter.init(policy:))
    engine.counters.fillTargetFrames.store(watermark?.targetFrames ?? 0, ordering: .relaxed)
  }

  deinit {
    bus.deallocate()
  }

  /// What one cycle did.
  public enum CycleOutcome: Equatable, Sendable {
    /// A period was written.
    case wrote
    /// No sink is attached: park until a command arrives.
    case detached
    /// Shut down: leave the loop.
    case finished
  }

  /// Runs cycles until shut down, parking while detached. The audio thread's entry point.
  public func run() {
    while true {
      switch runCycle() {
      case .wrote: continue
      case .finished: return
      case .detached: engine.parkWhileDetached()
      }
    }
  }

  /// One pass: wait until the device has room (below the fill target), apply the commands that
  /// arrived meanwhile, then (when attached) mix one period, write it and report. Waiting first is
  /// what makes a command heard soonest: one that arrives during the wait is in the very next
  /// period, and the write that follows does not block.
  public func runCycle() -> CycleOutcome {
    engine.counters.heartbeat.add(1, ordering: .relaxed)
    let frames = engine.configuration.periodFrames
    let wasAttached = engine.attached
    if !wasAttached {
      periodsSinceAttach = 0
      engine.trailingSilentFrames = 0  // a device that attaches now starts empty
    }
    voicesBeforeCycle = engine.counters.voicesSounding.load(ordering: .relaxed)
    if wasAttached && !waitForRoom(frames) { return .detached }
    let mixerWasSilent = engine.mixer.activeVoiceCount == 0
    engine.applyCommands()
    guard engine.attached else {
      engine.trailingSilentFrames = 0  // the next device starts empty
      engine.reportEvents(delayFrames: 0)
      return engine.hasFinished ? .finished : .detached
    }
    // A device just attached is empty, so this returns at once; it tells the sink the target
    // before the first write (ALSA's start threshold follows it).
    if !wasAttached && !waitForRoom(frames) { return .detached }
    if mixerWasSilent && engine.mixer.activeVoiceCount > 0 { rewindQueuedSilence() }
    engine.mix(into: bus, frameCount: frames)
    let status = sink.write(bus, frameCount: frames)
    engine.countMixed(frames)
    guard noteSinkStatus(status) else {
      engine.reportEvents(delayFrames: 0)
      return .detached
    }
    periodsSinceAttach += 1
    // The device was restarted: it holds this period only.
    if status == .recoveredUnderrun { engine.trailingSilentFrames = min(engine.trailingSilentFrames, frames) }
    if status == .ok, var decaying = watermark {
      decaying.elapsed(frames)
      watermark = decaying
      engine.counters.fillTargetFrames.store(decaying.targetFrames, ordering: .relaxed)
    }
    engine.noteSilence(frames)
    engine.reportEvents(delayFrames: engine.attached ? sink.delayFrames() : 0)
    return engine.hasFinished ? .finished : .wrote
  }

  /// Waits until the sink has room below the fill target; false (and the sink released) when it is lost.
  private func waitForRoom(_ frames: Int) -> Bool {
    let waited = sink.waitForRoom(frameCount: frames, fillTargetFrames: watermark?.targetFrames ?? Int.max)
    if noteSinkStatus(waited) { return true }
    engine.reportEvents(delayFrames: 0)
    return false
  }

  /// Counts an underrun (and raises the fill target), or releases a lost sink; false when lost.
  /// Voices stay in the table when the sink is lost: the control side reopens the device and
  /// decides which are too old to play late.
  private func noteSinkStatus(_ status: SinkStatus) -> Bool {
    switch status {
    case .ok:
      return true
    case .recoveredUnderrun:
      engine.counters.underruns.add(1, ordering: .relaxed)
      // The late period was the first since the device started when at most one was written before it.
      let report = XrunReport(voicesSounding: voicesBeforeCycle, afterResume: periodsSinceAttach <= 1)
      engine.counters.count(report)
      if var raised = watermark {
        let from = raised.targetFrames
        if raised.xrun(report) == .raised {
          engine.counters.fillTargetFrames.store(raised.targetFrames, ordering: .relaxed)
          engine.noteLatencyRaise(
            LatencyRaise(
              atNanoseconds: engine.signals.nowNanoseconds(), fromFrames: from, toFrames: raised.targetFrames,
              voicesSounding: report.voicesSounding))
        }
        watermark = raised
      }
      return true
    case .lost(let code):
      engine.release(.lost(code: code))
      return false
    }
  }

  /// A voice starts while the device holds only silence the engine mixed: take that silence back
  /// (what the sink can rewind), so the voice is heard that much sooner
  /// (`Engine.rewindOverTrailingSilence` moves the mixer clock back with it).
  private func rewindQueuedSilence() {
    guard engine.trailingSilentFrames > 0 else { return }
    let rewound = sink.rewind(maxFrames: engine.trailingSilentFrames)
    guard rewound > 0 else { return }
    engine.rewindOverTrailingSilence(rewound)
  }
}
