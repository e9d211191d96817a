import CueCore
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("Meters: each voice's and the mix's peak and RMS, measured while rendering")
struct MeterTests {
  /// A square wave of amplitude `amplitude` on both channels: peak and RMS are both `amplitude`.
  static func square(_ amplitude: Float, frames: Int = 4800) -> SampleBuffer {
    makeCue(frames: frames, left: { $0 % 20 < 10 ? amplitude : -amplitude }, right: { $0 % 20 < 10 ? amplitude : -amplitude })
  }

  @Test func offMeasuresNothing() {
    let cue = Self.square(0.5)
    let mixer = Mixer(voiceCapacity: 4)
    _ = mixer.start(VoiceStart(id: VoiceID(1), samples: cue.samples, gain: .unity, loops: .count(0)))
    _ = render(mixer, periods: 4, periodFrames: 240)
    #expect(mixer.meters.takeMix() == MeterBank.Reading())
    #expect(mixer.meters.takeVoice(slot: 0).reading == MeterBank.Reading())
  }

  @Test func eachVoiceAndTheMixAgainstKnownSamples() {
    let loud = Self.square(0.5)
    // A sine of amplitude 0.25: peak 0.25, RMS 0.25/√2.
    let sine = makeCue(frames: 4800, left: { Float(0.25 * sin(Double($0) * 2 * .pi / 48)) }, right: { Float(0.25 * sin(Double($0) * 2 * .pi / 48)) })
    let mixer = Mixer(voiceCapacity: 4)
    mixer.meters.isEnabled = true
    _ = mixer.start(VoiceStart(id: VoiceID(7), samples: loud.samples, gain: .unity, loops: .count(0)))
    _ = mixer.start(VoiceStart(id: VoiceID(8), samples: sine.samples, gain: .unity, loops: .count(0)))
    let out = render(mixer, periods: 10, periodFrames: 240)  // 2400 frames: 50 whole sine periods
    let first = mixer.meters.takeVoice(slot: 0)
    let second = mixer.meters.takeVoice(slot: 1)
    #expect(first.voice == VoiceID(7))
    #expect(first.reading.samples == 4800)
    #expect(first.reading.peak == 0.5)
    #expect(abs(first.reading.rms - 0.5) < 1e-4)
    #expect(second.voice == VoiceID(8))
    #expect(abs(second.reading.peak - 0.25) < 1e-3)
    #expect(abs(second.reading.rms - 0.25 / 2.0.squareRoot().float) < 1e-4)
    // The mix is what came out, after the limiter.
    let mix = mixer.meters.takeMix()
    let outPeak = out.map(abs).max()!
    let outRMS = (out.map { Double($0 * $0) }.reduce(0, +) / Double(out.count)).squareRoot()
    #expect(mix.samples == UInt64(out.count))
    #expect(mix.peak == outPeak)
    #expect(abs(Double(mix.rms) - outRMS) < 1e-4)
    // Taken means emptied.
    #expect(mixer.meters.takeMix() == MeterBank.Reading())
  }

  @Test func aGainAndAFadeAreMeasuredAsHeard() {
    let cue = Self.square(0.8)
    let mixer = Mixer(voiceCapacity: 2)
    mixer.meters.isEnabled = true
    _ = mixer.start(VoiceStart(id: VoiceID(3), samples: cue.samples, gain: StereoGain(ll: 0.5, lr: 0, rl: 0, rr: 0.5), loops: .count(0)))
    _ = render(mixer, periods: 2, periodFrames: 240)
    let reading = mixer.meters.takeVoice(slot: 0).reading
    #expect(abs(reading.peak - 0.4) < 1e-6)
    #expect(abs(reading.rms - 0.4) < 1e-4)
  }

  @Test func aBlockLongerThanTheScratchIsMeasuredWhole() {
    let cue = Self.square(0.5, frames: 20_000)
    let metered = Mixer(voiceCapacity: 2)
    let plain = Mixer(voiceCapacity: 2)
    metered.meters.isEnabled = true
    for mixer in [metered, plain] {
      _ = mixer.start(VoiceStart(id: VoiceID(1), samples: cue.samples, gain: .unity, loops: .count(0), startAtFrame: 5000))
    }
    let a = render(metered, periods: 1, periodFrames: 10_000)
    let b = render(plain, periods: 1, periodFrames: 10_000)
    #expect(a == b)  // the same samples, in pieces or whole
    #expect(metered.frameClock == plain.frameClock)
    // Measured from the piece it starts in (4096 frames from 4096 on, then 1808), not before.
    #expect(metered.meters.takeVoice(slot: 0).reading.samples == (4096 + 1808) * 2)
    #expect(metered.meters.takeMix().samples == 20_000)
  }

  @Test func aNewVoiceInASlotDoesNotInheritTheLastOnesReading() {
    let cue = Self.square(0.9, frames: 240)
    let quiet = Self.square(0.1)
    let mixer = Mixer(voiceCapacity: 1)
    mixer.meters.isEnabled = true
    _ = mixer.start(VoiceStart(id: VoiceID(1), samples: cue.samples, gain: .unity, loops: .count(0)))
    _ = render(mixer, periods: 1, periodFrames: 240)
    mixer.drainStarted { _, _ in true }
    mixer.drainEnded { _ in true }
    _ = mixer.start(VoiceStart(id: VoiceID(2), samples: quiet.samples, gain: .unity, loops: .count(0)))
    _ = render(mixer, periods: 1, periodFrames: 240)
    let (voice, reading) = mixer.meters.takeVoice(slot: 0)
    #expect(voice == VoiceID(2))
    #expect(abs(reading.peak - 0.1) < 1e-6)
  }
}

extension Double {
  fileprivate var float: Float { Float(self) }
}
