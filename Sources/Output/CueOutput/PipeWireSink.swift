import CPipeWireShims
import CueCore
import CuePosix
import Synchronization

/// Plays through a native PipeWire stream: the server's real-time thread pulls each quantum.
///
/// PipeWire is a pull model: once per graph cycle its data thread asks every stream for exactly
/// the frames of one quantum. So this sink is not written by cued's audio thread: `open` connects
/// a stream whose `process` callback calls the engine (`PullSource.pull`) on PipeWire's real-time
/// thread, and a cue latched in one cycle is heard one quantum later, with nothing queued ahead of
/// it. The stream asks for a small quantum (`node.latency`) and says what it is (`media.role`
/// Notification, `node.name`, `application.name`) so session-manager policy applies.
///
/// `open` puts a node in the graph (the connection to the server is made once and kept);
/// `close` removes it, so an idle daemon has no node and the graph can stop. A server that went away
/// shows in `pullFailure`; the engine then releases the sink as lost and the device controller
/// reconnects with backoff, which reaches a restarted server.
public final class PipeWireSink: OutputDevice, PullSink, @unchecked Sendable {
  /// `pipewire`, or `pipewire:TARGET` with a target node.
  public let name: String
  public let backend = "pipewire"
  private let target: String?
  private let rate: Int
  private let quantumFrames: Int
  private let remote: String?
  /// The real-time state of PipeWire's data thread, which runs the mix.
  private let mixing: ServerThreadScheduling
  /// A server latency that adapts (when configured) and pauses.
  public let traits: DeviceTraits
  /// The xrun test (data thread only, between a connect and the next disconnect).
  private var cycles = GraphCycles()
  /// Set on the control side at a connect or a resume: the data thread's next cycle is the first.
  private let restarted = Atomic<Bool>(true)
  /// Gaps the xrun test found, of every kind.
  private let gaps = Atomic<Int>(0)
  private var stream: OpaquePointer? = nil
  /// The engine. Set once before the first open; read on PipeWire's data thread.
  private var source: (any PullSource)? = nil
  /// The control side's priority, for the thread loop's thread, and that thread once given it.
  private let control: ControlPriority
  private var loopThreadSettled: Int32 = 0
  /// Called on the thread loop when the stream fails (`notifyFailure`). Set once before the first open.
  private var failureWake: (@Sendable () -> Void)? = nil

  /// `quantumFrames`: the node.latency asked for (PipeWire rounds it down to a power of two).
  /// `remote`: a server socket name or path (nil: PIPEWIRE_REMOTE, PIPEWIRE_RUNTIME_DIR, XDG_RUNTIME_DIR).
  /// `adaptiveLatency`: after an xrun that cut sound ask for twice the latency, up to `maximumFrames`,
  /// and halve it again after each `decaySeconds` without one (nil: fixed at `quantumFrames`); the
  /// control side decides (`PulledLatency`), this sink's xrun test says what each xrun was (`GraphCycles`).
  /// `realtime`: what PipeWire's data thread is made when PipeWire's module-rt could not make it
  /// real-time itself (`settleMixingThread`; a thread already real-time is left alone).
  /// `control`: the nice level the thread loop's thread is given when it did not inherit it from
  /// the control thread (RTKit sets SCHED_RESET_ON_FORK on the threads it raises, so theirs do not).
  public init(
    target: String?, rate: Int, quantumFrames: Int, adaptiveLatency: (maximumFrames: Int, decaySeconds: Double)? = nil,
    remote: String? = nil, realtime: RealtimePolicy = .none, control: ControlPriority = .none
  ) {
    mixing = ServerThreadScheduling(policy: realtime)
    self.control = control
    self.target = target
    name = target.map { "pipewire:\($0)" } ?? "pipewire"
    self.rate = rate
    self.quantumFrames = quantumFrames
    let adapts = adaptiveLatency.flatMap {
      PulledLatency.policy(minimumFrames: quantumFrames, maximumFrames: $0.maximumFrames, decaySeconds: $0.decaySeconds)
    }
    traits = DeviceTraits(asks: .serverLatency, adapts: adapts, pauses: true, glitch: "xrun", mixingThread: "PipeWire's data thread")
    self.remote = remote
  }

