/// Identifies one playing instance of a cue. Assigned by the control side, never reused within a run.
public struct VoiceID: Hashable, Sendable, BitwiseCopyable, CustomStringConvertible {
  public var rawValue: UInt64
  public init(_ rawValue: UInt64) { self.rawValue = rawValue }
  public var description: String { String(rawValue) }
}

/// How many times a voice repeats its cue after the first play, as AVAudioPlayer's `numberOfLoops`.
///
/// `.count(0)` plays once, `.count(n)` plays n+1 times, `.forever` loops until stopped.
public enum LoopCount: Sendable, BitwiseCopyable, Equatable {
  case count(Int)
  case forever

  /// Maps AVAudioPlayer's `numberOfLoops`: any negative value loops until stopped.
  public init(numberOfLoops: Int) {
    self = numberOfLoops < 0 ? .forever : .count(numberOfLoops)
  }

  /// The AVAudioPlayer spelling: -1 for forever.
  public var numberOfLoops: Int {
    switch self {
    case .count(let n): n
    case .forever: -1
    }
  }
}

/// Decoded PCM that voices read: interleaved stereo Float32 at the output rate.
///
/// A borrowed view. The control side owns the memory and keeps it alive until every voice that
/// reads it has reported its end; the audio thread never retains or frees it.
public struct CueSamples: @unchecked Sendable, BitwiseCopyable {
  /// `2 * frameCount` floats, left then right.
  public let base: UnsafePointer<Float>
  public let frameCount: Int

  public init(base: UnsafePointer<Float>, frameCount: Int) {
    precondition(frameCount >= 0)
    self.base = base
    self.frameCount = frameCount
  }
}

/// Why a voice stopped sounding.
public enum VoiceEndReason: UInt8, Sendable, BitwiseCopyable, CaseIterable {
  /// It played to the end of its last loop.
  case end
  /// A client stopped it.
  case stopped
  /// The voice limit was reached and a newer voice took its place.
  case stolen
  /// Its system sound was disposed of with "dispose now".
  case disposed
  /// The output device went away and the voice grew too old to be played late.
  case deviceLost
  /// It could not be played (for example its cue failed to decode).
  case error
  /// A player paused or stopped it; the player keeps the position. Internal: never a `finished` event.
  case paused
  /// The level changed and no longer allows it: it faded out.
  case level

  /// The wire spelling, as in `docs/PROTOCOL.md`.
  public var name: String {
    switch self {
    case .end: "end"
    case .stopped: "stopped"
    case .stolen: "stolen"
    case .disposed: "disposed"
    case .deviceLost: "device-lost"
    case .error: "error"
    case .paused: "paused"
    case .level: "level"
    }
  }
}
