import CueCore
import CuePosix

/// The control side's half of the engine: what the daemon's owners may do with the audio thread.
///
/// `Engine` is it in the daemon; in-process tests use an `Engine` over a test sink and run its
/// cycles themselves. Only plain values go through (`EngineCommand` in, `EngineEvent` out).
protocol EngineControl: AnyObject {
  /// Queues a command; false when the command ring is full (nothing was queued).
  func send(_ command: EngineCommand) -> Bool
  /// Commands that can be queued now without one failing (a lower bound: the audio thread only frees room).
  var commandRoom: Int { get }
  /// The next event from the audio thread, or nil.
  func nextEvent() -> EngineEvent?
  var counters: EngineCounters { get }
  /// True while the audio thread waits for work with no device attached.
  var isParked: Bool { get }
  /// True while a pulled sink is paused after a silence (open, not asked for audio).
  var isPullPaused: Bool { get }
}

extension Engine: EngineControl {}
