import CueDecoding
import CuePosix
import Synchronization

/// What background work hands back to the control loop.
enum WorkResult: Sendable {
  case reload(LibraryScan)
  /// A file decoded for a player or system sound made from a path; `token` says which request.
  case decoded(token: UInt64, Result<Cue, DecodeError>)
  /// The desktop's sound settings changed (read on the thread that watches them).
  case desktopSound(DesktopSoundSettings)
}

/// Runs jobs on their own short-lived threads and hands their results to the control loop, which polls `doneFD`.
final class WorkQueue: Sendable {
  private let results = Mutex<[WorkResult]>([])
  private let done: EventFD

  init() throws(SystemError) {
    done = try EventFD()
  }

  deinit {
    done.close()
  }

  /// Readable when results wait.
  var doneFD: FileDescriptor { done.descriptor }

  /// Runs `job` in the background; its result arrives through `take()`.
  func run(_ job: @escaping @Sendable () -> WorkResult) {
    running.add(1, ordering: .relaxed)
    Threads.spawn {
      self.post(job())
      self.running.subtract(1, ordering: .releasing)
    }
  }

  /// Hands `result` to the control loop from a thread of the caller's own (one that watches
  /// something, rather than a job of `run`).
  func post(_ result: WorkResult) {
    results.withLock { $0.append(result) }
    done.signal()
  }

  /// Every result that arrived, in order; clears the notification.
  func take() -> [WorkResult] {
    done.drain()
    return results.withLock { list in
      defer { list.removeAll() }
      return list
    }
  }

  /// Jobs of `run` not yet done (their result posted, then counted off). The loop needs no count (it
  /// polls `doneFD`); the in-process tests, which move the clock themselves, wait while it is not zero,
  /// so that background work takes none of the daemon's time there.
  private let running = Atomic<Int>(0)
  var jobsRunning: Int { running.load(ordering: .acquiring) }
}
