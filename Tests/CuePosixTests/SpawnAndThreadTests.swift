import CuePosix
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("CuePosix: child processes")
struct SpawnTests {
  @Test func runCapturesStandardOutputAndTheExitStatus() throws {
    let result = try Spawn.run("/bin/sh", ["-c", "printf 'hello\\nworld'; exit 3"])
    #expect(String(decoding: result.output, as: UTF8.self) == "hello\nworld")
    #expect(result.status == 3)
    #expect(!result.timedOut)
  }

  @Test func runKeepsAtMostTheLimit() throws {
    let result = try Spawn.run("/bin/sh", ["-c", "printf 0123456789"], limit: 4)
    #expect(result.output == Array("0123".utf8))
    #expect(result.status == 0)
  }

  @Test func runKillsAChildThatOutlivesItsTimeout() throws {
    let began = MonotonicClock.seconds()
    let result = try Spawn.run("/bin/sleep", ["10"], timeout: 0.2)
    #expect(result.timedOut)
    #expect(result.status == 128 + SIGKILL)
    #expect(MonotonicClock.seconds() - began < 5)
  }

  @Test func theChildGetsTheEnvironmentItIsGiven() throws {
    setenv("CUED_POSIX_TEST_REMOVED", "still here", 1)
    defer { unsetenv("CUED_POSIX_TEST_REMOVED") }
    let child = try ChildProcess(
      "/bin/sh", ["-c", "echo \"$CUED_POSIX_TEST_ADDED|${CUED_POSIX_TEST_REMOVED:-gone}|$HOME\""],
      environment: ["CUED_POSIX_TEST_ADDED": "added", "HOME": "/nowhere"], removingEnvironment: ["CUED_POSIX_TEST_REMOVED"],
      standardOutput: .pipe)
    var output: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 256)
    while case .bytes(let n) = try buffer.withUnsafeMutableBytes({ try child.standardOutput!.read(into: $0) }), n > 0 {
      output += buffer[0..<n]
    }
    #expect(String(decoding: output, as: UTF8.self) == "added|gone|/nowhere\n")
    #expect(child.wait(timeout: 5) == 0)
  }

  @Test func aWaitTimesOutAndTerminateReportsTheSignal() throws {
    let child = try ChildProcess("/bin/sleep", ["10"], standardOutput: .null, standardError: .null)
    #expect(child.isRunning)
    #expect(child.wait(timeout: 0.05) == nil)
    #expect(child.terminate(SIGTERM, grace: 5) == 128 + SIGTERM)
    #expect(!child.isRunning)
    #expect(child.exitStatus == 128 + SIGTERM)
  }

  @Test func standardErrorCanJoinStandardOutputInAFile() throws {
    let directory = try Files.makeTemporaryDirectory(prefix: "cued-posix")
    defer {
      Files.remove(directory + "/log")
      rmdir(directory)
    }
    let child = try ChildProcess(
      "/bin/sh", ["-c", "echo out; echo err >&2"], standardOutput: .file(directory + "/log"),
      standardError: .sameAsStandardOutput)
    #expect(child.wait(timeout: 5) == 0)
    #expect(try Files.read(path: directory + "/log", limit: 1024) == Array("out\nerr\n".utf8))
  }

  @Test func aMissingProgramIsAnError() {
    #expect(throws: SystemError.self) { try Spawn.run("/nonexistent/cued-posix-test", []) }
  }
}

@Suite("CuePosix: threads")
struct ThreadTests {
  @Test func aJoinableThreadRunsAndIsJoined() throws {
    let counter = Counter()
    let thread = try Threads.Joinable(name: "test-thread") { counter.value.add(1, ordering: .relaxed) }
    thread.join()
    thread.join()  // a second join returns at once
    #expect(counter.value.load(ordering: .relaxed) == 1)
    #expect(thread.threadID > 0)
  }

  @Test func anotherThreadPutsAThreadAtSchedFIFOAndTheKernelSaysSo() throws {
    let release = Counter()
    let thread = try Threads.Joinable(name: "test-rt") {
      while release.value.load(ordering: .acquiring) == 0 { MonotonicClock.sleep(nanoseconds: 1_000_000) }
    }
    defer {
      release.value.add(1, ordering: .releasing)
      thread.join()
    }
    #expect(Threads.scheduling(ofThread: thread.threadID, via: .schedSetscheduler) == .normal)
    if let refusal = Threads.setFIFO(threadID: thread.threadID, priority: 10) {
      #expect(refusal.rawValue == EPERM)  // without CAP_SYS_NICE or an RLIMIT_RTPRIO
      #expect(Threads.scheduling(ofThread: thread.threadID, via: .schedSetscheduler) == .normal)
    } else {
      #expect(Threads.scheduling(ofThread: thread.threadID, via: .schedSetscheduler) == .realtime(priority: 10, policy: .fifo, via: .schedSetscheduler))
    }
  }

  @Test func parallelForVisitsEveryIndexOnce() {
    // One slot per index, each written only by the thread given that index (parallelFor joins its
    // threads before it returns): ThreadSanitizer did not see Synchronization's Mutex, a futex, as
    // a lock and reported the shared dictionary this used as raced.
    let counts = Counts()
    Threads.parallelFor(64) { index in counts.visits[index] += 1 }
    #expect(Array(counts.visits) == Array(repeating: 1, count: 64))
  }

  private final class Counter: Sendable {
    let value = Atomic<Int>(0)
  }

  private final class Counts: @unchecked Sendable {
    let visits = UnsafeMutableBufferPointer<Int>.allocate(capacity: 64)
    init() { visits.initialize(repeating: 0) }
    deinit { visits.deallocate() }
  }
}
