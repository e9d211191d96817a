import CSystemShims
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Threads without libdispatch or Foundation: detached ones for background work (decoding),
/// joinable named ones (the audio thread, the soak driver's workers), and a parallel for loop.
///
/// libdispatch keeps idle worker threads around for seconds after their work is done; their
/// wake-ups and exits would show up as CPU ticks and context switches in a daemon that is meant to
/// be perfectly quiet when idle. These threads end when their work does.
public enum Threads {
  private final class Box: @unchecked Sendable {
    let body: @Sendable () -> Void
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
  }

  /// `pthread_create` for `box` (retained for the thread, released if it cannot start); the error number or 0.
  private static func create(_ thread: inout pthread_t, detached: Bool, stackBytes: Int? = nil, _ box: Box) -> Int32 {
    var attributes = pthread_attr_t()
    pthread_attr_init(&attributes)
    defer { pthread_attr_destroy(&attributes) }
    if detached { pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED)) }
    if let stackBytes { pthread_attr_setstacksize(&attributes, max(stackBytes, Int(PTHREAD_STACK_MIN))) }
    let raw = Unmanaged.passRetained(box).toOpaque()
    let rc = pthread_create(&thread, &attributes, { raw in
      Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue().body()
      return nil
    }, raw)
    if rc != 0 { Unmanaged<Box>.fromOpaque(raw).release() }
    return rc
  }

  /// Runs `body` on a new detached thread (`pthread_create` with PTHREAD_CREATE_DETACHED), with a
  /// stack of `stackBytes` when given (a thread that only waits needs far less than the default 8 MiB),
  /// named `name` when given (at most 15 bytes show, `pthread_setname_np`).
  public static func start(name: String? = nil, stackBytes: Int? = nil, _ body: @escaping @Sendable () -> Void) throws(SystemError) {
    var thread = pthread_t()
    let named: @Sendable () -> Void = {
      if let name { cued_set_thread_name(name) }
      body()
    }
    let rc = create(&thread, detached: true, stackBytes: stackBytes, Box(named))
    if rc != 0 { throw SystemError("pthread_create\(name.map { "(\($0))" } ?? "")", code: rc) }
  }

  /// Runs `body` on a new detached thread; when no thread can be had, runs it on the calling
  /// thread rather than not at all (for work that must be done either way, such as decoding).
  public static func spawn(_ body: @escaping @Sendable () -> Void) {
    do { try start(body) } catch { body() }
  }

  /// Calls `body(i)` for every i in 0..<count on up to one thread per core, and returns when all are done.
  public static func parallelFor(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    guard count > 1 else {
      if count == 1 { body(0) }
      return
    }
    let workers = max(1, min(count, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))))
    let next = Atomic<Int>(0)
    let shared = Box {
      while true {
        let index = next.wrappingAdd(1, ordering: .relaxed).oldValue
        if index >= count { return }
        body(index)
      }
    }
    var threads: [pthread_t] = []
    for _ in 1..<workers {
      var thread = pthread_t()
      if create(&thread, detached: false, shared) == 0 { threads.append(thread) }
    }
    shared.body()  // this thread works too
    for thread in threads { pthread_join(thread, nil) }
  }

  /// What the scheduler granted a thread that real-time priority was asked for.
  public enum Scheduling: Sendable, Equatable {
    /// Not asked for: the normal time-sharing policy.
    case normal
    /// A real-time policy at `priority`, and who set it: cued (SCHED_FIFO at the priority asked
    /// for), RTKit (SCHED_RR, at most RTKit's MaxRealtimePriority), or the sound server's client
    /// library before cued asked.
    case realtime(priority: Int32, policy: RealtimePolicy, via: RealtimeGrant)
    /// Asked for and refused (`Errno(rawValue: EPERM)` without CAP_SYS_NICE or an RLIMIT_RTPRIO),
    /// with why RTKit did not grant it either when it was asked (nil: not asked).
    case refused(Errno, rtkit: String?)
  }

  /// The real-time scheduling policies.
  public enum RealtimePolicy: Sendable, Equatable {
    /// SCHED_FIFO: runs until it blocks or a higher priority runs.
    case fifo
    /// SCHED_RR: SCHED_FIFO with a time slice among threads of the same priority (what RTKit sets).
    case roundRobin
  }

  /// Who made a thread real-time.
  public enum RealtimeGrant: Sendable, Equatable {
    /// cued itself, `sched_setscheduler` (root, CAP_SYS_NICE or an RLIMIT_RTPRIO).
    case schedSetscheduler
    /// RTKit (org.freedesktop.RealtimeKit1), on the process's behalf.
    case rtkit
    /// The thread was real-time before cued asked: the sound server's client library made it so
    /// (PipeWire's module-rt, with its own rights or through RTKit), and cued left it alone.
    case soundServer
  }

  /// The calling thread's kernel thread id (`gettid`), what `sched_setscheduler` and RTKit take.
  public static var currentThreadID: Int32 { cued_gettid() }

  /// Puts thread `threadID` of this process at SCHED_FIFO `priority`, with SCHED_RESET_ON_FORK (a
  /// child does not inherit it); nil when granted, else why not (EPERM without rights, ESRCH when
  /// the thread is gone). Any thread may ask for another. `sched_setscheduler`.
  public static func setFIFO(threadID: Int32, priority: Int32) -> Errno? {
    let rc = cued_set_thread_fifo(threadID, priority)
    return rc == 0 ? nil : Errno(rawValue: rc)
  }

  /// Sets thread `threadID`'s nice level (threads it starts afterwards inherit it); nil when set,
  /// else why not (EACCES below RLIMIT_NICE's floor without CAP_SYS_NICE). `setpriority`.
  public static func setNice(threadID: Int32, nice: Int32) -> Errno? {
    let rc = cued_set_thread_nice(threadID, nice)
    return rc == 0 ? nil : Errno(rawValue: rc)
  }

  /// Thread `threadID`'s nice level (`getpriority`), nil when the thread is gone.
  public static func nice(ofThread threadID: Int32) -> Int32? {
    var nice: Int32 = 0
    return cued_thread_nice(threadID, &nice) == 0 ? nice : nil
  }

  /// The policy and priority the kernel holds for thread `threadID` (`sched_getscheduler`,
  /// `sched_getparam`): `.realtime` for SCHED_FIFO/SCHED_RR (with `via` as given), `.normal` for
  /// the rest, nil when the thread is gone.
  public static func scheduling(ofThread threadID: Int32, via grant: RealtimeGrant) -> Scheduling? {
    var priority: Int32 = 0
    switch cued_thread_policy(threadID, &priority) {
    case -1: return nil
    case SCHED_FIFO: return .realtime(priority: priority, policy: .fifo, via: grant)
    case SCHED_RR: return .realtime(priority: priority, policy: .roundRobin, via: grant)
    default: return .normal
    }
  }

  /// A named thread that is joined.
  public final class Joinable: @unchecked Sendable {
    private final class Started: Sendable {
      let threadID = Atomic<Int32>(0)
    }
    private let thread: pthread_t
    private let started: Started
    private let joined = Atomic<Bool>(false)

    /// Starts `body` on a new thread named `name` (at most 15 bytes show, `pthread_setname_np`).
    public init(name: String, _ body: @escaping @Sendable () -> Void) throws(SystemError) {
      let started = Started()
      let box = Box {
        cued_set_thread_name(name)
        started.threadID.store(cued_gettid(), ordering: .releasing)
        body()
      }
      var thread = pthread_t()
      let rc = Threads.create(&thread, detached: false, box)
      if rc != 0 { throw SystemError("pthread_create(\(name))", code: rc) }
      self.thread = thread
      self.started = started
      // The thread id is known in the thread's first microseconds; wait for it so callers can name the thread.
      while started.threadID.load(ordering: .acquiring) == 0 { MonotonicClock.sleep(nanoseconds: 50_000) }
    }

    /// The thread's kernel thread id (`gettid`), for `setFIFO` or RTKit; settled before `init` returns.
    public var threadID: Int32 { started.threadID.load(ordering: .acquiring) }

    /// Waits for the thread to return (`pthread_join`); later calls return at once.
    public func join() {
      if joined.exchange(true, ordering: .acquiringAndReleasing) { return }
      pthread_join(thread, nil)
    }

    /// A thread never joined is detached (`pthread_detach`), so its resources go when it returns.
    deinit {
      if !joined.load(ordering: .acquiring) { pthread_detach(thread) }
    }
  }
}
