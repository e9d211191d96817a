import CuePosix
import Foundation

// A release build (make install) builds this target too, without the testing library: the schema
// check that records an issue is there only when Testing is.
#if canImport(Testing)
import Testing
#endif

#if canImport(Glibc)
import Glibc
#endif

/// Where the tests find what they run: the binaries built next to the test bundle, the repository.
public enum TestPaths {
  /// The directory holding the built products (the test executable's, or one of its parents).
  public static let products: String = {
    var directory = CuePosix.ProcessInfo.executablePath ?? CommandLine.arguments[0]
    repeat {
      directory = DefaultPaths.directory(of: directory)
      if Files.kind(of: directory + "/cued") == .regular { return directory }
    } while directory != "/" && directory != "."
    return "."
  }()

  public static var cued: String { products + "/cued" }
  public static var cuectl: String { products + "/cuectl" }

  /// The repository's root (this file is Tests/DaemonTestSupport/DaemonProcess.swift).
  public static let repositoryRoot: String = {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
  }()

  public static var sounds: String { repositoryRoot + "/sounds" }
  public static func fixture(_ name: String) -> String { repositoryRoot + "/Tests/Fixtures/" + name }

  /// A fresh directory under /tmp, short enough for socket paths.
  public static func temporaryDirectory(prefix: String = "cued-test") -> String {
    try! Files.makeTemporaryDirectory(prefix: prefix)
  }
}

/// The result of running a command to its end.
public struct CommandResult: Sendable {
  public var status: Int32
  public var stdout: String
  public var stderr: String
}

public struct HarnessError: Error, CustomStringConvertible {
  public var description: String
  public init(_ description: String) { self.description = description }
}

/// Runs `executable` with `arguments` and waits (at most `timeout` seconds). `environment` adds to
/// (or replaces) this process's environment.
public func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:], timeout: Double = 20) throws -> CommandResult {
  let base = NSTemporaryDirectory() + "cued-cmd-\(UUID().uuidString)"
  defer {
    try? FileManager.default.removeItem(atPath: base + ".out")
    try? FileManager.default.removeItem(atPath: base + ".err")
  }
  let child = try ChildProcess(
    executable, arguments, environment: environment, standardOutput: .file(base + ".out"),
    standardError: .file(base + ".err"))
  guard let status = child.wait(timeout: timeout) else {
    child.terminate(grace: 1)
    throw HarnessError("\(executable) \(arguments) did not finish within \(timeout) s")
  }
  return CommandResult(
    status: status,
    stdout: (try? String(contentsOfFile: base + ".out", encoding: .utf8)) ?? "",
    stderr: (try? String(contentsOfFile: base + ".err", encoding: .utf8)) ?? "")
}

/// A running `cued`, the one way every test target starts the real daemon: on its own socket,
/// with real-time priority off and the developer's config file out of the way, every line it sends
/// recorded and checked against docs/protocol.schema.json when it stops.
public final class DaemonProcess: @unchecked Sendable {
  public let child: ChildProcess
  public let socket: String
  public let logPath: String
  /// Runs cuectl as its last argument (`setpriv …`, to reach a daemon that serves another user).
  public let clientLauncher: [String]
  private var linesChecked = false

  /// Starts cued with `arguments` on `socket` and, unless `waitUntilReady` is false, waits until it
  /// answers `ping`. A `launcher` (`setpriv …`) runs cued as its last argument, a `clientLauncher` cuectl.
  public init(
    socket: String, arguments: [String], environment: [String: String] = [:], launcher: [String] = [],
    clientLauncher: [String] = [], logPath: String, waitUntilReady: Bool = true
  ) throws {
    self.socket = socket
    self.clientLauncher = clientLauncher
    self.logPath = logPath
    var env = environment
    env["CUED_SOCKET"] = socket
    // Every line the daemon sends, for `stop` to check against docs/protocol.schema.json.
    env["CUED_PROTOCOL_LOG"] = logPath + ".protocol.jsonl"
    // Keep the developer's own ~/.config/cued/cued.toml out of the tests.
    if env["XDG_CONFIG_HOME"] == nil { env["XDG_CONFIG_HOME"] = "/nonexistent/cued-tests" }
    let command = launcher + [TestPaths.cued, "--socket", socket, "--realtime-priority", "0"] + arguments
    child = try ChildProcess(
      command[0], Array(command.dropFirst()), environment: env,
      standardOutput: .file(logPath, append: true), standardError: .sameAsStandardOutput)
    if waitUntilReady { try self.waitUntilReady() }
  }

  public var pid: Int32 { child.pid }
  public var isRunning: Bool { child.isRunning }
  public var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

  /// Waits until the daemon answers `ping` (at most `timeout` seconds).
  public func waitUntilReady(timeout: Double = 15) throws {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
      if !child.isRunning { throw HarnessError("cued exited early: \(log)") }
      if (try? cuectl(["ping"]).status) == 0 { return }
      usleep(10_000)
    }
    throw HarnessError("cued did not answer within \(timeout) s: \(log)")
  }

  /// Runs cuectl against this daemon.
  public func cuectl(_ arguments: [String], timeout: Double = 20) throws -> CommandResult {
    let command = clientLauncher + [TestPaths.cuectl] + arguments + ["--socket", socket]
    return try run(command[0], Array(command.dropFirst()), timeout: timeout)
  }

  public func signal(_ number: Int32) { child.signal(number) }

  #if canImport(Testing)
  /// Sends `signal` (SIGTERM) and waits; returns the exit status. The first time, also checks
  /// every line the daemon sent against docs/protocol.schema.json, each reply against its own op's
  /// reply (Tests/Protocol/schema_check.py).
  @discardableResult
  public func stop(_ signal: Int32 = SIGTERM, timeout: Double = 5, sourceLocation: SourceLocation = #_sourceLocation) -> Int32 {
    let status = child.terminate(signal, grace: timeout)
    if let problems = schemaProblems() {
      Issue.record("lines the daemon sent that docs/protocol.schema.json refuses:\n\(problems)", sourceLocation: sourceLocation)
    }
    return status
  }
  #endif

  /// What docs/protocol.schema.json refuses of the lines the daemon sent, checked once; nil when all fit.
  public func schemaProblems() -> String? {
    guard !linesChecked else { return nil }
    linesChecked = true
    let trace = logPath + ".protocol.jsonl"
    guard FileManager.default.fileExists(atPath: trace), let result = try? run(
      "/usr/bin/env", ["python3", TestPaths.repositoryRoot + "/Tests/Protocol/schema_check.py", "daemon", trace], timeout: 60),
      result.status != 0
    else { return nil }
    return result.stdout + result.stderr
  }

  deinit { if child.isRunning { _ = child.terminate(SIGKILL, grace: 3) } }
}
