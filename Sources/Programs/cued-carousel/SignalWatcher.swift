import CuePosix

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Turns SIGINT, SIGTERM, SIGHUP and SIGWINCH into wake-ups of the terminal loop.
///
/// The signals are blocked in the calling thread, and so in every thread started after it
/// (threads inherit the mask): `start` must run before any other thread exists. One thread then
/// takes them with `sigwait(3)` and writes to the wake-up pipe: no code runs in a signal handler,
/// and the loop restores the terminal itself before exiting. SIGPIPE is ignored (a terminal that
/// went away is a write error, not a death).
enum SignalWatcher {
  static let stopSignals: [Int32] = [SIGINT, SIGTERM, SIGHUP]

  /// Blocks the signals and starts the thread that waits for them; false if no thread could be made.
  static func start(waking wakeup: Wakeup) -> Bool {
    SignalFD.ignore(SIGPIPE)
    let watched = stopSignals + [SIGWINCH]
    guard (try? SignalFD.block(watched)) != nil else { return false }
    do {
      // A thread that only waits needs a small stack.
      try Threads.start(stackBytes: 64 * 1024) {
        while true {
          let number = SignalFD.waitSynchronously(for: watched)
          wakeup.wake(number == SIGWINCH ? .resized : .stop)
        }
      }
      return true
    } catch {
      return false
    }
  }
}
