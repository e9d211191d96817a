import CuePosix
import DaemonTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A Unix datagram socket standing in for systemd's notification socket.
final class NotifyListener {
  let path: String
  let fd: Int32

  init(path: String) throws {
    self.path = path
    fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
    let rc = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    guard rc == 0 else { throw HarnessError("bind \(path) failed") }
  }

  deinit { close(fd) }

  /// Messages received within `seconds`, each with its arrival time.
  func receive(for seconds: Double, until stop: (String) -> Bool = { _ in false }) -> [(at: Date, text: String)] {
    var messages: [(Date, String)] = []
    let deadline = Date().addingTimeInterval(seconds)
    var buffer = [UInt8](repeating: 0, count: 4096)
    while Date() < deadline {
      var request = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
      let wait = Int32(max(1, deadline.timeIntervalSinceNow * 1000))
      guard poll(&request, 1, wait) > 0 else { continue }
      let n = recv(fd, &buffer, buffer.count, 0)
      if n > 0 {
        let text = String(decoding: buffer[0..<n], as: UTF8.self)
        messages.append((Date(), text))
        if stop(text) { break }
      }
    }
    return messages
  }
}

@Suite("Running as a service", .serialized)
struct ServiceTests {
  @Test func sdNotifySaysReadyAfterTheCuesLoadFeedsTheWatchdogAndSaysStopping() throws {
    let dir = Harness.temporaryDirectory()
    let listener = try NotifyListener(path: dir + "/notify")
    let sounds = try Harness.soundDirectory(in: dir, ["pico": "tone-48000-mono.mp3", "loop": "loop-48000-stereo.mp3"])
    let daemon = try DaemonProcess(
      socket: dir + "/cued.sock", arguments: ["--sounds", sounds, "--device", "null"],
      environment: ["NOTIFY_SOCKET": dir + "/notify", "WATCHDOG_USEC": "200000"], logPath: dir + "/cued.log")
    let early = listener.receive(for: 1.0)
    let ready = try #require(early.first { $0.text.contains("READY=1") })
    #expect(ready.text.contains("STATUS=2 cues"))  // READY comes once the cues are loaded
    // The watchdog at its cadence: half of WATCHDOG_USEC (100 ms), so about 10 in a second.
    let pings = early.filter { $0.text == "WATCHDOG=1" }
    #expect(pings.count >= 4 && pings.count <= 12, "\(pings.count) pings")
    #expect(daemon.stop() == 0)
    let late = listener.receive(for: 1.0) { $0.contains("STOPPING=1") }
    #expect(late.contains { $0.text.contains("STOPPING=1") })
  }

  @Test func sighupSaysReloadingThenReady() throws {
    let dir = Harness.temporaryDirectory()
    let listener = try NotifyListener(path: dir + "/notify")
    let sounds = try Harness.soundDirectory(in: dir, ["pico": "tone-48000-mono.mp3"])
    let daemon = try DaemonProcess(
      socket: dir + "/cued.sock", arguments: ["--sounds", sounds, "--device", "null"],
      environment: ["NOTIFY_SOCKET": dir + "/notify"], logPath: dir + "/cued.log")
    defer { daemon.stop() }
    _ = listener.receive(for: 0.3)
    try FileManager.default.copyItem(atPath: Harness.fixture("tone-44100-stereo.mp3"), toPath: sounds + "/fresh.mp3")
    daemon.signal(SIGHUP)
    let messages = listener.receive(for: 3) { $0.contains("READY=1") }.map(\.text)
    let reloading = try #require(messages.firstIndex { $0.contains("RELOADING=1") })
    let ready = try #require(messages.lastIndex { $0.contains("READY=1") })
    #expect(reloading < ready)
    #expect(messages[ready].contains("STATUS=2 cues"))  // SIGHUP picked up the new sound file
    #expect(try daemon.cuectl(["play", "fresh", "--wait"]).status == 0)
  }

  @Test func underSocketActivationTheFirstConnectionWorksAndTheSocketFileStays() throws {
    let dir = Harness.temporaryDirectory()
    let sounds = try Harness.soundDirectory(in: dir, ["pico": "tone-48000-mono.mp3"])
    let socketPath = dir + "/activated.sock"
    let activator = try ChildProcess(
      "/usr/bin/systemd-socket-activate",
      ["-l", socketPath, Harness.cued, "--sounds", sounds, "--device", "null", "--realtime-priority", "0"],
      environment: ["XDG_CONFIG_HOME": "/nonexistent/cued-tests"], standardOutput: .file(dir + "/log"),
      standardError: .sameAsStandardOutput)
    defer { activator.terminate(grace: 2) }
    let deadline = Date().addingTimeInterval(5)
    while Date() < deadline && !FileManager.default.fileExists(atPath: socketPath) { usleep(10_000) }
    // The first connection starts cued (systemd-socket-activate waits for it), and it is served.
    let played = try run(Harness.cuectl, ["play", "pico", "--wait", "--socket", socketPath], timeout: 10)
    #expect(played.status == 0, "\(played.stderr) \((try? String(contentsOfFile: dir + "/log", encoding: .utf8)) ?? "")")
    let log = (try? String(contentsOfFile: dir + "/log", encoding: .utf8)) ?? ""
    #expect(log.contains("socket activation"))
    // It says the socket it serves, the one systemd passed, not the one it would have made.
    #expect(log.contains("ready on \(socketPath)"), "\(log)")
    // The built-in carousel bindings name the shipped sounds, which this directory lacks: not an error.
    #expect(!log.contains("error"), "\(log)")
    // cued exits on SIGTERM, and does not remove the socket systemd made.
    activator.signal(SIGTERM)
    _ = activator.wait(timeout: 5)
    #expect(FileManager.default.fileExists(atPath: socketPath))
  }

