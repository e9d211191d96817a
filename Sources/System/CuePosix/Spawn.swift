import CSystemShims
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A child process started with `posix_spawn(3)`: its pid, its piped output, signals, and waits
/// with a timeout. The one way cued's programs and tests start other programs.
///
/// The child starts with no signal blocked and SIGPIPE, SIGTERM, SIGINT, SIGHUP and SIGCHLD at
/// their defaults, whatever the parent blocked or ignored (a daemon blocks the signals it reads
/// through a signalfd; its children must still die of SIGTERM). Descriptors the parent opened
/// close-on-exec do not leak into it. When the object goes away with the child still running,
/// the child is killed (SIGKILL) and reaped, so no test leaves a process behind.
public final class ChildProcess: @unchecked Sendable {
  /// Where one of the child's standard descriptors goes.
  public enum Redirection: Sendable, Equatable {
    /// The parent's own descriptor.
    case inherit
    /// /dev/null.
    case null
    /// A file, created (mode 0644) if missing; truncated unless `append`.
    case file(String, append: Bool = false)
    /// A pipe whose other end is `standardOutput`/`standardError` on this object (output only).
    case pipe
    /// For standard error: the same file as standard output (`2>&1`).
    case sameAsStandardOutput
  }

  public let pid: Int32
  /// The read end of the child's standard output when it was `.pipe`, else nil. Yours to read; closed with the object.
  public let standardOutput: FileDescriptor?
  /// The read end of the child's standard error when it was `.pipe`, else nil.
  public let standardError: FileDescriptor?
  private let status = Mutex<Int32?>(nil)

  /// Starts `path` (not searched in PATH) with `arguments`. `environment` entries are added to
  /// (or replace) this process's environment; names in `removingEnvironment` are left out.
  /// Standard input is /dev/null.
  public init(
    _ path: String, _ arguments: [String], environment: [String: String] = [:], removingEnvironment: Set<String> = [],
    standardOutput: Redirection = .inherit, standardError: Redirection = .inherit
  ) throws(SystemError) {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    var childEnds: [Int32] = []
    defer { childEnds.forEach { FileDescriptor(rawValue: $0).close() } }
    var ours: [FileDescriptor] = []
    func redirect(_ target: Int32, _ redirection: Redirection) throws(SystemError) -> FileDescriptor? {
      switch redirection {
      case .inherit: return nil
      case .null: posix_spawn_file_actions_addopen(&actions, target, "/dev/null", O_WRONLY, 0)
      case .file(let file, let append):
        posix_spawn_file_actions_addopen(
          &actions, target, file, O_WRONLY | O_CREAT | (append ? O_APPEND : O_TRUNC), 0o644)
      case .pipe:
        let (readEnd, writeEnd) = try FileDescriptor.pipe()
        ours.append(readEnd)
        childEnds.append(writeEnd.rawValue)
        posix_spawn_file_actions_adddup2(&actions, writeEnd.rawValue, target)
        return readEnd
      case .sameAsStandardOutput:
        precondition(target == 2, "only standard error can be the same as standard output")
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
      }
      return nil
    }
    let output: FileDescriptor?
    let error: FileDescriptor?
    do {
      output = try redirect(1, standardOutput)
      error = try redirect(2, standardError)
    } catch {
      ours.forEach { $0.close() }
      throw error
    }
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
    let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
    let envp: [UnsafeMutablePointer<CChar>?] =
      Self.environment(adding: environment, removing: removingEnvironment).map { strdup($0) } + [nil]
    defer {
      argv.forEach { free($0) }
      envp.forEach { free($0) }
    }
    var child: pid_t = 0
    let rc = posix_spawn(&child, path, &actions, &attributes, argv, envp)
    guard rc == 0 else {
      ours.forEach { $0.close() }
      throw SystemError("posix_spawn(\(path))", code: rc)
    }
    pid = child
    self.standardOutput = output
    self.standardError = error
  }

  /// This process's environment as `NAME=value` strings, with `adding` applied and `removing` left out.
  private static func environment(adding: [String: String], removing: Set<String>) -> [String] {
    var entries: [String] = []
    var index = 0
    while let entry = environ[index] {
      index += 1
      let text = String(cString: entry)
      let name = String(text.prefix { $0 != "=" })
      if adding[name] == nil && !removing.contains(name) { entries.append(text) }
    }
    for (name, value) in adding.sorted(by: { $0.key < $1.key }) where !removing.contains(name) {
      entries.append(name + "=" + value)
    }
    return entries
  }

  /// The exit status once the child has been reaped: its exit code, or 128 + the signal that killed it (as a shell reports).
  public var exitStatus: Int32? { status.withLock { $0 } }

  /// True until the child has exited (and been reaped, `waitpid(WNOHANG)`).
  public var isRunning: Bool { reap(blocking: false) == nil }

