import CueCore
import Testing

/// A stereo cue in test memory: frame i is (left(i), right(i)).
func makeCue(frames: Int, left: (Int) -> Float, right: (Int) -> Float) -> SampleBuffer {
  var samples: [Float] = []
  samples.reserveCapacity(frames * 2)
  for i in 0..<frames {
    samples.append(left(i))
    samples.append(right(i))
  }
  return SampleBuffer(interleaved: samples)
}

/// Renders `periods` periods of `periodFrames` and returns everything as one interleaved array.
func render(_ mixer: Mixer, periods: Int, periodFrames: Int) -> [Float] {
  var out: [Float] = []
  var bus = [Float](repeating: 0, count: periodFrames * 2)
  for _ in 0..<periods {
    bus.withUnsafeMutableBufferPointer { mixer.render(into: $0.baseAddress!, frameCount: periodFrames) }
    out.append(contentsOf: bus)
  }
  return out
}

/// The ends the mixer reports, after its starts (the order the engine drains them in).
func ends(_ mixer: Mixer) -> [VoiceEnd] {
  mixer.drainStarted { _, _ in true }
  var result: [VoiceEnd] = []
  mixer.drainEnded { result.append($0); return true }
  return result
}

@Suite("Mixer")
struct MixerTests {
  let ramp = makeCue(frames: 100, left: { Float($0) / 200 }, right: { -Float($0) / 400 })

  @Test func unityGainReproducesTheSourceExactly() {
    let mixer = Mixer(voiceCapacity: 4)
    #expect(mixer.start(VoiceStart(id: VoiceID(1), samples: ramp.samples, gain: .unity, loops: .count(0))))
    let out = render(mixer, periods: 1, periodFrames: 128)
    #expect(Array(out[0..<200]) == ramp.toArray())
    #expect(out[200...].allSatisfy { $0 == 0 })
    #expect(ends(mixer) == [VoiceEnd(id: VoiceID(1), reason: .end, position: 100)])
  }

