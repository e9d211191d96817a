/// Conversions from the mix (interleaved Float32, nominally -1...1) to what a device takes, in one
/// place for every backend (miniaudio keeps its converters in its core the same way). Audio thread:
/// plain loops over caller-owned memory, no allocation.
public enum SampleConversion {
  /// Signed 16-bit: clamps to -1...1, scales by 32767 and rounds to nearest (so 1.0 → 32767,
  /// -1.0 → -32767, 0.5 → 16384), as ALSA's float-to-S16 plugin does.
  public static func int16(from source: UnsafePointer<Float>, count: Int, into destination: UnsafeMutablePointer<Int16>) {
    for i in 0..<count {
      let x = max(-1, min(1, source[i]))
      destination[i] = Int16((x * 32767).rounded())
    }
  }
}
