import CuePosix
import DaemonTestSupport
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A private system bus with the real rtkit-daemon on it, for testing cued's real-time requests as
/// an unprivileged user: a `dbus-daemon` with a policy that lets anyone own and call any name, a
/// stand-in polkit authority that authorizes everything (fake-polkit.py), and
/// `/usr/libexec/rtkit-daemon` (Debian's rtkit), run as root without dropping privileges, chroot,
/// canary or resource limits (it would otherwise need its own user and a writable chroot).
/// `address` is what DBUS_SYSTEM_BUS_ADDRESS says to reach it.
public final class RealtimeKitRig {
  public static let rtkitDaemon = "/usr/libexec/rtkit-daemon"
  /// Root (to run rtkit-daemon, and to run cued as another user), the programs, and a kernel that
  /// grants root SCHED_RR at all (not every container does).
  public static let available: Bool =
    getuid() == 0 && ["/usr/bin/dbus-daemon", rtkitDaemon, "/usr/bin/setpriv", "/usr/bin/prlimit", "/usr/bin/python3"]
      .allSatisfy { FileManager.default.isExecutableFile(atPath: $0) }
    && (try? run("/usr/bin/chrt", ["-r", "10", "/bin/true"]).status) == 0

  /// `unix:path=…` of the private bus.
  public let address: String
  public let directory: String
  private let bus: ChildProcess
  private var services: [ChildProcess] = []

  /// Starts the bus in `directory` and, with `rtkit`, polkit's stand-in and rtkit-daemon
  /// (`maxRealtimePriority`: what rtkit-daemon grants at most).
  public init(directory: String, rtkit: Bool = true, maxRealtimePriority: Int = 20) throws {
    self.directory = directory
    let socket = directory + "/system_bus_socket"
    address = "unix:path=" + socket
    let config = """
      <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
       "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
      <busconfig>
        <type>system</type>
        <listen>\(address)</listen>
        <auth>EXTERNAL</auth>
        <policy context="default">
          <allow user="*"/>
          <allow own="*"/>
          <allow send_destination="*"/>
          <allow receive_sender="*"/>
        </policy>
      </busconfig>
      """
    try config.write(toFile: directory + "/system-bus.conf", atomically: true, encoding: .utf8)
    bus = try ChildProcess(
      "/usr/bin/dbus-daemon", ["--config-file=" + directory + "/system-bus.conf", "--nofork", "--nopidfile"],
      standardOutput: .null, standardError: .file(directory + "/dbus-daemon.log", append: true))
    try Self.waitFor("the private system bus") { FileManager.default.fileExists(atPath: socket) }
    chmod(socket, 0o666)
    guard rtkit else { return }
    let environment = ["DBUS_SYSTEM_BUS_ADDRESS": address]
    services.append(
      try ChildProcess(
        "/usr/bin/python3", [TestPaths.repositoryRoot + "/Tests/RealtimeKitTestSupport/fake-polkit.py"], environment: environment,
        standardOutput: .null, standardError: .file(directory + "/fake-polkit.log", append: true)))
    try waitForName("org.freedesktop.PolicyKit1")
    services.append(
      try ChildProcess(
        Self.rtkitDaemon,
        [
          "--stderr", "--no-drop-privileges", "--no-chroot", "--no-canary", "--no-limit-resources",
          "--max-realtime-priority=\(maxRealtimePriority)",
        ], environment: environment,
        standardOutput: .null, standardError: .file(directory + "/rtkit-daemon.log", append: true)))
    try waitForName("org.freedesktop.RealtimeKit1")
  }

  /// What rtkit-daemon logged.
  public var rtkitLog: String { (try? String(contentsOfFile: directory + "/rtkit-daemon.log", encoding: .utf8)) ?? "" }

  private func waitForName(_ name: String) throws {
    try Self.waitFor(name + " on the private bus") {
      (try? run(
        "/usr/bin/dbus-send",
        ["--bus=" + address, "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
         "org.freedesktop.DBus.NameHasOwner", "string:" + name]).stdout.contains("boolean true")) ?? false
    }
  }

  private static func waitFor(_ what: String, _ condition: () -> Bool) throws {
    let deadline = Date().addingTimeInterval(10)
    while Date() < deadline {
      if condition() { return }
      usleep(20_000)
    }
    throw HarnessError("\(what) did not come up within 10 s")
  }

  public func stop() {
    for service in services.reversed() { _ = service.terminate(grace: 2) }
    services = []
    _ = bus.terminate(grace: 2)
  }

  deinit { stop() }
}

/// Runs a program as `nobody` with RLIMIT_RTPRIO 0 and no capabilities: a user service as an
/// ordinary desktop user's would be, whose own SCHED_FIFO request is refused (EPERM).
public enum Unprivileged {
  public static let launcher = [
    "/usr/bin/prlimit", "--rtprio=0", "/usr/bin/setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--",
  ]
  /// A directory `nobody` owns (0700): cued's runtime directory, socket and logs.
  public static func ownedDirectory(_ path: String) throws -> String {
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    guard let user = getpwnam("nobody") else { throw HarnessError("no user 'nobody'") }
    chown(path, user.pointee.pw_uid, user.pointee.pw_gid)
    chmod(path, 0o700)
    return path
  }
}
