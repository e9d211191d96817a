import CSDBus
import CuePosix
import Synchronization

/// RTKit (`org.freedesktop.RealtimeKit1` on the system bus): the service that makes a thread of an
/// unprivileged process real-time, as PulseAudio and PipeWire ask it to when SCHED_FIFO is refused.
/// Reached through libsystemd's sd-bus (`CSDBus`, loaded on the first request).
///
/// RTKit sets SCHED_RR (with SCHED_RESET_ON_FORK) at no more than its `MaxRealtimePriority`, and
/// only for a process whose RLIMIT_RTTIME is set and at most its `RTTimeUSecMax` (so a runaway
/// real-time thread is killed rather than freezing the machine). It is asked from the control side
/// on the mixing thread's behalf, by kernel thread id: the mixing thread never waits on the bus.
enum RealtimeKit {
  static let busName = "org.freedesktop.RealtimeKit1"
  static let objectPath = "/org/freedesktop/RealtimeKit1"

  /// Asks RTKit to make thread `threadID` of this process real-time at `priority` (clamped to
  /// RTKit's MaxRealtimePriority), after capping RLIMIT_RTTIME at its RTTimeUSecMax; nil once RTKit
  /// said yes, else why not. Returns within `timeoutSeconds`: the request runs on a short-lived
  /// thread of its own, so a bus that accepts the connection and never answers (sd-bus waits long
  /// for authentication, whatever the call timeout) delays the caller by the timeout and no more.
  static func makeThreadRealtime(threadID: Int32, priority: Int32, timeoutSeconds: Double) -> RealtimeKitError? {
    let timeoutMicroseconds = callTimeout(timeoutSeconds)
    return answered(within: timeoutSeconds) { ask(threadID: threadID, priority: priority, callTimeoutMicroseconds: timeoutMicroseconds) }
  }

  /// Asks RTKit to give thread `threadID` of this process the nice level `nice` (raised to RTKit's
  /// MinNiceLevel when below it), as PulseAudio asks for its own threads; nil once RTKit said yes,
  /// else why not. Returns within `timeoutSeconds`, as `makeThreadRealtime` does.
  static func makeThreadHighPriority(threadID: Int32, nice: Int32, timeoutSeconds: Double) -> RealtimeKitError? {
    let timeoutMicroseconds = callTimeout(timeoutSeconds)
    return answered(within: timeoutSeconds) { askHighPriority(threadID: threadID, nice: nice, callTimeoutMicroseconds: timeoutMicroseconds) }
  }

  private static func callTimeout(_ seconds: Double) -> UInt64 { UInt64(max(0.001, seconds) * 1e6) }

  /// Runs `request` on a short-lived thread of its own and waits at most `timeoutSeconds` for it: a
  /// bus that accepts the connection and never answers (sd-bus waits long for authentication,
  /// whatever the call timeout) delays the caller by the timeout and no more.
  private static func answered(within timeoutSeconds: Double, _ body: @escaping @Sendable () -> RealtimeKitError?) -> RealtimeKitError? {
    let request: Request
    do {
      request = try Request()
    } catch {
      return .bus("cannot wait for RTKit (\(error))")
    }
    let timeoutMicroseconds = callTimeout(timeoutSeconds)
    do {
      try Threads.start(stackBytes: 256 * 1024) { request.finish(body()) }
    } catch {
      return .bus("no thread to ask RTKit from (\(error))")
    }
    let deadline = MonotonicClock.nanoseconds() &+ timeoutMicroseconds * 1000
    while true {
      if let answer = request.answer { return answer.error }
      let now = MonotonicClock.nanoseconds()
      guard now < deadline else { return .timedOut(seconds: timeoutSeconds) }
      _ = request.done.wait(timeoutMilliseconds: Int32(clamping: (deadline - now) / 1_000_000 + 1))
    }
  }

  /// One request's answer, handed from the thread that asks to the caller that waits (or has given up).
  private final class Request: @unchecked Sendable {
    struct Answer { var error: RealtimeKitError? }
    private let result = Mutex<Answer?>(nil)
    let done: EventFD

    init() throws(SystemError) { done = try EventFD() }

    deinit { done.close() }

    var answer: Answer? { result.withLock { $0 } }

    func finish(_ error: RealtimeKitError?) {
      result.withLock { $0 = Answer(error: error) }
      done.signal()
    }
  }

  /// The request itself, on its own thread: load sd-bus, connect, read the limits, cap
  /// RLIMIT_RTTIME, call MakeThreadRealtime.
  private static func ask(threadID: Int32, priority: Int32, callTimeoutMicroseconds: UInt64) -> RealtimeKitError? {
    onSystemBus(callTimeoutMicroseconds: callTimeoutMicroseconds) { bus in

      var maxPriority: Int32 = 0
      if let error = property("MaxRealtimePriority", type: "i", of: bus, into: &maxPriority) { return error }
      var rttimeMax: Int64 = 0
      if let error = property("RTTimeUSecMax", type: "x", of: bus, into: &rttimeMax) { return error }
      let granted = min(priority, maxPriority)
      guard granted > 0 else { return .noPriorityAllowed(maxPriority) }
      guard rttimeMax > 0 else { return .bus("RTKit's RTTimeUSecMax is \(rttimeMax)") }
      do throws(SystemError) {
        try ResourceLimits.capRealtimeCPUTime(microseconds: UInt64(rttimeMax))
      } catch {
        return .resourceLimit(error)
      }
      var error = cued_sdbus_error()
      defer { cued_sdbus_error_free(&error) }
      let rc = cued_sdbus_call_method_tu(
        bus, busName, objectPath, busName, "MakeThreadRealtime", &error, UInt64(threadID), UInt32(granted))
      return rc < 0 ? .answer(error, Errno(rawValue: -rc)) : nil
    }
  }

