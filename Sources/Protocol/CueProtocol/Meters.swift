/// The `meters` op and its event: each voice's and the mix's peak and RMS, sent to the connection
/// that asked, at the rate it asked for, while it asks.

/// The ops of metering, in the order `hello` lists them.
let meterOps: [any RequestFields.Type] = [MetersRequest.self]

/// `meters`: send this connection a `meters` event `rate` times a second (0 stops them).
public struct MetersRequest: RequestFields {
  public static let op = Op("meters", owner: .daemon)
  public typealias Reply = MetersReply
  /// The most meter events a second a connection may ask for.
  public static let maximumRate = 30.0

  /// Events a second, 0 (none) to `maximumRate`.
  public var rate: Double

  public init(rate: Double) { self.rate = rate }

  static let rate = Field.number("rate", 0...maximumRate, "Events a second; 0: none.").required(
    "meters needs \"rate\": events a second, 1 to 30, or 0 to stop them")
  public static var fieldSpecs: [FieldSpec] { [rate.spec] }

  public init(fields: inout FieldReader) throws(ProtocolError) { rate = try fields.read(Self.rate) }

  public var fields: [(String, JSONValue)] { [("rate", .number(rate))] }
}

/// `meters`: the rate in force for this connection now (0: none).
public struct MetersReply: ReplyFields {
  public var rate: Double

  public init(rate: Double) { self.rate = rate }

  public var fields: [(String, JSONValue)] { [("rate", .number(rate))] }

  public init(reply: JSONValue) throws(ProtocolError) {
    var fields = FieldReader(reply)
    rate = try required(fields.double("rate"), "rate", in: "the meters reply")
  }
}

extension Event {
  /// `meters`: the peak and RMS of the mix and of each voice that sounded since the last one.
  public struct Meters: Sendable, Equatable {
    /// Linear sample values (1 is full scale; dBFS is 20·log10 of them).
    public struct Level: Sendable, Equatable {
      /// The largest sample magnitude of either channel.
      public var peak: Double
      /// The root mean square of both channels' samples.
      public var rms: Double

      public init(peak: Double, rms: Double) {
        self.peak = peak
        self.rms = rms
      }

      /// `peak` and `rms`, rounded to 1e-5 (-100 dBFS).
      var fields: [(String, JSONValue)] { [("peak", .number(Self.rounded(peak))), ("rms", .number(Self.rounded(rms)))] }

      static func rounded(_ x: Double) -> Double { (x * 100_000).rounded() / 100_000 }

      static func decode(_ fields: inout FieldReader, in what: String) throws(ProtocolError) -> Level {
        Level(peak: try required(fields.double("peak"), "peak", in: what), rms: try required(fields.double("rms"), "rms", in: what))
      }
    }

    /// One voice's level.
    public struct Voice: Sendable, Equatable {
      public var voice: UInt64
      public var level: Level

      public init(voice: UInt64, level: Level) {
        self.voice = voice
        self.level = level
      }
    }

    /// The mix, after the limiter: what goes to the device.
    public var mix: Level
    /// The voices that sounded, each alone before the limiter, in the mixer's order.
    public var voices: [Voice]

    public init(mix: Level, voices: [Voice]) {
      self.mix = mix
      self.voices = voices
    }

    var fields: [(String, JSONValue)] {
      [
        ("mix", .object(mix.fields)),
        ("voices", .array(voices.map { .object([("voice", .id($0.voice))] + $0.level.fields) })),
      ]
    }

    static func decode(_ fields: inout FieldReader, in what: String) throws(ProtocolError) -> Meters {
      guard let mixValue = fields.take("mix") else { throw ProtocolError(.invalidRequest, "\(what) has no \"mix\"") }
      var mixFields = FieldReader(mixValue)
      let mix = try Level.decode(&mixFields, in: what)
      var voices: [Voice] = []
      for value in fields.take("voices")?.arrayValue ?? [] {
        var voiceFields = FieldReader(value)
        voices.append(
          Voice(voice: try required(voiceFields.id("voice"), "voice", in: what), level: try Level.decode(&voiceFields, in: what)))
      }
      return Meters(mix: mix, voices: voices)
    }
  }
}
