import CuePosix
import Logging

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

  /// Sends `fields` (e.g. ["READY=1", "STATUS=…"]) as one message; errors are ignored (systemd may be gone).
  public func notify(_ fields: [String]) {
    guard let socketPath else { return }
    try? UnixSocket.sendDatagram(Array(fields.joined(separator: "\n").utf8), to: socketPath)
  }
}

/// systemd's watchdog: WATCHDOG=1 at its cadence, but only while both threads are alive.
///
/// The control loop is alive (it calls this); the audio thread is if it is parked (waiting for
/// work) or has cycled since the last ping. A stuck audio thread starves the watchdog, and
/// systemd restarts cued.
struct Watchdog {
  let interval: UInt64
  /// When the next ping is due (daemon clock, ns).
  private(set) var due: UInt64
  private var lastHeartbeat: UInt64 = .max

  init(interval: UInt64, now: UInt64) {
    self.interval = interval
    due = now + interval
  }

  mutating func feedIfDue(now: UInt64, engine: some EngineControl, notifier: SystemdNotifier, logger: Logger) {
    guard now >= due else { return }
    due = now + interval
    let beat = engine.counters.heartbeat.load(ordering: .relaxed)
    let audioAlive = engine.isParked || beat != lastHeartbeat
    lastHeartbeat = beat
    if audioAlive {
      notifier.notify(["WATCHDOG=1"])
    } else {
      logger.error("the audio thread has not cycled for \(interval / 1_000_000) ms; not feeding the watchdog")
    }
  }
}
