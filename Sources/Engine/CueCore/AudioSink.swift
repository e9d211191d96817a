// The sink side of the engine: what a device does for it, pushed to or pulling from it, and the
// driver each output model calls for. The audio side calls the sink: the real-time rules of
// Engine.swift apply to every implementation.

/// Where mixed audio goes. The control side opens and closes it; the audio side only writes to it
/// (a `PushSink`, by `PushLoop`) or is asked by it (a `PullSink`, through `Engine.pull`). A sink is
/// one of the two halves below, and its output model follows from which.
public protocol AudioSink: AnyObject {
  /// Who asks the engine for audio, and so which driver runs on cued's audio thread
  /// (`Engine.makeDriver`): that thread writing (`push`: `PushLoop`), or a sound server's real-time
  /// callback asking for each quantum through `Engine.pull` (`pull`: the audio thread hands over and
  /// watches, `PullSupervisor`). Given by the half the sink is.
  var outputModel: OutputModel { get }
}

/// The push half: a sink cued's audio thread writes (ALSA, null): wait, write, rewind, delay.
public protocol PushSink: AudioSink {
  /// Writes one period of interleaved stereo Float32; blocks while the device's buffer is full.
  func write(_ interleaved: UnsafePointer<Float>, frameCount: Int) -> SinkStatus
  /// Frames written but not yet heard (`snd_pcm_delay`), or 0 when unknown.
  func delayFrames() -> Int
  /// Blocks until the device holds few enough frames that `frameCount` more keep it at or below
  /// `fillTargetFrames` (`Int.max`: its whole buffer), so the push loop latches commands and mixes
  /// as late as it can. Audio thread. The default returns at once (the blocking `write` paces).
  func waitForRoom(frameCount: Int, fillTargetFrames: Int) -> SinkStatus
  /// Takes back up to `maxFrames` of the frames written last that the device has not played yet
  /// (`snd_pcm_rewind`), keeping a safety margin; returns how many it took back. The push loop asks
  /// only for frames of silence the engine mixed. Audio thread. The default takes back nothing.
  func rewind(maxFrames: Int) -> Int
}

/// The pull half: a sink whose server's thread asks for audio (PipeWire, PulseAudio): failure,
/// pause, resume.
public protocol PullSink: AudioSink {
  /// 0 while its stream is healthy, else a negative errno saying why it failed (the server went
  /// away, the node was removed). Audio thread; an atomic read, no allocation.
  func pullFailure() -> Int32
  /// For a sink that can take back audio it has queued but not played (PulseSink): a voice start
  /// was just queued while the engine is handed to the sink's thread, so that thread should call
  /// `PullSource.rewriteQueuedSilence` now rather than wait for the server's next request. Control
  /// side; must not block, lock or allocate. The default does nothing.
  func startQueued()
  /// For a sink that can stop being asked for audio while it stays open (PipeWire: an inactive
  /// stream keeps its node and links but is not scheduled; PulseAudio: a corked stream): pauses it;
  /// true when it is paused now. `PullSupervisor` calls it on cued's audio thread once the mix has
  /// been silent for `EngineConfiguration.PullPause.afterFrames`, while it holds the engine (no
  /// callback renders). May lock; never called on the real-time thread. The default cannot pause.
  func pausePulling() -> Bool
  /// Undoes `pausePulling`: the server asks for audio again from its next cycle. Called on the
  /// control side by `Engine.send` when a command arrives for a paused sink; may lock (briefly).
  func resumePulling()
  /// Registers what to call when the stream fails (the server went away, the node was removed), on
  /// whatever thread sees it, so a sleeping supervisor looks at `pullFailure` at once. Called once,
  /// before the first attach. The default never calls it (the supervisor then sees a failure at its
  /// next look).
  func notifyFailure(_ wake: @escaping @Sendable () -> Void)
}

/// How a sink is fed; see `AudioSink.outputModel`.
public enum OutputModel: Sendable, Equatable {
  /// Cued's audio thread mixes a period and writes it, waiting while the device is full (ALSA): `PushLoop`.
  case push
  /// The server's thread calls `Engine.pull` once per graph cycle for exactly the frames it needs
  /// (PipeWire, PulseAudio); cued's audio thread hands the engine over and watches: `PullSupervisor`.
  case pull
}

/// The thread logic that asks an engine for audio, one per output model: `PushLoop` (wait for room,
/// render, write) or `PullSupervisor` (hand the engine to a server's callback and watch the stream).
/// Either parks while no sink is attached. `AudioThread` runs it on cued's audio thread.
public protocol AudioDriver: AnyObject, Sendable {
  /// Runs until the engine is shut down and has said so. The audio thread's entry point.
  func run()
}

extension Engine {
  /// The driver the sink's output model calls for. Control side (it allocates), once per engine.
  public func makeDriver() -> any AudioDriver {
    pushHalf != nil ? PushLoop(self) : PullSupervisor(self)
  }
}

/// What a pulled sink's real-time callback calls once per graph cycle: the engine.
public protocol PullSource: AnyObject {
  /// Fills `frameCount` frames of interleaved stereo Float32 at `output`; see `Engine.pull`.
  func pull(into output: UnsafeMutablePointer<Float>, frameCount: Int, delayFrames: Int)
  /// Counts an xrun the sink saw; see `Engine.xrun(afterResume:graphWide:)`.
  func xrun(afterResume: Bool, graphWide: Bool)
  /// Replaces queued silence with a voice that just started; see `Engine.rewriteQueuedSilence`.
  func rewriteQueuedSilence(into output: UnsafeMutablePointer<Float>, maxFrameCount: Int, delayFrames: Int) -> Int
}

extension PushSink {
  public var outputModel: OutputModel { .push }
  public func waitForRoom(frameCount: Int, fillTargetFrames: Int) -> SinkStatus { .ok }
  public func rewind(maxFrames: Int) -> Int { 0 }
}

extension PullSink {
  public var outputModel: OutputModel { .pull }
  public func startQueued() {}
  public func pausePulling() -> Bool { false }
  public func resumePulling() {}
  public func notifyFailure(_ wake: @escaping @Sendable () -> Void) {}
}

/// The outcome of one write or wait.
public enum SinkStatus: Sendable, BitwiseCopyable, Equatable {
  case ok
  /// An underrun (or suspend) happened and was recovered; the period was written.
  case recoveredUnderrun
  /// The device is gone (unplugged card, dead sound server); the code is the negative errno.
  case lost(code: Int32)
}
