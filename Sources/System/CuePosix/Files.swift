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
  /// Reads through one descriptor from start to end, so a file replaced (renamed over) while it
  /// loads yields either the old or the new contents, never a mix. See `readWithStatus`.
  public static func read(path: String, limit: Int) throws(SystemError) -> [UInt8] {
    try readWithStatus(path: path, limit: limit).bytes
  }

  /// Reads a whole regular file through one descriptor and returns what `fstat` said of that
  /// descriptor, so the status describes exactly the bytes read.
  ///
  /// Only a regular file is read: a directory fails with EISDIR, anything else (a FIFO, a device,
  /// a socket) with EINVAL. The type is checked before `open` (a device is never opened, and a FIFO
  /// with no writer cannot block the caller) and again on the descriptor, which is opened
  /// O_NONBLOCK in case the path was swapped in between. A file rewritten in place while it is
  /// read (its size or times change) is read again, up to three times, then fails with EAGAIN.
  ///
  /// With `directories`, the file actually opened must lie inside one of them (resolved real
  /// paths, compared as bytes), judged from the descriptor (`/proc/self/fd`), so a path that was
  /// checked earlier and swapped for a symlink since fails with EXDEV instead of being read.
  public static func readWithStatus(
    path: String, limit: Int, confinedTo directories: [String]? = nil
  ) throws(SystemError) -> (bytes: [UInt8], status: Status) {
    var info = stat()
    if stat(path, &info) != 0 { throw SystemError("stat(\(path))") }
    try requireRegularFile(info, path)
    let fd = try retryingOnInterrupt("open(\(path))") { open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK) }
    defer { FileDescriptor(rawValue: fd).close() }
    if let directories {
      guard let opened = realPath("/proc/self/fd/\(fd)"),
        directories.contains(where: { opened.utf8.starts(with: ($0 + "/").utf8) })
      else { throw SystemError("open(\(path)): outside the allowed directories", code: EXDEV) }
    }
    var attempts = 0
    while true {
      if fstat(fd, &info) != 0 { throw SystemError("stat(\(path))") }
      try requireRegularFile(info, path)
      if Int(info.st_size) > limit { throw SystemError("read(\(path)): larger than \(limit) bytes", code: EFBIG) }
      if lseek(fd, 0, SEEK_SET) < 0 { throw SystemError("lseek(\(path))") }
      let bytes = try readToEnd(fd, path: path, expected: Int(info.st_size), limit: limit)
      var after = stat()
      if fstat(fd, &after) != 0 { throw SystemError("stat(\(path))") }
      if Status(info) == Status(after) && info.st_ctim.tv_sec == after.st_ctim.tv_sec
        && info.st_ctim.tv_nsec == after.st_ctim.tv_nsec
      {
        return (bytes, Status(info))
      }
      attempts += 1
      if attempts == 3 { throw SystemError("read(\(path)): it kept changing while it was read", code: EAGAIN) }
    }
  }

  private static func requireRegularFile(_ info: stat, _ path: String) throws(SystemError) {
    switch info.st_mode & S_IFMT {
    case S_IFREG: return
    case S_IFDIR: throw SystemError("read(\(path))", code: EISDIR)
    default: throw SystemError("read(\(path)): \(typeName(mode: info.st_mode)), not a regular file", code: EINVAL)
    }
  }

  private static func readToEnd(_ fd: Int32, path: String, expected: Int, limit: Int) throws(SystemError) -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: expected + 1)
    var total = 0
    while true {
      if total == bytes.count {
        if total > limit { throw SystemError("read(\(path)): larger than \(limit) bytes", code: EFBIG) }
        bytes.append(contentsOf: repeatElement(0, count: max(4096, total)))
      }
      let n = try retryingOnInterrupt("read(\(path))") {
        bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + total, $0.count - total) }
      }
      if n == 0 { break }
      total += n
    }
    if total > limit { throw SystemError("read(\(path)): larger than \(limit) bytes", code: EFBIG) }
    bytes.removeSubrange(total...)
    return bytes
  }

  /// What a mode's file type is, in words: "a FIFO (named pipe)", "a character device", ….
  public static func typeName(mode: mode_t) -> String {
    switch mode & S_IFMT {
    case S_IFREG: "a regular file"
    case S_IFDIR: "a directory"
    case S_IFIFO: "a FIFO (named pipe)"
    case S_IFCHR: "a character device"
    case S_IFBLK: "a block device"
    case S_IFSOCK: "a socket"
    case S_IFLNK: "a symbolic link"
    default: "not a regular file"
    }
  }

  /// The type of what `path` names (following symlinks) in words, or nil when it cannot be stat'ed.
  public static func typeName(of path: String) -> String? {
    var info = stat()
    guard stat(path, &info) == 0 else { return nil }
    return typeName(mode: info.st_mode)
  }

  /// Where the symlink at `path` points, or nil when `path` is not a symlink.
  public static func symbolicLinkTarget(_ path: String) -> String? {
    var buffer = [CChar](repeating: 0, count: 4097)
    let n = readlink(path, &buffer, buffer.count - 1)
    guard n >= 0 else { return nil }
    return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
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
      FileDescriptor(rawValue: fd).close()
      unlink(temporary)
      throw error
    }
    FileDescriptor(rawValue: fd).close()
    if rename(temporary, path) != 0 {
      let code = errno
      unlink(temporary)
      throw SystemError("rename(\(temporary), \(path))", code: code)
    }
  }

  /// The names in a directory (not `.` or `..`), sorted.
  public static func list(directory path: String) throws(SystemError) -> [String] {
    try listNames(directory: path).map(\.name)
  }

  /// The names in a directory (not `.` or `..`), sorted, each with whether it is valid UTF-8.
  /// A name that is not (a Latin-1 "café") has no exact `String` spelling: `name` holds it with
  /// U+FFFD in place of the bad bytes, and opening that spelling finds nothing.
  public static func listNames(directory path: String) throws(SystemError) -> [(name: String, isValidUTF8: Bool)] {
    guard let dir = opendir(path) else { throw SystemError("opendir(\(path))") }
    defer { closedir(dir) }
    var names: [(name: String, isValidUTF8: Bool)] = []
    while let entry = readdir(dir) {
      let (name, valid) = withUnsafeBytes(of: entry.pointee.d_name) { raw -> (String, Bool) in
        let bytes = raw.prefix { $0 != 0 }
        let name = String(decoding: bytes, as: UTF8.self)
        return (name, name.utf8.elementsEqual(bytes))
      }
      if name == "." || name == ".." { continue }
      names.append((name, valid))
    }
    return names.sorted { $0.name < $1.name }
  }

  /// The working directory (`getcwd(3)`), or nil when it is gone or unreachable.
  public static func currentDirectory() -> String? {
    guard let directory = getcwd(nil, 0) else { return nil }
    defer { free(directory) }
    return String(cString: directory)
  }

  /// `path` made absolute against the working directory (nothing resolved: `..` and symlinks stay
  /// for whoever opens it); nil when it is relative and the working directory cannot be read.
  public static func absolutePath(_ path: String) -> String? {
    if path.hasPrefix("/") { return path }
    guard let directory = currentDirectory() else { return nil }
    let relative = path.hasPrefix("./") ? String(path.dropFirst(2)) : path
    return directory == "/" ? "/" + relative : directory + "/" + relative
  }

  /// The canonical absolute path (symlinks resolved), or nil when it does not exist or loops.
  public static func realPath(_ path: String) -> String? {
    guard let resolved = realpath(path, nil) else { return nil }
    defer { free(resolved) }
    return String(cString: resolved)
  }

  /// Creates a new private (0700) directory `/tmp/PREFIX-` plus six random characters (`mkdtemp(3)`)
  /// and returns its path: short enough to hold Unix socket paths.
  public static func makeTemporaryDirectory(prefix: String) throws(SystemError) -> String {
    var template = Array("/tmp/\(prefix)-XXXXXX".utf8CString)
    let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
    guard let made else { throw SystemError("mkdtemp(/tmp/\(prefix)-…)") }
    return String(cString: made)
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
}

