#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CSystemShims

/// Unix stream sockets: listen, accept, connect, and the peer's credentials.
public enum UnixSocket {
  /// The longest path a `sockaddr_un` holds, without its NUL.
  public static let maximumPathBytes = MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1

  /// Why a socket path is unusable, before any system call.
  public static func validate(path: String) -> String? {
    if path.isEmpty { return "the socket path is empty" }
    if path.utf8.count > maximumPathBytes {
      return "the socket path is \(path.utf8.count) bytes long; Unix sockets allow at most \(maximumPathBytes)"
    }
    if path.utf8.contains(0) { return "the socket path contains a NUL byte" }
    return nil
  }

  private static func withAddress<T>(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> T) -> T {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8.prefix(maximumPathBytes))
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
      raw.copyBytes(from: bytes)
      raw[bytes.count] = 0
    }
    let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + 1)
    return withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) }
    }
  }

  /// Creates a listening, nonblocking socket bound to `path` with `mode` permissions.
  /// The file is created under a restrictive umask, so there is no window where it is more open than `mode`.
  public static func listen(path: String, mode: mode_t, backlog: Int32 = 512) throws(SystemError) -> FileDescriptor {
    if let problem = validate(path: path) { throw SystemError("bind(\(path)): \(problem)", code: ENAMETOOLONG) }
    let fd = FileDescriptor(rawValue: try retryingOnInterrupt("socket(AF_UNIX)") { cued_unix_stream_socket(1) })
    do throws(SystemError) {
      let previousMask = umask(~mode & 0o777)
      defer { umask(previousMask) }
      _ = try retryingOnInterrupt("bind(\(path))") { withAddress(path) { Glibc.bind(fd.rawValue, $0, $1) } }
      _ = chmod(path, mode)
      _ = try retryingOnInterrupt("listen(\(path))") { Glibc.listen(fd.rawValue, backlog) }
    } catch {
      fd.close()
      throw error
    }
    return fd
  }

  /// Accepts one pending connection as a nonblocking descriptor, or nil when none is waiting.
  public static func accept(_ listener: FileDescriptor) throws(SystemError) -> FileDescriptor? {
    switch SystemCall.retrying("accept(fd \(listener.rawValue))", { cued_accept(listener.rawValue) }) {
    case .success(let fd): return FileDescriptor(rawValue: fd)
    case .failure(let code) where code.rawValue == EAGAIN || code.rawValue == EWOULDBLOCK || code.rawValue == ECONNABORTED:
      return nil
    case .failure(let code): throw SystemError("accept", code)
    }
  }

  /// Connects to `path` (blocking). The descriptor is left blocking unless `nonblocking`.
  public static func connect(path: String, nonblocking: Bool = false) throws(SystemError) -> FileDescriptor {
    if let problem = validate(path: path) { throw SystemError("connect(\(path)): \(problem)", code: ENAMETOOLONG) }
    let descriptor = FileDescriptor(rawValue: try retryingOnInterrupt("socket(AF_UNIX)") { cued_unix_stream_socket(0) })
    do throws(SystemError) {
      // A blocking connect that a signal interrupts goes on in the kernel; retried after it is done,
      // it fails with EISCONN, which means connected.
      switch SystemCall.retrying("connect(\(path))", { withAddress(path) { Glibc.connect(descriptor.rawValue, $0, $1) } }) {
      case .success, .failure(Errno(rawValue: EISCONN)): break
      case .failure(let code): throw SystemError("connect(\(path))", code)
      }
      if nonblocking { try descriptor.setNonBlocking(true) }
    } catch {
      descriptor.close()
      throw error
    }
    return descriptor
  }

  /// The process, user and group on the other end of a connected socket (SO_PEERCRED).
  public struct PeerCredentials: Sendable, Equatable {
    public var pid: Int32
    public var uid: UInt32
    public var gid: UInt32
  }

  public static func peerCredentials(_ fd: FileDescriptor) throws(SystemError) -> PeerCredentials {
    var pid: pid_t = 0
    var uid: uid_t = 0
    var gid: gid_t = 0
    if cued_peer_credentials(fd.rawValue, &pid, &uid, &gid) != 0 { throw SystemError("getsockopt(SO_PEERCRED)") }
    return PeerCredentials(pid: pid, uid: uid, gid: gid)
  }

  /// The peer's supplementary groups (SO_PEERGROUPS), as they were when it connected.
  public static func peerGroups(_ fd: FileDescriptor) throws(SystemError) -> [UInt32] {
    var capacity = 64
    while true {
      var groups = [gid_t](repeating: 0, count: capacity)
      let count = groups.withUnsafeMutableBufferPointer { cued_peer_groups(fd.rawValue, $0.baseAddress, Int32(capacity)) }
      if count >= 0 { return Array(groups.prefix(Int(count))) }
      guard errno == ERANGE, capacity < 65536 else { throw SystemError("getsockopt(SO_PEERGROUPS)") }
      capacity *= 4
    }
  }

  /// The path a Unix socket is bound to (`getsockname`): `@name` for the abstract namespace, nil
  /// for an unnamed socket or one that is not AF_UNIX. For a socket someone else made, such as one
  /// systemd passed.
  public static func boundPath(_ fd: FileDescriptor) -> String? {
    var address = sockaddr_un()
    var length = socklen_t(MemoryLayout<sockaddr_un>.size)
    let rc = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd.rawValue, $0, &length) }
    }
    let header = MemoryLayout<sa_family_t>.size
    guard rc == 0, address.sun_family == sa_family_t(AF_UNIX), Int(length) > header else { return nil }
    let bytes = withUnsafeBytes(of: &address.sun_path) { Array($0.prefix(Int(length) - header)) }
    if bytes.first == 0 { return "@" + String(decoding: bytes.dropFirst(), as: UTF8.self) }
    return String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
  }

  /// True when `path` names a Unix socket.
  public static func isSocket(path: String) -> Bool {
    var info = stat()
    return lstat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFSOCK
  }
}

