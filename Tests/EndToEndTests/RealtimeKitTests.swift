import CuePosix
import DaemonTestSupport
import Foundation
import RealtimeKitTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// cued as an unprivileged user service meets it: run as nobody with RLIMIT_RTPRIO 0, its own
/// SCHED_FIFO request is refused (EPERM), and it asks RTKit, here the real rtkit-daemon on a private
/// system bus (RealtimeKitRig), for whichever thread mixes: its own audio thread (null, alsa) or
/// libpulse's mainloop thread (pulseaudio). `status` says what each got, and why not.
@Suite("Real-time through RTKit, unprivileged", .serialized, .enabled(if: RealtimeKitRig.available, "needs root, rtkit, dbus-daemon, python3-dbus, and SCHED_RR for root"))
struct RealtimeKitTests {
  /// cued as nobody on `device`, with the system bus at `bus`; its runtime directory, socket and log in `directory/run`.
  static func start(_ directory: String, bus: String, device: String = "null", environment: [String: String] = [:], _ extra: [String] = []) throws -> DaemonProcess {
    chmod(directory, 0o711)
    let sounds = try Harness.soundDirectory(in: directory, ["pico": "tone-48000-mono.mp3"])
    chmod(sounds, 0o755)
    let run = try Unprivileged.ownedDirectory(directory + "/run")
    return try DaemonProcess(
      socket: run + "/cued.sock", arguments: ["--sounds", sounds, "--device", device, "--realtime-priority", "20"] + extra,
      environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus, "XDG_RUNTIME_DIR": run, "HOME": run].merging(environment) { $1 },
      launcher: Unprivileged.launcher, clientLauncher: Unprivileged.launcher, logPath: run + "/cued.log")
  }

  /// RLIMIT_RTTIME of process `pid`, soft and hard, as /proc/PID/limits says it.
  static func realtimeTimeout(_ pid: Int32) throws -> String {
    let limits = try String(contentsOfFile: "/proc/\(pid)/limits", encoding: .utf8)
    let line = limits.split(separator: "\n").first { $0.hasPrefix("Max realtime timeout") } ?? ""
    return line.split(separator: " ", omittingEmptySubsequences: true).dropFirst(3).prefix(2).joined(separator: " ")
  }

  @Test func theAudioThreadIsMadeRealtimeByRTKitWhenSchedFIFOIsRefused() throws {
    let dir = Harness.temporaryDirectory()
    let rig = try RealtimeKitRig(directory: dir, maxRealtimePriority: 15)
    defer { rig.stop() }
    let daemon = try Self.start(dir, bus: rig.address)
    defer { daemon.stop() }
    let status = try daemon.status()
    let scheduling = try #require(status["scheduling"] as? [String: Any])
    #expect(scheduling["policy"] as? String == "rr")
    #expect(scheduling["priority"] as? Int == 15)  // 20 asked for, clamped to RTKit's MaxRealtimePriority
    #expect(scheduling["via"] as? String == "rtkit")
    // The null device is mixed by that thread: the mixing thread says the same.
    let device = try #require(status["device"] as? [String: Any])
    let mixing = try #require(device["mixingThread"] as? [String: Any], "no mixingThread in \(device)")
    #expect(mixing["policy"] as? String == "rr" && mixing["via"] as? String == "rtkit", "\(mixing)")
    let text = try daemon.cuectl(["status"]).stdout
    #expect(text.contains("mixing:    cued's audio thread, SCHED_RR, priority 15 (via RTKit)\n"), "\(text)")
    // rtkit-daemon did it, for a process of nobody's, after cued capped RLIMIT_RTTIME at its 200 ms.
    #expect(rig.rtkitLog.contains("of process \(daemon.pid) owned by 'nobody' RT at priority 15"), "\(rig.rtkitLog)")
    #expect(try Self.realtimeTimeout(daemon.pid) == "200000 200000")
  }

  /// The control thread's nice level, refused to nobody (EACCES: RLIMIT_NICE 0), is asked of RTKit,
  /// as PulseAudio asks for its own. RTKit marks the thread SCHED_RESET_ON_FORK, so the threads it
  /// starts afterwards (the audio thread here) do not inherit it: PipeWire's thread loop is given
  /// it by id (`pipeWiresDataThreadIsMadeRealtimeThroughRTKit`).
  @Test func theControlThreadIsGivenItsNiceLevelByRTKit() throws {
    let dir = Harness.temporaryDirectory()
    let rig = try RealtimeKitRig(directory: dir)
    defer { rig.stop() }
    let daemon = try Self.start(dir, bus: rig.address, ["--realtime-priority", "0"])
    defer { daemon.stop() }
    let control = try #require(daemon.status()["controlThread"] as? [String: Any])
    #expect(control["nice"] as? Int == -11 && control["via"] as? String == "rtkit", "\(control)")
    #expect(try daemon.cuectl(["status"]).stdout.contains("control:   nice -11 (via RTKit)\n"))
    #expect(rig.rtkitLog.contains("of process \(daemon.pid) owned by 'nobody' high priority at nice level -11"), "\(rig.rtkitLog)")
    let threads = try Harness.niceLevels(daemon.pid)
    #expect(threads.first { $0.thread == daemon.pid }?.nice == -11, "\(threads)")
    #expect(threads.first { $0.name == "cued-audio" }?.nice == 0, "reset on fork: \(threads)")
  }

  @Test func libpulsesMainloopThreadIsMadeRealtimeByRTKit() throws {
    let dir = Harness.temporaryDirectory()
    let rig = try RealtimeKitRig(directory: dir)
    defer { rig.stop() }
    let pulse = try PulseServer(directory: dir)
    chmod(dir + "/pulse", 0o711)  // nobody reaches the server's socket (itself 0777)
    let daemon = try Self.start(
      dir, bus: rig.address, device: "pulseaudio:" + pulse.sink, environment: ["PULSE_SERVER": pulse.serverAddress])
    defer { daemon.stop() }
    let played = try daemon.cuectl(["play", "pico", "--wait"])
    #expect(played.status == 0, "\(played.stderr)")
    let device = try #require(daemon.status()["device"] as? [String: Any])
    #expect(device["backend"] as? String == "pulseaudio")
    let mixing = try #require(device["mixingThread"] as? [String: Any], "no mixingThread in \(device)")
    #expect(mixing["policy"] as? String == "rr", "\(mixing)")
    #expect(mixing["priority"] as? Int == 20)
    #expect(mixing["via"] as? String == "rtkit")
    #expect(try daemon.cuectl(["status"]).stdout.contains("mixing:    libpulse's mainloop thread, SCHED_RR, priority 20 (via RTKit)\n"))
    // Two threads of cued's made real-time: the audio thread, which waits here, and the mainloop thread, which mixes.
    #expect(rig.rtkitLog.components(separatedBy: "of process \(daemon.pid) owned by 'nobody' RT").count - 1 == 2, "\(rig.rtkitLog)")
  }

  /// PipeWire's data thread, which mixes on `--device pipewire`: made real-time through RTKit,
  /// by PipeWire's own module-rt (which asks RTKit itself) or else by cued's policy.
  @Test func pipeWiresDataThreadIsMadeRealtimeThroughRTKit() throws {
    let dir = Harness.temporaryDirectory()
    let rig = try RealtimeKitRig(directory: dir)
    defer { rig.stop() }
    let pipewire = try PipeWireEnvironment(directory: dir + "/pw")
    defer { withExtendedLifetime(pipewire) {} }  // stopped when released (deinit)
    chmod(dir + "/pw", 0o711)  // nobody reaches the server's socket
    chmod(dir + "/pw/pipewire-0", 0o777)
    let daemon = try Self.start(
      dir, bus: rig.address, device: "pipewire", environment: ["PIPEWIRE_RUNTIME_DIR": dir + "/pw", "PIPEWIRE_REMOTE": "pipewire-0"])
    defer { daemon.stop() }
    let played = try daemon.cuectl(["play", "pico", "--wait"])
    #expect(played.status == 0, "\(played.stderr) \(daemon.log)")
    let device = try #require(daemon.status()["device"] as? [String: Any])
    #expect(device["backend"] as? String == "pipewire")
    let mixing = try #require(device["mixingThread"] as? [String: Any], "no mixingThread in \(device)")
    #expect(mixing["policy"] as? String == "rr", "\(mixing)")
    #expect(["rtkit", "pipewire"].contains(mixing["via"] as? String ?? ""), "\(mixing)")
    // Whoever asked, rtkit-daemon did it, for a thread of nobody's cued.
    #expect(rig.rtkitLog.contains("of process \(daemon.pid) owned by 'nobody' RT"), "\(rig.rtkitLog)")
    // The thread loop's thread, which carries a resume to the server, did not inherit the control
    // thread's nice level from a thread RTKit raised (SCHED_RESET_ON_FORK): cued asked for it too.
    let loop = try Harness.niceLevels(daemon.pid).first { $0.name == "cued-pipewire" }
    #expect(loop?.nice == -11, "\(String(describing: loop)) \(rig.rtkitLog)")
  }

  @Test func withoutRTKitOnTheBusStatusSaysBothReasons() throws {
    let dir = Harness.temporaryDirectory()
    let rig = try RealtimeKitRig(directory: dir, rtkit: false)
    defer { rig.stop() }
    let daemon = try Self.start(dir, bus: rig.address)
    defer { daemon.stop() }
    let scheduling = try #require(daemon.status()["scheduling"] as? [String: Any])
    #expect(scheduling["policy"] as? String == "other")
    #expect(scheduling["refused"] as? String == "Operation not permitted")
    let why = try #require(scheduling["rtkit"] as? String)
    #expect(why.hasPrefix("not running (org.freedesktop.DBus.Error.ServiceUnknown: "), "\(why)")
    #expect(
      try daemon.cuectl(["status"]).stdout.contains(
        "mixing:    cued's audio thread, normal scheduling (real-time refused: Operation not permitted; RTKit: not running (org.freedesktop.DBus.Error.ServiceUnknown"))
    let control = try #require(daemon.status()["controlThread"] as? [String: Any])
    #expect(control["nice"] as? Int == 0 && control["refused"] as? String == "Permission denied", "\(control)")
    #expect((control["rtkit"] as? String)?.hasPrefix("not running (org.freedesktop.DBus.Error.ServiceUnknown: ") == true, "\(control)")
    #expect(daemon.log.contains("control thread left at normal priority: nice 0 (refused: Permission denied; RTKit: not running"), "\(daemon.log)")
  }

  @Test func noSystemBusIsSaidSo() throws {
    let dir = Harness.temporaryDirectory()
    let daemon = try Self.start(dir, bus: "unix:path=\(dir)/no-bus")
    defer { daemon.stop() }
    let scheduling = try #require(daemon.status()["scheduling"] as? [String: String])
    #expect(scheduling["refused"] == "Operation not permitted")
    #expect(scheduling["rtkit"] == "no system bus (No such file or directory)")
  }

  /// A bus that takes the connection and never answers (a hung dbus-daemon): cued waits at most
  /// the bound (1 s) for RTKit, starts, and says why its thread is not real-time.
  @Test func aBusThatNeverAnswersCostsTheBoundAndIsSaidSo() throws {
    let dir = Harness.temporaryDirectory()
    chmod(dir, 0o711)
    // Listening, never accepting: connect succeeds (the backlog), then nothing is ever read or written.
    let silent = try UnixSocket.listen(path: dir + "/silent-bus", mode: 0o777)
    defer { silent.close() }
    let daemon = try Self.start(dir, bus: "unix:path=\(dir)/silent-bus")
    defer { daemon.stop() }
    #expect(try daemon.cuectl(["ping"]).status == 0)
    let scheduling = try #require(daemon.status()["scheduling"] as? [String: String])
    #expect(scheduling["policy"] == "other")
    #expect(scheduling["refused"] == "Operation not permitted")
    #expect(scheduling["rtkit"] == "no answer from the system bus within 1.0 s", "\(scheduling)")
  }

  @Test func noRTKitAsksNobody() throws {
    let dir = Harness.temporaryDirectory()
    let rig = try RealtimeKitRig(directory: dir)
    defer { rig.stop() }
    let daemon = try Self.start(dir, bus: rig.address, ["--no-rtkit"])
    defer { daemon.stop() }
    let scheduling = try #require(daemon.status()["scheduling"] as? [String: String])
    #expect(scheduling == ["policy": "other", "refused": "Operation not permitted"])
    #expect(!rig.rtkitLog.contains("of process \(daemon.pid)"))
  }
}
