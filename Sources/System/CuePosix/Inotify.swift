#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Changes in directories delivered as reads from a descriptor (`inotify(7)`), so a poll loop
/// learns of files that come and go in its own time.
///
/// The descriptor is nonblocking and close-on-exec. Watches are not recursive: each directory
/// to follow needs its own. Closing is explicit (`close()`).
public struct Inotify: Hashable, Sendable {
  /// The descriptor to register in a poll set (readable while events wait).
  public let descriptor: FileDescriptor

  /// One watched directory (`inotify_add_watch`'s descriptor).
  public struct Watch: Hashable, Sendable {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }
  }

  /// What happened, or what to watch for (`IN_*`).
  public struct Mask: OptionSet, Hashable, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// A file opened for writing was closed.
    public static let closeWrite = Mask(rawValue: UInt32(IN_CLOSE_WRITE))
    /// An entry was renamed into the directory.
    public static let movedTo = Mask(rawValue: UInt32(IN_MOVED_TO))
    /// An entry was renamed out of the directory.
    public static let movedFrom = Mask(rawValue: UInt32(IN_MOVED_FROM))
    /// An entry was created (a directory made, a file opened with O_CREAT).
    public static let create = Mask(rawValue: UInt32(IN_CREATE))
    /// An entry was deleted.
    public static let delete = Mask(rawValue: UInt32(IN_DELETE))
    /// The watched directory itself was deleted.
    public static let deleteSelf = Mask(rawValue: UInt32(IN_DELETE_SELF))
    /// The watched directory itself was moved.
    public static let moveSelf = Mask(rawValue: UInt32(IN_MOVE_SELF))
    /// Watch only if the path is a directory.
    public static let onlyDirectory = Mask(rawValue: UInt32(IN_ONLYDIR))
    /// In an event: the entry is a directory.
    public static let isDirectory = Mask(rawValue: UInt32(IN_ISDIR))
    /// In an event: the watch was removed (its directory went, or `remove`).
    public static let ignored = Mask(rawValue: UInt32(IN_IGNORED))
    /// In an event: the kernel's queue overflowed and events were lost.
    public static let overflow = Mask(rawValue: UInt32(IN_Q_OVERFLOW))
  }

  /// One change: in which watch, what, and the entry's name (empty for the directory itself).
  public struct Event: Equatable, Sendable {
    public var watch: Watch
    public var mask: Mask
    public var name: String
  }

  /// `inotify_init1(IN_CLOEXEC | IN_NONBLOCK)`.
  public init() throws(SystemError) {
    let fd = try retryingOnInterrupt("inotify_init1") { inotify_init1(Int32(IN_CLOEXEC) | Int32(IN_NONBLOCK)) }
    descriptor = FileDescriptor(rawValue: fd)
  }

  /// `inotify_add_watch(path, mask)`: the watch, the same one again for a directory already watched.
  public func add(_ path: String, for mask: Mask) throws(SystemError) -> Watch {
    Watch(rawValue: try retryingOnInterrupt("inotify_add_watch(\(path))") { inotify_add_watch(descriptor.rawValue, path, mask.rawValue) })
  }

  /// `inotify_rm_watch`; a watch already gone (its directory deleted) is not an error.
  public func remove(_ watch: Watch) {
    _ = inotify_rm_watch(descriptor.rawValue, watch.rawValue)
  }

  /// The size of `struct inotify_event` before its name, fixed by the kernel ABI: wd, mask, cookie, len.
  private static let headerBytes = 16

  /// Reads every event waiting now (none when nothing waits).
  public func read() throws(SystemError) -> [Event] {
    var events: [Event] = []
    // Room for many events at once; one event's name is at most NAME_MAX + 1 bytes, well inside it.
    var buffer = [UInt8](repeating: 0, count: 16 * 1024)
    while true {
      let result = buffer.withUnsafeMutableBytes { raw in Result { () throws(SystemError) in try descriptor.read(into: raw) } }
      guard case .bytes(let count) = try result.get() else { return events }
      var offset = 0
      while offset + Self.headerBytes <= count {
        func word(_ at: Int) -> UInt32 {
          UInt32(buffer[at]) | UInt32(buffer[at + 1]) << 8 | UInt32(buffer[at + 2]) << 16 | UInt32(buffer[at + 3]) << 24
        }
        // The kernel writes in native order; every Linux Swift runs on is little-endian.
        let watch = Int32(bitPattern: word(offset))
        let mask = word(offset + 4)
        let length = Int(word(offset + 12))
        let nameStart = offset + Self.headerBytes
        let nameEnd = min(nameStart + length, count)
        let nameBytes = buffer[nameStart..<nameEnd].prefix { $0 != 0 }
        events.append(Event(watch: Watch(rawValue: watch), mask: Mask(rawValue: mask), name: String(decoding: nameBytes, as: UTF8.self)))
        offset = nameStart + length
      }
    }
  }

  /// `close(2)`: every watch goes with it.
  public func close() { descriptor.close() }
}
