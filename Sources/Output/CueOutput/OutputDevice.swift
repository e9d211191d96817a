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
  /// For a sink that adapts its latency to xruns (PipeWire's node.latency): what it asks for now
  /// and how often an xrun raised it; nil otherwise. Control side.
  var latencyAsked: (frames: Int, raises: Int)? { get }
  /// Whether the sink's latency adapts to xruns, by `adaptLatency` on the control side (pulled sinks;
  /// the push loop adapts its fill target itself, on the audio thread).
  var adaptsLatency: Bool { get }
  /// Reads the xruns the sink saw and, by `LatencyAdapter`'s rule, asks for more latency or less.
  /// Control side, about every `PulledLatency.checkNanoseconds` while the device is open.
  func adaptLatency(nowNanoseconds: UInt64)
  /// Why the device was lost, from the code in `SinkRelease.lost`. Control side.
  func describeLoss(code: Int32) -> String
  /// Names the engine a pulled sink's callback runs (a push sink ignores it). Before the first open.
  func pulls(from source: any PullSource)
}

extension OutputDevice {
  public var quantumInUse: Int? { nil }
  public var xruns: Int { 0 }
  public var latencyAsked: (frames: Int, raises: Int)? { nil }
  public var mixingThread: Threads.Scheduling? { nil }
  public func settleMixingThread() -> Bool { false }
  public var adaptsLatency: Bool { false }
  public func adaptLatency(nowNanoseconds: UInt64) {}
  public func pulls(from source: any PullSource) {}
  public func describeLoss(code: Int32) -> String {
    "write failed: \(Errno(rawValue: -code)) (error \(code))"
  }
}

/// A pulled sink's latency adapter, on the control side: the sink's C face counts xruns (on the
/// server's thread, an atomic) and sets the amount asked for; when and how much is decided here,
/// by the one rule every backend follows (`LatencyAdapter`: twice after an xrun, half again after
/// each quiet `latency-decay`).
public struct PulledLatency: Sendable {
  /// How often the control loop looks at the xrun count while the device is open.
  public static let checkNanoseconds: UInt64 = 50_000_000

  public private(set) var adapter: LatencyAdapter
  private var xrunsSeen: UInt64 = 0
  private var lastCheck: UInt64? = nil

  /// `minimumFrames` is what was configured; nil when `maximumFrames` is not above it (fixed).
  public init?(minimumFrames: Int, maximumFrames: Int, decaySeconds: Double) {
    let policy = LatencyAdapter.Policy(
      minimumFrames: minimumFrames, maximumFrames: maximumFrames, decay: max(1, Int(decaySeconds * 1e9)))
    guard policy.adapts else { return nil }
    adapter = LatencyAdapter(policy: policy)
  }

  /// The sink's xrun count now; returns the amount to ask for when it changed.
  public mutating func observe(xruns: UInt64, nowNanoseconds now: UInt64) -> Int? {
    defer { lastCheck = now }
    if xruns > xrunsSeen {
      xrunsSeen = xruns
      return adapter.xrun() ? adapter.targetFrames : nil
    }
    let elapsed = lastCheck.map { now > $0 ? now - $0 : 0 } ?? 0
    return adapter.elapsed(Int(clamping: elapsed)) ? adapter.targetFrames : nil
  }
}
