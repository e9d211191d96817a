import Synchronization

// Real-time rules for everything the audio thread runs here (`runCycle`, `run`): no allocation,
// no free, no locks, no logging, no awaiting, no untyped throws. Only plain values arrive
// (through `commands`) and leave (through `events`); the sink is written, never opened or closed.

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
  /// Fade everything out over `fadeFrames`, let it play, release the sink and leave `run`.
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
}

/// Live counters, readable from any thread.
public final class EngineCounters: Sendable {
  public let underruns = Atomic<UInt64>(0)
  public let framesWritten = Atomic<UInt64>(0)
  public let periodsWritten = Atomic<UInt64>(0)
  /// Events that had to wait for room in the event queue.
  public let eventsDeferred = Atomic<UInt64>(0)
  /// Bumped by the audio thread every cycle and every park: a watchdog sees it is alive.
  public let heartbeat = Atomic<UInt64>(0)
  /// The mixer clock: frames mixed so far (the device's clock, in frames written).
  public let mixerClock = Atomic<UInt64>(0)
  /// The device's delay (frames written but not yet heard) after the last write.
  public let delayFrames = Atomic<Int>(0)
  /// The fill target in force (frames the device is kept holding, `FillWatermark`); 0 without one
  /// (the whole buffer).
  public let fillTargetFrames = Atomic<Int>(0)
  /// Frames of queued silence taken back from the device so a new voice is heard sooner.
  public let rewoundFrames = Atomic<UInt64>(0)
  /// Times a pulled sink was paused after a silence (`EngineConfiguration.pullPause`).
  public let pullPauses = Atomic<UInt64>(0)
  public init() {}
}

/// Settings fixed for the engine's life.
public struct EngineConfiguration: Sendable {
  public var periodFrames: Int
  /// Consecutive silent frames after which the sink is released.
  public var idleFrames: Int
  /// Voice table size: sounding voices plus those fading out.
  public var voiceCapacity: Int
  public var commandCapacity: Int
  public var eventCapacity: Int
  /// How full the push loop keeps the sink; nil: as full as its buffer (the blocking write paces).
  public var fillTarget: FillWatermark.Policy?
  /// When a pulled sink that can pause (`AudioSink.pausePulling`) is paused; nil: never.
  public var pullPause: PullPause?

  /// A pulled sink stays open through the idle window, but past a short silence it need not be
  /// asked for a quantum of zeros every cycle: the engine pauses it and the next command resumes it.
  public struct PullPause: Sendable, Equatable {
    /// Consecutive silent frames after which the sink is paused; below `idleFrames` to matter.
    public var afterFrames: Int
    /// How long a paused sink stays open before it is released as idle: the rest of the idle
    /// window (no frames are mixed while paused, so it is kept by the clock).
    public var releaseAfterNanoseconds: UInt64

    public init(afterFrames: Int, releaseAfterNanoseconds: UInt64) {
      self.afterFrames = max(afterFrames, 1)
      self.releaseAfterNanoseconds = releaseAfterNanoseconds
    }
  }

  public init(
    periodFrames: Int, idleFrames: Int, voiceCapacity: Int, commandCapacity: Int = 1024, eventCapacity: Int? = nil,
    fillTarget: FillWatermark.Policy? = nil, pullPause: PullPause? = nil
  ) {
    precondition(periodFrames > 0 && voiceCapacity > 0)
    self.periodFrames = periodFrames
    self.idleFrames = max(idleFrames, 0)
    self.voiceCapacity = voiceCapacity
    self.commandCapacity = commandCapacity
    self.eventCapacity = eventCapacity ?? max(256, voiceCapacity * 4)
    self.fillTarget = fillTarget
    self.pullPause = pullPause
  }
}

