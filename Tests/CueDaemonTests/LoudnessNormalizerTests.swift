import CueDecoding
import CueCore
import CueProtocol
import Logging
import Testing

@testable import CueDaemon

/// `loudness-normalize` where voices start, in process.
@Suite("Loudness normalisation, in process")
struct LoudnessNormalizerTests {
  /// The linear gain normalising `cue` to `target` gives (every shipped cue has a loudness).
  static func gain(_ cue: Cue, target: Double) throws -> Float {
    let measured = try #require(cue.loudness)
    return Float(try #require(measured.normalizationGain(targetLUFS: target)).gain)
  }

  @Test func aNormalisedPlayIsTheCueTimesItsGain() throws {
    let embedded = try EmbeddedDaemon { configuration in
      configuration.loudnessNormalize = true
      configuration.loudnessTargetLUFS = -40
    }
    let client = embedded.connect()
    #expect(client.reply(#"{"id":1,"op":"play","cue":"pico"}"#)["ok"] == .bool(true))
    embedded.runCycles(until: { embedded.daemon.voices.voices.isEmpty })
    let gain = try Self.gain(embedded.cue("pico"), target: -40)
    #expect(gain < 1, "pico is louder than -40 LUFS")
    let expected = embedded.samples(of: "pico").map { $0 * gain }
    #expect(Array(embedded.sink.written.prefix(expected.count)) == expected)
  }

  /// A player's voice starts normalised, and a volume change keeps it so.
  @Test func aPlayersVolumeChangeKeepsTheNormalisation() throws {
    let embedded = try EmbeddedDaemon { configuration in
      configuration.loudnessNormalize = true
      configuration.loudnessTargetLUFS = -40
    }
    let client = embedded.connect()
    let player = try #require(client.reply(#"{"id":1,"op":"player.create","cue":"pico","numberOfLoops":-1}"#)["player"]?.intValue)
    _ = client.reply(#"{"id":2,"op":"player.play","player":\#(player)}"#)
    embedded.runCycles(2)
    #expect(client.reply(#"{"id":3,"op":"player.set","player":\#(player),"volume":0.5}"#)["ok"] == .bool(true))
    embedded.runCycles(4)
    let gain = try Self.gain(embedded.cue("pico"), target: -40)
    let cue = embedded.samples(of: "pico")
    let written = embedded.sink.written
    // The voice began at the device's first frame, looping: frame f of the output is cue frame f mod its length.
    let frames = written.count / 2
    try #require(frames > 6 * 240 - 1)
    for (offset, volume) in [(0, Float(1)), (frames - 240, Float(0.5))] {
      let wrong = (offset..<(offset + 240)).filter { frame in written[2 * frame] != cue[2 * (frame % (cue.count / 2))] * (volume * gain) }
      #expect(wrong.isEmpty, "at volume \(volume), frames \(wrong.prefix(4))… are not the cue × volume × \(gain)")
    }
  }

  @Test func aReloadedConfigSetsTheNormalisationForVoicesThatStartAfter() throws {
    let embedded = try EmbeddedDaemon()
    #expect(embedded.daemon.voices.loudness.policy == LoudnessNormalizer.Policy(enabled: false, targetLUFS: -23))
    embedded.daemon.configReader = { () throws(ConfigError) -> ConfigValues in
      var values = ConfigValues()
      values["loudness-normalize"] = true
      values["loudness-target"] = -30
      return values
    }
    let client = embedded.connect()
    #expect(client.request(#"{"id":1,"op":"reload"}"#).isEmpty)
    #expect(embedded.daemon.voices.loudness.policy == LoudnessNormalizer.Policy(enabled: true, targetLUFS: -30))
    embedded.finishBackgroundWork()
  }

  /// The gain that would pass 0 dBFS stops at the peak; a cue without loudness keeps its gain.
  @Test func theNormalizerCapsAtThePeakAndLeavesSilenceAlone() throws {
    let dir = try makeDirectory(["pico.mp3": "tone-48000-mono.mp3", "silence.wav": "silence-8000-mono.wav"])
    let scan = CueLoader(directories: [dir], options: DecodeOptions(), maximumTotalBytes: 1 << 30).scan()
    let pico = try #require(scan.cues["pico"])
    let silence = try #require(scan.cues["silence"])
    var logger = Logger(label: "cued-test")
    logger.logLevel = .critical
    let normalizer = LoudnessNormalizer(policy: .init(enabled: true, targetLUFS: 0), logger: logger)
    let peak = try #require(pico.loudness?.samplePeak)
    // 0 LUFS is far beyond what a −6 dBFS peak allows: the gain is 1 / peak.
    #expect(abs(normalizer.gain(.unity, for: pico).ll - Float(1 / peak)) < 1e-6)
    #expect(normalizer.gain(.unity, for: silence) == .unity)
    normalizer.policy.enabled = false
    #expect(normalizer.gain(.unity, for: pico) == .unity)
  }
}
