/// A 2×2 gain matrix applied to a stereo source: volume and pan in one place.
///
/// `outL = ll·inL + lr·inR`, `outR = rl·inL + rr·inR`. Linear gains. Interpolating two matrices
/// element by element gives click-free fades of volume and pan alike.
public struct StereoGain: Sendable, BitwiseCopyable, Equatable {
  public var ll: Float
  public var lr: Float
  public var rl: Float
  public var rr: Float

  public init(ll: Float, lr: Float, rl: Float, rr: Float) {
    self.ll = ll
    self.lr = lr
    self.rl = rl
    self.rr = rr
  }

  public static let unity = StereoGain(ll: 1, lr: 0, rl: 0, rr: 1)
  public static let silent = StereoGain(ll: 0, lr: 0, rl: 0, rr: 0)

  /// Every element times `factor` (a group's volume, a random volume spread, loudness
  /// normalisation); a factor above 1 is kept, and the bus limiter catches what it pushes over.
  @inline(__always)
  public func scaled(by factor: Float) -> StereoGain {
    StereoGain(ll: ll * factor, lr: lr * factor, rl: rl * factor, rr: rr * factor)
  }

  /// True when the matrix has no cross terms (each output reads only its own input).
  @inline(__always)
  public var isDiagonal: Bool { lr == 0 && rl == 0 }

  /// The gains for a voice at `volume` (linear, 0...1) and `pan` (-1 left ... +1 right).
  ///
  /// Pan 0 is exactly `volume` on the diagonal, so volume 1 reproduces the decoded samples bit
  /// for bit. Off centre the law keeps power constant:
  /// - a mono source (both channels equal) uses the sin/cos law scaled so that centre is unity:
  ///   `gL = √2·cos θ`, `gR = √2·sin θ` with `θ = (pan + 1)·π/4` (hard left is +3 dB on the left);
  /// - a stereo source folds the far channel into the near one (the Web Audio stereo panner):
  ///   for pan < 0, `outL = inL + inR·cos(x·π/2)` and `outR = inR·sin(x·π/2)` with `x = pan + 1`;
  ///   mirrored for pan > 0. Nothing of the source is lost at either extreme.
  /// Inputs outside their ranges are clamped; NaN counts as 0.
  public static func voice(volume: Double, pan: Double, sourceIsMono: Bool) -> StereoGain {
    let v = Float(clampUnit(volume, lower: 0))
    let p = clampUnit(pan, lower: -1)
    if p == 0 { return StereoGain(ll: v, lr: 0, rl: 0, rr: v) }
    if sourceIsMono {
      let theta = (p + 1) * (Double.pi / 4)
      let root2 = 2.0.squareRoot()
      return StereoGain(ll: v * Float(root2 * Trig.cos(theta)), lr: 0, rl: 0, rr: v * Float(root2 * Trig.sin(theta)))
    }
    if p < 0 {
      let x = (p + 1) * (Double.pi / 2)
      return StereoGain(ll: v, lr: v * Float(Trig.cos(x)), rl: 0, rr: v * Float(Trig.sin(x)))
    } else {
      let x = p * (Double.pi / 2)
      return StereoGain(ll: v * Float(Trig.cos(x)), lr: 0, rl: v * Float(Trig.sin(x)), rr: v)
    }
  }

  private static func clampUnit(_ x: Double, lower: Double) -> Double {
    guard x == x else { return 0 }
    return min(max(x, lower), 1)
  }
}

/// Sine and cosine on [0, π/2] without libm, so the core stays free of C. Accurate to ~1e-15.
enum Trig {
  static func sin(_ x: Double) -> Double {
    // Taylor series; x ≤ π/2 so 10 terms reach double precision.
    let x2 = x * x
    var term = x
    var sum = x
    for k in 1...10 {
      term *= -x2 / Double((2 * k) * (2 * k + 1))
      sum += term
    }
    return sum
  }

  static func cos(_ x: Double) -> Double {
    let x2 = x * x
    var term = 1.0
    var sum = 1.0
    for k in 1...10 {
      term *= -x2 / Double((2 * k - 1) * (2 * k))
      sum += term
    }
    // cos(π/2) comes out as ~6e-17, not 0: a hard-panned voice must leave the far channel silent.
    return abs(sum) < 1e-12 ? 0 : sum
  }
}
