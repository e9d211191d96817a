import Synchronization

// Real-time rules for everything the audio side runs here (`render`, `pull`, `rewriteQueuedSilence`,
// and what a driver calls): no allocation, no free, no locks, no logging, no awaiting, no untyped
// throws. Only plain values arrive (through `commands`) and leave (through `events`); the sink is
// written, never opened or closed.

/// Renders when asked: takes commands, mixes a block, reports what happened.
///
/// Two threads share an engine, each with its own half:
/// - control side: `send`, `nextEvent`, `counters`;
/// - audio side: whatever asks for audio, one driver per output model (`AudioDriver`): the push
///   loop (`PushLoop`: wait for room, render, write) on cued's audio thread, or a sound server's
///   callback (`pull`) watched by `PullSupervisor` on that thread.
/// The sink belongs to the audio side between an `attach` command and the `released` event that
/// follows it, and to the control side otherwise.
///
/// The pulled entry points are in Engine+Pull.swift; what the drivers (in CueCore) read and call is
/// module-internal, marked "Driver", and nothing else in CueCore touches it.
public final class Engine<Sink: AudioSink>: PullSource, @unchecked Sendable {
  public let configuration: EngineConfiguration
  public let counters = EngineCounters()
  let sink: Sink
  /// Driver: the sink's half that its driver calls, the other nil: written (`PushLoop`) or pulled
  /// (`PullSupervisor`, and `send` for a resume or a queued start). Found once, at init.
  let pushHalf: (any PushSink)?
  let pullHalf: (any PullSink)?
  let signals: EngineSignals
  let commands: SPSCRing<EngineCommand>
  private let events: SPSCRing<EngineEvent>
  /// Set by the audio thread just before it parks; the control side wakes it only then.
  private let parked = Atomic<Bool>(false)

  // Audio-side state.
  let mixer: Mixer
  /// Driver: a sink is attached (between `attach` and the release that follows).
  private(set) var attached = false
  var silentFrames = 0
  /// Driver: a `shutdown` command was applied.
  private(set) var shuttingDown = false
  private var pendingRelease: SinkRelease? = nil
  /// A raise of the fill target not yet posted (the push loop's; a pulled sink's is the control side's).
  private var pendingRaise: LatencyRaise? = nil
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
  /// Driver: frames at the end of what the sink holds that were mixed as silence (no voice in the
  /// mixer): what a voice that starts may be rendered over (`rewindOverTrailingSilence`: ALSA's
  /// rewind, PulseAudio's rewrite). Kept by `mix`; a driver sets it to 0 when the sink starts empty.
  var trailingSilentFrames = 0
  /// Driver: the attached pulled sink said it cannot pause (`PullSink.pausePulling` returned
  /// false), so the idle window releases it as it releases a pushed sink.
  var pauseRefused = false

  public init(configuration: EngineConfiguration, sink: Sink, signals: EngineSignals) {
    self.configuration = configuration
    self.sink = sink
    pushHalf = sink as? any PushSink
    pullHalf = pushHalf == nil ? sink as? any PullSink : nil
    precondition(pushHalf != nil || pullHalf != nil, "a sink is a PushSink or a PullSink")
    self.signals = signals
    commands = SPSCRing(minimumCapacity: configuration.commandCapacity)
    events = SPSCRing(minimumCapacity: configuration.eventCapacity)
    mixer = Mixer(voiceCapacity: configuration.voiceCapacity)
    refusedPending = .allocate(capacity: configuration.commandCapacity)
    // The configured target until a push loop adapts it (`PushLoop` owns the adapter).
    counters.fillTargetFrames.store(configuration.fillTarget?.minimumFrames ?? 0, ordering: .relaxed)
  }

  deinit {
    refusedPending.deallocate()
  }

  // MARK: Control side

