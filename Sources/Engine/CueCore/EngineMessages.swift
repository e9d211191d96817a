// The plain values that cross between the control side and the audio thread (Engine.swift).

/// Wakes and parks the audio thread, and tells the control side that events are waiting.
public protocol EngineSignals: AnyObject, Sendable {
  /// Wakes the audio thread if it is parked in `parkAudioThread`. Control side.
  func wakeAudioThread()
  /// Parks the audio thread until woken or until `timeoutMilliseconds` pass (-1: no limit). Audio thread.
  func parkAudioThread(timeoutMilliseconds: Int32)
  /// Tells the control side that events are queued. Audio thread; must not block.
  func notifyControl()
  /// A monotonic clock in nanoseconds (CLOCK_MONOTONIC), for latency figures. Audio thread; a vDSO read.
  func nowNanoseconds() -> UInt64
}

/// A request to the audio thread.
public enum EngineCommand: Sendable, BitwiseCopyable {
  /// The sink has been opened: start writing to it.
  case attach
  case start(VoiceStart)
  case stop(VoiceID, fadeFrames: Int, reason: VoiceEndReason)
  case setGain(VoiceID, StereoGain, rampFrames: Int)
  /// Moves a voice to a cue frame (sample-accurate).
  case seek(VoiceID, position: Int)
  /// Changes a voice's speed (0.5...2).
  case setRate(VoiceID, rate: Double)
  /// Sets the passes a voice still plays after the current one (negative: until stopped).
  case setLoops(VoiceID, loopsLeft: Int)
  /// Fade everything out over `fadeFrames`, let it play, release the sink; the driver's `run` then returns.
  case shutdown(fadeFrames: Int)
}

/// Why the engine gave the sink back.
public enum SinkRelease: Sendable, BitwiseCopyable, Equatable {
  /// Nothing played for the idle window.
  case idle
  /// A write failed for good; the code is the negative errno.
  case lost(code: Int32)
  /// After `shutdown`.
  case shutdown
}

/// News from the audio thread.
public enum EngineEvent: Sendable, BitwiseCopyable, Equatable {
  /// A voice's first frame is mixer frame `frame`. When this was posted the mixer clock stood at
  /// `clock` (every frame before it written) and the device held `delayFrames` unplayed frames, so
  /// the first frame is heard `delayFrames - (clock - frame)` frames after the post. `handedAt` is
  /// when the period holding the first frame was handed to the device (monotonic ns).
  case started(VoiceID, frame: UInt64, clock: UInt64, delayFrames: Int, handedAt: UInt64)
  case ended(VoiceEnd)
  /// The sink is no longer written; the control side must close it.
  case released(SinkRelease)
  /// The engine could not take a voice: every slot was in use.
  case refused(VoiceID)
  /// The push loop raised its fill target after an underrun that cut sound.
  case latencyRaised(LatencyRaise)
}
