import CuePosix

/// RTKit (`org.freedesktop.RealtimeKit1` on the system bus): the service that makes a thread of an
/// unprivileged process real-time, as PulseAudio and PipeWire ask it to when SCHED_FIFO is refused.
///
/// RTKit sets SCHED_RR (with SCHED_RESET_ON_FORK) at no more than its `MaxRealtimePriority`, and
/// only for a process whose RLIMIT_RTTIME is set and at most its `RTTimeUSecMax` (so a runaway
/// real-time thread is killed rather than freezing the machine). It is asked from the control
/// thread on the audio thread's behalf, by kernel thread id: the audio thread never waits on the bus.
public enum RealtimeKit {
  public static let busName = "org.freedesktop.RealtimeKit1"
  public static let objectPath = "/org/freedesktop/RealtimeKit1"
  public static let interface = "org.freedesktop.RealtimeKit1"

  /// What RTKit allows, from its properties.
  public struct Limits: Sendable, Equatable {
    /// The highest priority RTKit grants (`MaxRealtimePriority`, 20 by default).
    public var maxRealtimePriority: Int32
    /// The largest RLIMIT_RTTIME, in microseconds, of a process RTKit helps (`RTTimeUSecMax`, 200 ms by default).
    public var realtimeCPUMicrosecondsMax: Int64

    public init(maxRealtimePriority: Int32, realtimeCPUMicrosecondsMax: Int64) {
      self.maxRealtimePriority = maxRealtimePriority
      self.realtimeCPUMicrosecondsMax = realtimeCPUMicrosecondsMax
    }
  }

  /// Reads `MaxRealtimePriority` and `RTTimeUSecMax` (org.freedesktop.DBus.Properties.Get).
  public static func limits(on bus: DBusConnection) throws(DBusError) -> Limits {
    func integer(_ name: String) throws(DBusError) -> Int64 {
      let value = try bus.property(name, of: interface, at: objectPath, on: busName)
      guard let number = value.integerValue else {
        throw .unexpectedReply("RTKit's \(name) is a '\(value.type.signature)', not an integer")
      }
      return number
    }
    let priority = try integer("MaxRealtimePriority")
    let microseconds = try integer("RTTimeUSecMax")
    return Limits(maxRealtimePriority: Int32(clamping: priority), realtimeCPUMicrosecondsMax: microseconds)
  }

  /// `MakeThreadRealtime(t thread, u priority)` for the kernel thread `threadID` of this process.
  public static func makeThreadRealtime(threadID: Int32, priority: Int32, on bus: DBusConnection) throws(DBusError) {
    _ = try bus.call(
      .methodCall(
        destination: busName, path: objectPath, interface: interface, member: "MakeThreadRealtime",
        body: [.uint64(UInt64(threadID)), .uint32(UInt32(priority))]))
  }

  /// The whole request, within `timeoutSeconds`: connect to the bus at `address`, read RTKit's
  /// limits, cap this process's RLIMIT_RTTIME at `RTTimeUSecMax`, and ask for `threadID` at
  /// `priority` clamped to `MaxRealtimePriority`. Returns the priority asked for.
  ///
  /// `capRealtimeCPUTime` caps RLIMIT_RTTIME (a test passes its own: lowered, a hard limit cannot be
  /// raised again without CAP_SYS_RESOURCE, and it would stay with the test process).
  public static func requestRealtime(
    threadID: Int32, priority: Int32, address: String = DBusAddress.systemBus, timeoutSeconds: Double = 1,
    capRealtimeCPUTime: (UInt64) throws(SystemError) -> Void = { microseconds throws(SystemError) in
      try ResourceLimits.capRealtimeCPUTime(microseconds: microseconds)
    }
  ) throws(RealtimeKitError) -> Int32 {
    let deadline = MonotonicClock.nanoseconds() &+ UInt64(max(0, timeoutSeconds) * 1e9)
    func onBus<T>(_ body: () throws(DBusError) -> T) throws(RealtimeKitError) -> T {
      do { return try body() } catch { throw .bus(error) }
    }
    let bus = try onBus { () throws(DBusError) in try DBusConnection(address: address, deadline: deadline) }
    let limits = try onBus { () throws(DBusError) in try Self.limits(on: bus) }
    let granted = min(priority, limits.maxRealtimePriority)
    guard granted > 0 else { throw .noPriorityAllowed(limits.maxRealtimePriority) }
    guard limits.realtimeCPUMicrosecondsMax > 0 else {
      throw .bus(.unexpectedReply("RTKit's RTTimeUSecMax is \(limits.realtimeCPUMicrosecondsMax)"))
    }
    do {
      try capRealtimeCPUTime(UInt64(limits.realtimeCPUMicrosecondsMax))
    } catch {
      throw .resourceLimit(error)
    }
    try onBus { () throws(DBusError) in try makeThreadRealtime(threadID: threadID, priority: granted, on: bus) }
    return granted
  }

