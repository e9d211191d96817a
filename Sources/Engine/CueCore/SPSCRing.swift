import Synchronization

/// A fixed-size, lock-free, single-producer single-consumer queue of plain values.
///
/// The contract (as in PipeWire's spa_ringbuffer): exactly one thread pushes and exactly one thread
/// pops, for the life of the ring. Neither side ever blocks, allocates or locks; `push` fails when
/// the ring is full and `pop` returns nil when it is empty. Elements are `BitwiseCopyable`, so no
/// reference count can be touched (or dropped to zero) on the consumer's thread: a class reference
/// in a message is a compile error.
///
/// Memory order: the producer writes the slot, then publishes `tail` with release; the consumer
/// reads `tail` with acquire before reading the slot, then publishes `head` with release so that
/// the producer may reuse the slot.
public final class SPSCRing<Element: BitwiseCopyable>: @unchecked Sendable {
  /// How many elements fit; a power of two.
  public let capacity: Int
  private let mask: Int
  private let storage: UnsafeMutablePointer<Element>
  /// Next slot to read; written by the consumer only.
  private let head = Atomic<Int>(0)
  /// Next slot to write; written by the producer only.
  private let tail = Atomic<Int>(0)

  /// Creates a ring holding at least `minimumCapacity` elements (rounded up to a power of two).
  public init(minimumCapacity: Int) {
    precondition(minimumCapacity > 0, "a ring needs room for at least one element")
    var size = 1
    while size < minimumCapacity { size <<= 1 }
    capacity = size
    mask = size - 1
    storage = .allocate(capacity: size)
  }

  deinit {
    storage.deallocate()
  }

  /// Appends `element`; returns false (and drops nothing already queued) when the ring is full. Producer only.
  @inline(__always)
  public func push(_ element: Element) -> Bool {
    let t = tail.load(ordering: .relaxed)
    let h = head.load(ordering: .acquiring)
    if t &- h >= capacity { return false }
    (storage + (t & mask)).initialize(to: element)
    tail.store(t &+ 1, ordering: .releasing)
    return true
  }

  /// Removes and returns the oldest element, or nil when the ring is empty. Consumer only.
  @inline(__always)
  public func pop() -> Element? {
    let h = head.load(ordering: .relaxed)
    let t = tail.load(ordering: .acquiring)
    if h == t { return nil }
    let element = (storage + (h & mask)).pointee
    head.store(h &+ 1, ordering: .releasing)
    return element
  }

  /// The number of queued elements; exact on either side's own thread, a snapshot elsewhere.
  public var count: Int {
    let t = tail.load(ordering: .acquiring)
    let h = head.load(ordering: .acquiring)
    return t &- h
  }

  /// True when nothing is queued (a snapshot from the other side's point of view).
  public var isEmpty: Bool { count == 0 }
}
