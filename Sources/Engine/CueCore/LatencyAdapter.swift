/// How much a sink keeps queued ahead of what is heard, adapted to what this machine can keep up
/// with: ALSA's fill target, PipeWire's node.latency, PulseAudio's tlength. One rule for every
/// backend, modelled on PulseAudio's watermark (module-alsa-sink raises its wake-up watermark by a
/// step on an underrun and lowers it by a step once it has held for a while):
///
/// - only an xrun that cut sound raises it (`XrunReport.counts`: a voice was sounding in the late
///   cycle; not a late cycle during trailing silence, not the first cycle after a resume or a
///   (re)connect, not a stall of the whole graph that every client saw);
/// - a raise is one step (twice the amount, up to the maximum: PipeWire's quantum moves in powers of
///   two, so a finer step would ask for nothing new), and xruns within `settle` after a raise do not
///   raise again: one stall that costs several cycles is one piece of evidence, and the new amount
///   gets the chance to show that it holds before another is asked for;
/// - after each quiet window without such an xrun it comes down a step (half), to the minimum, so
///   the amount is the smallest that held lately;
/// - the quiet window is `decay`, doubled (up to `longestDecay`) each time a step down proves too
///   soon (a counted xrun within a window of it raises again), and halved back for each window that
///   then passes at the minimum: under a load that lasts, the amount stops going down into the next
///   xrun every `decay`, and once the load is gone it comes down as fast as before.
///
/// A cue is heard after everything already queued, so the minimum is what was configured and the
/// adapter only ever trades latency for safety after the machine has shown it needs it.
///
/// `decay`, `settle` and the amounts given to `elapsed` share one unit the caller chooses: frames
/// played for the push loop (on the audio thread: no clock needed, and a test drives it exactly),
/// nanoseconds for a pulled sink adapted on the control side. A plain value: no allocation, no lock.
public struct LatencyAdapter: Sendable, Equatable {
  /// The bounds and the pace, fixed for the sink's life.
  public struct Policy: Sendable, Equatable {
    /// The amount with no xrun seen lately (frames).
    public var minimumFrames: Int
    /// The amount never rises past this (frames).
    public var maximumFrames: Int
    /// How long without a counted xrun before the amount comes down a step (in the caller's unit).
    public var decay: Int
    /// How long after a raise further xruns are taken as part of the same stall (the caller's unit).
    public var settle: Int
    /// The longest the quiet window grows to when steps down keep proving too soon (the caller's unit).
    public var longestDecay: Int

    /// `settle` defaults to a fortieth of `decay` (a quarter of a second with the default 10 s),
    /// `longestDecay` to four times `decay` (40 s).
    public init(minimumFrames: Int, maximumFrames: Int, decay: Int, settle: Int? = nil, longestDecay: Int? = nil) {
      precondition(minimumFrames > 0 && decay > 0)
      self.minimumFrames = minimumFrames
      self.maximumFrames = max(maximumFrames, minimumFrames)
      self.decay = decay
      self.settle = max(settle ?? decay / 40, 0)
      let longest = longestDecay ?? (decay > Int.max / 4 ? Int.max : decay * 4)
      self.longestDecay = max(longest, decay)
    }

    /// Whether the amount can change at all (a maximum above the minimum).
    public var adapts: Bool { maximumFrames > minimumFrames }
  }

  /// What one xrun did to the amount.
  public enum Outcome: Sendable, Equatable {
    /// Raised one step.
    case raised
    /// Not counted: the report says no sound was cut, or it came while a raise settled.
    case ignored
    /// Counted, but the amount is at the maximum already.
    case atMaximum
  }

  public let policy: Policy
  /// What the sink should keep queued now (frames).
  public private(set) var targetFrames: Int
  /// How often an xrun raised the amount.
  public private(set) var raises = 0
  /// The quiet window in force: `policy.decay`, longer after steps down that proved too soon.
  public private(set) var decayWindow: Int
  /// Time since the last counted xrun or the last step down (the caller's unit); at the minimum,
  /// since the window was last shortened.
  private var quiet = 0
  /// Time since the last raise (the caller's unit); `Int.max` before the first.
  private var sinceRaise = Int.max
  /// Time since the last step down (the caller's unit); `Int.max` before the first.
  private var sinceStepDown = Int.max

  public init(policy: Policy) {
    self.policy = policy
    targetFrames = policy.minimumFrames
    decayWindow = policy.decay
  }

