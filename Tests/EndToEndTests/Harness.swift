import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Paths and processes for end-to-end tests: the real `cued` and `cuectl` binaries, real sockets.
enum Harness {
  /// The directory holding the built products (next to the test bundle).
  static let productsDirectory: String = {
    let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    var url = URL(fileURLWithPath: exe).deletingLastPathComponent()
    // Linux: .build/debug/cuedPackageTests.xctest is the executable itself.
    while !FileManager.default.fileExists(atPath: url.appendingPathComponent("cued").path) && url.path != "/" {
      url = url.deletingLastPathComponent()
    }
    return url.path
  }()

  static var cued: String { productsDirectory + "/cued" }
  static var cuectl: String { productsDirectory + "/cuectl" }

  static let repositoryRoot: String = {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
  }()

  static func fixture(_ name: String) -> String { repositoryRoot + "/Tests/Fixtures/" + name }

  /// A fresh directory under /tmp, short enough for socket paths.
  static func temporaryDirectory() -> String {
    var template = Array("/tmp/cued-e2e-XXXXXX".utf8CString)
    let path = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
    return path
  }

  /// A sound directory holding copies of the named fixtures, under new names.
  static func soundDirectory(in root: String, _ files: [String: String]) throws -> String {
    let dir = root + "/sounds"
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    for (cue, file) in files {
      try FileManager.default.copyItem(atPath: fixture(file), toPath: dir + "/" + cue + ".mp3")
    }
    return dir
  }
}

/// The result of running a command to its end.
struct CommandResult {
  var status: Int32
  var stdout: String
  var stderr: String
}

/// A child process started with posix_spawn, its output going to files.
///
/// Foundation's `Process` reaps children on a shared thread with blocking waits, which stalls when
/// several long-lived children (pulseaudio, cued, parec) run at once; this is the plain POSIX way.
final class Subprocess {
  let pid: pid_t
  private(set) var exitStatus: Int32? = nil

  /// Starts `executable`; `environment` entries are added to (or replace) the test's own.
  init(_ executable: String, _ arguments: [String], environment: [String: String] = [:], stdout: String = "/dev/null", stderr: String = "/dev/null") throws {
    var env = Foundation.ProcessInfo.processInfo.environment
    for (k, v) in environment { env[k] = v }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_APPEND, 0o644)
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var empty = sigset_t()
    sigemptyset(&empty)
    var defaults = sigset_t()
    sigemptyset(&defaults)
    for signal in [SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGCHLD] { sigaddset(&defaults, signal) }
    posix_spawnattr_setsigmask(&attributes, &empty)
    posix_spawnattr_setsigdefault(&attributes, &defaults)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
    let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
    let envp: [UnsafeMutablePointer<CChar>?] = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer {
      argv.forEach { free($0) }
      envp.forEach { free($0) }
    }
    var child: pid_t = 0
    let rc = posix_spawn(&child, executable, &actions, &attributes, argv, envp)
    guard rc == 0 else { throw HarnessError("cannot start \(executable): \(String(cString: strerror(rc)))") }
    pid = child
  }

  /// True until the child has exited (and been reaped).
  var isRunning: Bool {
    if exitStatus != nil { return false }
    var status: Int32 = 0
    let rc = waitpid(pid, &status, WNOHANG)
    if rc == pid {
      exitStatus = Self.decode(status)
      return false
    }
    return rc == 0
  }

  private static func decode(_ status: Int32) -> Int32 {
    let signal = status & 0x7f
    return signal == 0 ? (status >> 8) & 0xff : 128 + signal
  }

  /// Waits for the exit (at most `timeout` seconds); nil when still running.
  @discardableResult
  func wait(timeout: Double) -> Int32? {
    let deadline = Date().addingTimeInterval(timeout)
    while isRunning {
      if Date() >= deadline { return nil }
      usleep(1000)
    }
    return exitStatus
  }

  func signal(_ number: Int32) {
    if exitStatus == nil { kill(pid, number) }
  }

  /// SIGTERM, then SIGKILL after `grace` seconds; returns the exit status.
  @discardableResult
  func terminate(grace: Double = 5) -> Int32 {
    signal(SIGTERM)
    if let status = wait(timeout: grace) { return status }
    signal(SIGKILL)
    return wait(timeout: 5) ?? -1
  }

  deinit {
    if isRunning {
      kill(pid, SIGKILL)
      var status: Int32 = 0
      waitpid(pid, &status, 0)
    }
  }
}

