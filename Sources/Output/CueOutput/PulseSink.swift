import CPulseShims
import CueCore
import CuePosix
import Synchronization

/// Plays through a native PulseAudio stream: the server asks for audio and the engine fills it.
///
/// PulseAudio keeps a queue per stream (tlength) and asks for more as the sink drains it (at least
/// minreq at a time). This sink is pulled like PipeWire's: `open` connects a stream whose write
/// callback, on libpulse's mainloop thread (`cued-pulse`), calls the engine (`PullSource.pull`) for
/// exactly the frames asked. The queue is kept short (`targetFrames`, PA_STREAM_ADJUST_LATENCY, which
/// also lowers the sink's latency to match), so a cue latched in one request is heard after that
/// queue and the sink's own latency; ALSA's `pulse` plugin, by contrast, sizes the server's queue
/// from the ALSA buffer. The stream says `media.role` event and `application.name` cued.
///
/// The queue need not be short for a cue to be heard soon: when a voice starts while the stream's
/// queued tail is silence, the control side pokes the mainloop (`startQueued`, an eventfd), and there
/// the engine renders the voice over the part of the queue the server has not yet handed to the sink,
/// from `rewriteMarginSeconds` past the read index as the server stands when the write arrives
/// (`PA_SEEK_RELATIVE_ON_READ`, `Engine.rewriteQueuedSilence`), so a block the sink took meanwhile
/// delays the cue a little instead of cutting its head. The cue is then heard after the sink's latency and the margin,
/// as a sample the server plays itself (`pactl play-sample`) is.
///
/// `open` creates the sink input (the connection to the server is made once and kept) and waits until
/// it is ready, so a missing server or sink fails the open with the server's words; `close` removes
/// it, so an idle daemon has no stream on the server and no wake-ups. A server that went away shows
/// in `pullFailure`; the engine then releases the sink as lost and the device controller reconnects
/// with backoff, which reaches a restarted server.
public final class PulseSink: OutputDevice, PullSink, @unchecked Sendable {
  /// `pulseaudio`, or `pulseaudio:SINK` with a sink name.
  public let name: String
  public let backend = "pulseaudio"
  private let sinkName: String?
  private let rate: Int
  private let targetFrames: Int
  private let server: String?
  /// The real-time state of libpulse's mainloop thread, which runs the mix.
  private let mixing: ServerThreadScheduling
  /// A server latency that adapts (when configured) and pauses.
  public let traits: DeviceTraits
  /// Set on the control side at a connect or a resume: the next request is the first.
  private let restarted = Atomic<Bool>(true)
  /// Mainloop thread only: underflows already reported, and frames filled since the last connect or resume.
  private var underflowsSeen: UInt64 = 0
  private var framesSinceResume = 0
  private var output: OpaquePointer? = nil
  /// The engine. Set once before the first open; read on the mainloop thread.
  private var source: (any PullSource)? = nil
  /// Called on the mainloop thread when the stream fails (`notifyFailure`). Set once before the first open.
  private var failureWake: (@Sendable () -> Void)? = nil

  /// What a rewrite leaves in front of the server's read position when the write arrives: none, since the
  /// server places it in its own thread between two reads of the sink, so the next read takes it.
  public static var rewriteMarginSeconds: Double { 0 }

  /// How often a playing stream asks the server for its timing (what `fill` and a rewrite read), as
  /// libpulse's own automatic updates do once settled. None while corked: on a server whose sink
  /// never suspends, each answer would wake a quiet daemon (13 wake-ups in 10 s with libpulse's).
  public static var timingUpdateMicroseconds: UInt64 { 250_000 }

  /// How long `open` waits for the server and the stream to be ready.
  public static var connectTimeoutMilliseconds: Int32 { 2000 }

  /// How long `close` waits for the server to confirm the stream is gone (its sink input deleted).
  public static var disconnectTimeoutMilliseconds: Int32 { 500 }

  /// The request size (minreq) asked with a queue of `queue` frames: a quarter of it, so the server
  /// asks for more while three quarters are still queued.
  static func requestFrames(queue: Int) -> Int { max(queue / 4, 1) }

