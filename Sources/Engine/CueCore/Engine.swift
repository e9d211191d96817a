import Synchronization

// Real-time rules for everything the audio thread runs here (`runCycle`, `run`): no allocation,
// no free, no locks, no logging, no awaiting, no untyped throws. Only plain values arrive
// (through `commands`) and leave (through `events`); the sink is written, never opened or closed.

/// The audio thread's loop: take commands, mix one period, write it, report what happened.
///
/// Two threads share an engine, each with its own half:
/// - control side: `send`, `nextEvent`, `counters`;
/// - audio thread: `run` (or `runCycle` in tests).
/// The sink belongs to the audio thread between an `attach` command and the `released` event
/// that follows it, and to the control side otherwise.
///
/// The pulled half (a server's callback asks for each block) is in Engine+Pull.swift; the state it
/// shares is module-internal rather than private for that, and nothing else in CueCore touches it.
public final class Engine<Sink: AudioSink>: PullSource, @unchecked Sendable {
  public let configuration: EngineConfiguration
  public let counters = EngineCounters()
  let sink: Sink
  let signals: EngineSignals
  let commands: SPSCRing<EngineCommand>
  private let events: SPSCRing<EngineEvent>
  /// Set by the audio thread just before it parks; the control side wakes it only then.
  private let parked = Atomic<Bool>(false)

  // Audio thread state.
  let mixer: Mixer
  private let bus: UnsafeMutablePointer<Float>
  var attached = false
  var silentFrames = 0
  private var shuttingDown = false
  private var pendingRelease: SinkRelease? = nil
  private let refusedPending: UnsafeMutablePointer<VoiceID>
  private var refusedCount = 0
  /// The last report could not post everything.
  private var eventsBlocked = false
  /// When the last period was handed to the sink.
  var lastHandedAt: UInt64 = 0
  /// Who may touch the audio-thread state while a pulled sink is attached (`PullOwner`'s raw values).
  let pullOwner = Atomic<UInt8>(PullOwner.engineThread.rawValue)
  /// When the server's callback last rendered (monotonic ns), to notice a stream that stopped asking.
  let lastPullAt = Atomic<UInt64>(0)
  /// Set by the callback when the mix has been silent for `PullPause.afterFrames`: the engine's
  /// thread should pause the sink.
  let pauseWanted = Atomic<Bool>(false)
  /// True while the sink is paused (or about to be): the first command resumes it. Only changed by
  /// exchanges, so a command pushed just before one is seen by the other side (see `send`).
  let pullPaused = Atomic<Bool>(false)
  /// The engine's thread: when the sink was paused (monotonic ns).
  var pausedAt: UInt64 = 0
  /// The push loop's fill target (nil: the sink's whole buffer).
  private var watermark: LatencyAdapter?
  /// Frames at the end of what the sink holds that the engine wrote as silence (no voice in the
  /// mixer): what `rewind` may take back when a voice starts.
  var trailingSilentFrames = 0

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
    watermark = configuration.fillTarget.map(LatencyAdapter.init(policy:))
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
  enum PullOwner: UInt8 {
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
      decaying.elapsed(frames)
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
        raised.xrun()
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

  /// The counters every mixed block moves.
  func countMixed(_ frames: Int) {
    counters.framesWritten.add(UInt64(frames), ordering: .relaxed)
    counters.mixerClock.store(mixer.frameClock, ordering: .relaxed)
    counters.periodsWritten.add(1, ordering: .relaxed)
  }

  /// Counts silent frames: past the idle window (or at once when shutting down) the sink is released.
  func noteSilence(_ frames: Int) {
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

  func release(_ reason: SinkRelease) {
    attached = false
    silentFrames = 0
    pendingRelease = reason
  }

  func applyCommands() {
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
  func reportEvents(delayFrames delay: Int) {
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
