import CuePosix
import Synchronization

/// What /proc says about the daemon.
struct ProcessFigures: Sendable {
  /// Resident set size (VmRSS), KiB.
  var rssKiB: Int
  /// Its anonymous (heap, stacks) and file-backed (the binary, libraries) parts (RssAnon, RssFile), KiB.
  var anonymousKiB: Int
  var fileKiB: Int
  /// Entries in /proc/PID/fd.
  var fds: Int
  var threads: Int

  /// Reads /proc/PID/status and /proc/PID/fd; nil when the process is gone.
  static func read(pid: Int32) -> ProcessFigures? {
    guard let bytes = try? Files.read(path: "/proc/\(pid)/status", limit: 1 << 20),
      let fds = try? Files.list(directory: "/proc/\(pid)/fd")
    else { return nil }
    var figures = ProcessFigures(rssKiB: -1, anonymousKiB: -1, fileKiB: -1, fds: fds.count, threads: -1)
    for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
      let parts = line.split(whereSeparator: { $0 == ":" || $0 == " " || $0 == "\t" })
      guard parts.count >= 2, let value = Int(parts[1]) else { continue }
      switch parts[0] {
      case "VmRSS": figures.rssKiB = value
      case "RssAnon": figures.anonymousKiB = value
      case "RssFile": figures.fileKiB = value
      case "Threads": figures.threads = value
      default: break
      }
    }
    return figures
  }

  /// True while a process with that id exists and is not a zombie.
  static func isAlive(pid: Int32) -> Bool {
    guard ProcessInfo.exists(pid: pid) else { return false }
    guard let bytes = try? Files.read(path: "/proc/\(pid)/stat", limit: 1 << 16) else { return false }
    // "pid (comm) S ...": the state follows the last ')'.
    guard let close = bytes.lastIndex(of: UInt8(ascii: ")")), close + 2 < bytes.count else { return false }
    let state = bytes[close + 2]
    return state != UInt8(ascii: "Z") && state != UInt8(ascii: "X")
  }
}

/// A flag threads can read and set.
final class Flag: Sendable {
  private let value = Atomic<Bool>(false)
  var isSet: Bool { value.load(ordering: .acquiring) }
  func set() { value.store(true, ordering: .releasing) }
}

func sleep(seconds: Double) { MonotonicClock.sleep(seconds: seconds) }

/// SplitMix64: a small seeded generator, so a run can be repeated exactly (up to thread timing).
struct SplitMix64: RandomNumberGenerator {
  private var state: UInt64
  init(seed: UInt64) { state = seed }
  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}
