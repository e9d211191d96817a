import CueClient
import CuePosix
import CueProtocol
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Paths for the client tests: the `cued` built next to the test executable, the shipped sounds.
enum Paths {
  /// The directory holding the built products (the test executable's, or one of its parents).
  static let products: String = {
    var directory = CuePosix.ProcessInfo.executablePath ?? CommandLine.arguments[0]
    repeat {
      directory = DefaultPaths.directory(of: directory)
      if Files.kind(of: directory + "/cued") == .regular { return directory }
    } while directory != "/" && directory != "."
    return "."
  }()

  static var cued: String { products + "/cued" }

  static let repositoryRoot: String = {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
  }()

  static var sounds: String { repositoryRoot + "/sounds" }

  /// A fresh directory under /tmp, short enough for socket paths.
  static func temporaryDirectory() -> String {
    var template = Array("/tmp/cued-cl-XXXXXX".utf8CString)
    return template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
  }
}

struct TestFailure: Error, CustomStringConvertible {
  var description: String
  init(_ description: String) { self.description = description }
}

/// A child process started with posix_spawn (Foundation's Process stalls reaping long-lived children here).
final class Subprocess: @unchecked Sendable {
  let pid: pid_t
  private var exitStatus: Int32? = nil
  private let lock = NSLock()

  init(_ executable: String, _ arguments: [String], output: String = "/dev/null") throws {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_APPEND, 0o644)
    posix_spawn_file_actions_addopen(&actions, 2, output, O_WRONLY | O_CREAT | O_APPEND, 0o644)
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
    let environment = Foundation.ProcessInfo.processInfo.environment.filter { $0.key != "CUED_SOCKET" }
    let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer {
      argv.forEach { free($0) }
      envp.forEach { free($0) }
    }
    var child: pid_t = 0
    let rc = posix_spawn(&child, executable, &actions, &attributes, argv, envp)
    guard rc == 0 else { throw TestFailure("cannot start \(executable): \(String(cString: strerror(rc)))") }
    pid = child
  }

  /// True until the child has exited (and been reaped).
  var isRunning: Bool {
    lock.lock()
    defer { lock.unlock() }
    if exitStatus != nil { return false }
    var status: Int32 = 0
    let rc = waitpid(pid, &status, WNOHANG)
    if rc == pid {
      exitStatus = status
      return false
    }
    return rc == 0
  }

  /// Sends `signal` and waits up to `timeout` seconds for the exit (then SIGKILL).
  func terminate(_ signal: Int32 = SIGTERM, timeout: Double = 3) {
    guard isRunning else { return }
    kill(pid, signal)
    let deadline = Date().addingTimeInterval(timeout)
    while isRunning && Date() < deadline { usleep(1000) }
    if isRunning {
      kill(pid, SIGKILL)
      while isRunning { usleep(1000) }
    }
  }

  deinit {
    terminate(SIGKILL)
  }
}

/// A `cued --device null` serving the shipped sounds on a socket of its own.
final class TestDaemon: @unchecked Sendable {
  let directory: String
  let socket: String
  private(set) var process: Subprocess? = nil

  /// Starts a daemon and waits until it answers.
  init() throws {
    directory = Paths.temporaryDirectory()
    socket = directory + "/cued.sock"
    try start()
  }

  var log: String { (try? String(contentsOfFile: directory + "/cued.log", encoding: .utf8)) ?? "" }

  /// Starts a daemon on the socket (the previous one must be stopped); waits until it answers unless `wait` is false.
  func start(wait: Bool = true) throws {
    process = try Subprocess(
      Paths.cued,
      ["--device", "null", "--sounds", Paths.sounds, "--socket", socket, "--realtime-priority", "0", "--log-level", "warning"],
      output: directory + "/cued.log")
    if wait { try waitUntilReady() }
  }

  func waitUntilReady(timeout: Double = 15) throws {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
      if let process, !process.isRunning { throw TestFailure("cued exited early: \(log)") }
      if let connection = try? CueConnection.connect(socketPath: socket), (try? connection.send(.ping)) != nil { return }
      usleep(5000)
    }
    throw TestFailure("cued did not answer within \(timeout) s: \(log)")
  }

  /// SIGTERM, and waits for the exit.
  func stop() {
    process?.terminate(SIGTERM)
    process = nil
  }

  var pid: pid_t? { process?.pid }

  deinit {
    process?.terminate(SIGKILL)
    try? FileManager.default.removeItem(atPath: directory)
  }
}

/// Collects a stream's events as they come, for checks with timeouts.
final class EventRecorder: Sendable {
  private let log: EventLog
  private let task: Task<Void, Never>