  /// `targetFrames`: the queue the server is asked to keep (tlength); it asks for a quarter of it at
  /// a time (minreq). `server`: a server address (nil: PULSE_SERVER, then the user's runtime directory).
  /// `adaptiveLatency`: after an underflow that cut sound ask for twice the queue, up to
  /// `maximumFrames`, and halve it again after each `decaySeconds` without one (nil: fixed at
  /// `targetFrames`); the control side decides (`PulledLatency`).
  /// `realtime`: what libpulse's mainloop thread, which fills the stream, is made (`settleMixingThread`):
  /// an ordinary thread answers the server late under CPU load and the stream underflows.
  public init(
    sink: String?, rate: Int, targetFrames: Int, adaptiveLatency: (maximumFrames: Int, decaySeconds: Double)? = nil,
    server: String? = nil, realtime: RealtimePolicy = .none
  ) {
    mixing = ServerThreadScheduling(policy: realtime)
    sinkName = sink
    name = sink.map { "pulseaudio:\($0)" } ?? "pulseaudio"
    self.rate = rate
    self.targetFrames = targetFrames
    let adapts = adaptiveLatency.flatMap {
      PulledLatency.policy(minimumFrames: targetFrames, maximumFrames: $0.maximumFrames, decaySeconds: $0.decaySeconds)
    }
    traits = DeviceTraits(asks: .serverLatency, adapts: adapts, pauses: true, glitch: "underflow", mixingThread: "libpulse's mainloop thread")
    self.server = server
  }

  deinit {
    cued_pa_output_free(output, Self.disconnectTimeoutMilliseconds)
  }

  /// Names the engine that fills each request. Call before the first `open`.
  public func pulls(from source: any PullSource) {
    self.source = source
  }

  /// Whether a PulseAudio server answers within `timeoutMilliseconds` (for `--device auto`). Never starts one.
  /// A missing libpulse means no server, as for a server that does not answer.
  public static func serverAnswers(server: String? = nil, timeoutMilliseconds: Int32 = 500) -> Bool {
    ClientLibrary.pulseAudio.loads && cued_pa_server_answers(server, timeoutMilliseconds) == 1
  }

  /// Loads libpulse (dlopen, once: this backend is chosen), or throws an error that names the file, the
  /// package that ships it and the other outputs. `open` and `serverAnswers` load it themselves;
  /// the daemon calls this at start, so a missing library stops it at once with that error.
  public static func loadClientLibrary(device: String = "pulseaudio") throws(AudioDeviceError) {
    try ClientLibrary.pulseAudio.load(device: device)
  }

  public func open() throws(AudioDeviceError) -> NegotiatedFormat {
    try Self.loadClientLibrary(device: name)
    if output == nil {
      let user = Unmanaged.passUnretained(self).toOpaque()
      output = cued_pa_output_new(
        "cued", "event", sinkName, server, UInt32(rate), 2, UInt32(targetFrames), UInt32(Self.requestFrames(queue: targetFrames)),
        pulseWrite, user)
      guard output != nil else {
        throw AudioDeviceError(device: name, step: "set up PulseAudio", code: -12, detail: "pa_threaded_mainloop could not be made")
      }
      if failureWake != nil { cued_pa_output_set_failure_callback(output, pulseFailed, user) }
      let margin = UInt32(Double(rate) * Self.rewriteMarginSeconds)
      let rc = cued_pa_output_set_rewrite(output, pulseRewrite, margin)
      guard rc == 0 else {
        throw AudioDeviceError(device: name, step: "set up PulseAudio", code: rc, detail: "the wake-up eventfd could not be made")
      }
    }
    restarted.store(true, ordering: .releasing)
    let rc = cued_pa_output_connect(output, Self.connectTimeoutMilliseconds)
    guard rc == 0 else {
      let detail = errorText()
      cued_pa_output_disconnect(output, Self.disconnectTimeoutMilliseconds)
      throw AudioDeviceError(device: name, step: "connect to PulseAudio", code: rc, detail: detail.isEmpty ? "error \(rc)" : detail)
    }
    cued_pa_output_set_timing_updates(output, Self.timingUpdateMicroseconds)
    let granted = grantedFrames()
    return NegotiatedFormat(
      sampleFormat: .float32, rate: rate, periodFrames: granted?.minreq ?? Self.requestFrames(queue: targetFrames),
      bufferFrames: granted?.target ?? targetFrames)
  }

