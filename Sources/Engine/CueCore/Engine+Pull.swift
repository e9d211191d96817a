import Synchronization

// The pulled side of the engine: a sound server's real-time callback asks for each block
// (PipeWire's `process`, libpulse's write callback). The real-time rules of Engine.swift apply.

extension Engine {
  /// The real-time callback of a pulled sink (PipeWire's `process`): fills `frameCount` frames of
  /// interleaved stereo Float32 at `output`. While the engine is handed to the server it applies
  /// commands, mixes and reports (`render`); otherwise (not attached yet, given back, taken back
  /// after a failure) it writes silence and touches nothing. `delayFrames`: frames from this
  /// buffer's first frame to the ear, as the server reports them. Never waits, never allocates.
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
      // Released (idle, shutdown): the engine's thread takes over again and the control side disconnects.
      pullOwner.store(PullOwner.returned.rawValue, ordering: .releasing)
      signals.wakeAudioThread()
    }
  }

  /// For a pulled sink that can replace what it queued but has not played (PulseAudio: a write
  /// placed relative to the server's read index), called on the sink's thread right after a start was
  /// queued (`AudioSink.startQueued`). Takes the engine like `pull` (or returns 0 when it is not
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
        mixer.rewindClock(by: frames)
        mixer.render(into: output, frameCount: frames)
        lastHandedAt = signals.nowNanoseconds()
        trailingSilentFrames = 0
        silentFrames = 0
        counters.rewoundFrames.add(UInt64(frames), ordering: .relaxed)
        counters.mixerClock.store(mixer.frameClock, ordering: .relaxed)
      }
    }
    reportEvents(delayFrames: delayFrames)
    // Nothing here releases the sink (only a rendered silence or a failure does), so it stays handed over.
    pullOwner.store(PullOwner.callback.rawValue, ordering: .releasing)
    return frames
  }

  /// The engine's thread while a pulled sink is attached: sleeps until the callback gives the
  /// engine back, or takes it back itself when the stream failed or stopped asking (then the sink
  /// is released as lost, and the control side reconnects with backoff as for any lost device).
  /// It also pauses the sink after a silence (`PullPause`) and, once paused for the rest of the
  /// idle window, releases it as idle.
  func waitWhilePulled() {
    var wasPaused = false
    while true {
      signals.parkAudioThread(timeoutMilliseconds: 100)
      counters.heartbeat.add(1, ordering: .relaxed)
      if pullOwner.load(ordering: .acquiring) == PullOwner.returned.rawValue {
        pullOwner.store(PullOwner.engineThread.rawValue, ordering: .relaxed)
        return
      }
      if pauseWanted.exchange(false, ordering: .acquiring) {
        guard takeEngineBack() else { return }
        pauseIfSilent()
        handEngineBack()
      }
      let failure = sink.pullFailure()
      let paused = pullPaused.load(ordering: .acquiring)
      if paused {
        wasPaused = true
        if failure == 0 {
          guard let pause = configuration.pullPause,
            signals.nowNanoseconds() >= pausedAt + pause.releaseAfterNanoseconds
          else { continue }
          guard takeEngineBack() else { return }
          // Still paused, still silent, nothing queued: the idle window is over.
          if attached && mixer.isSilent && commands.isEmpty && pullPaused.exchange(false, ordering: .sequentiallyConsistent) {
            release(.idle)
            reportEvents(delayFrames: 0)
            return
          }
          handEngineBack()
          continue
        }
      } else if wasPaused {
        wasPaused = false
        lastPullAt.store(signals.nowNanoseconds(), ordering: .relaxed)  // resumed: the stall clock starts again
      }
      // The last pull first, then the clock: a callback that stores a newer time in between must
      // not make `now - last` wrap around (it did, and a stream pulled a moment ago was "lost").
      let lastPull = lastPullAt.load(ordering: .acquiring)
      let now = signals.nowNanoseconds()
      let stalled = !paused && now > lastPull && now - lastPull > Self.pullStallNanoseconds
      guard failure != 0 || stalled else { continue }
      guard takeEngineBack() else { return }
      release(.lost(code: failure != 0 ? failure : -110))  // ETIMEDOUT: the server stopped asking
      reportEvents(delayFrames: 0)
      return
    }
  }

  /// Takes the engine from the callback (one rendering right now finishes first; it never waits).
  /// False when the callback gave it back meanwhile (released): the engine's thread owns it, and
  /// `waitWhilePulled` returns.
  func takeEngineBack() -> Bool {
    while true {
      let (exchanged, current) = pullOwner.compareExchange(
        expected: PullOwner.callback.rawValue, desired: PullOwner.engineThread.rawValue, ordering: .acquiring)
      if exchanged { return true }
      if current == PullOwner.returned.rawValue {
        pullOwner.store(PullOwner.engineThread.rawValue, ordering: .relaxed)
        return false
      }
      signals.parkAudioThread(timeoutMilliseconds: 1)
    }
  }

  /// Hands the engine to the next callback again.
  func handEngineBack() {
    pullOwner.store(PullOwner.callback.rawValue, ordering: .releasing)
  }

  /// With the engine held: pauses the sink if the mix is still silent and no command waits; a
  /// command that arrives meanwhile resumes it (here, or in `send`).
  func pauseIfSilent() {
    guard attached, mixer.isSilent, commands.isEmpty, !pullPaused.load(ordering: .relaxed) else { return }
    _ = pullPaused.exchange(true, ordering: .sequentiallyConsistent)
    guard sink.pausePulling() else {
      _ = pullPaused.exchange(false, ordering: .sequentiallyConsistent)
      return
    }
    pausedAt = signals.nowNanoseconds()
    counters.pullPauses.add(1, ordering: .relaxed)
    // A command pushed before `send` saw the exchange above may have found the sink not yet paused,
    // and `send` may even have resumed it before `pausePulling` ran: resume for it now.
    if !commands.isEmpty {
      _ = pullPaused.exchange(false, ordering: .sequentiallyConsistent)
      sink.resumePulling()
    }
  }
}