extension Files {
  /// What `stat(2)` says of a path (following symlinks). Device and inode name the file itself;
  /// size and modification time change when it is rewritten in place.
  public struct Status: Sendable, Hashable {
    public var size: Int
    public var modifiedSeconds: Int
    public var modifiedNanoseconds: Int
    public var inode: UInt
    public var device: UInt64
  }

  public static func status(_ path: String) -> Status? {
    var info = stat()
    guard stat(path, &info) == 0 else { return nil }
    return Status(info)
  }

  /// The device and inode of what `descriptor` is open on (`fstat(2)`); nil when it is not open.
  public static func deviceAndInode(of descriptor: FileDescriptor) -> (device: UInt64, inode: UInt64)? {
    var info = stat()
    guard fstat(descriptor.rawValue, &info) == 0 else { return nil }
    return (UInt64(info.st_dev), UInt64(info.st_ino))
  }
}

extension Files.Status {
  init(_ info: stat) {
    self.init(
      size: Int(info.st_size), modifiedSeconds: Int(info.st_mtim.tv_sec), modifiedNanoseconds: Int(info.st_mtim.tv_nsec),
      inode: UInt(info.st_ino), device: UInt64(info.st_dev))
  }
}

/// A file that lines are appended to (`O_APPEND`), for a trace a test reads afterwards.
public final class AppendFile: Sendable {
  private let fd: Int32

