import CuePosix

/// The one real-time policy for whichever thread mixes: cued's audio thread (ALSA, null),
/// libpulse's mainloop thread, PipeWire's data thread.
///
/// Applied from the control side, naming the thread by its kernel thread id: first
/// `sched_setscheduler(SCHED_FIFO | SCHED_RESET_ON_FORK)` at `priority` (root, CAP_SYS_NICE or an
/// RLIMIT_RTPRIO grant it); when that is refused with EPERM (an unprivileged user service) and
/// `asksRealtimeKit`, RTKit on the system bus, with a bounded wait, as PulseAudio and PipeWire do.
/// The mixing thread itself never asks, connects or waits.
public struct RealtimePolicy: Sendable, Equatable {
  /// The SCHED_FIFO priority asked for (`--realtime-priority`); 0 asks for nothing.
  public var priority: Int32
  /// Whether RTKit is asked when SCHED_FIFO is refused (off: `--no-rtkit`).
  public var asksRealtimeKit: Bool
  /// How long the control side waits for RTKit at most.
  public var realtimeKitTimeoutSeconds: Double

  public init(priority: Int32, asksRealtimeKit: Bool, realtimeKitTimeoutSeconds: Double = 1) {
    self.priority = priority
    self.asksRealtimeKit = asksRealtimeKit
    self.realtimeKitTimeoutSeconds = realtimeKitTimeoutSeconds
  }

  /// Asks for nothing: the thread keeps normal scheduling.
  public static let none = RealtimePolicy(priority: 0, asksRealtimeKit: false)

  /// Makes thread `threadID` of this process real-time as far as the system allows, and says what
  /// it got: `.realtime(via: .schedSetscheduler)`, `.realtime(via: .rtkit)` (read back from the
  /// kernel, not taken from RTKit's answer), `.refused(errno, rtkit: why)`, or `.normal` with
  /// priority 0. Control side; takes at most `realtimeKitTimeoutSeconds` when RTKit is asked.
  public func apply(toThread threadID: Int32) -> Threads.Scheduling {
    guard priority > 0 else { return .normal }
    guard let refusal = Threads.setFIFO(threadID: threadID, priority: priority) else {
      return .realtime(priority: priority, policy: .fifo, via: .schedSetscheduler)
    }
    guard asksRealtimeKit, refusal == .notPermitted else { return .refused(refusal, rtkit: nil) }
    if let why = RealtimeKit.makeThreadRealtime(threadID: threadID, priority: priority, timeoutSeconds: realtimeKitTimeoutSeconds) {
      return .refused(refusal, rtkit: why.description)
    }
    switch Threads.scheduling(ofThread: threadID, via: .rtkit) {
    case let granted? where granted != .normal: return granted
    case .some: return .refused(refusal, rtkit: "RTKit answered, but the thread still has normal scheduling")
    case nil: return .refused(refusal, rtkit: "the thread ended before RTKit answered")
    }
  }
}

/// The real-time state of a sound server's callback thread (the one that runs cued's mix), settled
/// on the control side once the shim has seen which thread that is.
///
/// The shim records the callback thread's kernel thread id at its first callback after each
/// connect (and, for PipeWire, the policy the thread already had). `settle` applies the policy to
/// a thread it has not seen before: a thread that is already real-time (PipeWire's module-rt) is
/// left alone and reported as the sound server's doing.
final class ServerThreadScheduling {
  private let policy: RealtimePolicy
  private var settledThreadID: Int32 = 0
  /// What the thread got; nil until the first callback has been seen.
  private(set) var scheduling: Threads.Scheduling? = nil

  init(policy: RealtimePolicy) { self.policy = policy }

  /// `threadID`: the callback thread's id as the shim recorded it (0: no callback yet).
  /// `already`: the thread's scheduling before cued asked, when the shim recorded it.
  /// True when this call changed `scheduling`.
  @discardableResult
  func settle(threadID: Int32, already: Threads.Scheduling? = nil) -> Bool {
    guard threadID > 0, threadID != settledThreadID else { return false }
    settledThreadID = threadID
    if let already, case .realtime = already {
      scheduling = already
    } else {
      scheduling = policy.apply(toThread: threadID)
    }
    return true
  }
}

/// The nice level of cued's control thread, and so of the threads it starts afterwards (libpulse's
/// and PipeWire's client threads, the decoders), as PipeWire's module-rt and PulseAudio give their
/// own (-11): on a busy machine the path from a request to a resumed stream (the control thread
/// reads it, the client library's thread sends the resume to the server) waits for the scheduler
/// behind every ordinary process, and the cue with it. The mixing thread is real-time besides
/// (`RealtimePolicy`).
///
/// `setpriority` first (root, CAP_SYS_NICE or an RLIMIT_NICE grant); when refused and
/// `asksRealtimeKit`, RTKit's MakeThreadHighPriority (no lower than its MinNiceLevel), as PulseAudio
/// asks. Applied once, at start, on the control thread itself before it starts any other.
public struct ControlPriority: Sendable, Equatable {
  /// The nice level asked for (`--nice-level`, -20...0); 0 asks for nothing.
  public var nice: Int32
  public var asksRealtimeKit: Bool
  public var realtimeKitTimeoutSeconds: Double

  public init(nice: Int32, asksRealtimeKit: Bool, realtimeKitTimeoutSeconds: Double = 1) {
    self.nice = nice
    self.asksRealtimeKit = asksRealtimeKit
    self.realtimeKitTimeoutSeconds = realtimeKitTimeoutSeconds
  }

  /// Asks for nothing: threads keep the nice level they have.
  public static let none = ControlPriority(nice: 0, asksRealtimeKit: false)

  /// What a thread got.
  public enum Outcome: Sendable, Equatable {
    /// Nothing asked (`nice` 0).
    case notAsked
    /// The thread's nice level now, and who set it.
    case raised(nice: Int32, via: Grant)
    /// Refused by the kernel (`Errno`), and why RTKit did not grant it either when asked (nil: not asked).
    case refused(Errno, rtkit: String?)
  }

  public enum Grant: String, Sendable, Equatable {
    case setpriority
    case rtkit
  }

  /// Raises thread `threadID` (the caller's own, at start) as far as the system allows. Takes at
  /// most `realtimeKitTimeoutSeconds` when RTKit is asked.
  public func apply(toThread threadID: Int32) -> Outcome {
    guard nice < 0 else { return .notAsked }
    guard let refusal = Threads.setNice(threadID: threadID, nice: nice) else {
      return .raised(nice: Threads.nice(ofThread: threadID) ?? nice, via: .setpriority)
    }
    guard asksRealtimeKit, refusal == .permissionDenied || refusal == .notPermitted else { return .refused(refusal, rtkit: nil) }
    if let why = RealtimeKit.makeThreadHighPriority(threadID: threadID, nice: nice, timeoutSeconds: realtimeKitTimeoutSeconds) {
      return .refused(refusal, rtkit: why.description)
    }
    guard let now = Threads.nice(ofThread: threadID), now < 0 else {
      return .refused(refusal, rtkit: "RTKit answered, but the thread's nice level is still 0")
    }
    return .raised(nice: now, via: .rtkit)
  }
}
