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
  /// Jobs of `run` whose results have not been posted yet.
  private let running = Mutex<Int>(0)

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
    running.withLock { $0 += 1 }
    Threads.spawn {
      let result = job()
      // Posted and counted as one step, so that `isBusy` false means the result is readable.
      self.running.withLock { count in
        self.post(result)
        count -= 1
      }
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

  /// Whether a job of `run` is still working (its result not posted yet). For a test that moves a
  /// manual clock: it waits for the result, as the real loop's time would have passed meanwhile.
  var isBusy: Bool { running.withLock { $0 > 0 } }
}