extension UnixSocket {
  /// Sends one datagram to a Unix datagram socket at `path` (a leading `@` names the abstract
  /// namespace, as systemd's NOTIFY_SOCKET does). Used for sd_notify; no libsystemd needed.
  public static func sendDatagram(_ message: [UInt8], to path: String) throws(SystemError) {
    let fd = try retryingOnInterrupt("socket(AF_UNIX, SOCK_DGRAM)") {
      socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    }
    defer { FileDescriptor(rawValue: fd).close() }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    var bytes = Array(path.utf8)
    if bytes.first == UInt8(ascii: "@") { bytes[0] = 0 }
    guard bytes.count <= maximumPathBytes else { throw SystemError("sendto(\(path))", code: ENAMETOOLONG) }
    withUnsafeMutableBytes(of: &address.sun_path) { raw in raw.copyBytes(from: bytes) }
    let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + (bytes.first == 0 ? 0 : 1))
    _ = try retryingOnInterrupt("sendto(\(path))") {
      message.withUnsafeBytes { raw in
        withUnsafePointer(to: &address) {
          $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            Glibc.sendto(fd, raw.baseAddress, raw.count, Int32(MSG_NOSIGNAL), $0, length)
          }
        }
      }
    }
  }

  /// The listening sockets systemd passed (socket activation: `LISTEN_PID`, `LISTEN_FDS`,
  /// `LISTEN_FDNAMES`), as descriptors from 3 on with their names; empty when not activated.
  /// Clears the variables, so programs this process starts do not think they were activated.
  public static func activatedSockets() -> [(fd: FileDescriptor, name: String)] {
    defer {
      unsetenv("LISTEN_PID")
      unsetenv("LISTEN_FDS")
      unsetenv("LISTEN_FDNAMES")
    }
    guard let pid = ProcessInfo.environment("LISTEN_PID").flatMap(Int32.init), pid == getpid(),
      let count = ProcessInfo.environment("LISTEN_FDS").flatMap(Int.init), count > 0
    else { return [] }
    let names = (ProcessInfo.environment("LISTEN_FDNAMES") ?? "").split(separator: ":", omittingEmptySubsequences: false)
    return (0..<count).map { index in
      let fd = Int32(3 + index)
      _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
      return (FileDescriptor(rawValue: fd), index < names.count ? String(names[index]) : "")
    }
  }
}
