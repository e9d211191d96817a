import CueCore
import CuePosix

/// What the device agreed to.
public struct NegotiatedFormat: Sendable, Equatable, CustomStringConvertible {
  public enum SampleFormat: String, Sendable { case float32 = "FLOAT_LE", int16 = "S16_LE" }
  public var sampleFormat: SampleFormat
  public var rate: Int
  public var periodFrames: Int
  public var bufferFrames: Int
  public init(sampleFormat: SampleFormat, rate: Int, periodFrames: Int, bufferFrames: Int) {
    (self.sampleFormat, self.rate, self.periodFrames, self.bufferFrames) = (sampleFormat, rate, periodFrames, bufferFrames)
  }
  public var description: String {
    "\(sampleFormat.rawValue) \(rate) Hz stereo, period \(periodFrames) frames, buffer \(bufferFrames) frames"
  }
}

/// A device that could not be opened: its name, the step that failed, and the library's words.
public struct AudioDeviceError: Error, Sendable, Equatable, CustomStringConvertible {
  public var device: String
  public var step: String
  public var code: Int32
  public var detail: String
  /// What to do about it, when the backend knows better than the error code (nil: from the code).
  public var hint: String?
  public init(device: String, step: String, code: Int32, detail: String, hint: String? = nil) {
    (self.device, self.step, self.code, self.detail, self.hint) = (device, step, code, detail, hint)
  }
  public var description: String {
    var text = "cannot open audio device '\(device)': \(step) failed: \(detail)"
    if let hint {
      text += " (\(hint))"
    } else if code == -2 || code == -19 {
      text += " (is the device name right? `aplay -L` lists them)"
    } else if code == -111 {
      text += " (the sound server is not running)"
    }
    return text
  }
}

/// An output device: opened on the control side, written on the audio thread.
public protocol OutputDevice: AudioSink {
  /// Opens (or reopens) the device. Control side, only while the engine is detached.
  func open() throws(AudioDeviceError) -> NegotiatedFormat
  /// Closes the device. Control side, only while the engine is detached.
  func close()
  /// The name shown in status and messages.
  var name: String { get }
  /// How it is reached, for `status`: `alsa`, `pipewire`, `null`.
  var backend: String { get }
  /// The server's graph quantum in use, for a pulled sink (nil otherwise). Control side.
  var quantumInUse: Int? { get }
  /// For a pulled sink: the real-time state of the server's thread that runs the mix, once
  /// `settleMixingThread` has seen it run; nil otherwise (a push sink is mixed by cued's own
  /// audio thread, `AudioThread.scheduling`). Control side.
  var mixingThread: Threads.Scheduling? { get }
  /// For a pulled sink: applies the real-time policy to the server's mixing thread once its
  /// callback has said which thread that is (after each connect); true when `mixingThread`
  /// changed. Control side; an atomic read when there is nothing new, at most RTKit's bounded
  /// wait when there is.
  func settleMixingThread() -> Bool
  /// Glitches the sink saw that the engine does not count itself (a pulled stream's skipped cycles).
  var xruns: Int { get }
  /// What the device asks for, what of it adapts and whether it pauses: what the control side and
  /// `status` read instead of the backend's name.
  var traits: DeviceTraits { get }
  /// What the sink asks of the server now (frames), once opened; nil otherwise. Control side.
  var latencyAskedFrames: Int? { get }
  /// Asks the server for `frames` of latency (kept for the next connection). Control side.
  func askLatency(frames: Int)
  /// Why the device was lost, from the code in `SinkRelease.lost`. Control side.
  func describeLoss(code: Int32) -> String
  /// Names the engine a pulled sink's callback runs (a push sink ignores it). Before the first open.
  func pulls(from source: any PullSource)
}

extension OutputDevice {
  public var quantumInUse: Int? { nil }
  public var xruns: Int { 0 }
  public var traits: DeviceTraits { DeviceTraits(asks: .nothing) }
  public var latencyAskedFrames: Int? { nil }
  public func askLatency(frames: Int) {}
  public var mixingThread: Threads.Scheduling? { nil }
  public func settleMixingThread() -> Bool { false }
  public func pulls(from source: any PullSource) {}
  public func describeLoss(code: Int32) -> String {
    "write failed: \(Errno(rawValue: -code)) (error \(code))"
  }
}

