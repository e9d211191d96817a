import CueDecoding

/// What the decoder fuzzer checks of one input: any bytes at all, as a file named in the sound
/// directories could hold, go through the sniffers and the decoders (`AudioFileDecoder`: MP3 with
/// libmpg123, Ogg Vorbis and Opus and WAV with libsndfile, FLAC with libFLAC) and come back as a cue
/// or as a reason; never as a crash, a hang, or samples that would poison the mix.
enum DecodeFuzzing {
  struct Outcome {
    var decoded = 0
    var refused = 0
    var frames = 0

    static func += (a: inout Outcome, b: Outcome) {
      a.decoded += b.decoded
      a.refused += b.refused
      a.frames += b.frames
    }
  }

  struct Broken: Error, CustomStringConvertible {
    let description: String
  }

  /// Short cues only, and small files: the fuzzer's inputs are small, and a "file" that claims
  /// an hour of audio must be refused before it is decoded, not decoded slowly.
  static let options = DecodeOptions(outputRate: 48000, maximumSeconds: 5, maximumFileBytes: 1 << 20)

  static func check(_ bytes: [UInt8]) throws(Broken) -> Outcome {
    let cue: DecodedCue
    do {
      cue = try AudioFileDecoder.decode(bytes: bytes, name: "fuzz-input", options: options)
    } catch {
      guard !error.reason.isEmpty else { throw Broken(description: "a refusal without a reason") }
      return Outcome(decoded: 0, refused: 1, frames: 0)
    }
    guard cue.buffer.frameCount >= 1 else { throw Broken(description: "a cue of no frames was returned instead of a reason") }
    guard (1...2).contains(cue.sourceChannels) else { throw Broken(description: "\(cue.sourceChannels) source channels") }
    guard cue.buffer.frameCount <= 6 * 48000 else { throw Broken(description: "\(cue.buffer.frameCount) frames: past the 5 s limit") }
    let samples = cue.buffer.toArray()
    if let bad = samples.firstIndex(where: { !$0.isFinite }) {
      throw Broken(description: "sample \(bad) is \(samples[bad]): it would poison the mix")
    }
    return Outcome(decoded: 1, refused: 0, frames: cue.buffer.frameCount)
  }
}