  /// Queues a command for the audio thread; false when the queue is full (the caller reports "busy").
  public func send(_ command: EngineCommand) -> Bool {
    guard commands.push(command) else { return false }
    // A paused sink is resumed for any command. Both sides change `pullPaused` by exchange: if this
    // one comes first, the audio thread (`PullSupervisor`), pausing, reads what it wrote and so sees
    // the command pushed above (and resumes); if it comes second, it reads true and resumes here.
    if pullPaused.exchange(false, ordering: .sequentiallyConsistent) {
      pullHalf?.resumePulling()
      signals.wakeAudioThread()  // the supervisor slept through the pause: it watches the stream again
    }
    if parked.load(ordering: .sequentiallyConsistent) {
      signals.wakeAudioThread()
    } else if case .start = command, pullOwner.load(ordering: .relaxed) != PullOwner.engineThread.rawValue {
      pullHalf?.startQueued()  // a pulled sink that can rewrite its queue plays it before the next request
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

  // MARK: Audio side

  /// The pull model: fills `frameCount` frames of interleaved stereo Float32 at `output`, as a
  /// sound server's real-time callback asks (PipeWire's `process`). Applies commands, mixes,
  /// reports; silence while no device is attached (before `attach` arrives, after a release).
  /// `delayFrames` is the device's delay the server reported for this cycle. The audio side's
  /// rules: no allocation, no lock, no log. Returns false when it wrote silence because the engine
  /// is detached (the control side is about to disconnect, or has not attached yet).
  public func render(into output: UnsafeMutablePointer<Float>, frameCount: Int, delayFrames: Int) -> Bool {
    counters.heartbeat.add(1, ordering: .relaxed)
    applyCommands()
    guard attached else {
      output.update(repeating: 0, count: frameCount * 2)
      reportEvents(delayFrames: 0)
      return false
    }
    mix(into: output, frameCount: frameCount)
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

  // MARK: Driver: what the thread that asks needs to know and do (module-internal)

  /// Driver: mixes `frameCount` frames into `output` and stamps the moment they go to the device
  /// (a new voice's first frame is handed over now). Counts the block into the trailing silence
  /// when no voice was in the mixer.
  func mix(into output: UnsafeMutablePointer<Float>, frameCount: Int) {
    let blockIsSilent = mixer.activeVoiceCount == 0
    mixer.render(into: output, frameCount: frameCount)
    lastHandedAt = signals.nowNanoseconds()
    counters.voicesSounding.store(mixer.activeVoiceCount, ordering: .relaxed)
    trailingSilentFrames = blockIsSilent ? trailingSilentFrames + frameCount : 0
  }

  /// Driver: a voice starts while the sink's queued tail is silence the engine mixed: the sink took
  /// back `frames` of it (ALSA's rewind) or is about to write over them (PulseAudio's rewrite), so
  /// the mixer clock moves back with it and the next `mix` renders from there. The clock stays the
  /// sink's write position: frames heard (clock − delay) do not jump, and a voice scheduled for a
  /// frame is heard when it would have been. `frames` is at most `trailingSilentFrames`.
  func rewindOverTrailingSilence(_ frames: Int) {
    mixer.rewindClock(by: frames)
    trailingSilentFrames -= frames
    silentFrames = 0
    counters.rewoundFrames.add(UInt64(frames), ordering: .relaxed)
    counters.mixerClock.store(mixer.frameClock, ordering: .relaxed)
  }

  /// Driver: posts a raise of the fill target with the next report.
  func noteLatencyRaise(_ raise: LatencyRaise) {
    pendingRaise = raise
  }

  /// Driver: commands are waiting in the queue.
  var hasCommandsWaiting: Bool { !commands.isEmpty }

  /// Driver: shut down, the sink given back and every event posted: the driver's loop ends.
  var hasFinished: Bool { !attached && shuttingDown && !hasUnreportedEvents }

  /// Driver: parks the audio thread while no sink is attached, until a command arrives. Announces
  /// the park, then looks once more, so a command pushed in between is not slept on; while events
  /// wait for room in their queue it parks briefly and retries.
  func parkWhileDetached() {
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

  /// The counters every mixed block moves.
  func countMixed(_ frames: Int) {
    counters.framesWritten.add(UInt64(frames), ordering: .relaxed)
    counters.mixerClock.store(mixer.frameClock, ordering: .relaxed)
    counters.periodsWritten.add(1, ordering: .relaxed)
  }

  /// Whether the idle window's end pauses the sink rather than releasing it: a pulled sink with a
  /// `pullPause`, until it refused to pause (`pauseRefused`).
  var pausesInstead: Bool { pullHalf != nil && configuration.pullPause != nil && !pauseRefused }

  /// Counts silent frames: past the idle window (or at once when shutting down) the sink is released;
  /// a pulled sink that pauses (`pullPause`) is paused instead and stays connected.
  func noteSilence(_ frames: Int) {
    guard mixer.isSilent else {
      silentFrames = 0
      return
    }
    silentFrames += frames
    if shuttingDown {
      release(.shutdown)
    } else if silentFrames >= configuration.idleFrames && commands.isEmpty && !pausesInstead {
      release(.idle)
    }
  }

  var hasUnreportedEvents: Bool { pendingRelease != nil || pendingRaise != nil || refusedCount > 0 || eventsBlocked }

  /// Driver: gives the sink back (`released(reason)` is posted by the next `reportEvents`).
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
        pauseRefused = false
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
    if let raise = pendingRaise {
      if events.push(.latencyRaised(raise)) {
        pendingRaise = nil
        posted = true
      } else {
        blocked = true
      }
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

/// The owner of the audio-side half while a pulled sink is attached. Exactly one thread runs
/// `applyCommands`, the mixer and `reportEvents` at a time: cued's audio thread (the driver), or
/// the server's callback between a successful `callback → rendering` exchange and the store that
/// ends it.
enum PullOwner: UInt8 {
  /// Cued's audio thread (always, with a push sink).
  case engineThread
  /// Handed to the server: the next callback may take it.
  case callback
  /// A callback is rendering now.
  case rendering
  /// The callback released the sink (idle, shutdown): the audio thread takes it back.
  case returned
}
