/// How full the engine keeps the device: a small target that rises after an underrun and decays slowly.
///
/// A cue is heard after everything already queued in the device, so the engine keeps only
/// `targetFrames` queued instead of a whole buffer. An underrun says the target was too small for
/// this machine's scheduling: it rises at once (by half, at least one step, at most to the maximum).
/// Every `decayFrames` frames played without one, it falls back one step toward the minimum, as
/// PulseAudio's watermark does. Counted in frames played, not wall time, so it needs no clock and
/// a test drives it exactly. Plain value, no allocation: runs on the audio thread.
public struct FillWatermark: Sendable, Equatable {
  /// The bounds and the pace, fixed for the engine's life.
  public struct Policy: Sendable, Equatable {
    /// The target with no underrun seen lately (frames).
    public var minimumFrames: Int
    /// The target never rises past this (frames); the sink also caps it below its buffer.
    public var maximumFrames: Int
    /// What one decay takes off, and the least a raise adds (frames; a period).
    public var stepFrames: Int
    /// Frames played without an underrun before the target falls one step.
    public var decayFrames: Int

    public init(minimumFrames: Int, maximumFrames: Int, stepFrames: Int, decayFrames: Int) {
      precondition(minimumFrames > 0 && stepFrames > 0 && decayFrames > 0)
      self.minimumFrames = minimumFrames
      self.maximumFrames = max(maximumFrames, minimumFrames)
      self.stepFrames = stepFrames
      self.decayFrames = decayFrames
    }
  }

  public let policy: Policy
  /// Frames the device should hold after each write.
  public private(set) var targetFrames: Int
  /// Frames played since the last underrun or the last decay step.
  private var cleanFrames = 0

  public init(policy: Policy) {
    self.policy = policy
    targetFrames = policy.minimumFrames
  }

  /// An underrun happened: raise the target by half (at least one step), up to the maximum.
  public mutating func underrun() {
    targetFrames = min(policy.maximumFrames, targetFrames + max(policy.stepFrames, targetFrames / 2))
    cleanFrames = 0
  }

  /// `frameCount` frames were written without an underrun: after a clean window, one step down.
  public mutating func played(_ frameCount: Int) {
    guard targetFrames > policy.minimumFrames else {
      cleanFrames = 0
      return
    }
    cleanFrames += frameCount
    if cleanFrames >= policy.decayFrames {
      targetFrames = max(policy.minimumFrames, targetFrames - policy.stepFrames)
      cleanFrames = 0
    }
  }
}
