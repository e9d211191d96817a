/// How a voice of the `voices` reply sounds now, after the chain: its group, the client that
/// played it, and its gain and pan (the play's volume and pan × loudness normalisation × the
/// group's volume, mute and ducking).
public struct VoiceMix: Sendable, Equatable {
  /// Its group (bus).
  public var group: String
  /// The `hello` name of the connection that played it; nil when it gave none, or for paging.
  public var client: String?
  /// The linear gain of the whole chain for a centred source (its power over both channels).
  public var gain: Double
  /// Where it sits, -1 (left) to +1 (right), read back from the chain's two channels.
  public var pan: Double

  public init(group: String, client: String? = nil, gain: Double, pan: Double) {
    self.group = group
    self.client = client
    self.gain = gain
    self.pan = pan
  }

  /// The mix of a voice whose chain sends `left` and `right` of a centred unit source to the two
  /// outputs: power-preserving gain, and the pan of the sin/cos law that would give them.
  public init(group: String, client: String?, left: Double, right: Double) {
    let gain = ((left * left + right * right) / 2).squareRoot()
    let angle = gain > 0 ? Self.atan2(right, left) : Double.pi / 4
    self.init(group: group, client: client, gain: Self.rounded(gain), pan: Self.rounded(angle * 4 / Double.pi - 1))
  }

  static func rounded(_ x: Double) -> Double { (x * 10_000).rounded() / 10_000 }

  /// atan2 for y, x ≥ 0 (the standard library has no trigonometry), by a few series terms after
  /// folding into [0, π/8]: exact to 1e-7, which the 1e-4 rounding hides.
  static func atan2(_ y: Double, _ x: Double) -> Double {
    if x == 0 { return y == 0 ? 0 : Double.pi / 2 }
    let t = y / x
    if t > 1 { return Double.pi / 2 - atan(1 / t) }
    return atan(t)
  }

  private static func atan(_ t: Double) -> Double {
    // tan(π/8) = √2 - 1: above it, atan t = π/8 + atan((t - k) / (1 + t k)).
    let k = 2.0.squareRoot() - 1
    if t > k { return Double.pi / 8 + atan((t - k) / (1 + t * k)) }
    var term = t
    var sum = t
    let square = t * t
    for n in 1...12 {
      term *= -square
      sum += term / Double(2 * n + 1)
    }
    return sum
  }

  var fields: [(String, JSONValue)] {
    [("group", .string(group))] + (client.map { [("client", JSONValue.string($0))] } ?? []) + [("gain", .number(gain)), ("pan", .number(pan))]
  }

  static func decode(_ fields: inout FieldReader, in what: String) throws(ProtocolError) -> VoiceMix? {
    guard let group = try fields.string("group") else { return nil }
    return VoiceMix(
      group: group, client: try fields.string("client"), gain: try required(fields.double("gain"), "gain", in: what),
      pan: try required(fields.double("pan"), "pan", in: what))
  }
}