/// A device's typed status: what it asks for, what of it adapts and whether it pauses.
public struct DeviceTraits: Sendable, Equatable {
  /// What the device is asked to keep between a cue and the ear.
  public enum Asks: Sendable, Equatable {
    /// A fill level of its own buffer (ALSA), kept by the push loop (`fill-target`; `status`
    /// shows `fillTargetFrames`).
    case fill
    /// A latency of its server (PipeWire's node.latency, PulseAudio's tlength), set by the control
    /// side (`OutputDevice.askLatency`; `status` shows `latencyFrames`).
    case serverLatency
    /// Nothing: its clock paces it (the null sink, unless a fill target is configured).
    case nothing
  }

  public var asks: Asks
  /// For `serverLatency`: how it adapts to xruns, in nanoseconds (`PulledLatency`); nil: fixed.
  /// (A fill target adapts on the audio thread, by `EngineConfiguration.fillTarget`.)
  public var adapts: LatencyAdapter.Policy?
  /// Whether it pauses after a silence and stays connected, paused, until the next cue
  /// (`PullSink.pausePulling`: PipeWire, PulseAudio); one that does not is closed after the idle
  /// window.
  public var pauses: Bool
  /// What its backend calls a glitch, for `status`: `underrun` (ALSA), `xrun` (PipeWire),
  /// `underflow` (PulseAudio).
  public var glitch: String
  /// The thread that runs the mix when it is the server's callback thread, in words for `status`
  /// (`PipeWire's data thread`); nil: cued's audio thread.
  public var mixingThread: String?

  public init(
    asks: Asks, adapts: LatencyAdapter.Policy? = nil, pauses: Bool = false, glitch: String = "underrun", mixingThread: String? = nil
  ) {
    self.asks = asks
    self.adapts = adapts
    self.pauses = pauses
    self.glitch = glitch
    self.mixingThread = mixingThread
  }
}

/// A pulled sink's latency adapter, on the control side: the sink's thread counts xruns by kind
/// (`EngineCounters`, atomics) and the sink sets the amount asked for; when and how much is decided
/// here, by the one rule every backend follows (`LatencyAdapter`, in nanoseconds).
public struct PulledLatency: Sendable {
  /// How often the control loop looks at the xrun count while the stream plays.
  public static let checkNanoseconds: UInt64 = 50_000_000

  public private(set) var adapter: LatencyAdapter
  private var audibleSeen: UInt64 = 0
  private var lastCheck: UInt64? = nil

  /// nil when the policy does not adapt (a maximum at or below the minimum).
  public init?(policy: LatencyAdapter.Policy) {
    guard policy.adapts else { return nil }
    adapter = LatencyAdapter(policy: policy)
  }

  /// The policy a sink configured with `minimumFrames`, `maximumFrames` and `decaySeconds` adapts by
  /// (nil: fixed).
  public static func policy(minimumFrames: Int, maximumFrames: Int, decaySeconds: Double) -> LatencyAdapter.Policy? {
    let policy = LatencyAdapter.Policy(
      minimumFrames: minimumFrames, maximumFrames: maximumFrames, decay: max(1, Int(decaySeconds * 1e9)))
    return policy.adapts ? policy : nil
  }

  /// What one look found.
  public enum Change: Sendable, Equatable {
    /// Raised one step, to `frames`, after an xrun that cut sound.
    case raised(frames: Int)
    /// Came down to `frames` after a quiet window.
    case lowered(frames: Int)
  }

  /// The count of audible xruns now (`EngineCounters.audibleXruns`; the others never raise it);
  /// returns what changed. New ones since the last look are one piece of evidence: one step.
  public mutating func observe(audibleXruns: UInt64, nowNanoseconds now: UInt64) -> Change? {
    let elapsed = lastCheck.map { now > $0 ? now - $0 : 0 } ?? 0
    lastCheck = now
    let lowered = adapter.elapsed(Int(clamping: elapsed))
    if audibleXruns > audibleSeen {
      audibleSeen = audibleXruns
      if adapter.xrun(XrunReport(voicesSounding: 1)) == .raised { return .raised(frames: adapter.targetFrames) }
    }
    return lowered ? .lowered(frames: adapter.targetFrames) : nil
  }

  /// When the next look can change something while no xrun can come (the stream is paused): the
  /// next step down (monotonic ns); nil at the minimum or before the first look.
  public var nextStepDown: UInt64? {
    guard let left = adapter.untilNextStep, let lastCheck else { return nil }
    return lastCheck + UInt64(max(left, 0))
  }
}
