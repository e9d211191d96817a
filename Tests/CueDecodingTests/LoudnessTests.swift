import CueDecoding
import CueCore
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// EBU R128 loudness and peaks through libebur128, on generated signals whose loudness is known.
@Suite("Loudness (EBU R128)")
struct LoudnessTests {
  /// Interleaved stereo: a sine of `frequency` Hz and peak `amplitude` in the left channel, and in
  /// the right too unless `leftOnly`, starting at `phase`.
  static func sine(
    frequency: Double, amplitude: Double, seconds: Double, rate: Int = 48000, phase: Double = 0, leftOnly: Bool = false
  ) -> [Float] {
    let frames = Int(seconds * Double(rate))
    var samples = [Float](repeating: 0, count: frames * 2)
    for frame in 0..<frames {
      let x = Float(amplitude * sin(2 * Double.pi * frequency * Double(frame) / Double(rate) + phase))
      samples[2 * frame] = x
      samples[2 * frame + 1] = leftOnly ? 0 : x
    }
    return samples
  }

  static func measure(_ samples: [Float], rate: Int = 48000) throws -> LoudnessMeasurement {
    try #require(samples.withUnsafeBufferPointer { Loudness.measure(interleavedStereo: $0, sampleRate: rate) })
  }

  /// ITU-R BS.1770-4: a 1 kHz sine at 0 dBFS in the left channel alone measures −3.01 LUFS. In
  /// both channels it is twice the power, 0.00 LUFS; and the scale follows the level, dB for dB.
  @Test func aSineInOneChannelMeasuresWhatBS1770Says() throws {
    let measured = try Self.measure(Self.sine(frequency: 1000, amplitude: 1, seconds: 2, leftOnly: true))
    let loudness = try #require(measured.integratedLUFS)
    #expect(abs(loudness - -3.01) <= 0.1, "measured \(loudness) LUFS")
    #expect(!measured.isOneBlock)
  }

  @Test(
    "a 1 kHz sine in both channels measures 0 LUFS at 0 dBFS peak, and follows its level",
    arguments: [(1.0, 0.0, 48000), (0.1, -20.0, 48000), (0.5, -6.02, 44100)])
  func aStereoSineFollowsItsLevel(_ amplitude: Double, _ expectedLUFS: Double, _ rate: Int) throws {
    let measured = try Self.measure(Self.sine(frequency: 1000, amplitude: amplitude, seconds: 2, rate: rate), rate: rate)
    let loudness = try #require(measured.integratedLUFS)
    #expect(abs(loudness - expectedLUFS) <= 0.1, "measured \(loudness) LUFS")
  }

  /// 100 ms of the 0 dBFS sine is a quarter of a 400 ms block's energy: 6.02 dB below the
  /// continuous sine, −6.02 LUFS.
  @Test func aCueShorterThanOneBlockIsMeasuredAsOne400MillisecondBlock() throws {
    let measured = try Self.measure(Self.sine(frequency: 1000, amplitude: 1, seconds: 0.1))
    let loudness = try #require(measured.integratedLUFS)
    #expect(abs(loudness - -6.02) <= 0.1, "measured \(loudness) LUFS")
    #expect(measured.isOneBlock)
    // Exactly one block long: measured as it is, nothing padded.
    let whole = try Self.measure(Self.sine(frequency: 1000, amplitude: 1, seconds: 0.4))
    #expect(!whole.isOneBlock)
    #expect(abs((whole.integratedLUFS ?? -99) - 0) <= 0.1)
  }

  @Test func silenceHasNoLoudnessAndNoPeak() throws {
    for seconds in [0.0, 0.05, 1.0] {
      let measured = try Self.measure([Float](repeating: 0, count: Int(seconds * 48000) * 2))
      #expect(measured.integratedLUFS == nil)
      #expect(measured.samplePeak == 0 && measured.samplePeakDBFS == nil)
    }
    // What rate conversion leaves of silence (about −300 dBFS) is silence too.
    let residue = try Self.measure([Float](repeating: 1e-15, count: 9600))
    #expect(residue.samplePeak > 0 && residue.samplePeakDBFS == nil)
    // Below the absolute gate (−70 LUFS) is silence too, though it has a peak; a short cue as well.
    let quiet = try Self.measure(Self.sine(frequency: 1000, amplitude: 0.0001, seconds: 1))
    #expect(quiet.integratedLUFS == nil)
    #expect(abs((quiet.samplePeakDBFS ?? 0) - -80) < 0.01)
    let short = try Self.measure(Self.sine(frequency: 1000, amplitude: 0.0003, seconds: 0.1))
    #expect(short.isOneBlock && short.integratedLUFS == nil)
  }

  /// At 48 kHz a 1 kHz sine has a sample on its crest: the sample peak is the amplitude exactly,
  /// of the louder channel.
  @Test func theSamplePeakIsTheLouderChannelsLargestSample() throws {
    var samples = Self.sine(frequency: 1000, amplitude: 0.5, seconds: 1)
    for frame in 0..<(samples.count / 2) { samples[2 * frame] *= 0.5 }
    let measured = try Self.measure(samples)
    #expect(abs(measured.samplePeak - 0.5) < 1e-6)
    #expect(abs((measured.samplePeakDBFS ?? 0) - -6.02) < 0.01)
  }

  @Test func theNormalizationGainReachesTheTargetUnlessThePeakWouldPassZeroDBFS() throws {
    let cue = LoudnessMeasurement(integratedLUFS: -30, samplePeak: 0.1, isOneBlock: false)
    // 7 dB up: 10^(7/20).
    let up = try #require(cue.normalizationGain(targetLUFS: -23))
    #expect(abs(up.gain - 2.2387) < 1e-4 && !up.capped)
    let down = try #require(cue.normalizationGain(targetLUFS: -40))
    #expect(abs(down.gain - 0.31623) < 1e-5 && !down.capped)
    // 20 dB up puts the peak at exactly 0 dBFS: allowed.
    #expect(try #require(cue.normalizationGain(targetLUFS: -10)).capped == false)
    // 25 dB up would pass it: the gain stops at 1 / peak.
    let capped = try #require(cue.normalizationGain(targetLUFS: -5))
    #expect(abs(capped.gain - 10) < 1e-9 && capped.capped)
    // No loudness: nothing to normalise.
    let silent = LoudnessMeasurement(integratedLUFS: nil, samplePeak: 0, isOneBlock: true)
    #expect(silent.normalizationGain(targetLUFS: -23) == nil)
  }

  /// A decoded fixture: the measurement reads the cue's own buffer at the output rate.
  @Test func aDecodedCueIsMeasuredFromItsBuffer() throws {
    let decoded = try AudioFileDecoder.decode(path: fixture("tone-48000-mono.wav"))
    let measured = try #require(Loudness.measure(decoded.buffer, sampleRate: 48000))
    let direct = try Self.measure(decoded.buffer.toArray())
    #expect(measured == direct)
    // 440 Hz at peak 0.5 in both channels, 0.12 s (one padded block): 6.02 dB below the 0 LUFS of
    // a full-scale 1 kHz sine, 10·log10(0.12/0.4) = −5.23 dB for the padding, and about −0.5 dB
    // of K-weighting at 440 Hz against 1 kHz: about −11.8 LUFS.
    let loudness = try #require(measured.integratedLUFS)
    #expect(loudness > -12.5 && loudness < -11, "measured \(loudness) LUFS")
    #expect(measured.isOneBlock)
  }
}