  public func close() {
    if let output { cued_pa_output_disconnect(output, Self.disconnectTimeoutMilliseconds) }
  }

  /// The stream's error in words, or "".
  private func errorText() -> String {
    guard let output else { return "" }
    var buffer = [CChar](repeating: 0, count: 256)
    _ = cued_pa_output_state(output, &buffer, buffer.count)
    return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }

  /// The queue (tlength) and request size (minreq) the server granted, in frames; nil without a stream.
  private func grantedFrames() -> (target: Int, minreq: Int)? {
    guard let output else { return nil }
    var target: UInt32 = 0
    var minreq: UInt32 = 0
    guard cued_pa_output_attr(output, &target, &minreq) == 0 else { return nil }
    return (Int(target), Int(minreq))
  }

  // MARK: Status (control side)

  /// The frames the server asks for at a time (minreq), or nil without a stream.
  public var quantumInUse: Int? { grantedFrames()?.minreq }

  public var mixingThread: Threads.Scheduling? { mixing.scheduling }

  public func settleMixingThread() -> Bool {
    guard let output else { return false }
    return mixing.settle(threadID: cued_pa_output_callback_thread(output))
  }

  public var xruns: Int { output.map { Int(cued_pa_output_underflows($0)) } ?? 0 }

  public var latencyAskedFrames: Int? { output.map { Int(cued_pa_output_latency($0)) } }

  public func askLatency(frames: Int) {
    if let output { cued_pa_output_set_latency(output, UInt32(clamping: frames), UInt32(clamping: Self.requestFrames(queue: frames))) }
  }

  public func describeLoss(code: Int32) -> String {
    if code == -110 {
      return "PulseAudio stopped asking for audio for \(PullSupervisor<PulseSink>.stallNanoseconds / 1_000_000_000) s"
    }
    let text = errorText()
    return text.isEmpty ? "the PulseAudio stream failed (error \(code))" : "the PulseAudio stream failed: \(text)"
  }

  // MARK: Audio side

  /// A start was queued while the engine is handed to the stream: wake the mainloop to rewrite the queue.
  public func startQueued() {
    if let output { cued_pa_output_poke(output) }
  }

  public func pullFailure() -> Int32 {
    guard let output else { return 0 }
    return cued_pa_output_failed(output)
  }

  public func notifyFailure(_ wake: @escaping @Sendable () -> Void) {
    failureWake = wake
  }

  /// On the mainloop thread: the stream or the server failed.
  fileprivate func failed() {
    failureWake?()
  }

  /// A corked stream keeps its sink input, but the server neither plays it nor asks it for audio:
  /// no write callback, no wake-up of cued's, and the sink may suspend when nothing else plays.
  /// Uncorking costs a message to the server; what the stream held when corked (silence) plays
  /// first, and a cue is rendered over it (`startQueued`).
  public func pausePulling() -> Bool {
    guard let output, cued_pa_output_cork(output, 1) == 0 else { return false }
    cued_pa_output_set_timing_updates(output, 0)
    return true
  }

  public func resumePulling() {
    restarted.store(true, ordering: .releasing)
    guard let output else { return }
    _ = cued_pa_output_cork(output, 0)
    cued_pa_output_set_timing_updates(output, Self.timingUpdateMicroseconds)
  }

  /// On the mainloop thread, lock held: `frames` frames for the engine.
  fileprivate func fill(_ buffer: UnsafeMutablePointer<Float>, frames: Int, timing: UnsafePointer<cued_pa_timing>) {
    guard let source else {
      buffer.update(repeating: 0, count: frames * 2)
      return
    }
    noteUnderflows(filling: frames)
    // Not yet heard once this block is queued: what the stream and the sink already hold, then this block.
    let queued = Int(timing.pointee.latency_us) * rate / 1_000_000
    source.pull(into: buffer, frameCount: frames, delayFrames: queued + frames)
  }

