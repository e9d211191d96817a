// The sink side of the engine: what a device does for it, pushed to or pulling from it.
// The audio thread calls these: the real-time rules of Engine.swift apply to every implementation.

/// Where the engine writes mixed audio. The control side opens and closes it; the audio thread only writes.
public protocol AudioSink: AnyObject {
  /// Writes one period of interleaved stereo Float32; blocks while the device's buffer is full.
  func write(_ interleaved: UnsafePointer<Float>, frameCount: Int) -> SinkStatus
  /// Frames written but not yet heard (`snd_pcm_delay`), or 0 when unknown.
  func delayFrames() -> Int
  /// Blocks until the device holds few enough frames that `frameCount` more keep it at or below
  /// `fillTargetFrames` (`Int.max`: its whole buffer), so the engine latches commands and mixes as
  /// late as it can. Audio thread. The default returns at once (the blocking `write` paces).
  func waitForRoom(frameCount: Int, fillTargetFrames: Int) -> SinkStatus
  /// Takes back up to `maxFrames` of the frames written last that the device has not played yet
  /// (`snd_pcm_rewind`), keeping a safety margin; returns how many it took back. The engine asks
  /// only for frames of silence it wrote. Audio thread. The default takes back nothing.
  func rewind(maxFrames: Int) -> Int
  /// Who drives the output: the engine's thread writing (`push`, the default), or a sound
  /// server's real-time callback asking for each quantum through `Engine.pull` (`pull`).
  var outputModel: OutputModel { get }
  /// For a pulled sink: 0 while its stream is healthy, else a negative errno saying why it failed
  /// (the server went away, the node was removed). Audio thread; an atomic read, no allocation.
  func pullFailure() -> Int32
  /// For a pulled sink that can take back audio it has queued but not played (PulseSink): a voice
  /// start was just queued while the engine is handed to the sink's thread, so that thread should
  /// call `PullSource.rewriteQueuedSilence` now rather than wait for the server's next request.
  /// Control side; must not block, lock or allocate. The default does nothing.
  func startQueued()
  /// For a pulled sink that can stop being asked for audio while it stays open (PipeWire: an
  /// inactive stream keeps its node and links but is not scheduled, so neither cued nor, when
  /// nothing else plays, the graph wakes): pauses it; true when it is paused now. The engine's
  /// thread calls it once the mix has been silent for `EngineConfiguration.PullPause.afterFrames`,
  /// while it holds the engine (no callback renders). May lock; never called on the real-time
  /// thread. The default cannot pause (false).
  func pausePulling() -> Bool
  /// Undoes `pausePulling`: the server asks for audio again from its next cycle. Called on the
  /// control side by `Engine.send` when a command arrives for a paused sink; may lock (briefly).
  func resumePulling()
}

/// How a sink is fed; see `AudioSink.outputModel`.
public enum OutputModel: Sendable, Equatable {
  /// The engine's thread mixes a period and writes it, blocking while the device is full (ALSA).
  case push
  /// The server's thread calls `Engine.pull` once per graph cycle for exactly the frames it needs (PipeWire).
  case pull
}

/// What a pulled sink's real-time callback calls once per graph cycle: the engine.
public protocol PullSource: AnyObject {
  /// Fills `frameCount` frames of interleaved stereo Float32 at `output`; see `Engine.pull`.
  func pull(into output: UnsafeMutablePointer<Float>, frameCount: Int, delayFrames: Int)
  /// Replaces queued silence with a voice that just started; see `Engine.rewriteQueuedSilence`.
  func rewriteQueuedSilence(into output: UnsafeMutablePointer<Float>, maxFrameCount: Int, delayFrames: Int) -> Int
}

extension AudioSink {
  public var outputModel: OutputModel { .push }
  public func pullFailure() -> Int32 { 0 }
  public func waitForRoom(frameCount: Int, fillTargetFrames: Int) -> SinkStatus { .ok }
  public func rewind(maxFrames: Int) -> Int { 0 }
  public func startQueued() {}
  public func pausePulling() -> Bool { false }
  public func resumePulling() {}
}

/// The outcome of one write or wait.
public enum SinkStatus: Sendable, BitwiseCopyable, Equatable {
  case ok
  /// An underrun (or suspend) happened and was recovered; the period was written.
  case recoveredUnderrun
  /// The device is gone (unplugged card, dead sound server); the code is the negative errno.
  case lost(code: Int32)
}