/// The audio thread's loop: take commands, mix one period, write it, report what happened.
///
/// Two threads share an engine, each with its own half:
/// - control side: `send`, `nextEvent`, `counters`;
/// - audio thread: `run` (or `runCycle` in tests).
/// The sink belongs to the audio thread between an `attach` command and the `released` event
/// that follows it, and to the control side otherwise.
public final class Engine<Sink: AudioSink>: PullSource, @unchecked Sendable {
  public let configuration: EngineConfiguration
  public let counters = EngineCounters()
  private let sink: Sink
  private let signals: EngineSignals
  private let commands: SPSCRing<EngineCommand>
  private let events: SPSCRing<EngineEvent>
  /// Set by the audio thread just before it parks; the control side wakes it only then.
  private let parked = Atomic<Bool>(false)

  // Audio thread state.
  private let mixer: Mixer
  private let bus: UnsafeMutablePointer<Float>
  private var attached = false
  private var silentFrames = 0
  private var shuttingDown = false
  private var pendingRelease: SinkRelease? = nil
  private let refusedPending: UnsafeMutablePointer<VoiceID>
  private var refusedCount = 0
  /// The last report could not post everything.
  private var eventsBlocked = false
  /// When the last period was handed to the sink.
  private var lastHandedAt: UInt64 = 0
  /// Who may touch the audio-thread state while a pulled sink is attached (`PullOwner`'s raw values).
  private let pullOwner = Atomic<UInt8>(PullOwner.engineThread.rawValue)
  /// When the server's callback last rendered (monotonic ns), to notice a stream that stopped asking.
  private let lastPullAt = Atomic<UInt64>(0)
  /// Set by the callback when the mix has been silent for `PullPause.afterFrames`: the engine's
  /// thread should pause the sink.
  private let pauseWanted = Atomic<Bool>(false)
  /// True while the sink is paused (or about to be): the first command resumes it. Only changed by
  /// exchanges, so a command pushed just before one is seen by the other side (see `send`).
  private let pullPaused = Atomic<Bool>(false)
  /// The engine's thread: when the sink was paused (monotonic ns).
  private var pausedAt: UInt64 = 0
  /// The push loop's fill target (nil: the sink's whole buffer).
  private var watermark: FillWatermark?
  /// Frames at the end of what the sink holds that the engine wrote as silence (no voice in the
  /// mixer): what `rewind` may take back when a voice starts.
  private var trailingSilentFrames = 0

  public init(configuration: EngineConfiguration, sink: Sink, signals: EngineSignals) {
    self.configuration = configuration
    self.sink = sink
    self.signals = signals
    commands = SPSCRing(minimumCapacity: configuration.commandCapacity)
    events = SPSCRing(minimumCapacity: configuration.eventCapacity)
    mixer = Mixer(voiceCapacity: configuration.voiceCapacity)
    bus = .allocate(capacity: configuration.periodFrames * 2)
    bus.initialize(repeating: 0, count: configuration.periodFrames * 2)
    refusedPending = .allocate(capacity: configuration.commandCapacity)
    watermark = configuration.fillTarget.map(FillWatermark.init(policy:))
    counters.fillTargetFrames.store(watermark?.targetFrames ?? 0, ordering: .relaxed)
  }

  deinit {
    bus.deallocate()
    refusedPending.deallocate()
  }

  // MARK: Control side

  /// Queues a command for the audio thread; false when the queue is full (the caller reports "busy").
  public func send(_ command: EngineCommand) -> Bool {
    guard commands.push(command) else { return false }
    // A paused sink is resumed for any command. Both sides change `pullPaused` by exchange: if this
    // one comes first, the engine's thread, pausing, reads what it wrote and so sees the command
    // pushed above (and resumes); if it comes second, it reads true and resumes here.
    if pullPaused.exchange(false, ordering: .sequentiallyConsistent) {
      sink.resumePulling()
    }
    if parked.load(ordering: .sequentiallyConsistent) {
      signals.wakeAudioThread()
    } else if case .start = command, pullOwner.load(ordering: .relaxed) != PullOwner.engineThread.rawValue {
      sink.startQueued()  // a pulled sink that can rewrite its queue plays it before the next request
    }
    return true
  }

