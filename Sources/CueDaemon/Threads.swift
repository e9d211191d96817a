import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Short-lived threads for background work (decoding), instead of libdispatch's pool.
///
/// libdispatch keeps idle worker threads around for seconds after their work is done; their
/// wake-ups and exits would show up as CPU ticks and context switches in a daemon that is meant to
/// be perfectly quiet when idle. These threads end when their work does.
enum Threads {
  private final class Box: @unchecked Sendable {
    let body: @Sendable () -> Void
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
  }

  /// Runs `body` on a new detached thread.
  static func spawn(_ body: @escaping @Sendable () -> Void) {
    let raw = Unmanaged.passRetained(Box(body)).toOpaque()
    var thread = pthread_t()
    var attributes = pthread_attr_t()
    pthread_attr_init(&attributes)
    pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
    let rc = pthread_create(&thread, &attributes, { raw in
      Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue().body()
      return nil
    }, raw)
    pthread_attr_destroy(&attributes)
    if rc != 0 {
      // No thread to be had: do the work here rather than not at all.
      Unmanaged<Box>.fromOpaque(raw).takeRetainedValue().body()
    }
  }

  /// Calls `body(i)` for every i in 0..<count on up to one thread per core, and returns when all are done.
  static func parallelFor(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    guard count > 1 else {
      if count == 1 { body(0) }
      return
    }
    let workers = max(1, min(count, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))))
    let next = Atomic<Int>(0)
    let shared = Box {
      while true {
        let index = next.wrappingAdd(1, ordering: .relaxed).oldValue
        if index >= count { return }
        body(index)
      }
    }
    var threads: [pthread_t] = []
    for _ in 1..<workers {
      var thread = pthread_t()
      let raw = Unmanaged.passRetained(shared).toOpaque()
      if pthread_create(&thread, nil, { raw in
        Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue().body()
        return nil
      }, raw) == 0 {
        threads.append(thread)
      } else {
        Unmanaged<Box>.fromOpaque(raw).release()
      }
    }
    shared.body()  // this thread works too
    for thread in threads { pthread_join(thread, nil) }
  }
}
