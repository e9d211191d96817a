/// `status`'s counters: carousel decisions (`paging`), silent plays by reason (`silenced`), and the
/// trigger latency (`triggerLatency`).
extension StatusReply {
  /// How many carousel messages ended in each decision; a decision never counted reads 0.
  public struct PagingCounts: Sendable, Equatable {
    /// Only the non-zero counts, so that equal tallies compare equal.
    private var counts: [PagingDecision: Int] = [:]
    /// Carousel messages that arrived out of the scroll lifecycle's order (handled all the same).
    public var outOfOrder = 0
    /// Scrolls that settled (the derived moment: drag ended without deceleration, deceleration or animation ended).
    public var settled = 0

    public init(_ counts: [PagingDecision: Int] = [:]) {
      for (decision, count) in counts { self[decision] = count }
    }

    public subscript(decision: PagingDecision) -> Int {
      get { counts[decision] ?? 0 }
      set { counts[decision] = newValue == 0 ? nil : newValue }
    }
  }

  /// How many plays were silent, by reason; a reason never counted reads 0.
  public struct SilencedCounts: Sendable, Equatable {
    private var counts: [SilenceReason: Int] = [:]

    public init(_ counts: [SilenceReason: Int] = [:]) {
      for (reason, count) in counts { self[reason] = count }
    }

    public subscript(reason: SilenceReason) -> Int {
      get { counts[reason] ?? 0 }
      set { counts[reason] = newValue == 0 ? nil : newValue }
    }

    /// Every reason, in `SilenceReason` order.
    var json: JSONValue { .object(SilenceReason.allCases.map { ($0.rawValue, .int(self[$0])) }) }

    init(json: JSONValue) throws(ProtocolError) {
      var fields = FieldReader(json)
      for reason in SilenceReason.allCases { self[reason] = try fields.integer(reason.rawValue) ?? 0 }
    }
  }

  /// Request-to-first-frame latency of plays: the count and percentiles, in microseconds.
  public struct Latency: Sendable, Equatable {
    public var count: Int
    public var p50Us: Double
    public var p99Us: Double
    public var maxUs: Double

    public init(count: Int = 0, p50Us: Double = 0, p99Us: Double = 0, maxUs: Double = 0) {
      self.count = count
      self.p50Us = p50Us
      self.p99Us = p99Us
      self.maxUs = maxUs
    }

    /// `{"count":…,"p50Us":…,"p99Us":…,"maxUs":…}`.
    public var json: JSONValue {
      .object([("count", .int(count)), ("p50Us", .number(p50Us)), ("p99Us", .number(p99Us)), ("maxUs", .number(maxUs))])
    }

    init(json: JSONValue) throws(ProtocolError) {
      var fields = FieldReader(json)
      let what = "the status reply's triggerLatency"
      count = try required(fields.integer("count"), "count", in: what)
      p50Us = try required(fields.double("p50Us"), "p50Us", in: what)
      p99Us = try required(fields.double("p99Us"), "p99Us", in: what)
      maxUs = try required(fields.double("maxUs"), "maxUs", in: what)
    }
  }
}
