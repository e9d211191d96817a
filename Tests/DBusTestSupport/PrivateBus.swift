import CueDBus
import CuePosix
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A private dbus-daemon for tests: its own config (anyone may own any name and call anything),
/// listening on a socket in a fresh directory. Stopped with `stop()` (SIGTERM).
public final class PrivateBus: @unchecked Sendable {
  public let directory: String
  public let socketPath: String
  private let child: ChildProcess

  /// The address to give a client: `unix:path=…`.
  public var address: String { "unix:path=" + socketPath }

  public init() throws {
    directory = try Files.makeTemporaryDirectory(prefix: "cued-bus")
    socketPath = directory + "/bus"
    let config = """
      <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
       "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
      <busconfig>
        <type>custom</type>
        <listen>unix:path=\(socketPath)</listen>
        <auth>EXTERNAL</auth>
        <policy context="default">
          <allow send_destination="*"/>
          <allow receive_sender="*"/>
          <allow own="*"/>
        </policy>
      </busconfig>
      """
    try Files.write(Array(config.utf8), to: directory + "/bus.conf")
    child = try ChildProcess(
      "/usr/bin/dbus-daemon", ["--config-file=" + directory + "/bus.conf", "--nofork", "--nopidfile"],
      standardOutput: .file(directory + "/bus.log"), standardError: .sameAsStandardOutput)
    let deadline = MonotonicClock.nanoseconds() + 10_000_000_000
    // The socket file appears at bind(2), a moment before listen(2): ready once a connection is taken.
    while (try? UnixSocket.connect(path: socketPath))?.close() == nil {
      guard child.isRunning, MonotonicClock.nanoseconds() < deadline else {
        child.terminate(grace: 1)
        throw BusSetupError("dbus-daemon did not listen on \(socketPath)")
      }
      MonotonicClock.sleep(nanoseconds: 10_000_000)
    }
  }

  public func stop() { _ = child.terminate(grace: 2) }

  deinit { stop() }
}

public struct BusSetupError: Error, CustomStringConvertible {
  public var description: String
  public init(_ description: String) { self.description = description }
}

/// A stand-in for rtkit-daemon on a private bus: owns `org.freedesktop.RealtimeKit1`, answers
/// `Properties.Get` for MaxRealtimePriority (i) and RTTimeUSecMax (x), and MakeThreadRealtime
/// (t, u) by recording the call and, as rtkit-daemon does, setting SCHED_RR on the thread
/// (`applies`, which needs root or CAP_SYS_NICE) or by answering with an error (`refusal`).
public final class FakeRealtimeKit: @unchecked Sendable {
  /// What one MakeThreadRealtime asked for, and who asked (the caller's unique name).
  public struct Request: Sendable, Equatable {
    public var threadID: UInt64
    public var priority: UInt32
    public var sender: String
  }

  public let limits: RealtimeKit.Limits
  public let refusal: (name: String, message: String)?
  public let applies: Bool
  private let recorded = Mutex<[Request]>([])
  private var thread: Threads.Joinable?
  private let connection: DBusConnection

  public init(
    on bus: PrivateBus, limits: RealtimeKit.Limits = .init(maxRealtimePriority: 20, realtimeCPUMicrosecondsMax: 200_000),
    refusal: (name: String, message: String)? = nil, applies: Bool = true
  ) throws {
    self.limits = limits
    self.refusal = refusal
    self.applies = applies
    let connection = try DBusConnection(address: bus.address, deadline: MonotonicClock.nanoseconds() + 5_000_000_000)
    let owner = try connection.call(
      .methodCall(
        destination: DBusConnection.busName, path: DBusConnection.busPath, interface: DBusConnection.busName,
        member: "RequestName", body: [.string(RealtimeKit.busName), .uint32(4)]))  // DBUS_NAME_FLAG_DO_NOT_QUEUE
    guard owner == [.uint32(1)] else { throw BusSetupError("RequestName answered \(owner), not 1 (primary owner)") }
    // Serves until the bus goes away (then receive() throws .closed) or an hour passes.
    connection.deadline = MonotonicClock.nanoseconds() + 3_600_000_000_000
    self.connection = connection
    thread = try Threads.Joinable(name: "fake-rtkit") { self.serve() }
  }

  /// The MakeThreadRealtime calls so far.
  public var requests: [Request] { recorded.withLock { $0 } }

  /// Waits for the serving thread to end (after the bus stops).
  public func join() { thread?.join() }

  private func serve() {
    while let message = try? connection.receive() {
      guard message.kind == .methodCall else { continue }
      let reply: DBusMessage
      let body = message.body
      switch (message.interface, message.member, message.signature) {
      case ("org.freedesktop.DBus.Properties", "Get", "ss") where body[0] == .string(RealtimeKit.interface)
        && body[1] == .string("MaxRealtimePriority"):
        reply = .methodReturn(to: message, body: [.variant(.int32(limits.maxRealtimePriority))])
      case ("org.freedesktop.DBus.Properties", "Get", "ss") where body[0] == .string(RealtimeKit.interface)
        && body[1] == .string("RTTimeUSecMax"):
        reply = .methodReturn(to: message, body: [.variant(.int64(limits.realtimeCPUMicrosecondsMax))])
      case (RealtimeKit.interface, "MakeThreadRealtime", "tu"):
        guard case .uint64(let threadID) = body[0], case .uint32(let priority) = body[1] else { return }
        recorded.withLock { $0.append(Request(threadID: threadID, priority: priority, sender: message.sender ?? "")) }
        if let refusal {
          reply = .errorReply(to: message, name: refusal.name, message: refusal.message)
        } else if applies, !Self.setRoundRobin(thread: Int32(threadID), priority: Int32(priority)) {
          reply = .errorReply(to: message, name: "org.freedesktop.DBus.Error.Failed", message: "sched_setscheduler failed")
        } else {
          reply = .methodReturn(to: message)
        }
      default:
        reply = .errorReply(
          to: message, name: "org.freedesktop.DBus.Error.UnknownMethod",
          message: "\(message.interface ?? "").\(message.member ?? "")(\(message.signature)) is not here")
      }
      if (try? connection.send(reply)) == nil { return }
    }
  }

  /// `sched_setscheduler(thread, SCHED_RR | SCHED_RESET_ON_FORK)`, what rtkit-daemon does.
  static func setRoundRobin(thread: Int32, priority: Int32) -> Bool {
    var parameters = sched_param(sched_priority: priority)
    return sched_setscheduler(thread, SCHED_RR | 0x4000_0000, &parameters) == 0
  }
}
