// Real-time rules for everything in this file (it runs on the audio thread):
// no allocation, no free, no locks, no logging, no awaiting, no untyped throws, no class
// references stored per voice. Everything it needs is preallocated in `init`.

/// Mixes voices into an interleaved stereo Float32 bus.
///
/// Single-threaded: every method is called on the audio thread (or a test's thread). Voices are
/// kept in a fixed table; a voice that ends stays in its slot until the engine has reported the end
/// (`drainEnded`), so an end is never lost even when the event queue is momentarily full. This file
/// holds the table and the commands on it; rendering one voice is in MixerRendering.swift.
public final class Mixer {
  @usableFromInline
  struct Slot {
    enum State: UInt8 { case free, active, ended }
    var state: State = .free
    var id = VoiceID(0)
    var samples = CueSamples(base: UnsafePointer(bitPattern: 0x10)!, frameCount: 0)
    var position = 0
    /// Loops still to play after the current pass; -1 forever.
    var loopsLeft = 0
    var gain = StereoGain.silent
    var target = StereoGain.silent
    var step = StereoGain.silent
    var rampFramesLeft = 0
    /// End the voice (with `stopReason`) when the ramp reaches silence.
    var stopping = false
    var stopReason = VoiceEndReason.stopped
    /// Where the voice was when a stop began (reported as its position).
    var stopPosition = 0
    var stopLoopsLeft = 0
    /// Playback speed; 1 takes the exact integer path.
    var rate = 1.0
    /// The fractional part of the position when `rate` is not 1.
    var fraction = 0.0
    var endReason = VoiceEndReason.end
    var startAtFrame: UInt64 = 0
    /// The start is yet to be reported.
    var startedPending = false
    /// The voice has rendered at least one frame; `firstFrame` is then valid.
    var sounded = false
    /// The voice it takes the place of when it first sounds (`VoiceStart.replaces`).
    var replaces = VoiceID(0)
    var replaceFadeFrames = 0
    /// It fades in over a voice it replaced (audible even before its first frame is mixed).
    var crossfadingIn = false
    var firstFrame: UInt64 = 0
  }

  /// How many voices the table holds (sounding, fading and not yet reported).
  public let voiceCapacity: Int
  @usableFromInline let slots: UnsafeMutablePointer<Slot>
  /// Some voice waits to take the place of another (`replaceVoices`).
  private var pendingReplacements = false
  /// Frames rendered since the mixer was created: the mixer's clock.
  public private(set) var frameClock: UInt64 = 0
  /// Voices that are sounding or waiting for their start time (not ended).
  public private(set) var activeVoiceCount = 0
  /// Limiter threshold: samples with magnitude at or below it pass untouched.
  public let limiterKnee: Float = 0.9
  /// Each voice's and the mix's peak and RMS, while a client reads them (Meters.swift).
  public let meters: MeterBank

  public init(voiceCapacity: Int) {
    precondition(voiceCapacity > 0)
    self.voiceCapacity = voiceCapacity
    slots = .allocate(capacity: voiceCapacity)
    slots.initialize(repeating: Slot(), count: voiceCapacity)
    meters = MeterBank(slotCount: voiceCapacity)
    Self.warmUp()
  }

  /// Runs every kernel once on scratch memory, here on the creating thread: the Swift runtime
  /// instantiates type metadata (SIMD4<Float> among it) lazily, with a malloc, on first use, and
  /// that first use must not happen on the audio thread.
  private static func warmUp() {
    var scratch = [Float](repeating: 0.25, count: 16)
    scratch.withUnsafeMutableBufferPointer { buffer in
      let base = buffer.baseAddress!
      var gain = StereoGain.unity
      MixKernels.mix(base, into: base + 8, frameCount: 3, gain: .unity)
      MixKernels.mix(base, into: base + 8, frameCount: 3, gain: StereoGain(ll: 1, lr: 0.5, rl: 0.5, rr: 1))
      MixKernels.mixRamped(base, into: base + 8, frameCount: 3, gain: &gain, step: .silent)
      SoftLimiter.apply(base, sampleCount: 16, knee: 0.1)
    }
  }

  deinit {
    slots.deinitialize(count: voiceCapacity)
    slots.deallocate()
  }

  /// Adds a voice. Returns false when every slot is taken (the caller reports the voice as refused).
  public func start(_ request: VoiceStart) -> Bool {
    guard let index = freeSlot() else { return false }
    var slot = Slot()
    slot.state = .active
    slot.id = request.id
    slot.samples = request.samples
    slot.position = min(max(request.startPosition, 0), request.samples.frameCount)
    switch request.loops {
    case .forever: slot.loopsLeft = -1
    case .count(let n): slot.loopsLeft = max(n, 0)
    }
    slot.startAtFrame = request.startAtFrame
    slot.replaces = request.replaces
    slot.replaceFadeFrames = request.replaceFadeFrames
    if request.replaces != VoiceID(0) { pendingReplacements = true }
    slot.rate = Self.clampRate(request.rate)
    slot.startedPending = true
    if request.fadeInFrames > 0 {
      slot.gain = .silent
      Self.beginRamp(&slot, to: request.gain, frames: request.fadeInFrames)
    } else {
      slot.gain = request.gain
      slot.target = request.gain
    }
    slots[index] = slot
    activeVoiceCount += 1
    return true
  }

