// cued-bench: the in-process benchmarks behind `make bench` (bench/run.py runs the rest).
//
//   cued-bench mixer [--seconds S]     cost per voice-frame (diagonal, panned, ramping, varispeed) and
//                                      the share of one core that mixing 256 voices at 48 kHz takes
//   cued-bench decode FILE [--repeat N] [--dump OUT.f32]
//                                      decode + rate conversion time of one file with MP3Decoder (best
//                                      of N, with the page faults of that run, and the warnings);
//                                      --dump writes the decoded interleaved stereo as raw float32
//   cued-bench loudness FILE... [--repeat N]
//                                      the EBU R128 measurement cued makes of each cue at load
//                                      (`Loudness.measure` on the decoded cue, best of N), and its result
//
// Prints one JSON object per line. Build it in release (`swift build -c release`).
import CueDecoding
import CueCore
import CuePosix

#if canImport(Glibc)
import Glibc
#endif

func now() -> UInt64 { MonotonicClock.nanoseconds() }

func jsonString(_ text: String) -> String {
  var out = "\""
  for scalar in text.unicodeScalars {
    switch scalar {
    case "\"": out += "\\\""
    case "\\": out += "\\\\"
    case _ where scalar.value < 0x20: out += "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count) + String(scalar.value, radix: 16)
    default: out.unicodeScalars.append(scalar)
    }
  }
  return out + "\""
}

func emit(_ fields: [(String, String)]) {
  print("{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}")
}

func cue(frames: Int) -> SampleBuffer {
  var samples = [Float](repeating: 0, count: frames * 2)
  for i in 0..<frames {
    samples[2 * i] = Float((i * 7919) % 2000) / 4000 - 0.25
    samples[2 * i + 1] = Float((i * 104_729) % 2000) / 4000 - 0.25
  }
  return SampleBuffer(interleaved: samples)
}

/// Renders `seconds` of audio at 48 kHz with `voices` voices set up by `configure`; returns ns per voice-frame and the core share.
func mixer(voices count: Int, seconds: Double, label: String, configure: (Mixer, CueSamples, Int) -> Void) {
  let source = cue(frames: 48_000)
  let mixer = Mixer(voiceCapacity: count + 8)
  for i in 0..<count { configure(mixer, source.samples, i) }
  let period = 240
  let bus = UnsafeMutablePointer<Float>.allocate(capacity: period * 2)
  defer { bus.deallocate() }
  let periods = Int(seconds * 48_000) / period
  mixer.render(into: bus, frameCount: period)
  let began = now()
  for _ in 0..<periods { mixer.render(into: bus, frameCount: period) }
  let elapsed = Double(now() - began)
  let voiceFrames = Double(periods * period * count)
  emit([
    ("benchmark", "\"mixer\""), ("case", "\"\(label)\""), ("voices", "\(count)"),
    ("nsPerVoiceFrame", String(elapsed / voiceFrames)), ("coreShare", String(elapsed / 1e9 / seconds)),
  ])
}

let arguments = Array(CommandLine.arguments.dropFirst())
func option(_ name: String, _ fallback: Double) -> Double {
  guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count, let value = Double(arguments[index + 1]) else { return fallback }
  return value
}

