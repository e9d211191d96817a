import CueDBus
import CuePosix
import DBusTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A thread that waits until it is told to end: something with a kernel thread id to make real-time.
final class ParkedThread: Sendable {
  private final class Flag: Sendable { let done = Atomic(false) }
  private let flag = Flag()
  private let thread: Threads.Joinable
  var threadID: Int32 { thread.threadID }

  init() throws {
    let flag = self.flag
    thread = try Threads.Joinable(name: "test-parked") {
      while !flag.done.load(ordering: .acquiring) { MonotonicClock.sleep(nanoseconds: 2_000_000) }
    }
  }

  func end() {
    flag.done.store(true, ordering: .releasing)
    thread.join()
  }
}

/// The RLIMIT_RTTIME caps asked for, in place of setting this process's (a hard limit, once lowered,
/// cannot be raised again without CAP_SYS_RESOURCE, and would hold for every later test here).
final class CapRecorder: Sendable {
  let caps = Mutex<[UInt64]>([])
  func cap(_ microseconds: UInt64) throws(SystemError) { caps.withLock { $0.append(microseconds) } }
  var recorded: [UInt64] { caps.withLock { $0 } }
}

/// Seconds `body` takes.
func seconds(_ body: () -> Void) -> Double {
  let start = MonotonicClock.nanoseconds()
  body()
  return Double(MonotonicClock.nanoseconds() - start) / 1e9
}

@Suite("CueDBus: RTKit through a real dbus-daemon", .serialized)
struct RealtimeKitTests {
  static let isRoot = getuid() == 0

  @Test func theClientRegistersWithARealBus() throws {
    let bus = try PrivateBus()
    defer { bus.stop() }
    let connection = try DBusConnection(address: bus.address, deadline: MonotonicClock.nanoseconds() + 5_000_000_000)
    #expect(connection.uniqueName.hasPrefix(":1."))
    // A method of the bus itself, with a reply of a type the client reads: the names on the bus, ours among them.
    let names = try connection.call(
      .methodCall(destination: DBusConnection.busName, path: DBusConnection.busPath, interface: DBusConnection.busName, member: "ListNames"))
    guard case .array(.string, let list)? = names.first else {
      Issue.record("ListNames returned \(names)")
      return
    }
    #expect(list.contains(.string(connection.uniqueName)))
  }

  @Test func rtkitIsAskedForTheThreadsIDAtThePriorityClampedToItsMaximum() throws {
    let bus = try PrivateBus()
    defer { bus.stop() }
    let rtkit = try FakeRealtimeKit(on: bus, limits: .init(maxRealtimePriority: 15, realtimeCPUMicrosecondsMax: 150_000), applies: false)
    let thread = try ParkedThread()
    defer { thread.end() }
    let limit = CapRecorder()
    let granted = try RealtimeKit.requestRealtime(
      threadID: thread.threadID, priority: 20, address: bus.address, capRealtimeCPUTime: limit.cap)
    #expect(granted == 15)
    // RTKit only helps a process whose RLIMIT_RTTIME is at most its RTTimeUSecMax (the end-to-end test sees cued's).
    #expect(limit.recorded == [150_000])
    #expect(rtkit.requests.map(\.threadID) == [UInt64(thread.threadID)])
    #expect(rtkit.requests.map(\.priority) == [15])
    #expect(rtkit.requests.first?.sender.hasPrefix(":1.") == true)
    #expect(thread.threadID != Threads.currentThreadID)
  }

  /// What `RealtimeKit.schedule` makes of a parked thread (asking for 20) with `rtkit` on a private bus, and what RTKit was asked.
  static func schedule(
    with rtkit: (PrivateBus) throws -> FakeRealtimeKit, check: (Threads.Scheduling, Int32) -> Void
  ) throws -> [FakeRealtimeKit.Request] {
    let bus = try PrivateBus()
    defer { bus.stop() }
    let fake = try rtkit(bus)
    let thread = try ParkedThread()
    defer { thread.end() }
    let scheduling = RealtimeKit.schedule(
      threadID: thread.threadID, priority: 20, refused: .notPermitted, address: bus.address, capRealtimeCPUTime: CapRecorder().cap)
    check(scheduling, thread.threadID)
    return fake.requests
  }

  @Test(.enabled(if: isRoot, "the fake RTKit sets SCHED_RR on the thread, which needs root"))
  func aGrantIsReadBackFromTheKernel() throws {
    let requests = try Self.schedule(with: { try FakeRealtimeKit(on: $0, limits: .init(maxRealtimePriority: 12, realtimeCPUMicrosecondsMax: 200_000)) }) {
      scheduling, threadID in
      #expect(scheduling == .realtime(priority: 12, policy: .roundRobin, via: .rtkit))
      #expect(Threads.scheduling(ofThread: threadID, via: .rtkit) == scheduling)
    }
    #expect(requests.count == 1)
  }

