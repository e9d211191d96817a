import Synchronization

// Real-time rules as in Engine.swift for everything here but `init`; `pausePulling` may lock
// (it is never called on the server's real-time thread, only here, on cued's audio thread).

/// The pull model's driver, on cued's audio thread: a sound server's callback asks the engine
/// for each block (`Engine.pull`), and this thread hands the engine over and watches the stream.
///
/// While no sink is attached it applies commands and parks, as the push loop does. Once one is, it
/// hands the engine to the callback (`Engine.PullOwner`) and sleeps until the callback gives it
/// back (idle, shutdown), or takes it back itself when the stream failed or stopped asking (then
/// the sink is released as lost, and the control side reconnects with backoff as for any lost
/// device). It also pauses the sink after a silence (`EngineConfiguration.PullPause`); a paused sink
/// stays open, and this thread sleeps without a timeout until a command or a failure wakes it
/// (`PullSink.notifyFailure`), unless the pause has a release time (then it is released as idle).
public final class PullSupervisor<Sink: AudioSink>: AudioDriver, @unchecked Sendable {
  public let engine: Engine<Sink>
  private let sink: any PullSink
  /// When the sink was paused (monotonic ns).
  private var pausedAt: UInt64 = 0

  /// A pulled stream that has not asked for audio for this long is treated as lost.
  public static var stallNanoseconds: UInt64 { 2_000_000_000 }

  public init(_ engine: Engine<Sink>) {
    self.engine = engine
    guard let half = engine.pullHalf else { preconditionFailure("PullSupervisor watches a PullSink") }
    sink = half
    let signals = engine.signals
    sink.notifyFailure { signals.wakeAudioThread() }
  }

  /// What one cycle did.
  public enum CycleOutcome: Equatable, Sendable {
    /// A sink is attached: the engine was handed to the server's callback.
    case pulled
    /// No sink is attached: park until a command arrives.
    case detached
    /// Shut down: leave the loop.
    case finished
  }

  /// Hands over, supervises and parks until shut down. The audio thread's entry point.
  public func run() {
    while true {
      switch runCycle() {
      case .pulled: superviseWhilePulled()
      case .finished: return
      case .detached: engine.parkWhileDetached()
      }
    }
  }

  /// One pass while the engine is this thread's: apply commands; when a sink is attached, hand the
  /// engine to the server's callback.
  public func runCycle() -> CycleOutcome {
    engine.counters.heartbeat.add(1, ordering: .relaxed)
    engine.applyCommands()
    engine.trailingSilentFrames = 0  // the stream starts empty
    guard engine.attached else {
      engine.reportEvents(delayFrames: 0)
      return engine.hasFinished ? .finished : .detached
    }
    engine.reportEvents(delayFrames: engine.counters.delayFrames.load(ordering: .relaxed))
    engine.lastPullAt.store(engine.signals.nowNanoseconds(), ordering: .relaxed)
    engine.pullOwner.store(PullOwner.callback.rawValue, ordering: .releasing)
    return .pulled
  }

