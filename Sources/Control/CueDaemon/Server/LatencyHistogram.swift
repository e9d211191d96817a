import CueProtocol

/// Latencies in a fixed histogram: 1 µs buckets to 10 ms, then 100 µs buckets to 1 s. No allocation
/// per sample; percentiles to the bucket's width. Control side only.
struct LatencyHistogram {
  private var fine = [UInt64](repeating: 0, count: 10_000)  // 0 ..< 10 ms, 1 µs each
  private var coarse = [UInt64](repeating: 0, count: 10_000)  // 10 ms ..< 1 s, 100 µs each
  private(set) var count: UInt64 = 0
  private(set) var maximumNanoseconds: UInt64 = 0

  mutating func record(nanoseconds: UInt64) {
    count += 1
    maximumNanoseconds = max(maximumNanoseconds, nanoseconds)
    let micros = nanoseconds / 1000
    if micros < 10_000 {
      fine[Int(micros)] += 1
    } else {
      coarse[Int(min((micros - 10_000) / 100, 9_999))] += 1
    }
  }

  /// The latency (µs) below which `fraction` of the samples fall.
  func percentile(_ fraction: Double) -> Double {
    guard count > 0 else { return 0 }
    let target = UInt64((Double(count) * fraction).rounded(.up))
    var seen: UInt64 = 0
    for (index, n) in fine.enumerated() where n > 0 {
      seen += n
      if seen >= target { return Double(index) + 1 }
    }
    for (index, n) in coarse.enumerated() where n > 0 {
      seen += n
      if seen >= target { return 10_000 + Double(index + 1) * 100 }
    }
    return Double(maximumNanoseconds) / 1000
  }

  /// The figures `status` reports.
  var summary: StatusReply.Latency {
    StatusReply.Latency(
      count: Int(count), p50Us: percentile(0.5), p99Us: percentile(0.99), maxUs: Double(maximumNanoseconds) / 1000)
  }
}