  /// An xrun happened: one step up when it counts (`XrunReport.counts`) and no raise is settling;
  /// a counted one starts the quiet window again.
  @discardableResult
  public mutating func xrun(_ report: XrunReport) -> Outcome {
    guard report.counts, sinceRaise >= policy.settle else { return .ignored }
    quiet = 0
    let raised = min(policy.maximumFrames, targetFrames * 2)
    guard raised != targetFrames else { return .atMaximum }
    // The last step down came within a window of this: it was too soon, so wait longer next time.
    if sinceStepDown < decayWindow {
      decayWindow = min(policy.longestDecay, decayWindow * 2)
      sinceStepDown = Int.max  // that step's evidence is spent: a second raise before the next step is not
    }
    targetFrames = raised
    raises += 1
    sinceRaise = 0
    return .raised
  }

  /// `amount` passed without a counted xrun: a step down (half, to the minimum) for each whole
  /// quiet window. Returns whether the amount changed.
  @discardableResult
  public mutating func elapsed(_ amount: Int) -> Bool {
    let amount = max(amount, 0)
    sinceRaise = Self.adding(amount, to: sinceRaise)
    sinceStepDown = Self.adding(amount, to: sinceStepDown)
    quiet = Self.adding(amount, to: quiet)
    var changed = false
    while quiet >= decayWindow && targetFrames > policy.minimumFrames {
      quiet -= decayWindow
      targetFrames = max(policy.minimumFrames, targetFrames / 2)
      sinceStepDown = quiet
      changed = true
    }
    // At the minimum, each whole window without a counted xrun shortens a lengthened window again.
    while targetFrames == policy.minimumFrames && decayWindow > policy.decay && quiet >= decayWindow {
      quiet -= decayWindow
      decayWindow = max(policy.decay, decayWindow / 2)
    }
    if targetFrames == policy.minimumFrames && decayWindow == policy.decay { quiet = 0 }
    return changed
  }

  private static func adding(_ amount: Int, to value: Int) -> Int {
    value > Int.max - amount ? Int.max : value + amount
  }

  /// How long until the next step down if nothing counts meanwhile (the caller's unit); nil at the
  /// minimum. A caller that only looks when something can change (a paused stream) waits this long.
  public var untilNextStep: Int? {
    targetFrames > policy.minimumFrames ? decayWindow - quiet : nil
  }
}

/// What a sink knew about one xrun (an underrun, a skipped graph cycle, an underflow), so that the
/// latency follows only the ones a listener heard. Plain values; made on the thread that saw it.
public struct XrunReport: Sendable, Equatable, BitwiseCopyable {
  /// Voices sounding when the last block before the gap was mixed: what the gap cut. 0: it fell in
  /// trailing silence (or before anything played).
  public var voicesSounding: Int
  /// The late cycle was the first after the stream was resumed or (re)connected: waking the path
  /// up, not a sign that the amount is too small.
  public var afterResume: Bool
  /// The whole graph stalled (every client saw the same gap), not this stream.
  public var graphWide: Bool

  public init(voicesSounding: Int, afterResume: Bool = false, graphWide: Bool = false) {
    self.voicesSounding = voicesSounding
    self.afterResume = afterResume
    self.graphWide = graphWide
  }

  /// Why it counts or not, one reason per xrun (the first that applies).
  public enum Kind: Sendable, Equatable, CaseIterable {
    /// It cut sound this stream was playing: the amount is too small.
    case audible
    /// Only silence was late.
    case silent
    /// The first cycle after a resume or a (re)connect.
    case afterResume
    /// A stall of the whole graph.
    case graphWide
  }

  public var kind: Kind {
    if afterResume { return .afterResume }
    if graphWide { return .graphWide }
    return voicesSounding > 0 ? .audible : .silent
  }

  /// Whether it is evidence that the amount is too small.
  public var counts: Bool { kind == .audible }
}

/// One raise of the latency, for `status`: when, from what to what, and the xrun that caused it.
public struct LatencyRaise: Sendable, Equatable, BitwiseCopyable {
  /// When it was raised (monotonic ns).
  public var atNanoseconds: UInt64
  public var fromFrames: Int
  public var toFrames: Int
  /// Voices the xrun cut.
  public var voicesSounding: Int

  public init(atNanoseconds: UInt64, fromFrames: Int, toFrames: Int, voicesSounding: Int) {
    self.atNanoseconds = atNanoseconds
    self.fromFrames = fromFrames
    self.toFrames = toFrames
    self.voicesSounding = voicesSounding
  }
}