  /// `waitpid(2)` once; the exit status when the child is gone (now or earlier), nil while it runs.
  private func reap(blocking: Bool) -> Int32? {
    status.withLock { known in
      if let known { return known }
      var raw: Int32 = 0
      switch SystemCall.retrying("waitpid(\(pid))", { waitpid(pid, &raw, blocking ? 0 : WNOHANG) }) {
      case .success(0): return nil
      case .success:
        let signal = raw & 0x7f
        known = signal == 0 ? (raw >> 8) & 0xff : 128 + signal
        return known
      case .failure(let code):
        // ECHILD: someone else reaped it (a SIGCHLD handler set to SIG_IGN); there is no status to have.
        precondition(code == .noChild, "waitpid(\(pid)): \(code)")
        known = -1
        return known
      }
    }
  }

  /// Waits for the exit, at most `timeout` seconds (nil: as long as it takes); the exit status, or nil when still running.
  @discardableResult
  public func wait(timeout: Double? = nil) -> Int32? {
    guard let timeout else { return reap(blocking: true) }
    let deadline = MonotonicClock.nanoseconds() &+ UInt64(max(0, timeout) * 1e9)
    while true {
      if let status = reap(blocking: false) { return status }
      if MonotonicClock.nanoseconds() >= deadline { return nil }
      MonotonicClock.sleep(nanoseconds: 1_000_000)
    }
  }

  /// Sends `signal` unless the child has already been reaped (its pid may belong to another process by then).
  public func signal(_ signal: Int32) {
    status.withLock { known in
      if known == nil { try? sendSignal(signal, to: pid) }
    }
  }

  /// Sends `signal` (SIGTERM), then SIGKILL after `grace` seconds; returns the exit status.
  @discardableResult
  public func terminate(_ signal: Int32 = SIGTERM, grace: Double = 5) -> Int32 {
    if let status = exitStatus { return status }
    self.signal(signal)
    if let status = wait(timeout: grace) { return status }
    self.signal(SIGKILL)
    return wait() ?? -1
  }

  deinit {
    if isRunning {
      signal(SIGKILL)
      _ = reap(blocking: true)
    }
    standardOutput?.close()
    standardError?.close()
  }
}

extension FileDescriptor {
  /// A close-on-exec pipe (`pipe2(2)` through `cued_pipe`): (read end, write end). Both ends block unless `nonblocking`.
  public static func pipe(nonblocking: Bool = false) throws(SystemError) -> (readEnd: FileDescriptor, writeEnd: FileDescriptor) {
    var fds: [Int32] = [-1, -1]
    _ = try retryingOnInterrupt("pipe2") { cued_pipe(&fds, nonblocking ? 1 : 0) }
    return (FileDescriptor(rawValue: fds[0]), FileDescriptor(rawValue: fds[1]))
  }
}

/// Runs a program to its end and collects its standard output.
public enum Spawn {
  public struct Result: Sendable {
    /// The exit code, or 128 + the signal that ended it.
    public var status: Int32
    public var output: [UInt8]
    /// True when it ran past the timeout and was killed (SIGKILL).
    public var timedOut: Bool = false
  }

  /// Starts `path` with `arguments` (stdin /dev/null, stderr inherited), reads its stdout
  /// (keeping at most `limit` bytes) and waits for it. With `timeout` (seconds), a child still
  /// running then is killed and the result says `timedOut`.
  public static func run(
    _ path: String, _ arguments: [String], environment: [String: String] = [:], limit: Int = 16 << 20,
    timeout: Double? = nil
  ) throws(SystemError) -> Result {
    let child = try ChildProcess(path, arguments, environment: environment, standardOutput: .pipe)
    let output = child.standardOutput!
    let deadline = timeout.map { MonotonicClock.nanoseconds() &+ UInt64(max(0, $0) * 1e9) }
    var collected: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    var timedOut = false
    reading: while true {
      if let deadline {
        let now = MonotonicClock.nanoseconds()
        let left = now >= deadline ? 0 : Int32(min((deadline - now) / 1_000_000 + 1, UInt64(Int32.max)))
        let ready = try Poll.wait([PollRequest(fd: output, events: .readable)], timeoutMilliseconds: left)
        if ready[0].isEmpty {
          timedOut = true
          break reading
        }
      }
      let result = buffer.withUnsafeMutableBytes { raw in
        Swift.Result { () throws(SystemError) -> FileDescriptor.IOResult in try output.read(into: raw) }
      }
      switch try result.get() {
      case .bytes(let n):
        if collected.count < limit { collected.append(contentsOf: buffer[0..<min(n, limit - collected.count)]) }
      case .endOfFile, .wouldBlock: break reading
      }
    }
    let status = timedOut ? child.terminate(SIGKILL, grace: 0) : (child.wait() ?? -1)
    return Result(status: status, output: collected, timedOut: timedOut)
  }
}