  /// On the mainloop thread, before `frames` are filled: an underflow since the last fill is
  /// reported to the engine, which counts it by what it cut. One while the stream is still feeding
  /// its first two queues after a connect or a resume (an uncorked stream on a sink waking from
  /// suspend underflows once as it starts) does not count against the queue.
  private func noteUnderflows(filling frames: Int) {
    if restarted.exchange(false, ordering: .acquiring) { framesSinceResume = 0 }
    defer { framesSinceResume += frames }
    guard let output, let source else { return }
    let underflows = cued_pa_output_underflows(output)
    guard underflows != underflowsSeen else { return }
    underflowsSeen = underflows
    source.xrun(afterResume: framesSinceResume <= 2 * Int(cued_pa_output_latency(output)), graphWide: false)
  }

  /// On the mainloop thread, lock held, after `startQueued`: up to `maxFrames` over the queue's tail.
  fileprivate func rewrite(_ buffer: UnsafeMutablePointer<Float>, maxFrames: Int, timing: UnsafePointer<cued_pa_timing>) -> Int {
    guard let source else { return 0 }
    let time = timing.pointee
    let span = Self.rewriteSpan(
      latencyMicroseconds: time.latency_us, sinkMicroseconds: time.sink_usec, transportMicroseconds: time.transport_usec,
      rate: rate, marginFrames: Int(Double(rate) * Self.rewriteMarginSeconds))
    // Written from the margin past the read index, it must reach the write index: a block too small
    // for the whole span would leave queued silence inside the cue.
    guard span > 0, span <= maxFrames else { return 0 }
    let queued = Int(time.latency_us) * rate / 1_000_000
    return source.rewriteQueuedSilence(into: buffer, maxFrameCount: span, delayFrames: queued)
  }

  /// The frames a rewrite replaces: what the stream holds (`latencyMicroseconds`, from its write
  /// position) minus what the sink already took and what a write needs to get there, less the margin
  /// left in front of the read index. 0 or less: nothing can be replaced.
  public static func rewriteSpan(
    latencyMicroseconds: UInt64, sinkMicroseconds: UInt64, transportMicroseconds: UInt64, rate: Int, marginFrames: Int
  ) -> Int {
    let replaceable = Int64(latencyMicroseconds) - Int64(sinkMicroseconds) - Int64(transportMicroseconds)
    return Int(replaceable * Int64(rate) / 1_000_000) - marginFrames
  }
}

/// The C callback: libpulse's mainloop thread, for each block of a server request. No allocation, lock or log.
private func pulseWrite(_ user: UnsafeMutableRawPointer?, _ buffer: UnsafeMutablePointer<Float>?, _ frames: UInt32, _ timing: UnsafePointer<cued_pa_timing>?) {
  guard let user, let buffer, let timing else { return }
  Unmanaged<PulseSink>.fromOpaque(user).takeUnretainedValue().fill(buffer, frames: Int(frames), timing: timing)
}

/// The C callback: the mainloop thread, when the stream or the server fails.
private func pulseFailed(_ user: UnsafeMutableRawPointer?) {
  guard let user else { return }
  Unmanaged<PulseSink>.fromOpaque(user).takeUnretainedValue().failed()
}

/// The C callback after a poke: libpulse's mainloop thread. No allocation, lock or log.
private func pulseRewrite(_ user: UnsafeMutableRawPointer?, _ buffer: UnsafeMutablePointer<Float>?, _ maxFrames: UInt32, _ timing: UnsafePointer<cued_pa_timing>?) -> UInt32 {
  guard let user, let buffer, let timing else { return 0 }
  return UInt32(Unmanaged<PulseSink>.fromOpaque(user).takeUnretainedValue().rewrite(buffer, maxFrames: Int(maxFrames), timing: timing))
}