/// Runs `executable` with `arguments` and waits (at most `timeout` seconds).
func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:], timeout: Double = 20) throws -> CommandResult {
  let base = NSTemporaryDirectory() + "cued-cmd-\(UUID().uuidString)"
  defer {
    try? FileManager.default.removeItem(atPath: base + ".out")
    try? FileManager.default.removeItem(atPath: base + ".err")
  }
  let child = try Subprocess(executable, arguments, environment: environment, stdout: base + ".out", stderr: base + ".err")
  guard let status = child.wait(timeout: timeout) else {
    child.terminate(grace: 1)
    throw HarnessError("\(executable) \(arguments) did not finish within \(timeout) s")
  }
  return CommandResult(
    status: status,
    stdout: (try? String(contentsOfFile: base + ".out", encoding: .utf8)) ?? "",
    stderr: (try? String(contentsOfFile: base + ".err", encoding: .utf8)) ?? "")
}

struct HarnessError: Error, CustomStringConvertible {
  var description: String
  init(_ description: String) { self.description = description }
}

/// A running `cued`, stopped (SIGTERM) when the test is done with it.
final class DaemonProcess {
  let child: Subprocess
  let socket: String
  let logPath: String

  /// Starts cued with `arguments` on `socket`, and waits until it answers `ping`.
  init(socket: String, arguments: [String], environment: [String: String] = [:], logPath: String) throws {
    self.socket = socket
    self.logPath = logPath
    var env = environment
    env["CUED_SOCKET"] = socket
    // Keep the developer's own ~/.config/cued/cued.toml out of the tests.
    if env["XDG_CONFIG_HOME"] == nil { env["XDG_CONFIG_HOME"] = "/nonexistent/cued-tests" }
    child = try Subprocess(
      Harness.cued, ["--socket", socket, "--realtime-priority", "0"] + arguments, environment: env, stdout: logPath,
      stderr: logPath)
    let deadline = Date().addingTimeInterval(10)
    while Date() < deadline {
      if !child.isRunning { throw HarnessError("cued exited early: \(self.log)") }
      if (try? cuectl(["ping"]).status) == 0 { return }
      usleep(10_000)
    }
    throw HarnessError("cued did not answer within 10 s: \(self.log)")
  }

  var pid: Int32 { child.pid }
  var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

  /// Runs cuectl against this daemon.
  func cuectl(_ arguments: [String], timeout: Double = 20) throws -> CommandResult {
    try run(Harness.cuectl, arguments + ["--socket", socket], timeout: timeout)
  }

  /// The `status` reply, parsed.
  func status() throws -> [String: Any] {
    let result = try cuectl(["status", "--json"])
    guard result.status == 0, let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any] else {
      throw HarnessError("status failed: \(result.stderr)")
    }
    return object
  }

  func deviceState() throws -> String {
    ((try status())["device"] as? [String: Any])?["state"] as? String ?? "?"
  }

  /// Polls until the device reports `state` (or the timeout passes).
  func waitForDevice(_ state: String, timeout: Double = 10) throws {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
      if try deviceState() == state { return }
      usleep(20_000)
    }
    throw HarnessError("device never became \(state); it is \(try deviceState())")
  }

  func signal(_ number: Int32) { child.signal(number) }

  /// Sends SIGTERM and waits; returns the exit status.
  @discardableResult
  func stop(timeout: Double = 5) -> Int32 { child.terminate(grace: timeout) }
}

/// Reads a raw float32 little-endian interleaved stereo capture.
func readFloats(_ path: String) throws -> [Float] {
  let data = try Data(contentsOf: URL(fileURLWithPath: path))
  return data.withUnsafeBytes { raw in
    Array(raw.bindMemory(to: Float.self))
  }
}