  @Test(
    "volume scales linearly",
    arguments: [0.0, 0.25, 0.5, 1.0])
  func volumeScalesLinearly(_ volume: Double) {
    let mixer = Mixer(voiceCapacity: 4)
    let gain = StereoGain.voice(volume: volume, pan: 0, sourceIsMono: false)
    _ = mixer.start(VoiceStart(id: VoiceID(1), samples: ramp.samples, gain: gain, loops: .count(0)))
    let out = render(mixer, periods: 1, periodFrames: 100)
    let source = ramp.toArray()
    for i in 0..<200 { #expect(out[i] == source[i] * Float(volume)) }
  }

  struct PanCase: Sendable, CustomTestStringConvertible {
    var pan: Double
    var mono: Bool
    var expected: StereoGain
    var testDescription: String { "pan \(pan) \(mono ? "mono" : "stereo")" }
  }

  static let root2: Float = Float(2).squareRoot()
  static let half: Float = Float(0.5).squareRoot()

  @Test(
    "the pan law",
    arguments: [
      PanCase(pan: 0, mono: true, expected: .unity),
      PanCase(pan: 0, mono: false, expected: .unity),
      PanCase(pan: -1, mono: true, expected: StereoGain(ll: root2, lr: 0, rl: 0, rr: 0)),
      PanCase(pan: 1, mono: true, expected: StereoGain(ll: 0, lr: 0, rl: 0, rr: root2)),
      PanCase(pan: -1, mono: false, expected: StereoGain(ll: 1, lr: 1, rl: 0, rr: 0)),
      PanCase(pan: 1, mono: false, expected: StereoGain(ll: 0, lr: 0, rl: 1, rr: 1)),
      PanCase(pan: 0.5, mono: false, expected: StereoGain(ll: half, lr: 0, rl: half, rr: 1)),
      PanCase(pan: -0.5, mono: false, expected: StereoGain(ll: 1, lr: half, rl: 0, rr: half)),
    ])
  func panLaw(_ c: PanCase) {
    let g = StereoGain.voice(volume: 1, pan: c.pan, sourceIsMono: c.mono)
    #expect(abs(g.ll - c.expected.ll) < 1e-6)
    #expect(abs(g.lr - c.expected.lr) < 1e-6)
    #expect(abs(g.rl - c.expected.rl) < 1e-6)
    #expect(abs(g.rr - c.expected.rr) < 1e-6)
  }

  @Test func hardPanLeavesTheFarChannelExactlySilent() {
    #expect(StereoGain.voice(volume: 1, pan: 1, sourceIsMono: true).ll == 0)
    #expect(StereoGain.voice(volume: 1, pan: -1, sourceIsMono: true).rr == 0)
    #expect(StereoGain.voice(volume: 1, pan: 1, sourceIsMono: false).ll == 0)
    #expect(StereoGain.voice(volume: 1, pan: -1, sourceIsMono: false).rr == 0)
  }

  @Test func scalingAGainScalesVolumeAndKeepsThePan() {
    let panned = StereoGain.voice(volume: 0.8, pan: 0.5, sourceIsMono: false)
    let scaled = panned.scaled(by: 0.5)
    #expect(scaled == StereoGain.voice(volume: 0.4, pan: 0.5, sourceIsMono: false))
    #expect(StereoGain.unity.scaled(by: 2) == StereoGain(ll: 2, lr: 0, rl: 0, rr: 2))
  }

  @Test("mono pan keeps constant power", arguments: stride(from: -1.0, through: 1.0, by: 0.125).map { $0 })
  func monoPanKeepsConstantPower(_ pan: Double) {
    let g = StereoGain.voice(volume: 1, pan: pan, sourceIsMono: true)
    #expect(abs(g.ll * g.ll + g.rr * g.rr - 2) < 1e-5)
  }

  @Test("out-of-range and NaN inputs are clamped", arguments: [(-3.0, 0.0), (2.0, 1.0), (Double.nan, 0.0)])
  func volumeIsClamped(_ input: Double, _ effective: Double) {
    let g = StereoGain.voice(volume: input, pan: 0, sourceIsMono: true)
    #expect(g.ll == Float(effective))
  }

  @Test func loopsPlayNPlusOneTimesWithoutAGapAcrossPeriodBoundaries() {
    // 100-frame cue, 2 loops = 300 frames, rendered in 64-frame periods (not a divisor of 100).
    let mixer = Mixer(voiceCapacity: 4)
    _ = mixer.start(VoiceStart(id: VoiceID(7), samples: ramp.samples, gain: .unity, loops: .count(2)))
    let out = render(mixer, periods: 6, periodFrames: 64)
    let once = ramp.toArray()
    #expect(Array(out[0..<600]) == once + once + once)
    #expect(out[600...].allSatisfy { $0 == 0 })
    #expect(ends(mixer).map(\.reason) == [.end])
  }

  @Test func negativeLoopsPlayUntilStopped() {
    let mixer = Mixer(voiceCapacity: 4)
    _ = mixer.start(VoiceStart(id: VoiceID(1), samples: ramp.samples, gain: .unity, loops: LoopCount(numberOfLoops: -1)))
    let out = render(mixer, periods: 50, periodFrames: 64)
    #expect(out.count == 6400)
    let once = ramp.toArray()
    for k in 0..<32 { #expect(Array(out[(k * 200)..<((k + 1) * 200)]) == once) }
    #expect(ends(mixer).isEmpty)
    #expect(mixer.activeVoiceCount == 1)
  }

  @Test func anEndIsNotReportedBeforeItsStart() {
    let mixer = Mixer(voiceCapacity: 2)
    _ = mixer.start(VoiceStart(id: VoiceID(1), samples: ramp.samples, gain: .unity, loops: .count(0)))
    _ = render(mixer, periods: 1, periodFrames: 128)
    var endsBeforeStart = 0
    mixer.drainEnded { _ in endsBeforeStart += 1; return true }
    #expect(endsBeforeStart == 0)
    #expect(ends(mixer).count == 1)
  }

  @Test func aOneShotEndingExactlyOnAPeriodBoundaryEndsThatPeriod() {
    let mixer = Mixer(voiceCapacity: 2)
    _ = mixer.start(VoiceStart(id: VoiceID(1), samples: ramp.samples, gain: .unity, loops: .count(0)))
    _ = render(mixer, periods: 1, periodFrames: 100)
    #expect(ends(mixer).count == 1)
    #expect(mixer.isSilent)
  }

  /// A burst (ten starts, each replacing the one before, in one batch of commands) leaves the last
  /// voice alone: the replaced ones never sounded, so they end at once instead of fading on top.
  @Test func aVoiceStoppedBeforeItSoundedEndsAtOnceWithoutAFade() {
    let constant = makeCue(frames: 1000, left: { _ in 0.5 }, right: { _ in 0.5 })
    let mixer = Mixer(voiceCapacity: 16)
    for n in 1...10 {
      _ = mixer.start(VoiceStart(id: VoiceID(UInt64(n)), samples: constant.samples, gain: .unity, loops: .count(0)))
      if n > 1 { mixer.stop(VoiceID(UInt64(n - 1)), fadeFrames: 384, reason: .stopped) }
    }
    let out = render(mixer, periods: 1, periodFrames: 64)
    #expect(out.allSatisfy { $0 == 0.5 }, "only the last voice sounds")
    var started: [VoiceID] = []
    mixer.drainStarted { id, _ in
      started.append(id)
      return true
    }
    #expect(started == [VoiceID(10)], "a voice that never sounded is not reported as started")
    let ended = ends(mixer)
    #expect(ended.map(\.id) == (1...9).map { VoiceID(UInt64($0)) })
    #expect(ended.allSatisfy { $0.reason == .stopped && $0.position == 0 })
  }

  /// A voice that replaces a sounding one crossfades with it over the fade: the old falls as the
  /// new rises, their sum never above the louder, and from then on the new one alone, exactly.
  @Test func aReplacementCrossfadesWithASoundingVoiceAndStartsWholeOverASilentOne() {
    let old = makeCue(frames: 4000, left: { _ in 0.6 }, right: { _ in 0.6 })
    let new = makeCue(frames: 4000, left: { _ in 0.5 }, right: { _ in 0.5 })
    let mixer = Mixer(voiceCapacity: 4)
    _ = mixer.start(VoiceStart(id: VoiceID(1), samples: old.samples, gain: .unity, loops: .count(0)))
    _ = render(mixer, periods: 2, periodFrames: 64)
    _ = mixer.start(VoiceStart(id: VoiceID(2), samples: new.samples, gain: .unity, loops: .count(0), replaces: VoiceID(1), replaceFadeFrames: 100))
    let out = render(mixer, periods: 4, periodFrames: 64)
    for f in 0..<100 {
      let t = Float(f) / 100
      #expect(abs(out[2 * f] - (0.6 * (1 - t) + 0.5 * t)) < 1e-4, "frame \(f)")
      #expect(out[2 * f] <= 0.6 + 1e-6)
    }
    #expect(out[200..<(2 * 256)].allSatisfy { $0 == 0.5 }, "the new voice alone, exactly, after the fade")
    #expect(ends(mixer) == [VoiceEnd(id: VoiceID(1), reason: .stopped, position: 128)])

    // Over a voice that has not sounded yet (started in the same batch), the new one starts whole.
    let fresh = Mixer(voiceCapacity: 4)
    _ = fresh.start(VoiceStart(id: VoiceID(1), samples: old.samples, gain: .unity, loops: .count(0)))
    _ = fresh.start(VoiceStart(id: VoiceID(2), samples: new.samples, gain: .unity, loops: .count(0), replaces: VoiceID(1), replaceFadeFrames: 100))
    #expect(render(fresh, periods: 1, periodFrames: 64).allSatisfy { $0 == 0.5 })
  }

  /// A chain of replacements in one batch over a sounding voice: the one that never sounded passes
  /// on its replacement, and the last crossfades with the sounding one; the sum stays at one voice's level.
  @Test func aChainOfReplacementsCrossfadesOnlyWithWhatWasHeard() {
    let constant = makeCue(frames: 4000, left: { _ in 0.5 }, right: { _ in 0.5 })
    let mixer = Mixer(voiceCapacity: 8)
    _ = mixer.start(VoiceStart(id: VoiceID(1), samples: constant.samples, gain: .unity, loops: .count(0)))
    _ = render(mixer, periods: 1, periodFrames: 64)
    for n in 2...5 {
      let start = VoiceStart(
        id: VoiceID(UInt64(n)), samples: constant.samples, gain: .unity, loops: .count(0), replaces: VoiceID(UInt64(n - 1)),
        replaceFadeFrames: 100)
      _ = mixer.start(start)
    }
    let out = render(mixer, periods: 4, periodFrames: 64)
    #expect(out.allSatisfy { abs($0 - 0.5) < 1e-5 }, "the crossfade of equal levels stays level")
    #expect(ends(mixer).map(\.id) == [VoiceID(1), VoiceID(2), VoiceID(3), VoiceID(4)])
  }

  /// A replacement stopped in the batch that started it, before its first frame, still takes the
  /// voice it replaces away (with its fade): the control side counted that voice gone. One
  /// scheduled for later leaves the other sounding.
  @Test func aReplacementStoppedBeforeItSoundsStillEndsTheVoiceItReplaces() {
    let constant = makeCue(frames: 4000, left: { _ in 0.5 }, right: { _ in 0.5 })
    let mixer = Mixer(voiceCapacity: 4)
    _ = mixer.start(VoiceStart(id: VoiceID(1), samples: constant.samples, gain: .unity, loops: .count(0)))
    _ = render(mixer, periods: 1, periodFrames: 64)
    _ = mixer.start(VoiceStart(id: VoiceID(2), samples: constant.samples, gain: .unity, loops: .count(0), replaces: VoiceID(1), replaceFadeFrames: 100))
    mixer.stop(VoiceID(2), fadeFrames: 100, reason: .stopped)
    let out = render(mixer, periods: 4, periodFrames: 64)
    #expect(abs(out[0] - 0.5) < 1e-6 && abs(out[2 * 50] - 0.25) < 1e-4, "voice 1 fades over the replacement's fade")
    #expect(out[200...].allSatisfy { $0 == 0 }, "then nothing sounds")
    #expect(Set(ends(mixer).map(\.id)) == [VoiceID(1), VoiceID(2)])

    let later = Mixer(voiceCapacity: 4)
    _ = later.start(VoiceStart(id: VoiceID(1), samples: constant.samples, gain: .unity, loops: .count(0)))
    _ = render(later, periods: 1, periodFrames: 64)
    _ = later.start(VoiceStart(id: VoiceID(2), samples: constant.samples, gain: .unity, loops: .count(0), startAtFrame: 10_000, replaces: VoiceID(1), replaceFadeFrames: 100))
    later.stop(VoiceID(2), fadeFrames: 100, reason: .stopped)
    #expect(render(later, periods: 2, periodFrames: 64).allSatisfy { $0 == 0.5 }, "a scheduled replacement replaced nothing yet")
    #expect(ends(later).map(\.id) == [VoiceID(2)])
  }

  @Test func stopFadesOutLinearlyThenEnds() {
    let constant = makeCue(frames: 1000, left: { _ in 0.5 }, right: { _ in 0.5 })
    let mixer = Mixer(voiceCapacity: 2)
    _ = mixer.start(VoiceStart(id: VoiceID(1), samples: constant.samples, gain: .unity, loops: .count(0)))
    _ = render(mixer, periods: 1, periodFrames: 10)
    mixer.stop(VoiceID(1), fadeFrames: 100, reason: .stopped)
    let out = render(mixer, periods: 2, periodFrames: 64)
    // Monotonic fall from 0.5 to 0 over 100 frames, no step larger than one ramp increment.
    #expect(abs(out[0] - 0.5) < 1e-6)
    for f in 1..<100 {
      let step = out[2 * (f - 1)] - out[2 * f]
      #expect(step > 0 && abs(step - 0.005) < 1e-5)
    }
    #expect(out[200...].allSatisfy { $0 == 0 })
    #expect(ends(mixer) == [VoiceEnd(id: VoiceID(1), reason: .stopped, position: 10)])  // where the stop began
  }

  @Test func aFadeInReachesItsTargetInItsDuration() {
    let constant = makeCue(frames: 1000, left: { _ in 1 }, right: { _ in 1 })
    let mixer = Mixer(voiceCapacity: 2)
    let target = StereoGain.voice(volume: 0.5, pan: 0, sourceIsMono: true)
    _ = mixer.start(VoiceStart(id: VoiceID(1), samples: constant.samples, gain: target, loops: .count(0), fadeInFrames: 48))
    let out = render(mixer, periods: 1, periodFrames: 64)
    #expect(out[0] == 0)
    #expect(abs(out[2 * 47] - 0.5 * 47 / 48) < 1e-5)
    #expect(out[2 * 48] == 0.5)
    #expect(out[2 * 63] == 0.5)
  }

  @Test func setGainRampsToTheNewVolume() {
    let constant = makeCue(frames: 1000, left: { _ in 0.8 }, right: { _ in 0.8 })
    let mixer = Mixer(voiceCapacity: 2)
    _ = mixer.start(VoiceStart(id: VoiceID(1), samples: constant.samples, gain: .unity, loops: .count(0)))
    mixer.setGain(VoiceID(1), to: .silent, rampFrames: 10)
    let out = render(mixer, periods: 1, periodFrames: 20)
    #expect(out[0] == 0.8)
    #expect(abs(out[2 * 5] - 0.4) < 1e-6)
    #expect(out[2 * 10] == 0)
    #expect(mixer.activeVoiceCount == 1)  // a volume of 0 is not a stop
  }

  @Test func theMixClampsSoftlyAndNeverWraps() {
    let loud = makeCue(frames: 64, left: { _ in 0.9 }, right: { _ in -0.9 })
    let mixer = Mixer(voiceCapacity: 16)
    for i in 1...10 { _ = mixer.start(VoiceStart(id: VoiceID(UInt64(i)), samples: loud.samples, gain: .unity, loops: .count(0))) }
    let out = render(mixer, periods: 1, periodFrames: 64)
    for f in 0..<64 {
      #expect(out[2 * f] > 0.99 && out[2 * f] <= 1)
      #expect(out[2 * f + 1] < -0.99 && out[2 * f + 1] >= -1)
    }
  }

  @Test(
    "soft limiter table",
    arguments: [
      (0, 0), (0.5, 0.5), (0.9, 0.9), (-0.9, -0.9), (1.0, 0.95), (-1.0, -0.95), (100, 0.999),
      (Float.infinity, 1), (-Float.infinity, -1), (Float.nan, 0),
    ] as [(Float, Float)])
  func softLimiterTable(_ input: Float, _ expected: Float) {
    let y = SoftLimiter.limit(input, knee: 0.9)
    #expect(abs(y - expected) < 1e-3)
    #expect(abs(y) <= 1)
  }

  @Test func theVoiceTableRefusesPastCapacity() {
    let mixer = Mixer(voiceCapacity: 2)
    #expect(mixer.start(VoiceStart(id: VoiceID(1), samples: ramp.samples, gain: .unity, loops: .forever)))
    #expect(mixer.start(VoiceStart(id: VoiceID(2), samples: ramp.samples, gain: .unity, loops: .forever)))
    #expect(!mixer.start(VoiceStart(id: VoiceID(3), samples: ramp.samples, gain: .unity, loops: .forever)))
    mixer.stop(VoiceID(1), fadeFrames: 10, reason: .stolen)
    _ = render(mixer, periods: 1, periodFrames: 16)
    #expect(ends(mixer).map(\.reason) == [.stolen])
  }

  @Test func aVoiceScheduledForLaterStartsOnItsFrame() {
    let mixer = Mixer(voiceCapacity: 2)
    _ = mixer.start(VoiceStart(id: VoiceID(1), samples: ramp.samples, gain: .unity, loops: .count(0), startAtFrame: 70))
    let out = render(mixer, periods: 4, periodFrames: 64)
    #expect(out[0..<140].allSatisfy { $0 == 0 })
    #expect(Array(out[140..<340]) == ramp.toArray())
    var started: [(VoiceID, UInt64)] = []
    mixer.drainStarted { started.append(($0, $1)); return true }
    #expect(started.count == 1 && started[0].1 == 70)
  }

  @Test func anEmptyCueEndsAtOnceEvenWhenLoopingForever() {
    let empty = SampleBuffer(frameCount: 0)
    let mixer = Mixer(voiceCapacity: 2)
    _ = mixer.start(VoiceStart(id: VoiceID(1), samples: empty.samples, gain: .unity, loops: .forever))
    _ = render(mixer, periods: 1, periodFrames: 16)
    #expect(ends(mixer).map(\.reason) == [.end])
  }

  @Test func seekIsSampleAccurate() {
    let mixer = Mixer(voiceCapacity: 2)
    _ = mixer.start(VoiceStart(id: VoiceID(1), samples: ramp.samples, gain: .unity, loops: .count(0)))
    _ = render(mixer, periods: 1, periodFrames: 10)
    mixer.seek(VoiceID(1), to: 70)
    let out = render(mixer, periods: 1, periodFrames: 40)
    let source = ramp.toArray()
    #expect(Array(out[0..<60]) == Array(source[140..<200]))
    #expect(ends(mixer).map(\.reason) == [.end])
  }

  @Test func aStopWithAFadeReportsWhereItBegan() {
    let mixer = Mixer(voiceCapacity: 2)
    _ = mixer.start(VoiceStart(id: VoiceID(1), samples: ramp.samples, gain: .unity, loops: .count(2)))
    _ = render(mixer, periods: 1, periodFrames: 30)
    mixer.stop(VoiceID(1), fadeFrames: 20, reason: .paused)
    _ = render(mixer, periods: 1, periodFrames: 30)
    #expect(ends(mixer) == [VoiceEnd(id: VoiceID(1), reason: .paused, position: 30, loopsLeft: 2)])
  }

  @Test("rate changes the duration", arguments: [(2.0, 50), (0.5, 200), (1.25, 80)])
  func rateChangesTheDuration(_ rate: Double, _ frames: Int) {
    let mixer = Mixer(voiceCapacity: 2)
    let constant = makeCue(frames: 100, left: { _ in 0.5 }, right: { _ in 0.25 })
    _ = mixer.start(VoiceStart(id: VoiceID(1), samples: constant.samples, gain: .unity, loops: .count(0), rate: rate))
    let out = render(mixer, periods: 4, periodFrames: 64)
    let sounding = (0..<256).filter { out[2 * $0] != 0 }.count
    #expect(abs(sounding - frames) <= 1)
    // Away from the ends, a constant source stays constant through the interpolation.
    #expect(abs(out[2 * 10] - 0.5) < 1e-6 && abs(out[2 * 10 + 1] - 0.25) < 1e-6)
    #expect(ends(mixer).map(\.reason) == [.end])
  }

  @Test func doubleRateReadsEveryOtherSample() {
    let mixer = Mixer(voiceCapacity: 2)
    _ = mixer.start(VoiceStart(id: VoiceID(1), samples: ramp.samples, gain: .unity, loops: .count(0), rate: 2))
    let out = render(mixer, periods: 1, periodFrames: 64)
    let source = ramp.toArray()
    for f in 0..<48 { #expect(abs(out[2 * f] - source[4 * f]) < 1e-6) }
  }
}

@Suite("Sample conversion for devices")
struct SampleConversionTests {
  @Test func floatToInt16ClampsScalesAndRounds() {
    let source: [Float] = [0, 1, -1, 0.5, -0.5, 2, -3, 1 / 32767, 0.49 / 32767, 0.25]
    var out = [Int16](repeating: 99, count: source.count)
    source.withUnsafeBufferPointer { s in
      out.withUnsafeMutableBufferPointer { d in SampleConversion.int16(from: s.baseAddress!, count: s.count, into: d.baseAddress!) }
    }
    #expect(out == [0, 32767, -32767, 16384, -16384, 32767, -32767, 1, 0, 8192])
  }
}