  /// After the thread's own SCHED_FIFO request was `refused`: asks RTKit for `threadID` at
  /// `priority`, then reads back what the kernel holds for the thread. The scheduling it ends with:
  /// `.realtime(via: .rtkit)`, or `.refused(refused, rtkit: why)`.
  public static func schedule(
    threadID: Int32, priority: Int32, refused: Errno, address: String = DBusAddress.systemBus, timeoutSeconds: Double = 1,
    capRealtimeCPUTime: (UInt64) throws(SystemError) -> Void = { microseconds throws(SystemError) in
      try ResourceLimits.capRealtimeCPUTime(microseconds: microseconds)
    }
  ) -> Threads.Scheduling {
    do {
      _ = try requestRealtime(
        threadID: threadID, priority: priority, address: address, timeoutSeconds: timeoutSeconds,
        capRealtimeCPUTime: capRealtimeCPUTime)
    } catch {
      return .refused(refused, rtkit: error.description)
    }
    switch Threads.scheduling(ofThread: threadID, via: .rtkit) {
    case let granted? where granted != .normal: return granted
    case .some: return .refused(refused, rtkit: "RTKit answered, but the thread still has normal scheduling")
    case nil: return .refused(refused, rtkit: "the thread ended before RTKit answered")
    }
  }
}

/// Why RTKit did not make a thread real-time; `description` is what `status` says.
public enum RealtimeKitError: Error, Sendable, Equatable, CustomStringConvertible {
  /// No bus, no RTKit on it, RTKit's refusal, a timeout.
  case bus(DBusError)
  /// RTKit's MaxRealtimePriority allows no real-time priority.
  case noPriorityAllowed(Int32)
  /// RLIMIT_RTTIME could not be capped (a seccomp filter without `setrlimit`, say).
  case resourceLimit(SystemError)

  public var description: String {
    switch self {
    case .bus(let error) where error.isNoOwner: "not running (\(error))"
    case .bus(.system(let error)): "no system bus (\(error))"
    case .bus(let error): error.description
    case .noPriorityAllowed(let maximum): "RTKit's MaxRealtimePriority is \(maximum)"
    case .resourceLimit(let error): "cannot cap RLIMIT_RTTIME for RTKit: \(error)"
    }
  }
}

extension DBusError {
  /// True for the bus's answer that nobody owns the name called (and none can be started).
  public var isNoOwner: Bool {
    guard case .errorReply(let name, _) = self else { return false }
    return name == "org.freedesktop.DBus.Error.ServiceUnknown" || name == "org.freedesktop.DBus.Error.NameHasNoOwner"
  }
}

extension DBusValue {
  /// The value of any integer type (through variants), or nil.
  public var integerValue: Int64? {
    switch unwrapped {
    case .byte(let v): Int64(v)
    case .int16(let v): Int64(v)
    case .uint16(let v): Int64(v)
    case .int32(let v): Int64(v)
    case .uint32(let v): Int64(v)
    case .int64(let v): v
    case .uint64(let v): Int64(exactly: v)
    default: nil
    }
  }
}
