import CSystemShims
import CueAudio
import CuePosix
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// What background work hands back to the control loop.
enum WorkResult: Sendable {
  case reload(LibraryScan)
  /// A file decoded for a player or system sound made from a path; `token` says which request.
  case decoded(token: UInt64, Result<Cue, DecodeError>)
}

/// Runs jobs on their own short-lived threads and hands their results to the control loop, which polls `doneFD`.
final class WorkQueue: Sendable {
  private let results = Mutex<[WorkResult]>([])
  private let fd = Atomic<Int32>(-1)

  func open() throws(SystemError) {
    let raw = cued_eventfd(0, 1)
    if raw < 0 { throw SystemError("eventfd") }
    fd.store(raw, ordering: .releasing)
  }

  func close() {
    let raw = fd.exchange(-1, ordering: .acquiringAndReleasing)
    if raw >= 0 { Glibc.close(raw) }
  }

  var doneFD: FileDescriptor { FileDescriptor(rawValue: fd.load(ordering: .acquiring)) }

  /// Runs `job` in the background; its result arrives through `take()`.
  func run(_ job: @escaping @Sendable () -> WorkResult) {
    Threads.spawn {
      let result = job()
      self.results.withLock { $0.append(result) }
      var one: UInt64 = 1
      _ = Glibc.write(self.fd.load(ordering: .acquiring), &one, 8)
    }
  }

  /// Every result that arrived, in order; clears the notification.
  func take() -> [WorkResult] {
    var value: UInt64 = 0
    _ = Glibc.read(fd.load(ordering: .acquiring), &value, 8)
    return results.withLock { list in
      defer { list.removeAll() }
      return list
    }
  }
}
