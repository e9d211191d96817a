import CuePosix

/// Tells systemd how cued is doing (sd_notify): READY, STATUS, WATCHDOG, RELOADING, STOPPING.
///
/// One datagram per message to `$NOTIFY_SOCKET`; nothing happens when it is unset (not under
/// systemd). `watchdogInterval` is half of `$WATCHDOG_USEC`, the cadence systemd asks for.
public struct SystemdNotifier: Sendable {
  public let socketPath: String?
  /// Nanoseconds between WATCHDOG=1 messages; nil when systemd set no watchdog.
  public let watchdogInterval: UInt64?

  public init() {
    socketPath = ProcessInfo.environment("NOTIFY_SOCKET").flatMap { $0.isEmpty ? nil : $0 }
    if let usec = ProcessInfo.environment("WATCHDOG_USEC").flatMap(UInt64.init), usec > 0,
      ProcessInfo.environment("WATCHDOG_PID").flatMap(Int32.init).map({ $0 == ProcessInfo.processID }) ?? true
    {
      watchdogInterval = usec * 1000 / 2
    } else {
      watchdogInterval = nil
    }
  }

  public var isActive: Bool { socketPath != nil }

  /// Sends `fields` (e.g. ["READY=1", "STATUS=…"]) as one message; errors are ignored (systemd may be gone).
  public func notify(_ fields: [String]) {
    guard let socketPath else { return }
    try? UnixSocket.sendDatagram(Array(fields.joined(separator: "\n").utf8), to: socketPath)
  }
}
