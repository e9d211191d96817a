/// One counter for voice, player and sound ids, so an id names one thing (subscriptions filter by id).
final class IDAllocator {
  private var next: UInt64 = 1

  /// A fresh id, below 2^53 (a daemon would need centuries of plays to get there).
  func make() -> UInt64 {
    precondition(next < 1 << 53, "ran out of ids below 2^53 (the largest integer a JSON number holds exactly)")
    defer { next += 1 }
    return next
  }

  /// The id `make()` returns next, without taking it.
  var peek: UInt64 { next }
}
