import CueCore
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("Lock-free SPSC ring")
struct RingTests {
  @Test func capacityRoundsUpToAPowerOfTwo() {
    #expect(SPSCRing<Int>(minimumCapacity: 1).capacity == 1)
    #expect(SPSCRing<Int>(minimumCapacity: 5).capacity == 8)
    #expect(SPSCRing<Int>(minimumCapacity: 1024).capacity == 1024)
  }

  @Test func popsInPushOrderAndReportsEmpty() {
    let ring = SPSCRing<Int>(minimumCapacity: 4)
    #expect(ring.pop() == nil)
    for i in 1...3 { #expect(ring.push(i)) }
    #expect(ring.count == 3)
    #expect(ring.pop() == 1)
    #expect(ring.pop() == 2)
    #expect(ring.pop() == 3)
    #expect(ring.pop() == nil)
    #expect(ring.isEmpty)
  }

  @Test func aFullRingRefusesWithoutLosingWhatItHolds() {
    let ring = SPSCRing<Int>(minimumCapacity: 4)
    for i in 0..<4 { #expect(ring.push(i)) }
    #expect(!ring.push(99))
    #expect(ring.pop() == 0)
    #expect(ring.push(4))
    #expect((0..<4).map { _ in ring.pop() } == [1, 2, 3, 4])
  }

  @Test func indicesWrapAroundManyTimes() {
    let ring = SPSCRing<UInt64>(minimumCapacity: 8)
    var expected: UInt64 = 0
    for i: UInt64 in 0..<10_000 {
      #expect(ring.push(i))
      if i % 3 == 0 { continue }
      while let v = ring.pop() {
        #expect(v == expected)
        expected += 1
      }
    }
  }

  /// One producer thread and one consumer thread: every value arrives once, in order.
  @Test func twoThreadsPassEveryValueInOrder() {
    final class Shared: @unchecked Sendable {
      let ring = SPSCRing<UInt64>(minimumCapacity: 64)
      var received: [UInt64] = []
    }
    let shared = Shared()
    let total: UInt64 = 200_000
    var producer = pthread_t()
    let context = Unmanaged.passRetained(shared).toOpaque()
    pthread_create(&producer, nil, { raw in
      let shared = Unmanaged<Shared>.fromOpaque(raw!).takeRetainedValue()
      var next: UInt64 = 0
      while next < 200_000 {
        if shared.ring.push(next) { next += 1 }
      }
      return nil
    }, context)
    shared.received.reserveCapacity(Int(total))
    while UInt64(shared.received.count) < total {
      if let v = shared.ring.pop() { shared.received.append(v) }
    }
    pthread_join(producer, nil)
    #expect(shared.received.count == Int(total))
    #expect(shared.received == Array(0..<total))
  }
}
