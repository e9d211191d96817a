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
    signal(SIGPIPE, SIG_IGN)
    var set = sigset_t()
    sigemptyset(&set)
    for number in stopSignals + [SIGWINCH] { sigaddset(&set, number) }
    pthread_sigmask(SIG_BLOCK, &set, nil)
    let watched = set
    return startThread {
      var signals = watched
      while true {
        var number: Int32 = 0
        guard sigwait(&signals, &number) == 0 else { continue }
        wakeup.wake(number == SIGWINCH ? .resized : .stop)
      }
    }
  }

  private final class Body: Sendable {
    let run: @Sendable () -> Void
    init(_ run: @escaping @Sendable () -> Void) { self.run = run }
  }

  /// Starts a detached pthread running `body` (a blocking wait has no place on the task pool).
  private static func startThread(_ body: @escaping @Sendable () -> Void) -> Bool {
    let raw = Unmanaged.passRetained(Body(body)).toOpaque()
    var thread = pthread_t()
    var attributes = pthread_attr_t()
    pthread_attr_init(&attributes)
    defer { pthread_attr_destroy(&attributes) }
    pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
    pthread_attr_setstacksize(&attributes, 64 * 1024)
    let rc = pthread_create(
      &thread, &attributes,
      { raw in
        Unmanaged<Body>.fromOpaque(raw!).takeRetainedValue().run()
        return nil
      }, raw)
    if rc != 0 {
      Unmanaged<Body>.fromOpaque(raw).release()
      return false
    }
    return true
  }
}
