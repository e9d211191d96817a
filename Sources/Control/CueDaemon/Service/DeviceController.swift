import CueOutput
import CueCore
import CuePosix
import CueProtocol
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// The audio device's life on the control side: opened on the first cue, handed to the audio
/// thread, given back when idle or lost, reopened with backoff.
///
/// ```
///           prepare()            attach()               released(.idle)
///  closed ───────────► opened ─────────────► attached ───────────────────► closed
///    ▲                                          │ released(.lost)
///    │                                          ▼
///    └──── (no voices wait) ─── lost ──► retry when due (100 ms doubling to 1 s) ──► attached
/// ```
///
/// The device belongs to the audio thread from `attach()` until the engine's `released` event,
/// and to the control side otherwise: only then is it opened or closed here.
final class DeviceController {
  /// Why the device is not playing, and when to try again.
  struct Loss: Equatable {
    var error: String
    /// When the next open may be tried (daemon clock, ns).
    var nextAttempt: UInt64
    var backoffNanoseconds: UInt64
  }

  enum State: Equatable {
    /// Not open: nothing played for the idle window, or nothing has played yet.
    case closed
    /// Open on the control side, about to be handed to the audio thread.
    case opened(NegotiatedFormat)
    /// The audio thread writes to it.
    case attached(NegotiatedFormat)
    case lost(Loss)
  }

  /// What changed, for the `device` event and systemd's STATUS.
  enum Change: Equatable {
    case opened
    case restored
    case closedIdle
    case lost(error: String)
  }

  let device: any OutputDevice
  private let engine: EngineControl
  private let clock: DaemonClock
  private let logger: Logger
  private(set) var state = State.closed
  /// The format of the last successful open (kept while closed, for `status`).
  private(set) var lastFormat: NegotiatedFormat? = nil
  private(set) var opens = 0
  private(set) var losses = 0
  /// Told of every change of state that a client may hear about.
  var onChange: (Change) -> Void = { _ in }
  /// True while voices wait for the device (a lost device is retried only then).
  var voicesWaiting: () -> Bool = { false }

  static let firstBackoff: UInt64 = 100_000_000
  /// At most 1 s between tries: a sound server that comes back is heard within 2 s.
  static let maximumBackoff: UInt64 = 1_000_000_000

  /// A pulled sink's latency adapter (nil: fixed, or adapted by the push loop on the audio thread).
  private var latency: PulledLatency?
  /// The latest raises of the latency, oldest first (at most `raisesKept`), for `status`.
  private(set) var recentRaises: [LatencyRaise] = []
  /// Every raise so far.
  private(set) var raiseCount = 0
  static let raisesKept = 8

  init(device: any OutputDevice, engine: EngineControl, clock: DaemonClock, logger: Logger) {
    self.device = device
    self.engine = engine
    self.clock = clock
    self.logger = logger
    latency = device.traits.adapts.flatMap(PulledLatency.init(policy:))
  }

  var name: String { device.name }
  var backend: String { device.backend }

  /// Makes sure the device is open before a voice starts. True when it was opened now and must be
  /// handed over with `attach()` after the voice's start is queued (so the cue is its first frame).
  func prepare() throws(ProtocolError) -> Bool {
    switch state {
    case .opened, .attached:
      return false
    case .lost(let loss) where clock.nanoseconds() < loss.nextAttempt:
      let wait = (loss.nextAttempt - clock.nanoseconds()) / 1_000_000 + 1
      throw ProtocolError(
        .deviceUnavailable, "audio device '\(name)' is unavailable (\(loss.error)); the next play after \(wait) ms tries again")
    case .closed, .lost:
      guard open() else {
        if case .lost(let loss) = state {
          throw ProtocolError(.deviceUnavailable, "audio device '\(name)' is unavailable: \(loss.error)")
        }
        throw ProtocolError(.deviceUnavailable, "audio device '\(name)' is unavailable")
      }
      return true
    }
  }

  /// Hands the opened device to the audio thread.
  func attach() {
    guard case .opened(let format) = state else { return }
    if engine.send(.attach) {
      state = .attached(format)
    } else {
      device.close()
      state = .lost(Loss(error: "the audio thread's queue is full", nextAttempt: clock.nanoseconds() + Self.firstBackoff, backoffNanoseconds: Self.firstBackoff))
    }
  }

  /// Opens the device; on failure enters (or stays in) `lost` with a longer backoff.
  private func open() -> Bool {
    var wasLost = false
    var backoff = Self.firstBackoff
    if case .lost(let loss) = state {
      wasLost = true
      backoff = loss.backoffNanoseconds
    }
    do {
      let format = try device.open()
      lastFormat = format
      opens += 1
      state = .opened(format)
      if wasLost {
        logger.notice("audio device '\(name)' is back: \(format)")
      } else if opens == 1 {
        logger.info("opened audio device '\(name)': \(format)")
      }
      onChange(wasLost ? .restored : .opened)
      return true
    } catch {
      let next = wasLost ? min(backoff * 2, Self.maximumBackoff) : backoff
      if !wasLost { logger.error("\(error)") }
      state = .lost(Loss(error: error.description, nextAttempt: clock.nanoseconds() + next, backoffNanoseconds: next))
      return false
    }
  }

  /// Opens and attaches at once, for voices already queued (after an idle close crossed a start, or a loss).
  private func reopen() {
    if open() { attach() }
  }