  /// Commands that can be queued now; `send` succeeds this many times at least (the audio
  /// thread only makes more room). Lets the control side check before changing its own state.
  public var commandRoom: Int { commands.capacity - commands.count }

  /// The next event from the audio thread, or nil.
  public func nextEvent() -> EngineEvent? { events.pop() }

  /// True while a pulled sink is paused after a silence: open, but not asked for audio.
  public var isPullPaused: Bool { pullPaused.load(ordering: .relaxed) }

  /// True while the audio thread is parked, waiting for a command (no device attached).
  public var isParked: Bool { parked.load(ordering: .sequentiallyConsistent) }

  // MARK: Audio thread

  /// What one cycle did.
  public enum CycleOutcome: Equatable, Sendable {
    /// A period was written.
    case wrote
    /// No sink is attached: park until a command arrives.
    case detached
    /// Shut down: leave the loop.
    case finished
    /// A pulled sink is attached: the server's callback runs the engine until it gives it back.
    case pulled
  }

  /// The owner of the audio-thread half while a pulled sink is attached. Exactly one thread runs
  /// `applyCommands`, the mixer and `reportEvents` at a time: the engine's thread, or the server's
  /// callback between a successful `callback → rendering` exchange and the store that ends it.
  private enum PullOwner: UInt8 {
    /// The engine's thread (always, with a push sink).
    case engineThread
    /// Handed to the server: the next callback may take it.
    case callback
    /// A callback is rendering now.
    case rendering
    /// The callback released the sink (idle, shutdown): the engine's thread takes it back.
    case returned
  }

  /// A pulled stream that has not asked for audio for this long is treated as lost.
  public static var pullStallNanoseconds: UInt64 { 2_000_000_000 }

  /// Runs cycles until shut down, parking while detached. The audio thread's entry point.
  public func run() {
    while true {
      switch runCycle() {
      case .wrote: continue
      case .finished: return
      case .pulled: waitWhilePulled()
      case .detached:
        // Announce the park, then look once more, so a command pushed in between is not slept on.
        parked.store(true, ordering: .sequentiallyConsistent)
        if commands.isEmpty && !hasUnreportedEvents {
          signals.parkAudioThread(timeoutMilliseconds: -1)
        } else if !commands.isEmpty {
          // fall through: commands are waiting
        } else {
          // Events wait for room in the queue: retry shortly.
          signals.parkAudioThread(timeoutMilliseconds: 10)
        }
        parked.store(false, ordering: .sequentiallyConsistent)
        counters.heartbeat.add(1, ordering: .relaxed)
      }
    }
  }

  /// One pass of the push model: wait until the device has room (below the fill target), apply
  /// the commands that arrived meanwhile, then (when attached) mix one period, write it and report.
  /// Waiting first is what makes a command heard soonest: one that arrives during the wait is in
  /// the very next period, and the write that follows does not block.
  public func runCycle() -> CycleOutcome {
    counters.heartbeat.add(1, ordering: .relaxed)
    let frames = configuration.periodFrames
    let wasAttached = attached
    if wasAttached && !waitForRoom(frames) { return .detached }
    let mixerWasSilent = mixer.activeVoiceCount == 0
    applyCommands()
    guard attached else {
      trailingSilentFrames = 0  // the next device starts empty
      reportEvents(delayFrames: 0)
      if shuttingDown && !hasUnreportedEvents { return .finished }
      return .detached
    }
    if sink.outputModel == .pull {
      trailingSilentFrames = 0  // the stream starts empty
      reportEvents(delayFrames: counters.delayFrames.load(ordering: .relaxed))
      lastPullAt.store(signals.nowNanoseconds(), ordering: .relaxed)
      pullOwner.store(PullOwner.callback.rawValue, ordering: .releasing)
      return .pulled
    }
    // A device just attached is empty, so this returns at once; it tells the sink the target
    // before the first write (ALSA's start threshold follows it).
    if !wasAttached && !waitForRoom(frames) { return .detached }
    if mixerWasSilent && mixer.activeVoiceCount > 0 { rewindQueuedSilence() }
    // Nothing sounds in this period when no voice is in the mixer: it is all zeros.
    let periodIsSilent = mixer.activeVoiceCount == 0
    mixer.render(into: bus, frameCount: frames)
    // The period goes to the device now: the moment a new voice's first frame is handed over.
    lastHandedAt = signals.nowNanoseconds()
    let status = sink.write(bus, frameCount: frames)
    countMixed(frames)
    guard noteSinkStatus(status) else {
      reportEvents(delayFrames: 0)
      return .detached
    }
    if status == .recoveredUnderrun { trailingSilentFrames = 0 }  // the device was restarted
    trailingSilentFrames = periodIsSilent ? trailingSilentFrames + frames : 0
    if status == .ok, var decaying = watermark {
      decaying.played(frames)
      watermark = decaying
      counters.fillTargetFrames.store(decaying.targetFrames, ordering: .relaxed)
    }
    noteSilence(frames)
    reportEvents(delayFrames: attached ? sink.delayFrames() : 0)
    if !attached && shuttingDown && !hasUnreportedEvents { return .finished }
    return .wrote
  }