  /// While the engine is handed over: sleeps until the callback gives it back, or takes it back
  /// when the stream failed, stalled, or stayed paused through the idle window.
  func superviseWhilePulled() {
    var wasPaused = false
    while true {
      // Paused for good: nothing to watch until a command resumes the sink or the sink fails
      // (`Engine.send` and the sink's failure wake this thread): no wake-ups while quiet.
      let keptPaused =
        engine.pullPaused.load(ordering: .acquiring) && engine.configuration.pullPause?.releaseAfterNanoseconds == nil
        && sink.pullFailure() == 0
      engine.signals.parkAudioThread(timeoutMilliseconds: keptPaused ? -1 : 100)
      engine.counters.heartbeat.add(1, ordering: .relaxed)
      if engine.pullOwner.load(ordering: .acquiring) == PullOwner.returned.rawValue {
        engine.pullOwner.store(PullOwner.engineThread.rawValue, ordering: .relaxed)
        return
      }
      if engine.pauseWanted.exchange(false, ordering: .acquiring) {
        guard takeEngineBack() else { return }
        pauseIfSilent()
        handEngineBack()
      }
      let failure = sink.pullFailure()
      let paused = engine.pullPaused.load(ordering: .acquiring)
      if paused {
        wasPaused = true
        if failure == 0 {
          guard let releaseAfter = engine.configuration.pullPause?.releaseAfterNanoseconds,
            engine.signals.nowNanoseconds() >= pausedAt + releaseAfter
          else { continue }
          guard takeEngineBack() else { return }
          // Still paused, still silent, nothing queued: the idle window is over.
          if engine.attached && engine.mixer.isSilent && !engine.hasCommandsWaiting
            && engine.pullPaused.exchange(false, ordering: .sequentiallyConsistent)
          {
            engine.release(.idle)
            engine.reportEvents(delayFrames: 0)
            return
          }
          handEngineBack()
          continue
        }
      } else if wasPaused {
        wasPaused = false
        engine.lastPullAt.store(engine.signals.nowNanoseconds(), ordering: .relaxed)  // resumed: the stall clock starts again
      }
      // The last pull first, then the clock: a callback that stores a newer time in between must
      // not make `now - last` wrap around (it did, and a stream pulled a moment ago was "lost").
      let lastPull = engine.lastPullAt.load(ordering: .acquiring)
      let now = engine.signals.nowNanoseconds()
      let stalled = !paused && now > lastPull && now - lastPull > Self.stallNanoseconds
      guard failure != 0 || stalled else { continue }
      guard takeEngineBack() else { return }
      _ = engine.pullPaused.exchange(false, ordering: .sequentiallyConsistent)  // a new stream starts unpaused
      engine.release(.lost(code: failure != 0 ? failure : -110))  // ETIMEDOUT: the server stopped asking
      engine.reportEvents(delayFrames: 0)
      return
    }
  }

  /// Takes the engine from the callback (one rendering right now finishes first; it never waits).
  /// False when the callback gave it back meanwhile (released): this thread owns it, and
  /// `superviseWhilePulled` returns.
  private func takeEngineBack() -> Bool {
    while true {
      let (exchanged, current) = engine.pullOwner.compareExchange(
        expected: PullOwner.callback.rawValue, desired: PullOwner.engineThread.rawValue,
        ordering: .acquiring)
      if exchanged { return true }
      if current == PullOwner.returned.rawValue {
        engine.pullOwner.store(PullOwner.engineThread.rawValue, ordering: .relaxed)
        return false
      }
      engine.signals.parkAudioThread(timeoutMilliseconds: 1)
    }
  }

  /// Hands the engine to the next callback again.
  private func handEngineBack() {
    engine.pullOwner.store(PullOwner.callback.rawValue, ordering: .releasing)
  }

  /// With the engine held: pauses the sink if the mix is still silent and no command waits; a
  /// command that arrives meanwhile resumes it (here, or in `Engine.send`).
  private func pauseIfSilent() {
    guard engine.attached, engine.mixer.isSilent, !engine.hasCommandsWaiting,
      !engine.pullPaused.load(ordering: .relaxed)
    else { return }
    _ = engine.pullPaused.exchange(true, ordering: .sequentiallyConsistent)
    guard sink.pausePulling() else {
      _ = engine.pullPaused.exchange(false, ordering: .sequentiallyConsistent)
      engine.pauseRefused = true
      return
    }
    pausedAt = engine.signals.nowNanoseconds()
    engine.counters.pullPauses.add(1, ordering: .relaxed)
    // A command pushed before `send` saw the exchange above may have found the sink not yet paused,
    // and `send` may even have resumed it before `pausePulling` ran: resume for it now.
    if engine.hasCommandsWaiting {
      _ = engine.pullPaused.exchange(false, ordering: .sequentiallyConsistent)
      sink.resumePulling()
    }
  }
}
