// Runs on the audio thread: see the rules at the top of Mixer.swift.

/// The inner loops of the mixer: add a gained stereo source into the bus.
@usableFromInline
enum MixKernels {
  /// Adds `frameCount` frames of `source` × `gain` into `bus`. Interleaved stereo on both sides.
  ///
  /// The diagonal case (no pan fold-over, the common one) runs four samples at a time as SIMD;
  /// `1 · x + 0` is exact, so unity gain reproduces the source bit for bit.
  @inline(__always)
  static func mix(
    _ source: UnsafePointer<Float>, into bus: UnsafeMutablePointer<Float>, frameCount: Int, gain: StereoGain
  ) {
    if gain.isDiagonal {
      let g = SIMD4<Float>(gain.ll, gain.rr, gain.ll, gain.rr)
      let pairs = frameCount / 2
      let rawSource = UnsafeRawPointer(source)
      let rawBus = UnsafeMutableRawPointer(bus)
      for k in 0..<pairs {
        let offset = k * MemoryLayout<SIMD4<Float>>.stride
        let s = rawSource.loadUnaligned(fromByteOffset: offset, as: SIMD4<Float>.self)
        let b = rawBus.loadUnaligned(fromByteOffset: offset, as: SIMD4<Float>.self)
        rawBus.storeBytes(of: b + s * g, toByteOffset: offset, as: SIMD4<Float>.self)
      }
      if frameCount & 1 == 1 {
        let i = (frameCount - 1) * 2
        bus[i] += source[i] * gain.ll
        bus[i + 1] += source[i + 1] * gain.rr
      }
    } else {
      for f in 0..<frameCount {
        let l = source[2 * f]
        let r = source[2 * f + 1]
        bus[2 * f] += gain.ll * l + gain.lr * r
        bus[2 * f + 1] += gain.rl * l + gain.rr * r
      }
    }
  }

  /// As `mix`, with the gain moving by `step` every frame; `gain` is left at its value after the last frame.
  @inline(__always)
  static func mixRamped(
    _ source: UnsafePointer<Float>, into bus: UnsafeMutablePointer<Float>, frameCount: Int,
    gain: inout StereoGain, step: StereoGain
  ) {
    var g = gain
    for f in 0..<frameCount {
      let l = source[2 * f]
      let r = source[2 * f + 1]
      bus[2 * f] += g.ll * l + g.lr * r
      bus[2 * f + 1] += g.rl * l + g.rr * r
      g.ll += step.ll
      g.lr += step.lr
      g.rl += step.rl
      g.rr += step.rr
    }
    gain = g
  }
}

/// Keeps the mixed bus inside [-1, 1] without wrapping or hard clipping.
///
/// Samples with magnitude up to `knee` pass untouched (so a single voice at unity is exact);
/// above it a soft curve `knee + (1 - knee)·u/(1 + u)` with `u = (|x| - knee)/(1 - knee)` approaches
/// full scale smoothly, with slope 1 at the knee. Per sample, no state, no lookahead.
public enum SoftLimiter {
  @inline(__always)
  public static func limit(_ x: Float, knee: Float) -> Float {
    let magnitude = abs(x)
    if magnitude <= knee { return x }
    if !magnitude.isFinite { return x.isNaN ? 0 : (x < 0 ? -1 : 1) }
    let room = 1 - knee
    let u = (magnitude - knee) / room
    let shaped = knee + room * (u / (1 + u))
    return x < 0 ? -shaped : shaped
  }

  @inline(__always)
  public static func apply(_ bus: UnsafeMutablePointer<Float>, sampleCount: Int, knee: Float) {
    for i in 0..<sampleCount {
      let x = bus[i]
      if abs(x) > knee || x.isNaN { bus[i] = limit(x, knee: knee) }
    }
  }
}
