import CueClient
import CuePosix
import CueProtocol
import DaemonTestSupport
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Paths for the client tests: DaemonTestSupport's, under the names these tests use.
enum Paths {
  static var cued: String { TestPaths.cued }
  static var repositoryRoot: String { TestPaths.repositoryRoot }
  static var sounds: String { TestPaths.sounds }
  static func temporaryDirectory() -> String { TestPaths.temporaryDirectory(prefix: "cued-cl") }
}

typealias TestFailure = HarnessError

/// A `cued --device null` serving the shipped sounds on a socket of its own, which a test may stop
/// and start again (a new process on the same socket): DaemonTestSupport's `DaemonProcess`.
final class TestDaemon: @unchecked Sendable {
  let directory: String
  let socket: String
  private(set) var process: DaemonProcess? = nil

  /// Starts a daemon and waits until it answers.
  init() throws {
    directory = Paths.temporaryDirectory()
    socket = directory + "/cued.sock"
    try start()
  }

  var log: String { (try? String(contentsOfFile: directory + "/cued.log", encoding: .utf8)) ?? "" }

  /// Starts a daemon on the socket (the previous one must be stopped); waits until it answers unless `wait` is false.
  func start(wait: Bool = true) throws {
    process = try DaemonProcess(
      socket: socket, arguments: ["--device", "null", "--sounds", Paths.sounds, "--log-level", "warning"],
      logPath: directory + "/cued.log", waitUntilReady: wait)
  }

  func waitUntilReady(timeout: Double = 15) throws { try process?.waitUntilReady(timeout: timeout) }

  /// SIGTERM, and waits for the exit; `DaemonProcess.stop` checks every line the daemon sent so far
  /// against docs/protocol.schema.json.
  func stop(sourceLocation: SourceLocation = #_sourceLocation) {
    process?.stop(timeout: 3, sourceLocation: sourceLocation)
    process = nil
  }

  var pid: pid_t? { process?.pid }

  deinit {
    process = nil  // DaemonProcess kills a daemon still running
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
