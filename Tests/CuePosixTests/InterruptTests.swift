import CuePosix
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Times SIGUSR2's handler ran.
private let interruptions = Atomic<Int>(0)

/// Serialized: both tests install a handler for SIGUSR2. Each unblocks the signal in the thread it
/// interrupts, since the test runner's worker threads (libdispatch's) start with signals blocked.
@Suite("CuePosix: EINTR is retried in one place", .serialized)
struct InterruptTests {
  private final class Outcome: Sendable {
    let thread = Mutex<pthread_t?>(nil)
    let result = Mutex<Result<FileDescriptor.IOResult, SystemError>?>(nil)
  }

  /// Installs a handler for SIGUSR2 that counts `interruptions`, without SA_RESTART, so the kernel
  /// fails a blocking call with EINTR instead of restarting it; returns the previous action.
  private func countInterruptions() throws -> sigaction {
    var action = sigaction()
    action.__sigaction_handler.sa_handler = { _ in interruptions.add(1, ordering: .relaxed) }
    action.sa_flags = 0
    sigemptyset(&action.sa_mask)
    var previous = sigaction()
    try #require(sigaction(SIGUSR2, &action, &previous) == 0)
    return previous
  }

  /// A blocking read interrupted by a signal whose handler was installed without SA_RESTART fails
  /// with EINTR in the kernel; the wrapper must retry it and return the byte written afterwards.
  @Test func aReadInterruptedByASignalIsRetried() throws {
    var previous = try countInterruptions()
    defer { sigaction(SIGUSR2, &previous, nil) }

    let (readEnd, writeEnd) = try FileDescriptor.pipe()
    defer {
      readEnd.close()
      writeEnd.close()
    }
    let outcome = Outcome()
    let before = interruptions.load(ordering: .relaxed)
    let reader = try Threads.Joinable(name: "eintr-reader") {
      unblock(SIGUSR2)
      outcome.thread.withLock { $0 = pthread_self() }
      var byte: UInt8 = 0
      let result = withUnsafeMutableBytes(of: &byte) { raw in
        Result { () throws(SystemError) -> FileDescriptor.IOResult in try readEnd.read(into: raw) }
      }
      outcome.result.withLock { $0 = result }
    }
    while outcome.thread.withLock({ $0 }) == nil { MonotonicClock.sleep(seconds: 0.001) }
    let thread = outcome.thread.withLock { $0 }!
    // Interrupt the read (blocked by now) a few times, then let it complete.
    for _ in 0..<3 {
      MonotonicClock.sleep(seconds: 0.05)
      #expect(pthread_kill(thread, SIGUSR2) == 0)
    }
    MonotonicClock.sleep(seconds: 0.05)
    #expect(outcome.result.withLock { $0 } == nil, "the read returned before any byte was written")
    try writeEnd.writeAll([42], isSocket: false)
    reader.join()

    #expect(interruptions.load(ordering: .relaxed) - before == 3)
    #expect(try outcome.result.withLock { $0 }?.get() == .bytes(1))
  }

  @Test func aSleepLastsItsTimeDespiteSignals() throws {
    var previous = try countInterruptions()
    defer { sigaction(SIGUSR2, &previous, nil) }
    let outcome = Outcome()
    let slept = Mutex<UInt64>(0)
    let before = interruptions.load(ordering: .relaxed)
    let sleeper = try Threads.Joinable(name: "sleeper") {
      unblock(SIGUSR2)
      outcome.thread.withLock { $0 = pthread_self() }
      let began = MonotonicClock.nanoseconds()
      MonotonicClock.sleep(seconds: 0.2)
      slept.withLock { $0 = MonotonicClock.nanoseconds() - began }
    }
    while outcome.thread.withLock({ $0 }) == nil { MonotonicClock.sleep(seconds: 0.001) }
    MonotonicClock.sleep(seconds: 0.05)
    #expect(pthread_kill(outcome.thread.withLock { $0 }!, SIGUSR2) == 0)
    sleeper.join()
    #expect(interruptions.load(ordering: .relaxed) - before == 1)
    #expect(slept.withLock { $0 } >= 200_000_000)
  }
}