  /// The high-priority request on its own thread: load sd-bus, connect, read MinNiceLevel, call
  /// MakeThreadHighPriority.
  private static func askHighPriority(threadID: Int32, nice: Int32, callTimeoutMicroseconds: UInt64) -> RealtimeKitError? {
    onSystemBus(callTimeoutMicroseconds: callTimeoutMicroseconds) { bus in
      var minimumNice: Int32 = 0
      if let error = property("MinNiceLevel", type: "i", of: bus, into: &minimumNice) { return error }
      guard minimumNice < 0 else { return .noNiceLevelAllowed(minimumNice) }
      var error = cued_sdbus_error()
      defer { cued_sdbus_error_free(&error) }
      let rc = cued_sdbus_call_method_ti(
        bus, busName, objectPath, busName, "MakeThreadHighPriority", &error, UInt64(threadID), max(nice, minimumNice))
      return rc < 0 ? .answer(error, Errno(rawValue: -rc)) : nil
    }
  }

  /// Loads sd-bus, connects to the system bus with `callTimeoutMicroseconds` for each call, and runs
  /// `body` on it; what went wrong on the way, or `body`'s answer.
  private static func onSystemBus(callTimeoutMicroseconds: UInt64, _ body: (OpaquePointer) -> RealtimeKitError?) -> RealtimeKitError? {
    var loadError = [CChar](repeating: 0, count: 256)
    guard cued_sdbus_load(&loadError, loadError.count) == 0 else {
      return .noLibrary(String(decoding: loadError.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }
    var bus: OpaquePointer? = nil
    let opened = cued_sdbus_open_system(&bus)
    guard opened >= 0, let bus else { return .noBus(Errno(rawValue: -opened)) }
    defer { cued_sdbus_close_unref(bus) }
    _ = cued_sdbus_set_method_call_timeout(bus, callTimeoutMicroseconds)
    return body(bus)
  }

  /// Reads RTKit's property `member` of basic `type` into `value` (`sd_bus_get_property_trivial`).
  private static func property<Value>(_ member: String, type: Character, of bus: OpaquePointer, into value: inout Value) -> RealtimeKitError? {
    var error = cued_sdbus_error()
    defer { cued_sdbus_error_free(&error) }
    let rc = withUnsafeMutableBytes(of: &value) { bytes in
      cued_sdbus_get_property_trivial(
        bus, busName, objectPath, busName, member, &error, CChar(bitPattern: type.asciiValue ?? 0), bytes.baseAddress)
    }
    return rc < 0 ? .answer(error, Errno(rawValue: -rc)) : nil
  }
}

/// Why RTKit did not make a thread real-time; `description` is what `status` says.
enum RealtimeKitError: Error, Sendable, Equatable, CustomStringConvertible {
  /// libsystemd.so.0 could not be loaded (dlerror's words).
  case noLibrary(String)
  /// No system bus to connect to.
  case noBus(Errno)
  /// The bus or RTKit answered with an error (its D-Bus name and message), or the call failed.
  case refused(name: String, message: String)
  /// Anything else the bus said, in words.
  case bus(String)
  /// No answer within the bound.
  case timedOut(seconds: Double)
  /// RTKit's MaxRealtimePriority allows no real-time priority.
  case noPriorityAllowed(Int32)
  /// RTKit's MinNiceLevel allows no raised priority.
  case noNiceLevelAllowed(Int32)
  /// RLIMIT_RTTIME could not be capped (a seccomp filter without `setrlimit`, say).
  case resourceLimit(SystemError)

  /// An sd-bus call's failure: the bus's error when it named one, else the errno.
  static func answer(_ error: cued_sdbus_error, _ code: Errno) -> RealtimeKitError {
    guard let name = error.name else { return .bus(code.description) }
    return .refused(name: String(cString: name), message: error.message.map { String(cString: $0) } ?? code.description)
  }

  var description: String {
    switch self {
    case .noLibrary(let why): "libsystemd cannot be loaded (\(why))"
    case .noBus(let code): "no system bus (\(code))"
    case .refused(let name, let message)
    where name == "org.freedesktop.DBus.Error.ServiceUnknown" || name == "org.freedesktop.DBus.Error.NameHasNoOwner":
      "not running (\(name): \(message))"
    case .refused(let name, let message): "\(name): \(message)"
    case .bus(let words): words
    case .timedOut(let seconds): "no answer from the system bus within \(seconds) s"
    case .noPriorityAllowed(let maximum): "RTKit's MaxRealtimePriority is \(maximum)"
    case .noNiceLevelAllowed(let minimum): "RTKit's MinNiceLevel is \(minimum)"
    case .resourceLimit(let error): "cannot cap RLIMIT_RTTIME for RTKit: \(error)"
    }
  }
}
