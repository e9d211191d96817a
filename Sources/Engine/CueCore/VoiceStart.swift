// The plain values a voice starts with and ends with, as they cross between the control side and
// the audio thread (EngineCommand.start, EngineEvent.ended).

/// What the control side asks for when it starts a voice.
public struct VoiceStart: Sendable, BitwiseCopyable {
  public var id: VoiceID
  public var samples: CueSamples
  public var gain: StereoGain
  public var loops: LoopCount
  /// Frame of the cue to start from (a resumed or seeked player); 0 for the beginning.
  public var startPosition: Int
  /// Mixer frame at which the first sample sounds; 0 (or a frame already past) means at once.
  public var startAtFrame: UInt64
  /// A fade-in from silence, in frames (0: none).
  public var fadeInFrames: Int
  /// Playback speed, 0.5...2 (1: the samples as they are). Pitch follows speed.
  public var rate: Double
  /// A voice this one takes the place of when it starts sounding (VoiceID(0): none), as a
  /// carousel's page sound replaces the one before: from the period of this one's first frame, a
  /// replaced voice that has sounded fades out over `replaceFadeFrames` while this one fades in over
  /// the same frames; one that has not sounded ends at once and this one starts whole.
  public var replaces: VoiceID
  public var replaceFadeFrames: Int

  public init(
    id: VoiceID, samples: CueSamples, gain: StereoGain, loops: LoopCount,
    startPosition: Int = 0, startAtFrame: UInt64 = 0, fadeInFrames: Int = 0, rate: Double = 1,
    replaces: VoiceID = VoiceID(0), replaceFadeFrames: Int = 0
  ) {
    self.id = id
    self.samples = samples
    self.gain = gain
    self.loops = loops
    self.startPosition = startPosition
    self.startAtFrame = startAtFrame
    self.fadeInFrames = fadeInFrames
    self.rate = rate
    self.replaces = replaces
    self.replaceFadeFrames = replaceFadeFrames
  }
}

/// A voice that has stopped sounding, as the mixer reports it.
public struct VoiceEnd: Sendable, BitwiseCopyable, Equatable {
  public var id: VoiceID
  public var reason: VoiceEndReason
  /// The cue frame the voice had reached (its `currentTime` × rate), within its last loop.
  /// For a stop with a fade, the frame where the stop began, so a resumed player loses nothing.
  public var position: Int
  /// Loops still to play after the current pass at that point (-1: forever).
  public var loopsLeft: Int

  public init(id: VoiceID, reason: VoiceEndReason, position: Int, loopsLeft: Int = 0) {
    self.id = id
    self.reason = reason
    self.position = position
    self.loopsLeft = loopsLeft
  }
}