  @Test func aYesThatChangedNothingIsNotTakenForAGrant() throws {
    let requests = try Self.schedule(with: { try FakeRealtimeKit(on: $0, applies: false) }) { scheduling, _ in
      #expect(scheduling == .refused(.notPermitted, rtkit: "RTKit answered, but the thread still has normal scheduling"))
    }
    #expect(requests.count == 1)
  }

  @Test func anErrorReplyIsReportedWithItsName() throws {
    let refusal = (name: "org.freedesktop.DBus.Error.AccessDenied", message: "Operation not permitted")
    let requests = try Self.schedule(with: { try FakeRealtimeKit(on: $0, refusal: refusal) }) { scheduling, _ in
      #expect(scheduling == .refused(.notPermitted, rtkit: "org.freedesktop.DBus.Error.AccessDenied: Operation not permitted"))
    }
    #expect(requests.count == 1)
  }

  @Test func rtkitNotOnTheBusIsServiceUnknownAtOnce() throws {
    let bus = try PrivateBus()
    defer { bus.stop() }
    var outcome: Result<Int32, RealtimeKitError>! = nil
    let elapsed = seconds {
      outcome = Result { () throws(RealtimeKitError) in try RealtimeKit.requestRealtime(threadID: 1, priority: 20, address: bus.address) }
    }
    guard case .failure(let error) = outcome, case .bus(let busError) = error else {
      Issue.record("RTKit was not missing: \(String(describing: outcome))")
      return
    }
    #expect(busError.isNoOwner)
    guard case .errorReply(let name, _) = busError else { return }
    #expect(name == "org.freedesktop.DBus.Error.ServiceUnknown")
    #expect(error.description.hasPrefix("not running (org.freedesktop.DBus.Error.ServiceUnknown: "))
    #expect(elapsed < 0.5)
  }

  @Test func noSocketAtThePathFailsAtOnce() throws {
    let directory = try Files.makeTemporaryDirectory(prefix: "cued-bus")
    var outcome: Result<Int32, RealtimeKitError>! = nil
    let elapsed = seconds {
      outcome = Result { () throws(RealtimeKitError) in
        try RealtimeKit.requestRealtime(threadID: 1, priority: 20, address: "unix:path=\(directory)/none")
      }
    }
    guard case .failure(.bus(.system(let error))) = outcome else {
      Issue.record("connecting to nothing gave \(String(describing: outcome))")
      return
    }
    #expect(error.code == ENOENT)
    #expect(RealtimeKitError.bus(.system(error)).description.hasPrefix("no system bus (connect(\(directory)/none): "))
    #expect(elapsed < 0.5)
  }

  @Test func aBusThatNeverAnswersIsGivenUpOnAfterTheTimeout() throws {
    let directory = try Files.makeTemporaryDirectory(prefix: "cued-bus")
    // Listening, so connect succeeds, but never accepted or answered: a hung bus.
    let listener = try UnixSocket.listen(path: directory + "/bus", mode: 0o600)
    defer { listener.close() }
    var outcome: Result<Int32, RealtimeKitError>! = nil
    let elapsed = seconds {
      outcome = Result { () throws(RealtimeKitError) in
        try RealtimeKit.requestRealtime(threadID: 1, priority: 20, address: "unix:path=\(directory)/bus", timeoutSeconds: 0.5)
      }
    }
    guard case .failure(.bus(.timedOut(let what))) = outcome else {
      Issue.record("a silent bus gave \(String(describing: outcome))")
      return
    }
    #expect(what == "the bus's answer to AUTH EXTERNAL")
    #expect(elapsed >= 0.45 && elapsed < 1.5)
    // The client's socket was closed when it gave up: its side reads what it sent, then end-of-file.
    let accepted = try #require(try UnixSocket.accept(listener))
    defer { accepted.close() }
    var received: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 256)
    reading: while true {
      _ = try Poll.wait([PollRequest(fd: accepted, events: .readable)], timeoutMilliseconds: 1000)
      switch try buffer.withUnsafeMutableBytes({ try accepted.read(into: $0) }) {
      case .bytes(let count): received += buffer[0..<count]
      case .endOfFile: break reading
      case .wouldBlock:
        Issue.record("the client's socket is still open")
        break reading
      }
    }
    #expect(received == [0] + Array("AUTH EXTERNAL \(String(getuid()).utf8.map { String($0, radix: 16) }.joined())\r\n".utf8))
  }
}
