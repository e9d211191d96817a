import CSystemShims

#if canImport(Glibc)
import Glibc
#endif

/// Runs a program to its end and collects its standard output (for `cued-config`).
public enum Spawn {
  public struct Result: Sendable {
    public var status: Int32
    public var output: [UInt8]
  }

  /// posix_spawn `path` with `arguments` (stdin /dev/null, stderr inherited), reads its stdout
  /// (at most `limit` bytes) and waits for it.
  public static func run(_ path: String, _ arguments: [String], limit: Int = 16 << 20) throws(SystemError) -> Result {
    var fds: [Int32] = [-1, -1]
    guard pipe(&fds) == 0 else { throw SystemError("pipe") }
    // The read end stays ours only; the write end is dup2'd onto the child's stdout.
    _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
    _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var empty = sigset_t()
    sigemptyset(&empty)
    posix_spawnattr_setsigmask(&attributes, &empty)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
    let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    var pid: pid_t = 0
    let rc = posix_spawn(&pid, path, &actions, &attributes, argv, environ)
    Glibc.close(fds[1])
    guard rc == 0 else {
      Glibc.close(fds[0])
      throw SystemError("posix_spawn(\(path))", code: rc)
    }
    var output: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
      let n = buffer.withUnsafeMutableBytes { Glibc.read(fds[0], $0.baseAddress, $0.count) }
      if n < 0 && errno == EINTR { continue }
      if n <= 0 { break }
      if output.count < limit { output.append(contentsOf: buffer[0..<n]) }
    }
    Glibc.close(fds[0])
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    let exited = status & 0x7f == 0
    return Result(status: exited ? (status >> 8) & 0xff : 128 + (status & 0x7f), output: output)
  }
}
