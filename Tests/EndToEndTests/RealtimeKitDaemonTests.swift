import CueDBus
import CuePosix
import DBusTestSupport
import DaemonTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// cued as an unprivileged user service meets it: its own SCHED_FIFO request refused (EPERM), then
/// RTKit asked on the system bus, here a private dbus-daemon with a fake RTKit that does what
/// rtkit-daemon does (SCHED_RR on the thread it is named). Root runs cued without CAP_SYS_NICE and
/// with RLIMIT_RTPRIO 0 (prlimit + setpriv) to be refused; the fake, as root, can then set the policy.
@Suite("cued asks RTKit when SCHED_FIFO is refused", .serialized)
struct RealtimeKitDaemonTests {
  static let canBeRefused =
    getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")
    && FileManager.default.isExecutableFile(atPath: "/usr/bin/prlimit")
  static let unprivileged = ["/usr/bin/prlimit", "--rtprio=0", "/usr/bin/setpriv", "--bounding-set=-sys_nice", "--inh-caps=-sys_nice", "--"]

  static func start(bus: String, _ extra: [String] = []) throws -> DaemonProcess {
    let dir = Harness.temporaryDirectory()
    let sounds = try Harness.soundDirectory(in: dir, ["pico": "tone-48000-mono.mp3"])
    return try DaemonProcess(
      socket: dir + "/cued.sock", arguments: ["--sounds", sounds, "--device", "null", "--realtime-priority", "20"] + extra,
      environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus], launcher: unprivileged, logPath: dir + "/cued.log")
  }

  @Test(.enabled(if: canBeRefused, "needs root to drop CAP_SYS_NICE from cued and to let the fake RTKit set SCHED_RR"))
  func rtkitMakesTheAudioThreadRealtimeWhenSchedFIFOIsRefused() throws {
    let bus = try PrivateBus()
    defer { bus.stop() }
    let rtkit = try FakeRealtimeKit(on: bus, limits: .init(maxRealtimePriority: 15, realtimeCPUMicrosecondsMax: 180_000))
    let daemon = try Self.start(bus: bus.address)
    defer { daemon.stop() }
    let scheduling = try #require(try daemon.status()["scheduling"] as? [String: Any])
    #expect(scheduling["policy"] as? String == "rr")
    #expect(scheduling["priority"] as? Int == 15)  // 20 asked for, clamped to MaxRealtimePriority
    #expect(scheduling["via"] as? String == "rtkit")
    #expect(scheduling["refused"] == nil)
    #expect(try daemon.cuectl(["status"]).stdout.contains("audio:     SCHED_RR, priority 15 (via RTKit)\n"))
    // RTKit was named cued's audio thread, by its kernel thread id, once.
    let request = try #require(rtkit.requests.first)
    #expect(rtkit.requests.count == 1)
    let comm = try String(contentsOfFile: "/proc/\(daemon.pid)/task/\(request.threadID)/comm", encoding: .utf8)
    #expect(comm == "cued-audio\n")
    #expect(request.priority == 15)
    #expect(Threads.scheduling(ofThread: Int32(request.threadID), via: .rtkit) == .realtime(priority: 15, policy: .roundRobin, via: .rtkit))
    // cued capped its RLIMIT_RTTIME at RTKit's RTTimeUSecMax first, soft and hard.
    let limits = try String(contentsOfFile: "/proc/\(daemon.pid)/limits", encoding: .utf8)
    let line = try #require(limits.split(separator: "\n").first { $0.hasPrefix("Max realtime timeout") })
    #expect(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst(3).prefix(2) == ["180000", "180000"])
  }

  @Test(.enabled(if: canBeRefused, "needs root to drop CAP_SYS_NICE from cued"))
  func withoutRTKitOnTheBusStatusSaysBothReasons() throws {
    let bus = try PrivateBus()
    defer { bus.stop() }
    let started = MonotonicClock.nanoseconds()
    let daemon = try Self.start(bus: bus.address)
    defer { daemon.stop() }
    #expect(Double(MonotonicClock.nanoseconds() - started) / 1e9 < 5)
    let scheduling = try #require(try daemon.status()["scheduling"] as? [String: Any])
    #expect(scheduling["policy"] as? String == "other")
    #expect(scheduling["refused"] as? String == "Operation not permitted")
    let why = try #require(scheduling["rtkit"] as? String)
    #expect(why.hasPrefix("not running (org.freedesktop.DBus.Error.ServiceUnknown: "))
    #expect(
      try daemon.cuectl(["status"]).stdout.contains(
        "audio:     normal scheduling (real-time refused: Operation not permitted; RTKit: not running (org.freedesktop.DBus.Error.ServiceUnknown"))
  }

  @Test(.enabled(if: canBeRefused, "needs root to drop CAP_SYS_NICE from cued"))
  func noRTKitAsksNobody() throws {
    let bus = try PrivateBus()
    defer { bus.stop() }
    let rtkit = try FakeRealtimeKit(on: bus)
    let daemon = try Self.start(bus: bus.address, ["--no-rtkit"])
    defer { daemon.stop() }
    let scheduling = try #require(try daemon.status()["scheduling"] as? [String: String])
    #expect(scheduling == ["policy": "other", "refused": "Operation not permitted"])
    #expect(rtkit.requests.isEmpty)
  }

  @Test(.enabled(if: canBeRefused, "needs root to drop CAP_SYS_NICE from cued"))
  func aDeadSystemBusSocketDoesNotDelayStartUp() throws {
    let dir = Harness.temporaryDirectory()
    let started = MonotonicClock.nanoseconds()
    let daemon = try Self.start(bus: "unix:path=\(dir)/no-bus")
    defer { daemon.stop() }
    #expect(Double(MonotonicClock.nanoseconds() - started) / 1e9 < 5)
    let scheduling = try #require(try daemon.status()["scheduling"] as? [String: String])
    #expect(scheduling["rtkit"] == "no system bus (connect(\(dir)/no-bus): No such file or directory)")
  }
}

extension RealtimeKitDaemonTests {
  @Test(.enabled(if: canBeRefused, "needs root to drop CAP_SYS_NICE from cued"))
  func aHungSystemBusCostsStartUpAboutASecond() throws {
    let dir = Harness.temporaryDirectory()
    // Listening, never accepting or answering.
    let listener = try UnixSocket.listen(path: dir + "/bus", mode: 0o666)
    defer { listener.close() }
    let started = MonotonicClock.nanoseconds()
    let daemon = try Self.start(bus: "unix:path=\(dir)/bus")
    defer { daemon.stop() }
    let elapsed = Double(MonotonicClock.nanoseconds() - started) / 1e9
    #expect(elapsed >= 1 && elapsed < 4)
    let scheduling = try #require(try daemon.status()["scheduling"] as? [String: String])
    #expect(scheduling["rtkit"] == "timed out waiting for the bus's answer to AUTH EXTERNAL")
  }
}