  /// Fades a voice out over `fadeFrames` and ends it with `reason`; 0 frames cuts at once. A voice
  /// that has not rendered a frame yet (started in this same batch of commands, or scheduled for a
  /// later frame) ends at once whatever the fade: nothing of it was heard, so a fade would only add
  /// a sound (a burst of replaced voices fading on top of the last one). Unknown ids are ignored.
  public func stop(_ id: VoiceID, fadeFrames: Int, reason: VoiceEndReason) {
    guard let index = activeSlot(id) else { return }
    stopSlot(index, fadeFrames: fadeFrames, reason: reason)
  }

  /// Stops every sounding voice as `stop` does.
  public func stopAll(fadeFrames: Int, reason: VoiceEndReason) {
    for index in 0..<voiceCapacity where slots[index].state == .active {
      stopSlot(index, fadeFrames: fadeFrames, reason: reason)
    }
  }

  /// Moves a voice's gain to `gain` over `rampFrames` (0: at once). Ignored for unknown or stopping voices.
  public func setGain(_ id: VoiceID, to gain: StereoGain, rampFrames: Int) {
    guard let index = activeSlot(id), !slots[index].stopping else { return }
    if rampFrames <= 0 {
      slots[index].gain = gain
      slots[index].target = gain
      slots[index].rampFramesLeft = 0
    } else {
      Self.beginRamp(&slots[index], to: gain, frames: rampFrames)
    }
  }

  /// Moves a voice to cue frame `position` (clamped to the cue), keeping its loops. Sample-accurate:
  /// the next frame rendered is that frame.
  public func seek(_ id: VoiceID, to position: Int) {
    guard let index = activeSlot(id) else { return }
    slots[index].position = min(max(position, 0), slots[index].samples.frameCount)
    slots[index].fraction = 0
  }

  /// Sets how many passes a voice still plays after the current one (negative: until stopped).
  public func setLoops(_ id: VoiceID, loopsLeft: Int) {
    guard let index = activeSlot(id) else { return }
    slots[index].loopsLeft = loopsLeft < 0 ? -1 : loopsLeft
  }

  /// Voices whose first frame falls before `end` take the place of the voice they replace
  /// (`VoiceStart.replaces`), before anything of this period is mixed. A replaced voice that has
  /// not sounded ends at once and passes on what it was to replace (a burst of replacements in one
  /// batch: only the voice that is heard fades); when something audible is replaced (a voice that
  /// has sounded, or one about to fade in over another), it fades out over the replacement's fade
  /// while the new voice fades in over the same frames: a crossfade, so the page sounds together
  /// never sum above one at full gain. Nothing audible replaced: the new voice starts whole.
  private func replaceVoices(startingBefore end: UInt64) {
    pendingReplacements = false
    for index in 0..<voiceCapacity where slots[index].state == .active && slots[index].replaces != VoiceID(0) {
      guard slots[index].startAtFrame < end else {
        pendingReplacements = true
        continue
      }
      let frames = slots[index].replaceFadeFrames
      var target = slots[index].replaces
      var audible = false
      while target != VoiceID(0), let replaced = activeSlot(target), replaced != index {
        target = slots[replaced].sounded ? VoiceID(0) : slots[replaced].replaces
        audible = audible || slots[replaced].sounded || slots[replaced].crossfadingIn
        slots[replaced].replaces = VoiceID(0)
        stopSlot(replaced, fadeFrames: frames, reason: .stopped)
      }
      if audible && frames > 0 && slots[index].rampFramesLeft == 0 {
        let gain = slots[index].gain
        slots[index].gain = .silent
        Self.beginRamp(&slots[index], to: gain, frames: frames)
        slots[index].crossfadingIn = true
      }
      slots[index].replaces = VoiceID(0)
    }
  }

  /// Changes a voice's speed (0.5...2).
  public func setRate(_ id: VoiceID, to rate: Double) {
    guard let index = activeSlot(id) else { return }
    slots[index].rate = Self.clampRate(rate)
  }

  static func clampRate(_ rate: Double) -> Double {
    guard rate == rate else { return 1 }
    return min(max(rate, 0.5), 2)
  }