  deinit {
    cued_pw_stream_free(stream)
  }

  /// Names the engine that fills each quantum. Call before the first `open`.
  public func pulls(from source: any PullSource) {
    self.source = source
  }

  /// Whether a PipeWire server answers within `timeoutMilliseconds` (for `--device auto`).
  /// A missing libpipewire-0.3 means no server, as for a server that does not answer.
  public static func serverAnswers(remote: String? = nil, timeoutMilliseconds: Int32 = 500) -> Bool {
    ClientLibrary.pipeWire.loads && cued_pw_server_answers(remote, timeoutMilliseconds) == 1
  }

  /// Loads libpipewire-0.3 (dlopen, once: this backend is chosen), or throws an error that names the file, the
  /// package that ships it and the other outputs. `open` and `serverAnswers` load it themselves;
  /// the daemon calls this at start, so a missing library stops it at once with that error.
  public static func loadClientLibrary(device: String = "pipewire") throws(AudioDeviceError) {
    try ClientLibrary.pipeWire.load(device: device)
  }

  public func open() throws(AudioDeviceError) -> NegotiatedFormat {
    try Self.loadClientLibrary(device: name)
    if stream == nil {
      let user = Unmanaged.passUnretained(self).toOpaque()
      stream = cued_pw_output_new(
        "cued", "cued", "Notification", target, UInt32(rate), 2, UInt32(quantumFrames), pipeWireProcess, user)
      guard let stream else {
        throw AudioDeviceError(device: name, step: "set up PipeWire", code: -12, detail: "pw_thread_loop or pw_context could not be made")
      }
      if let remote { cued_pw_stream_set_remote(stream, remote) }
      if failureWake != nil { cued_pw_stream_set_failure_callback(stream, pipeWireFailed, user) }
    }
    restarted.store(true, ordering: .releasing)
    let rc = cued_pw_stream_connect(stream)
    guard rc == 0 else {
      let detail = errorText()
      cued_pw_stream_disconnect(stream)
      throw AudioDeviceError(device: name, step: "connect to PipeWire", code: rc, detail: detail.isEmpty ? "error \(rc)" : detail)
    }
    return NegotiatedFormat(sampleFormat: .float32, rate: rate, periodFrames: quantumFrames, bufferFrames: quantumFrames)
  }

  public func close() {
    if let stream { cued_pw_stream_disconnect(stream) }
  }

  /// The stream's error in words, or "".
  private func errorText() -> String {
    guard let stream else { return "" }
    var buffer = [CChar](repeating: 0, count: 256)
    _ = cued_pw_stream_state(stream, &buffer, buffer.count)
    return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }

  // MARK: Status (control side)

  /// The frames PipeWire asked for in its last cycle (the graph quantum), or nil before the first.
  public var quantumInUse: Int? {
    guard let stream else { return nil }
    var timing = cued_pw_timing()
    guard cued_pw_stream_time(stream, &timing) == 0, timing.frames_requested > 0 else { return nil }
    return Int(timing.frames_requested)
  }

  public var xruns: Int { gaps.load(ordering: .relaxed) }

  public var latencyAskedFrames: Int? { stream.map { Int(cued_pw_stream_latency($0)) } }

  public func askLatency(frames: Int) {
    if let stream { cued_pw_stream_set_latency(stream, UInt32(clamping: frames)) }
  }

  public var mixingThread: Threads.Scheduling? { mixing.scheduling }

  public func settleMixingThread() -> Bool {
    guard let stream else { return false }
    var policy: Int32 = 0
    var priority: Int32 = 0
    let threadID = cued_pw_stream_callback_thread(stream, &policy, &priority)
    let already: Threads.Scheduling? =
      switch policy {
      case 1: .realtime(priority: priority, policy: .fifo, via: .soundServer)
      case 2: .realtime(priority: priority, policy: .roundRobin, via: .soundServer)
      default: nil
      }
    settleLoopThread()
    return mixing.settle(threadID: threadID, already: already)
  }

  /// The thread loop's thread carries a resume to the server: at the control thread's nice level,
  /// unless it already has it (inherited, as when cued set its own with setpriority).
  private func settleLoopThread() {
    guard let stream else { return }
    let threadID = Int32(cued_pw_stream_loop_thread(stream))
    guard threadID > 0, threadID != loopThreadSettled else { return }
    loopThreadSettled = threadID
    if let nice = Threads.nice(ofThread: threadID), nice > control.nice { _ = control.apply(toThread: threadID) }
  }

