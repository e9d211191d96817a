import CEbur128
import CueCore

#if canImport(Glibc)
import Glibc
#endif

/// A cue's loudness and sample peak, as EBU R128 (ITU-R BS.1770-4) defines them, measured once per cue.
///
/// Measured on what is played: the decoded cue at the output rate, two channels (a mono file is
/// counted in both, as it sounds). No true peak: libebur128's 4× oversampling for it quadruples
/// the cost (3.7 ms instead of 0.9 ms per second of audio, docs/PERFORMANCE.md), which start-up
/// cannot afford, and the normalisation's cap needs only the sample peak.
public struct LoudnessMeasurement: Sendable, Equatable {
  /// The integrated (gated) loudness in LUFS; nil when the cue is never louder than the absolute
  /// gate, −70 LUFS: a silent cue has no loudness.
  public var integratedLUFS: Double?
  /// The largest sample magnitude over both channels, linear (1 is 0 dBFS).
  public var samplePeak: Double
  /// The cue is shorter than one 400 ms gating block and was measured as one block, the rest of
  /// it silence: its loudness is its energy over 400 ms.
  public var isOneBlock: Bool

  public init(integratedLUFS: Double?, samplePeak: Double, isOneBlock: Bool) {
    self.integratedLUFS = integratedLUFS
    self.samplePeak = samplePeak
    self.isOneBlock = isOneBlock
  }

  /// The sample peak in dBFS; nil for a cue of digital silence (below −160 dBFS, as what rate
  /// conversion leaves of silence).
  public var samplePeakDBFS: Double? { Loudness.decibels(samplePeak) }

  /// The linear gain that brings the cue to `targetLUFS`, `10^((target − loudness)/20)`, lowered
  /// where it would lift the sample peak above 0 dBFS (then `capped`); nil when the cue has no
  /// loudness (it is left as it is).
  public func normalizationGain(targetLUFS: Double) -> (gain: Double, capped: Bool)? {
    guard let integratedLUFS else { return nil }
    let wanted = pow(10, (targetLUFS - integratedLUFS) / 20)
    if samplePeak > 0 && wanted * samplePeak > 1 { return (1 / samplePeak, true) }
    return (wanted, false)
  }
}

/// Measures loudness with libebur128 (a maintained EBU R128 implementation; Debian libebur128-1).
///
/// Thread-safe: each call has its own state. Allocates; not for the audio thread.
public enum Loudness {
  /// `ebur128_init`'s modes: integrated loudness (with momentary, for short cues) and sample peak.
  static let modes = Int32(EBUR128_MODE_I.rawValue | EBUR128_MODE_SAMPLE_PEAK.rawValue)

  /// BS.1770's absolute gate: a block quieter than this is silence.
  public static let absoluteGateLUFS = -70.0

  /// Frames in one 400 ms gating block at `sampleRate`, counted as libebur128 counts them (four
  /// blocks of 100 ms, each `(rate + 5) / 10` frames).
  public static func gatingBlockFrames(sampleRate: Int) -> Int { 4 * ((sampleRate + 5) / 10) }

  /// Measures a decoded cue (interleaved stereo at `sampleRate`).
  public static func measure(_ buffer: SampleBuffer, sampleRate: Int) -> LoudnessMeasurement? {
    let samples = buffer.samples
    return measure(interleavedStereo: UnsafeBufferPointer(start: samples.base, count: samples.frameCount * 2), sampleRate: sampleRate)
  }

  /// Measures interleaved stereo Float32 at `sampleRate` (8000…384000 Hz); nil when libebur128
  /// cannot allocate its state.
  ///
  /// A cue shorter than one 400 ms gating block has no integrated loudness under BS.1770 (no
  /// block is complete), yet UI cues are often that short: such a cue is measured as one block
  /// of silence holding the cue, so its loudness is its energy spread over 400 ms, gated at
  /// −70 LUFS like any block. That is libebur128's momentary loudness (the last 400 ms) right
  /// after the cue, since its state starts as silence: the padding costs nothing to measure.
  /// Wraps `ebur128_init`, `ebur128_add_frames_float`, `ebur128_loudness_global`,
  /// `ebur128_loudness_momentary` and `ebur128_sample_peak`.
  public static func measure(interleavedStereo samples: UnsafeBufferPointer<Float>, sampleRate: Int) -> LoudnessMeasurement? {
    precondition(samples.count % 2 == 0, "interleaved stereo needs an even number of samples")
    guard let state = ebur128_init(2, UInt(sampleRate), modes) else { return nil }
    defer {
      var owned: UnsafeMutablePointer<ebur128_state>? = state
      ebur128_destroy(&owned)
    }
    let frameCount = samples.count / 2
    if let base = samples.baseAddress, frameCount > 0 {
      guard ebur128_add_frames_float(state, base, frameCount) == EBUR128_SUCCESS.rawValue else { return nil }
    }
    let isOneBlock = frameCount < gatingBlockFrames(sampleRate: sampleRate)
    var loudness = -Double.infinity
    let measured = isOneBlock ? ebur128_loudness_momentary(state, &loudness) : ebur128_loudness_global(state, &loudness)
    guard measured == EBUR128_SUCCESS.rawValue else { return nil }
    if isOneBlock && loudness < absoluteGateLUFS { loudness = -.infinity }
    var samplePeak = 0.0
    for channel: UInt32 in 0..<2 {
      var peak = 0.0
      guard ebur128_sample_peak(state, channel, &peak) == EBUR128_SUCCESS.rawValue else { return nil }
      samplePeak = max(samplePeak, peak)
    }
    return LoudnessMeasurement(integratedLUFS: loudness.isFinite ? loudness : nil, samplePeak: samplePeak, isOneBlock: isOneBlock)
  }

  /// Below this a peak is silence: −160 dBFS, the floor of a player's meters. Rate conversion turns
  /// digital silence into values near 1e−15, which are no sound.
  static let silentPeak = 1e-8

  /// `20·log10(amplitude)`; nil for silence.
  static func decibels(_ amplitude: Double) -> Double? { amplitude > silentPeak ? 20 * log10(amplitude) : nil }
}