  /// The engine gave the device back: close it, and say why.
  func released(_ reason: SinkRelease) {
    device.close()
    switch reason {
    case .idle:
      state = .closed
      logger.debug("closed the idle audio device")
      onChange(.closedIdle)
      // A start may have crossed the release: reopen for it.
      if voicesWaiting() { reopen() }
    case .lost(let code):
      losses += 1
      let error = device.describeLoss(code: code)
      logger.error("lost audio device '\(name)': \(error); reopening with backoff")
      onChange(.lost(error: error))
      state = .lost(Loss(error: error, nextAttempt: clock.nanoseconds() + Self.firstBackoff, backoffNanoseconds: Self.firstBackoff))
    case .shutdown:
      state = .closed
    }
  }

  /// When the loop must wake to retry a lost device (nil: nothing to retry).
  var retryDeadline: UInt64? {
    guard case .lost(let loss) = state, voicesWaiting() else { return nil }
    return loss.nextAttempt
  }

  /// Retries a lost device whose backoff has passed while voices wait.
  func retryIfDue() {
    guard let due = retryDeadline, clock.nanoseconds() >= due else { return }
    reopen()
  }

  /// When the loop must next look at a pulled sink's xruns (nil: closed, or a fixed latency). While
  /// the stream plays, every `PulledLatency.checkNanoseconds`; while it is paused no xrun can come,
  /// so only when the latency is due to come down a step (none at the minimum: no wake-ups).
  private var nextLatencyCheck: UInt64? = nil
  var latencyDeadline: UInt64? {
    guard let latency, case .attached = state else { return nil }
    if engine.isPullPaused { return latency.nextStepDown }
    return nextLatencyCheck ?? clock.nanoseconds()
  }

  /// Adapts a pulled sink's latency to the xruns that cut sound (`PulledLatency`), when due.
  func adaptLatencyIfDue() {
    guard let due = latencyDeadline, var adapting = latency else {
      nextLatencyCheck = nil
      return
    }
    let now = clock.nanoseconds()
    guard now >= due else { return }
    let from = device.latencyAskedFrames ?? adapting.adapter.targetFrames
    let change = adapting.observe(audibleXruns: engine.counters.audibleXruns.load(ordering: .acquiring), nowNanoseconds: now)
    latency = adapting
    nextLatencyCheck = now + PulledLatency.checkNanoseconds
    switch change {
    case .raised(let frames):
      device.askLatency(frames: frames)
      noteRaise(
        LatencyRaise(
          atNanoseconds: now, fromFrames: from, toFrames: frames,
          voicesSounding: engine.counters.lastAudibleXrunVoices.load(ordering: .relaxed)))
    case .lowered(let frames):
      device.askLatency(frames: frames)
      logger.debug("\(device.traits.glitch)s stayed away: the latency comes down to \(frames) frames")
    case nil:
      break
    }
  }

  /// A raise of the latency (the push loop's fill target, or a pulled sink's here): kept for `status`.
  func noteRaise(_ raise: LatencyRaise) {
    raiseCount += 1
    recentRaises.append(raise)
    if recentRaises.count > Self.raisesKept { recentRaises.removeFirst(recentRaises.count - Self.raisesKept) }
    logger.info(
      "an \(device.traits.glitch) cut \(raise.voicesSounding) sounding voice\(raise.voicesSounding == 1 ? "" : "s"): latency raised from \(raise.fromFrames) to \(raise.toFrames) frames")
  }

  /// A pulled sink's mixing thread (libpulse's mainloop, PipeWire's data thread), once its callback
  /// has run since the last connect: made real-time by the policy, and what it got logged.
  func settleMixingThread() {
    guard device.settleMixingThread(), let scheduling = device.mixingThread else { return }
    logger.info("\(backend) mixing thread: \(StatusReply.Scheduling(scheduling, backend: backend).summary)")
  }

  /// Closes the device at exit, whatever the engine did.
  func close() {
    device.close()
    state = .closed
  }

  /// The mixer frame being heard now: frames written minus the device's delay.
  func heardFrame() -> UInt64 {
    let clock = engine.counters.mixerClock.load(ordering: .relaxed)
    let delay = UInt64(max(engine.counters.delayFrames.load(ordering: .relaxed), 0))
    return clock >= delay ? clock - delay : 0
  }

  /// The mixer frame a command sent now takes effect at: the next block the engine mixes, heard
  /// `delayFrames` after `heardFrame()`.
  func mixFrame() -> UInt64 {
    engine.counters.mixerClock.load(ordering: .relaxed)
  }

  /// Frames written but not yet heard, after the last write.
  var delayFrames: Int { engine.counters.delayFrames.load(ordering: .relaxed) }

  /// The state as `status` reports it: `closed`, `open` (opened or attached) or `lost`.
  var reportedState: StatusReply.Device.State {
    switch state {
    case .closed: .closed
    case .opened, .attached: .open
    case .lost: .lost
    }
  }

  /// What went wrong, while lost.
  var lossError: String? {
    if case .lost(let loss) = state { return loss.error }
    return nil
  }
}

extension Event.Device {
  /// The `device` event for a change of the device named `device`.
  init(change: DeviceController.Change, device: String) {
    switch change {
    case .opened: self.init(state: .opened, device: device)
    case .restored: self.init(state: .restored, device: device)
    case .closedIdle: self.init(state: .closedIdle, device: device)
    case .lost(let error): self.init(state: .lost, device: device, error: error)
    }
  }
}