  public func describeLoss(code: Int32) -> String {
    if code == -110 {
      return "PipeWire stopped asking for audio for \(PullSupervisor<PipeWireSink>.stallNanoseconds / 1_000_000_000) s"
        + (target.map { " (is '\($0)' a sink that exists? `pw-cli ls Node` lists them)" } ?? "")
    }
    let text = errorText()
    return text.isEmpty ? "the PipeWire stream failed (error \(code))" : "the PipeWire stream failed: \(text)"
  }

  // MARK: Audio side

  /// An inactive stream keeps its node and links, but PipeWire stops scheduling it: no callback,
  /// and no graph cycles on its account. Resuming costs a message to the server and one graph
  /// recalculation, about 0.7 ms on the test server (docs/PERFORMANCE.md).
  public func pausePulling() -> Bool {
    guard let stream else { return false }
    return cued_pw_stream_set_active(stream, 0) == 0
  }

  public func resumePulling() {
    restarted.store(true, ordering: .releasing)
    if let stream { _ = cued_pw_stream_set_active(stream, 1) }
  }

  public func pullFailure() -> Int32 {
    guard let stream else { return 0 }
    return cued_pw_stream_failed(stream)
  }

  public func notifyFailure(_ wake: @escaping @Sendable () -> Void) {
    failureWake = wake
  }

  /// On the thread loop: the stream or the server failed.
  fileprivate func failed() {
    failureWake?()
  }

  /// On PipeWire's data thread: one quantum for the engine.
  fileprivate func process(_ output: UnsafeMutablePointer<Float>, frames: Int, timing: UnsafePointer<cued_pw_timing>) {
    guard let source else {
      output.update(repeating: 0, count: frames * 2)
      return
    }
    let calledAt = Int64(MonotonicClock.nanoseconds())
    if restarted.exchange(false, ordering: .acquiring) { cycles.resumed() }
    let time = timing.pointee
    if let gap = cycles.cycle(
      ticks: time.ticks, rateNumerator: time.rate_num, rateDenominator: time.rate_denom, frames: frames, rate: rate,
      startNanoseconds: time.now_ns, calledAtNanoseconds: calledAt)
    {
      gaps.add(1, ordering: .relaxed)
      source.xrun(afterResume: gap.afterResume, graphWide: gap.graphWide)
    }
    // Not yet heard once this buffer is filled: the previous cycle's buffer, which the sink plays
    // during this cycle, then this one (heard one quantum from now), then what lies downstream.
    source.pull(into: output, frameCount: frames, delayFrames: 2 * frames + Self.delayFrames(time, rate: rate))
    cycles.finished(atNanoseconds: Int64(MonotonicClock.nanoseconds()))
  }

  /// What PipeWire says lies between this stream and the ear, in frames at `rate`: the device's
  /// delay, plus what waits in the stream's own buffers and resampler.
  static func delayFrames(_ timing: cued_pw_timing, rate: Int) -> Int {
    var frames = Int(timing.queued_bytes) / 8 + Int(timing.buffered_frames)
    if timing.rate_denom != 0 && timing.delay > 0 {
      frames += Int(timing.delay * Int64(timing.rate_num) * Int64(rate) / Int64(timing.rate_denom))
    }
    return frames
  }
}

/// The C callback: the thread loop, when the stream or the server fails.
private func pipeWireFailed(_ user: UnsafeMutableRawPointer?) {
  guard let user else { return }
  Unmanaged<PipeWireSink>.fromOpaque(user).takeUnretainedValue().failed()
}

/// The C callback: PipeWire's data thread, once per cycle. No allocation, lock or log.
private func pipeWireProcess(_ user: UnsafeMutableRawPointer?, _ output: UnsafeMutablePointer<Float>?, _ frames: UInt32, _ timing: UnsafePointer<cued_pw_timing>?) {
  guard let user, let output, let timing else { return }
  Unmanaged<PipeWireSink>.fromOpaque(user).takeUnretainedValue().process(output, frames: Int(frames), timing: timing)
}