  /// Waits until the sink has room below the fill target; false (and the sink released) when it is lost.
  private func waitForRoom(_ frames: Int) -> Bool {
    let waited = sink.waitForRoom(frameCount: frames, fillTargetFrames: watermark?.targetFrames ?? Int.max)
    if noteSinkStatus(waited) { return true }
    reportEvents(delayFrames: 0)
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
      counters.underruns.add(1, ordering: .relaxed)
      if var raised = watermark {
        raised.underrun()
        watermark = raised
        counters.fillTargetFrames.store(raised.targetFrames, ordering: .relaxed)
      }
      return true
    case .lost(let code):
      release(.lost(code: code))
      return false
    }
  }

  /// A voice starts while the device holds only silence the engine wrote: take that silence back
  /// (what the sink can rewind), so the voice is heard that much sooner. The mixer clock moves back
  /// with it, so it stays the device's write position: frames heard (clock − delay) do not jump,
  /// and a voice scheduled for a frame is heard when it would have been.
  private func rewindQueuedSilence() {
    guard trailingSilentFrames > 0 else { return }
    let rewound = sink.rewind(maxFrames: trailingSilentFrames)
    guard rewound > 0 else { return }
    mixer.rewindClock(by: rewound)
    trailingSilentFrames -= rewound
    counters.rewoundFrames.add(UInt64(rewound), ordering: .relaxed)
    counters.mixerClock.store(mixer.frameClock, ordering: .relaxed)
  }

  /// The pull model: fills `frameCount` frames of interleaved stereo Float32 at `output`, as a
  /// sound server's real-time callback asks (PipeWire's `process`). Applies commands, mixes,
  /// reports; silence while no device is attached (before `attach` arrives, after a release).
  /// `delayFrames` is the device's delay the server reported for this cycle. Same rules as
  /// `runCycle`: no allocation, no lock, no log. Returns false when it wrote silence because
  /// the engine is detached (the control side is about to disconnect, or has not attached yet).
  public func render(into output: UnsafeMutablePointer<Float>, frameCount: Int, delayFrames: Int) -> Bool {
    counters.heartbeat.add(1, ordering: .relaxed)
    applyCommands()
    guard attached else {
      output.update(repeating: 0, count: frameCount * 2)
      reportEvents(delayFrames: 0)
      return false
    }
    let blockIsSilent = mixer.activeVoiceCount == 0
    mixer.render(into: output, frameCount: frameCount)
    trailingSilentFrames = blockIsSilent ? trailingSilentFrames + frameCount : 0
    lastHandedAt = signals.nowNanoseconds()
    countMixed(frameCount)
    noteSilence(frameCount)
    if attached, let pause = configuration.pullPause, silentFrames >= pause.afterFrames,
      silentFrames - frameCount < pause.afterFrames
    {
      pauseWanted.store(true, ordering: .releasing)
      signals.wakeAudioThread()
    }
    reportEvents(delayFrames: attached ? delayFrames : 0)
    return true
  }

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
  private func waitWhilePulled() {
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
  private func takeEngineBack() -> Bool {
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
  private func handEngineBack() {
    pullOwner.store(PullOwner.callback.rawValue, ordering: .releasing)
  }

  /// With the engine held: pauses the sink if the mix is still silent and no command waits; a
  /// command that arrives meanwhile resumes it (here, or in `send`).
  private func pauseIfSilent() {
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

  /// The counters every mixed block moves.
  private func countMixed(_ frames: Int) {
    counters.framesWritten.add(UInt64(frames), ordering: .relaxed)
    counters.mixerClock.store(mixer.frameClock, ordering: .relaxed)
    counters.periodsWritten.add(1, ordering: .relaxed)
  }

  /// Counts silent frames: past the idle window (or at once when shutting down) the sink is released.
  private func noteSilence(_ frames: Int) {
    guard mixer.isSilent else {
      silentFrames = 0
      return
    }
    silentFrames += frames
    if shuttingDown {
      release(.shutdown)
    } else if silentFrames >= configuration.idleFrames && commands.isEmpty {
      release(.idle)
    }
  }

  private var hasUnreportedEvents: Bool { pendingRelease != nil || refusedCount > 0 || eventsBlocked }

  private func release(_ reason: SinkRelease) {
    attached = false
    silentFrames = 0
    pendingRelease = reason
  }

  private func applyCommands() {
    while let command = commands.pop() {
      switch command {
      case .attach:
        attached = true
        silentFrames = 0
      case .start(let request):
        if shuttingDown || !mixer.start(request) {
          if refusedCount < configuration.commandCapacity {
            refusedPending[refusedCount] = request.id
            refusedCount += 1
          }
        }
      case .stop(let id, let fadeFrames, let reason):
        // Without a sink nothing renders, so a fade would never finish: cut.
        mixer.stop(id, fadeFrames: attached ? fadeFrames : 0, reason: reason)
      case .setGain(let id, let gain, let rampFrames):
        mixer.setGain(id, to: gain, rampFrames: rampFrames)
      case .seek(let id, let position):
        mixer.seek(id, to: position)
      case .setRate(let id, let rate):
        mixer.setRate(id, to: rate)
      case .setLoops(let id, let loopsLeft):
        mixer.setLoops(id, loopsLeft: loopsLeft)
      case .shutdown(let fadeFrames):
        shuttingDown = true
        mixer.stopAll(fadeFrames: attached ? fadeFrames : 0, reason: .stopped)
        if !attached { pendingRelease = .shutdown }
      }
    }
  }

  /// Moves news into the event queue; what does not fit stays where it is and is retried next cycle.
  private func reportEvents(delayFrames delay: Int) {
    var posted = false
    var blocked = false
    counters.delayFrames.store(delay, ordering: .relaxed)
    let clock = mixer.frameClock
    let handedAt = lastHandedAt
    mixer.drainStarted { id, frame in
      if events.push(.started(id, frame: frame, clock: clock, delayFrames: delay, handedAt: handedAt)) {
        posted = true
        return true
      }
      blocked = true
      return false
    }
    mixer.drainEnded { end in
      if events.push(.ended(end)) {
        posted = true
        return true
      }
      blocked = true
      return false
    }
    var reported = 0
    while reported < refusedCount {
      guard events.push(.refused(refusedPending[reported])) else {
        blocked = true
        break
      }
      reported += 1
      posted = true
    }
    if reported > 0 {
      // Keep the ones not yet reported, in order, at the front.
      let left = refusedCount - reported
      if left > 0 { (refusedPending).update(from: refusedPending + reported, count: left) }
      refusedCount = left
    }
    if let reason = pendingRelease {
      if events.push(.released(reason)) {
        pendingRelease = nil
        posted = true
      } else {
        blocked = true
      }
    }
    eventsBlocked = blocked
    if blocked { counters.eventsDeferred.add(1, ordering: .relaxed) }
    if posted { signals.notifyControl() }
  }
}