switch arguments.first {
case "mixer":
  let seconds = option("--seconds", 2)
  for voices in [1, 32, 256] {
    mixer(voices: voices, seconds: seconds, label: "unity") { m, s, i in
      _ = m.start(VoiceStart(id: VoiceID(UInt64(i)), samples: s, gain: .unity, loops: .forever))
    }
  }
  mixer(voices: 256, seconds: seconds, label: "panned") { m, s, i in
    let gain = StereoGain.voice(volume: 0.5, pan: Double(i % 9) / 4 - 1, sourceIsMono: false)
    _ = m.start(VoiceStart(id: VoiceID(UInt64(i)), samples: s, gain: gain, loops: .forever))
  }
  mixer(voices: 256, seconds: seconds, label: "ramping") { m, s, i in
    // A fade-in as long as the run: every frame ramps.
    _ = m.start(VoiceStart(id: VoiceID(UInt64(i)), samples: s, gain: .unity, loops: .forever, fadeInFrames: Int(seconds * 48_000) + 480))
  }
  mixer(voices: 256, seconds: seconds, label: "varispeed") { m, s, i in
    _ = m.start(VoiceStart(id: VoiceID(UInt64(i)), samples: s, gain: .unity, loops: .forever, rate: 1.25))
  }
case "decode":
  guard arguments.count >= 2 else {
    print("usage: cued-bench decode FILE [--repeat N] [--dump OUT.f32]")
    exit(2)
  }
  let repeats = Int(option("--repeat", 5))
  var best = UInt64.max
  var bestFaults = 0
  var frames = 0
  var sourceRate = 0
  var warnings: [String] = []
  var last: SampleBuffer? = nil
  func minorFaults() -> Int {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return usage.ru_minflt
  }
  for _ in 0..<max(repeats, 1) {
    last = nil  // free the previous run's samples before timing the next one
    let faults = minorFaults()
    let began = now()
    do {
      let decoded = try MP3Decoder.decode(path: arguments[1], options: DecodeOptions(maximumSeconds: 3600, maximumFileBytes: 1 << 30))
      let elapsed = now() - began
      if elapsed < best { best = elapsed; bestFaults = minorFaults() - faults }
      frames = decoded.buffer.frameCount
      sourceRate = decoded.sourceRate
      warnings = decoded.warnings
      last = decoded.buffer
    } catch {
      print("{\"error\":\(jsonString(error.description))}")
      exit(1)
    }
  }
  if let index = arguments.firstIndex(of: "--dump"), index + 1 < arguments.count, let buffer = last {
    let path = arguments[index + 1]
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    var offset = 0
    let total = buffer.byteCount
    let base = UnsafeRawPointer(buffer.samples.base)
    while fd >= 0 && offset < total {
      let n = write(fd, base + offset, total - offset)
      if n <= 0 { break }
      offset += n
    }
    if fd < 0 || offset != total { print("{\"error\":\(jsonString("cannot write \(path)"))}"); exit(1) }
    close(fd)
  }
  emit([
    ("benchmark", "\"decode\""), ("file", jsonString(arguments[1])), ("seconds", String(Double(best) / 1e9)),
    ("frames", "\(frames)"), ("sourceRate", "\(sourceRate)"), ("pageFaults", "\(bestFaults)"),
    ("warnings", "[" + warnings.map(jsonString).joined(separator: ",") + "]"),
  ])
case "loudness":
  let repeats = max(Int(option("--repeat", 20)), 1)
  let files = arguments.dropFirst().prefix { !$0.hasPrefix("--") }
  guard !files.isEmpty else {
    print("usage: cued-bench loudness FILE... [--repeat N]")
    exit(2)
  }
  for file in files {
    let decoded: DecodedCue
    do {
      decoded = try AudioFileDecoder.decode(path: file)
    } catch {
      print("{\"error\":\(jsonString(error.description))}")
      exit(1)
    }
    var best = UInt64.max
    var measured: LoudnessMeasurement? = nil
    for _ in 0..<repeats {
      let began = now()
      measured = Loudness.measure(decoded.buffer, sampleRate: 48000)
      best = min(best, now() - began)
    }
    func number(_ x: Double?) -> String { x.map { String($0) } ?? "null" }
    emit([
      ("benchmark", "\"loudness\""), ("file", jsonString(file)), ("frames", "\(decoded.buffer.frameCount)"),
      ("seconds", String(Double(best) / 1e9)), ("lufs", number(measured?.integratedLUFS)),
      ("peakDBFS", number(measured?.samplePeakDBFS)),
    ])
  }
default:
  print("usage: cued-bench mixer [--seconds S] | decode FILE [--repeat N] [--dump OUT.f32] | loudness FILE... [--repeat N]")
  exit(2)
}