  /// Opens (creating, mode 0600) `path` for appending; nil when it cannot be opened.
  public init?(path: String) {
    let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
    guard fd >= 0 else { return nil }
    self.fd = fd
  }

  deinit { close(fd) }

  /// Appends `bytes` (whole, retrying short writes and EINTR); errors are ignored: it is a trace.
  public func append(_ bytes: [UInt8]) {
    bytes.withUnsafeBytes { raw in
      var offset = 0
      while offset < raw.count {
        let written = write(fd, raw.baseAddress! + offset, raw.count - offset)
        if written > 0 {
          offset += written
        } else if written < 0 && errno == EINTR {
          continue
        } else {
          return
        }
      }
    }
  }
}

/// The command line of a fuzz-corpus replayer (`cued-fuzz`, `cued-fuzz-decode`): DIR|FILE arguments.
public enum CorpusReplay {
  /// The files the arguments name (a directory's regular files, sorted, without dot files); with
  /// none, or -h/--help, prints `usage` and exits (2 without arguments, 0 for help).
  public static func files(usage: String) -> [String] {
    let arguments = Array(CommandLine.arguments.dropFirst())
    if arguments.isEmpty || arguments.contains("-h") || arguments.contains("--help") {
      print(usage)
      exit(arguments.isEmpty ? 2 : 0)
    }
    return arguments.flatMap { path -> [String] in
      guard Files.kind(of: path) == .directory else { return [path] }
      let base = path.hasSuffix("/") ? path : path + "/"
      return ((try? Files.list(directory: path)) ?? []).filter { !$0.hasPrefix(".") && Files.kind(of: base + $0) == .regular }
        .map { base + $0 }
    }
  }

  /// The whole replayer: every file the arguments name (at most `limit` bytes each) through
  /// `check`, the outcomes added up. Prints `summary(files, total)` and returns; when `check`
  /// throws (an invariant broke) or a file cannot be read, names the file on standard error and
  /// exits 1.
  public static func replay<Tally: ReplayTally>(
    program: String, usage: String, limit: Int, check: ([UInt8]) throws -> Tally, summary: (Int, Tally) -> String
  ) {
    let files = files(usage: usage)
    var total = Tally()
    for file in files {
      let bytes: [UInt8]
      do {
        bytes = try Files.read(path: file, limit: limit)
      } catch {
        writeToStandardError("\(program): cannot read \(file): \(error)\n")
        exit(1)
      }
      do {
        total += try check(bytes)
      } catch {
        writeToStandardError("\(program): \(file): \(error)\n")
        exit(1)
      }
    }
    print(summary(files.count, total))
  }
}

/// What a corpus replayer counts per input (decoded, refused, …), added up over the corpus.
public protocol ReplayTally {
  init()
  static func += (left: inout Self, right: Self)
}