  /// Renders `frameCount` frames into `bus` (interleaved stereo, overwritten), advancing the clock.
  public func render(into bus: UnsafeMutablePointer<Float>, frameCount: Int) {
    if frameCount > MeterBank.scratchFrames && meters.isEnabled {  // metered in pieces the scratch holds
      var start = 0
      while start < frameCount {
        render(into: bus + start * 2, frameCount: min(MeterBank.scratchFrames, frameCount - start))
        start += MeterBank.scratchFrames
      }
      return
    }
    bus.update(repeating: 0, count: frameCount * 2)
    if pendingReplacements { replaceVoices(startingBefore: frameClock &+ UInt64(frameCount)) }
    if activeVoiceCount > 0 {
      let scratch = meters.scratch(frameCount: frameCount)
      for index in 0..<voiceCapacity where slots[index].state == .active {
        renderSlot(index, into: scratch ?? bus, frameCount: frameCount)
        if let scratch, slots[index].sounded { meters.addVoice(slot: index, id: slots[index].id, scratch, into: bus, frameCount: frameCount) }
      }
      SoftLimiter.apply(bus, sampleCount: frameCount * 2, knee: limiterKnee)
    }
    meters.noteMix(bus, frameCount: frameCount)
    frameClock &+= UInt64(frameCount)
  }

  /// Moves the clock back `frameCount` frames: the sink took back that much silence it had not
  /// played, so the next frame rendered goes where those were. Only while nothing has sounded in
  /// them (the engine rewinds silence it wrote with no voice in the table).
  public func rewindClock(by frameCount: Int) {
    precondition(frameCount >= 0 && UInt64(frameCount) <= frameClock)
    frameClock -= UInt64(frameCount)
  }

  /// Reports voices that started sounding since the last call, with the mixer frame of their first sample.
  /// `report` returns false when it could not pass the news on; the voice is then offered again next time.
  public func drainStarted(_ report: (VoiceID, UInt64) -> Bool) {
    for index in 0..<voiceCapacity
    where slots[index].startedPending && slots[index].sounded && slots[index].state != .free {
      if report(slots[index].id, slots[index].firstFrame) { slots[index].startedPending = false } else { return }
    }
  }

  /// Reports ended voices and frees their slots; `report` returns false to keep the rest for later.
  public func drainEnded(_ report: (VoiceEnd) -> Bool) {
    for index in 0..<voiceCapacity where slots[index].state == .ended {
      if slots[index].startedPending && slots[index].sounded { continue }  // its start goes first
      let slot = slots[index]
      let stopped = slot.stopping && slot.endReason == slot.stopReason
      let end = VoiceEnd(
        id: slot.id, reason: slot.endReason, position: stopped ? slot.stopPosition : slot.position,
        loopsLeft: stopped ? slot.stopLoopsLeft : slot.loopsLeft)
      guard report(end) else { return }
      slots[index].state = .free
    }
  }

  /// True when no voice is sounding or waiting and no end is left to report.
  public var isSilent: Bool {
    activeVoiceCount == 0
  }

  // MARK: - Internals

  private func freeSlot() -> Int? {
    for index in 0..<voiceCapacity where slots[index].state == .free { return index }
    return nil
  }

  private func activeSlot(_ id: VoiceID) -> Int? {
    for index in 0..<voiceCapacity where slots[index].state == .active && slots[index].id == id { return index }
    return nil
  }

  private func stopSlot(_ index: Int, fadeFrames: Int, reason: VoiceEndReason) {
    // A voice due now that was to take another's place and is stopped before its first frame (both
    // in one batch): the voice it replaces goes as it would have at that frame, with the same
    // fade (the control side counts it gone already). A voice scheduled for later replaces nothing
    // until its time comes, so stopping it leaves the other sounding.
    if !slots[index].sounded, slots[index].replaces != VoiceID(0), slots[index].startAtFrame <= frameClock {
      let target = slots[index].replaces
      slots[index].replaces = VoiceID(0)
      if let replaced = activeSlot(target), replaced != index {
        stopSlot(replaced, fadeFrames: slots[index].replaceFadeFrames, reason: .stopped)
      }
    }
    if fadeFrames <= 0 || !slots[index].sounded {
      finish(index, reason: reason)
      return
    }
    if slots[index].stopping {
      // Already fading out: keep the shorter fade, but report the first reason.
      if fadeFrames < slots[index].rampFramesLeft { Self.beginRamp(&slots[index], to: .silent, frames: fadeFrames) }
      return
    }
    slots[index].stopping = true
    slots[index].stopReason = reason
    slots[index].stopPosition = slots[index].position
    slots[index].stopLoopsLeft = slots[index].loopsLeft
    Self.beginRamp(&slots[index], to: .silent, frames: fadeFrames)
  }

  /// Marks a voice ended with `reason`; its slot is freed once the end is reported (`drainEnded`).
  func finish(_ index: Int, reason: VoiceEndReason) {
    slots[index].state = .ended
    slots[index].endReason = reason
    activeVoiceCount -= 1
  }

  private static func beginRamp(_ slot: inout Slot, to target: StereoGain, frames: Int) {
    let n = Float(frames)
    slot.target = target
    slot.step = StereoGain(
      ll: (target.ll - slot.gain.ll) / n, lr: (target.lr - slot.gain.lr) / n,
      rl: (target.rl - slot.gain.rl) / n, rr: (target.rr - slot.gain.rr) / n)
    slot.rampFramesLeft = frames
  }
}
