#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The file operations cued needs, each a thin wrapper that reports the path on failure.
public enum Files {
  /// What kind of thing a path names, following symlinks.
  public enum Kind: Sendable, Equatable { case missing, regular, directory, other }

  public static func kind(of path: String) -> Kind {
    var info = stat()
    guard stat(path, &info) == 0 else { return .missing }
    switch info.st_mode & S_IFMT {
    case S_IFREG: return .regular
    case S_IFDIR: return .directory
    default: return .other
    }
  }

  /// Reads a whole regular file, refusing anything larger than `limit` bytes.
  ///
  /// Reads through one descriptor from start to end, so a file replaced while it loads yields
  /// either the old or the new contents, never a mix.
  public static func read(path: String, limit: Int) throws(SystemError) -> [UInt8] {
    let fd = try retryingOnInterrupt("open(\(path))") { open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY) }
    defer { Glibc.close(fd) }
    var info = stat()
    if fstat(fd, &info) != 0 { throw SystemError("stat(\(path))") }
    if (info.st_mode & S_IFMT) == S_IFDIR { throw SystemError("read(\(path))", code: EISDIR) }
    if (info.st_mode & S_IFMT) != S_IFREG { throw SystemError("read(\(path)): not a regular file", code: EINVAL) }
    if Int(info.st_size) > limit { throw SystemError("read(\(path)): larger than \(limit) bytes", code: EFBIG) }
    var bytes = [UInt8](repeating: 0, count: Int(info.st_size) + 1)
    var total = 0
    while true {
      if total == bytes.count {
        if total > limit { throw SystemError("read(\(path)): larger than \(limit) bytes", code: EFBIG) }
        bytes.append(contentsOf: repeatElement(0, count: max(4096, total)))
      }
      let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + total, $0.count - total) }
      if n < 0 {
        if errno == EINTR { continue }
        throw SystemError("read(\(path))")
      }
      if n == 0 { break }
      total += n
    }
    if total > limit { throw SystemError("read(\(path)): larger than \(limit) bytes", code: EFBIG) }
    bytes.removeSubrange(total...)
    return bytes
  }

  /// Writes `bytes` to `path`, replacing it atomically (write to a temporary, then rename).
  public static func write(_ bytes: [UInt8], to path: String, mode: mode_t = 0o644) throws(SystemError) {
    let temporary = path + ".tmp-\(getpid())"
    let fd = try retryingOnInterrupt("open(\(temporary))") {
      open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
    }
    do {
      try FileDescriptor(rawValue: fd).writeAll(bytes, isSocket: false)
    } catch {
      Glibc.close(fd)
      unlink(temporary)
      throw error
    }
    Glibc.close(fd)
    if rename(temporary, path) != 0 {
      let code = errno
      unlink(temporary)
      throw SystemError("rename(\(temporary), \(path))", code: code)
    }
  }

  /// The names in a directory (not `.` or `..`), sorted.
  public static func list(directory path: String) throws(SystemError) -> [String] {
    guard let dir = opendir(path) else { throw SystemError("opendir(\(path))") }
    defer { closedir(dir) }
    var names: [String] = []
    while let entry = readdir(dir) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { raw -> String in
        let bytes = raw.prefix { $0 != 0 }
        return String(decoding: bytes, as: UTF8.self)
      }
      if name == "." || name == ".." { continue }
      names.append(name)
    }
    return names.sorted()
  }

  /// The canonical absolute path (symlinks resolved), or nil when it does not exist or loops.
  public static func realPath(_ path: String) -> String? {
    guard let resolved = realpath(path, nil) else { return nil }
    defer { free(resolved) }
    return String(cString: resolved)
  }

  /// Creates `path` (and missing parents) as directories with `mode`; an existing directory is fine.
  public static func makeDirectories(_ path: String, mode: mode_t) throws(SystemError) {
    if kind(of: path) == .directory { return }
    var prefix = path.hasPrefix("/") ? "/" : ""
    for component in path.split(separator: "/") {
      prefix += component
      if kind(of: prefix) != .directory {
        if mkdir(prefix, mode) != 0 && errno != EEXIST { throw SystemError("mkdir(\(prefix))") }
      }
      prefix += "/"
    }
  }

  /// The owner and permission bits of a path (not following a final symlink).
  public static func ownerAndMode(_ path: String) -> (uid: UInt32, mode: UInt32)? {
    var info = stat()
    guard lstat(path, &info) == 0 else { return nil }
    return (info.st_uid, info.st_mode & 0o7777)
  }

  public static func setMode(_ path: String, _ mode: mode_t) throws(SystemError) {
    if chmod(path, mode) != 0 { throw SystemError("chmod(\(path))") }
  }

  /// Removes a file; a missing file is not an error.
  public static func remove(_ path: String) {
    _ = unlink(path)
  }
}

/// The process environment and identity.
public enum ProcessInfo {
  public static func environment(_ name: String) -> String? {
    guard let value = getenv(name) else { return nil }
    return String(cString: value)
  }

  public static var userID: UInt32 { getuid() }
  public static var effectiveUserID: UInt32 { geteuid() }
  public static var processID: Int32 { getpid() }

  /// The path of the running executable (/proc/self/exe).
  public static var executablePath: String? { Files.realPath("/proc/self/exe") }

  /// The current working directory.
  public static var currentDirectory: String? {
    var buffer = [CChar](repeating: 0, count: 4096)
    guard getcwd(&buffer, buffer.count) != nil else { return nil }
    return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }
}

extension Files {
  /// What `stat(2)` says of a path (following symlinks).
  public struct Status: Sendable, Equatable {
    public var size: Int
    public var modifiedSeconds: Int
    public var modifiedNanoseconds: Int
    public var inode: UInt
  }

  public static func status(_ path: String) -> Status? {
    var info = stat()
    guard stat(path, &info) == 0 else { return nil }
    return Status(
      size: Int(info.st_size), modifiedSeconds: Int(info.st_mtim.tv_sec), modifiedNanoseconds: Int(info.st_mtim.tv_nsec),
      inode: UInt(info.st_ino))
  }
}