  @Test func sigtermMidCueExits0Promptly() throws {
    let (daemon, _) = try DaemonTests.start()
    #expect(try daemon.cuectl(["play", "loop", "--loops", "-1"]).status == 0)
    usleep(100_000)
    let began = Date()
    daemon.signal(SIGTERM)
    let status = daemon.child.wait(timeout: 5)
    let elapsed = Date().timeIntervalSince(began)
    #expect(status == 0)
    // The contract is 200 ms (a 50 ms fade, then the device closes); measured figures are in
    // docs/PERFORMANCE.md. The bound here allows for a loaded test machine.
    #expect(elapsed < 1.0, "exit took \(elapsed) s")
  }

  @Test func underJournaldLinesCarryPrioritiesAndLogLevelFilters() throws {
    let dir = Harness.temporaryDirectory()
    let sounds = try Harness.soundDirectory(in: dir, ["pico": "tone-48000-mono.mp3", "junk": "not-audio.mp3"])
    // systemd sets JOURNAL_STREAM to the device:inode of the stream it gives the service; here the
    // log file plays the journal's stream.
    let journalPath = dir + "/journal.log"
    #expect(FileManager.default.createFile(atPath: journalPath, contents: nil))
    var info = stat()
    #expect(stat(journalPath, &info) == 0)
    let journal = try DaemonProcess(
      socket: dir + "/a.sock", arguments: ["--sounds", sounds, "--device", "null"],
      environment: ["JOURNAL_STREAM": "\(info.st_dev):\(info.st_ino)"], logPath: journalPath)
    journal.stop()
    let lines = journal.log.split(separator: "\n")
    #expect(lines.contains { $0.hasPrefix("<6>") && $0.contains("ready on") })  // info
    #expect(lines.contains { $0.hasPrefix("<4>") && $0.contains("junk.mp3") })  // warning
    #expect(lines.allSatisfy { $0.hasPrefix("<") })
    // A JOURNAL_STREAM inherited from a unit (a shell started inside one) names another stream
    // (here journal.log, while this daemon writes leaked.log): standard error is not the journal,
    // so the lines are for people.
    let leaked = try DaemonProcess(
      socket: dir + "/c.sock", arguments: ["--sounds", sounds, "--device", "null"],
      environment: ["JOURNAL_STREAM": "\(info.st_dev):\(info.st_ino)"], logPath: dir + "/leaked.log")
    leaked.stop()
    #expect(leaked.log.contains("cued: warning: skipped"))
    #expect(!leaked.log.contains("<6>") && !leaked.log.contains("<4>"))
    // On a terminal: readable lines, and --log-level warning keeps only warnings and worse.
    let quiet = try DaemonProcess(
      socket: dir + "/b.sock", arguments: ["--sounds", sounds, "--device", "null", "--log-level", "warning"],
      logPath: dir + "/quiet.log")
    quiet.stop()
    #expect(quiet.log.contains("cued: warning: skipped"))
    #expect(!quiet.log.contains("ready on"))
  }

  /// cued makes `$XDG_RUNTIME_DIR/cued` and never the runtime directory itself (systemd-logind's).
  @Test func aMissingRuntimeDirectoryIsNamedNotMade() throws {
    let dir = Harness.temporaryDirectory()
    let missing = dir + "/run/user/4242"
    let result = try run(Harness.cued, ["--no-config", "--device", "null"], environment: ["XDG_RUNTIME_DIR": missing, "CUED_SOCKET": ""])
    #expect(result.status == 1, "\(result.stderr)")
    #expect(result.stderr.contains("XDG_RUNTIME_DIR is \(missing), which does not exist"), "\(result.stderr)")
    #expect(result.stderr.contains("unset it (cued then uses /tmp/cued-"), "\(result.stderr)")
    #expect(!FileManager.default.fileExists(atPath: dir + "/run"))
    // Another user's runtime directory (leaked through sudo): named, and nothing is made in it.
    let theirs = dir + "/theirs"
    try FileManager.default.createDirectory(atPath: theirs, withIntermediateDirectories: false)
    #expect(chown(theirs, 4242, 4242) == 0)
    let leaked = try run(Harness.cued, ["--no-config", "--device", "null"], environment: ["XDG_RUNTIME_DIR": theirs, "CUED_SOCKET": ""])
    #expect(leaked.status == 1, "\(leaked.stderr)")
    #expect(leaked.stderr.contains("belongs to uid 4242, not to you"), "\(leaked.stderr)")
    #expect(!FileManager.default.fileExists(atPath: theirs + "/cued"))
  }

  /// A newcomer on a machine with no sound card (a server, a container, CI) is told about `--device null`.
  @Test(.enabled(if: !FileManager.default.fileExists(atPath: "/dev/snd/controlC0"), "this machine has a sound card"))
  func withNoSoundCardTheErrorSuggestsTheNullDevice() throws {
    let dir = Harness.temporaryDirectory()
    let sounds = try Harness.soundDirectory(in: dir, ["pico": "tone-48000-mono.mp3"])
    let daemon = try DaemonProcess(
      socket: dir + "/cued.sock", arguments: ["--sounds", sounds, "--device", "default"],
      environment: ["PULSE_SERVER": "unix:" + dir + "/no-server", "ALSA_CONFIG_PATH": "/usr/share/alsa/alsa.conf"],
      logPath: dir + "/cued.log")
    defer { daemon.stop() }
    let played = try daemon.cuectl(["play", "pico"])
    #expect(played.status == 1)
    #expect(played.stderr.contains("this machine has no sound card"), "\(played.stderr)")
    #expect(played.stderr.contains("run `cued --device null` to run without sound"), "\(played.stderr)")
  }
}
