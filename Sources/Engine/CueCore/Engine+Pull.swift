import Synchronization

// The pulled side of the engine: a sound server's real-time callback asks for each block
// (PipeWire's `process`, libpulse's write callback). The real-time rules of Engine.swift apply.
// Cued's audio thread hands the engine over and watches the stream meanwhile: PullSupervisor.swift.

extension Engine {
  /// The real-time callback of a pulled sink (PipeWire's `process`): fills `frameCount` frames of
  /// interleaved stereo Float32 at `output`. While the engine is handed to the server it applies
  /// commands, mixes and reports (`render`); otherwise (not attached yet, given back, taken back
  /// after a failure) it writes silence and touches nothing. `delayFrames`: frames from this
  /// buffer's first frame to the ear, as the server reports them. Never waits, never allocates.
  /// The hand-over itself (`PullOwner`) is `PullSupervisor`'s, on cued's audio thread.
  public func pull(into output: UnsafeMutablePointer<Float>, frameCount: Int, delayFrames: Int) {
    guard
      pullOwner.compareExchange(
        expected: PullOwner.callback.rawValue, desired: PullOwner.rendering.rawValue, ordering: .acquiring
      ).exchanged
    else {
      output.update(repeating: 0, count: frameCount * 2)
      return
    }
    lastPullAt.store(signals.nowNanoseconds(), ordering: .relaxed)
    _ = render(into: output, frameCount: frameCount, delayFrames: delayFrames)
    if attached {
      pullOwner.store(PullOwner.callback.rawValue, ordering: .releasing)
    } else {
      // Released (idle, shutdown): the audio thread takes over again and the control side disconnects.
      pullOwner.store(PullOwner.returned.rawValue, ordering: .releasing)
      signals.wakeAudioThread()
    }
  }

  /// A pulled sink saw an xrun (a skipped graph cycle, an underflow) on its thread: counted by what
  /// it cut (`EngineCounters.voicesSounding`, the voices left after the last block mixed) and by
  /// what the sink knew (`XrunReport`). The control side's latency adapter reads the counts.
  /// Atomics only: any thread, including the real-time one.
  public func xrun(afterResume: Bool, graphWide: Bool) {
    counters.count(
      XrunReport(voicesSounding: counters.voicesSounding.load(ordering: .relaxed), afterResume: afterResume, graphWide: graphWide))
  }

  /// For a pulled sink that can replace what it queued but has not played (PulseAudio: a write
  /// placed relative to the server's read index), called on the sink's thread right after a start was
  /// queued (`PullSink.startQueued`). Takes the engine like `pull` (or returns 0 when it is not
  /// handed over), applies commands, and when a voice starts while the stream's queued tail is
  /// silence the engine wrote, moves the mixer clock back by up to `maxFrameCount` of those frames
  /// (what the sink says it can still replace) and renders that many frames into `output`. The sink
  /// writes them over the last frames it queued; its write position, and so the clock, end where
  /// they were. `delayFrames`: what the stream holds unheard, from its write position. Returns the
  /// frames rendered (0: leave the queue alone; the commands wait in the mixer for the next request).
  public func rewriteQueuedSilence(into output: UnsafeMutablePointer<Float>, maxFrameCount: Int, delayFrames: Int) -> Int {
    guard
      pullOwner.compareExchange(
        expected: PullOwner.callback.rawValue, desired: PullOwner.rendering.rawValue, ordering: .acquiring
      ).exchanged
    else { return 0 }
    counters.heartbeat.add(1, ordering: .relaxed)
    let mixerWasSilent = mixer.activeVoiceCount == 0
    applyCommands()
    var frames = 0
    if attached && mixerWasSilent && mixer.activeVoiceCount > 0 {
      frames = min(max(maxFrameCount, 0), trailingSilentFrames)
      if frames > 0 {
        rewindOverTrailingSilence(frames)
        mix(into: output, frameCount: frames)
        counters.mixerClock.store(mixer.frameClock, ordering: .relaxed)  // where it was: the write position
      }
    }
    reportEvents(delayFrames: delayFrames)
    // Nothing here releases the sink (only a rendered silence or a failure does), so it stays handed over.
    pullOwner.store(PullOwner.callback.rawValue, ordering: .releasing)
    return frames
  }
}
