/// How much a sink keeps queued ahead of what is heard, adapted to what this machine can keep up
/// with: ALSA's fill target, PipeWire's node.latency, PulseAudio's tlength. One rule for every
/// backend, as PulseAudio's watermark and PipeWire's own quantum rules go: an xrun (an underrun, a
/// skipped graph cycle, an underflow) says the amount was too small, so it doubles at once, up to
/// the maximum; after each `decay` without one it halves again, down to the minimum.
///
/// A cue is heard after everything already queued, so the minimum is what was configured and the
/// adapter only ever trades latency for safety after the machine has shown it needs it.
///
/// `decay` and the amounts given to `elapsed` share one unit the caller chooses: frames played for
/// the push loop (on the audio thread: no clock needed, and a test drives it exactly), nanoseconds
/// for a pulled sink adapted on the control side. A plain value: no allocation, no lock.
public struct LatencyAdapter: Sendable, Equatable {
  /// The bounds and the pace, fixed for the sink's life.
  public struct Policy: Sendable, Equatable {
    /// The amount with no xrun seen lately (frames).
    public var minimumFrames: Int
    /// The amount never rises past this (frames).
    public var maximumFrames: Int
    /// How long without an xrun before the amount halves (in the caller's unit).
    public var decay: Int

    public init(minimumFrames: Int, maximumFrames: Int, decay: Int) {
      precondition(minimumFrames > 0 && decay > 0)
      self.minimumFrames = minimumFrames
      self.maximumFrames = max(maximumFrames, minimumFrames)
      self.decay = decay
    }

    /// Whether the amount can change at all (a maximum above the minimum).
    public var adapts: Bool { maximumFrames > minimumFrames }
  }

  public let policy: Policy
  /// What the sink should keep queued now (frames).
  public private(set) var targetFrames: Int
  /// How often an xrun raised the amount.
  public private(set) var raises = 0
  /// Time since the last xrun or the last decay step (the caller's unit).
  private var quiet = 0

  public init(policy: Policy) {
    self.policy = policy
    targetFrames = policy.minimumFrames
  }

  /// An xrun happened: twice the amount, up to the maximum; the quiet window starts again. Returns
  /// whether the amount changed.
  @discardableResult
  public mutating func xrun() -> Bool {
    quiet = 0
    let raised = min(policy.maximumFrames, targetFrames * 2)
    guard raised != targetFrames else { return false }
    targetFrames = raised
    raises += 1
    return true
  }

  /// `amount` passed without an xrun: after each whole quiet window, half the amount, down to the
  /// minimum. Returns whether the amount changed.
  @discardableResult
  public mutating func elapsed(_ amount: Int) -> Bool {
    guard targetFrames > policy.minimumFrames else {
      quiet = 0
      return false
    }
    quiet += amount
    guard quiet >= policy.decay else { return false }
    quiet = 0
    targetFrames = max(policy.minimumFrames, targetFrames / 2)
    return true
  }
}
