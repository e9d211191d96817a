import Foundation

/// A 16-bit stereo WAV at 48 kHz whose every sample is `value` (so the output says which file
/// played: libsndfile reads it as exactly value/32768, and unity gain keeps it).
public func writeConstantWAV(_ path: String, frames: Int, value: Int16) throws {
  var bytes: [UInt8] = []
  func u32(_ x: UInt32) { withUnsafeBytes(of: x.littleEndian) { bytes += $0 } }
  func u16(_ x: UInt16) { withUnsafeBytes(of: x.littleEndian) { bytes += $0 } }
  let dataBytes = UInt32(frames * 4)
  bytes += Array("RIFF".utf8); u32(36 + dataBytes); bytes += Array("WAVE".utf8)
  bytes += Array("fmt ".utf8); u32(16); u16(1); u16(2); u32(48000); u32(48000 * 4); u16(4); u16(16)
  bytes += Array("data".utf8); u32(dataBytes)
  for _ in 0..<(frames * 2) { u16(UInt16(bitPattern: value)) }
  try Data(bytes).write(to: URL(fileURLWithPath: path))
}

/// Runs of non-zero left-channel samples in interleaved stereo output: (the middle sample × 32768,
/// frames). A run ends at silence or, with `splittingOnChange`, where the value changes (sounds back to back).
public func constantRuns(_ output: [Float], splittingOnChange: Bool = true) -> [(value: Int, frames: Int)] {
  var runs: [(value: Int, frames: Int)] = []
  var f = 0
  let frames = output.count / 2
  while f < frames {
    let x = output[2 * f]
    guard x != 0 else { f += 1; continue }
    var end = f
    while end < frames && output[2 * end] != 0 && (!splittingOnChange || output[2 * end] == x) { end += 1 }
    runs.append((Int((output[2 * (f + (end - f) / 2)] * 32768).rounded()), end - f))
    f = end
  }
  return runs
}

/// The frame of interleaved stereo `output`, at or after `from`, where `expected` is heard whole,
/// sample for sample; nil if it is not.
public func frameHolding(_ expected: [Float], in output: [Float], from: Int) -> Int? {
  let lead = (0..<(expected.count / 2)).first { expected[2 * $0] != 0 || expected[2 * $0 + 1] != 0 } ?? 0
  let frames = expected.count / 2
  guard output.count / 2 >= frames, from <= output.count / 2 - frames else { return nil }
  for start in from...(output.count / 2 - frames) where output[2 * (start + lead)] == expected[2 * lead] {
    if output[(2 * start)..<(2 * start + expected.count)].elementsEqual(expected) { return start }
  }
  return nil
}