  private final class EventLog: Sendable {
    let events = Mutex<[CueEvent]>([])
    let ended = Atomic<Bool>(false)
  }

  init(_ stream: AsyncStream<CueEvent>) {
    let log = EventLog()
    self.log = log
    task = Task {
      for await event in stream { log.events.withLock { $0.append(event) } }
      log.ended.store(true, ordering: .releasing)
    }
  }

  /// Everything received so far, in order.
  var events: [CueEvent] { log.events.withLock { $0 } }
  var ended: Bool { log.ended.load(ordering: .acquiring) }

  /// The first event matching `predicate`, waiting up to `timeout` seconds for it.
  func first(timeout: Double = 10, where predicate: (CueEvent) -> Bool) async -> CueEvent? {
    let deadline = Date().addingTimeInterval(timeout)
    while true {
      if let event = events.first(where: predicate) { return event }
      if Date() >= deadline { return nil }
      try? await Task.sleep(for: .milliseconds(5))
    }
  }

  func stop() { task.cancel() }
  deinit { task.cancel() }
}

/// Waits for `condition` (polling), up to `timeout` seconds; returns whether it came true.
func eventually(timeout: Double = 10, _ condition: () async -> Bool) async -> Bool {
  let deadline = Date().addingTimeInterval(timeout)
  while Date() < deadline {
    if await condition() { return true }
    try? await Task.sleep(for: .milliseconds(5))
  }
  return await condition()
}

/// `body`'s result, or a `TestFailure` after `seconds` (the body is cancelled then), so a missing event fails fast.
func within<T: Sendable>(_ seconds: Double = 10, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
  try await withThrowingTaskGroup(of: T?.self) { group in
    group.addTask { try await body() }
    group.addTask {
      try await Task.sleep(for: .seconds(seconds))
      return nil
    }
    defer { group.cancelAll() }
    guard case let value?? = try await group.next() else { throw TestFailure("no result within \(seconds) s") }
    return value
  }
}

/// Calls of a completion handler, in order.
final class Calls: Sendable {
  private let values = Mutex<[Bool]>([])
  var all: [Bool] { values.withLock { $0 } }
  var handler: @Sendable (Bool) -> Void { { value in self.values.withLock { $0.append(value) } } }
}

func sleep(milliseconds: Int) async {
  try? await Task.sleep(for: .milliseconds(milliseconds))
}

/// The code of a `.refused` error (nil for other errors).
func refusalCode(_ error: ClientError) -> ErrorCode? {
  if case .refused(let refusal) = error { return refusal.code }
  return nil
}

/// Runs `body` and returns the `ClientError` it threw (nil when it did not throw).
/// (Closures do not infer typed throws, so any other error is recorded as an issue.)
func clientError(_ body: () async throws -> Void) async -> ClientError? {
  do {
    try await body()
    return nil
  } catch let error as ClientError {
    return error
  } catch {
    Issue.record("expected a ClientError, got \(error)")
    return nil
  }
}

/// A scripted stand-in for the daemon: accepts one connection and runs `script` on it, on a thread.
final class FakeDaemon: Sendable {
  let directory: String
  let socket: String
  private let listener: FileDescriptor

  /// One accepted connection, blocking.
  struct Peer {
    let fd: FileDescriptor
    private var framer = LineFramer(maxLineBytes: 1 << 20)

    init(fd: FileDescriptor) { self.fd = fd }

    /// The next request line, parsed (nil at end-of-file).
    mutating func readRequest() -> JSONValue? {
      var scratch = [UInt8](repeating: 0, count: 4096)
      while true {
        if case .line(let bytes)? = framer.next() { return try? JSONParser.parse(bytes) }
        guard case .bytes(let n)? = try? scratch.withUnsafeMutableBytes({ try fd.read(into: $0) }) else { return nil }
        framer.append(scratch[0..<n])
      }
    }

    func write(_ value: JSONValue) {
      try? fd.writeAll(value.line)
    }
  }

  init(script: @escaping @Sendable (inout Peer) -> Void) throws {
    directory = Paths.temporaryDirectory()
    socket = directory + "/fake.sock"
    listener = try UnixSocket.listen(path: socket, mode: 0o600)
    let listener = self.listener
    let thread = Thread {
      while true {
        guard let ready = try? Poll.wait([PollRequest(fd: listener, events: .readable)], timeoutMilliseconds: 5000),
          !ready[0].isEmpty, let accepted = try? UnixSocket.accept(listener)
        else { break }
        try? accepted.setNonBlocking(false)
        var peer = Peer(fd: accepted)
        script(&peer)
        accepted.close()
        break
      }
    }
    thread.start()
  }

  deinit {
    listener.close()
    try? FileManager.default.removeItem(atPath: directory)
  }
}
