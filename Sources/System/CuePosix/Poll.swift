#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The poll(2) events cued cares about.
public struct PollEvents: OptionSet, Sendable, Hashable {
  public let rawValue: Int16
  public init(rawValue: Int16) { self.rawValue = rawValue }
  public static let readable = PollEvents(rawValue: Int16(POLLIN))
  public static let writable = PollEvents(rawValue: Int16(POLLOUT))
  public static let hangup = PollEvents(rawValue: Int16(POLLHUP))
  public static let error = PollEvents(rawValue: Int16(POLLERR))
  public static let invalid = PollEvents(rawValue: Int16(POLLNVAL))
}

public struct PollRequest: Sendable {
  public var fd: FileDescriptor
  public var events: PollEvents
  public init(fd: FileDescriptor, events: PollEvents) {
    self.fd = fd
    self.events = events
  }
}

public enum Poll {
  /// `poll(2)`: waits for any of `requests`; returns the events seen, one per request, in order.
  ///
  /// Prefer `PollSet`, whose results are read by key instead of by position.
  public static func wait(_ requests: [PollRequest], timeoutMilliseconds: Int32) throws(SystemError) -> [PollEvents] {
    var fds = requests.map { pollfd(fd: $0.fd.rawValue, events: $0.events.rawValue, revents: 0) }
    _ = try fds.withUnsafeMutableBufferPointer { (buffer) throws(SystemError) -> Int32 in
      try poll(buffer, timeoutMilliseconds: timeoutMilliseconds)
    }
    return fds.map { PollEvents(rawValue: $0.revents) }
  }

  /// `poll(2)` on `fds` for at most `timeoutMilliseconds` (negative: no limit); returns how many
  /// descriptors have events. An interrupted wait (EINTR) resumes with the time that is left.
  /// Allocation-free when `fds` is, so the audio thread may park in it.
  @inline(__always)
  public static func poll(_ fds: UnsafeMutableBufferPointer<pollfd>, timeoutMilliseconds: Int32) throws(SystemError) -> Int32 {
    let deadline = timeoutMilliseconds > 0 ? MonotonicClock.nanoseconds() &+ UInt64(timeoutMilliseconds) &* 1_000_000 : 0
    return try retryingOnInterrupt("poll") { () -> Int32 in
      var timeout = timeoutMilliseconds
      if timeoutMilliseconds > 0 {
        let now = MonotonicClock.nanoseconds()
        timeout = now >= deadline ? 0 : Int32((deadline - now + 999_999) / 1_000_000)
      }
      return Glibc.poll(fds.baseAddress, nfds_t(fds.count), timeout)
    }
  }
}

/// A set of descriptors to wait on, each registered under a key, so results are read by name
/// (`ready[.signals].contains(.readable)`) rather than by position in an array.
///
/// `Key` is typically an enum: `enum Source: Hashable { case listener, signals, client(Int) }`.
/// The set keeps its `pollfd` array between waits; a wait allocates only the result's dictionary.
public struct PollSet<Key: Hashable> {
  private var keys: [Key] = []
  private var fds: [pollfd] = []
  /// Where each key's entry is in `keys` and `fds`, so registering hundreds of clients stays linear.
  private var positions: [Key: Int] = [:]

  public init() {}

  /// How many descriptors are registered.
  public var count: Int { keys.count }

  /// Registers `fd` for `events` under `key`, replacing what `key` had.
  public mutating func register(_ key: Key, _ fd: FileDescriptor, for events: PollEvents) {
    let entry = pollfd(fd: fd.rawValue, events: events.rawValue, revents: 0)
    if let index = positions[key] {
      fds[index] = entry
    } else {
      positions[key] = keys.count
      keys.append(key)
      fds.append(entry)
    }
  }

  /// Forgets `key` (no effect when it is not registered).
  public mutating func unregister(_ key: Key) {
    guard let index = positions.removeValue(forKey: key) else { return }
    keys.remove(at: index)
    fds.remove(at: index)
    for later in keys[index...] { positions[later]! -= 1 }
  }

  /// Forgets every key, keeping the storage.
  public mutating func removeAll() {
    keys.removeAll(keepingCapacity: true)
    fds.removeAll(keepingCapacity: true)
    positions.removeAll(keepingCapacity: true)
  }

  /// `poll(2)` on every registered descriptor for at most `timeoutMilliseconds` (negative: no limit).
  /// An empty result means the time ran out.
  public mutating func wait(timeoutMilliseconds: Int32) throws(SystemError) -> PollResult<Key> {
    for index in fds.indices { fds[index].revents = 0 }
    let count = try fds.withUnsafeMutableBufferPointer { (buffer) throws(SystemError) -> Int32 in
      try Poll.poll(buffer, timeoutMilliseconds: timeoutMilliseconds)
    }
    var events: [Key: PollEvents] = [:]
    if count > 0 {
      events.reserveCapacity(Int(count))
      for (key, fd) in zip(keys, fds) where fd.revents != 0 { events[key] = PollEvents(rawValue: fd.revents) }
    }
    return PollResult(events: events)
  }
}

/// What one `PollSet.wait` saw, by key.
public struct PollResult<Key: Hashable> {
  /// The events of every key that had any.
  public let events: [Key: PollEvents]

  /// The events seen on `key`'s descriptor; empty when none (or when `key` was not registered).
  public subscript(key: Key) -> PollEvents { events[key] ?? [] }

  /// True when nothing happened before the timeout.
  public var isEmpty: Bool { events.isEmpty }

  /// The keys whose descriptors can be read, or hung up or failed (a read then reports why), in no particular order.
  public var readable: [Key] {
    events.compactMap { !$0.value.isDisjoint(with: [.readable, .hangup, .error]) ? $0.key : nil }
  }
}
