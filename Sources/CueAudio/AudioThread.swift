import CSystemShims
import CueCore
import CuePosix
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Eventfd-based signals between the control loop and the audio thread.
///
/// The audio thread parks in poll(2) on `audioWake` (so a parked daemon uses no CPU and has no
/// wakeups); the control loop polls `controlNotify` alongside its sockets.
public final class EventFDSignals: EngineSignals, @unchecked Sendable {
  public let audioWake: FileDescriptor
  public let controlNotify: FileDescriptor

  public init() throws(SystemError) {
    let a = cued_eventfd(0, 1)
    if a < 0 { throw SystemError("eventfd") }
    let c = cued_eventfd(0, 1)
    if c < 0 {
      Glibc.close(a)
      throw SystemError("eventfd")
    }
    audioWake = FileDescriptor(rawValue: a)
    controlNotify = FileDescriptor(rawValue: c)
  }

  deinit {
    audioWake.close()
    controlNotify.close()
  }

  private static func signal(_ fd: FileDescriptor) {
    var one: UInt64 = 1
    _ = Glibc.write(fd.rawValue, &one, 8)
  }

  private static func drain(_ fd: FileDescriptor) {
    var value: UInt64 = 0
    _ = Glibc.read(fd.rawValue, &value, 8)
  }

  public func wakeAudioThread() { Self.signal(audioWake) }

  public func parkAudioThread(timeoutMilliseconds: Int32) {
    var request = pollfd(fd: audioWake.rawValue, events: Int16(POLLIN), revents: 0)
    _ = poll(&request, 1, timeoutMilliseconds)
    Self.drain(audioWake)
  }

  public func notifyControl() { Self.signal(controlNotify) }

  public func nowNanoseconds() -> UInt64 { MonotonicClock.nanoseconds() }

  /// Clears the control-side notification; call before draining events.
  public func acknowledgeControl() { Self.drain(controlNotify) }
}

/// Runs an engine on its own thread, at real-time priority when the system allows it.
public final class AudioThread: @unchecked Sendable {
  private var thread: pthread_t? = nil
  private final class Context {
    let body: () -> Void
    let realtimePriority: Int32
    let realtimeResult = Atomic<Int32>(-1)
    init(body: @escaping () -> Void, realtimePriority: Int32) {
      self.body = body
      self.realtimePriority = realtimePriority
    }
  }
  private var context: Context? = nil

  public init() {}

  /// Starts `engine.run()` on a new thread named "cued-audio".
  public func start<Sink: AudioSink>(_ engine: Engine<Sink>, realtimePriority: Int32) throws(SystemError) {
    let context = Context(body: { engine.run() }, realtimePriority: realtimePriority)
    self.context = context
    let raw = Unmanaged.passRetained(context).toOpaque()
    var tid = pthread_t()
    let rc = pthread_create(
      &tid, nil,
      { raw in
        let context = Unmanaged<Context>.fromOpaque(raw!).takeRetainedValue()
        cued_set_thread_name("cued-audio")
        if context.realtimePriority > 0 {
          context.realtimeResult.store(cued_set_realtime(context.realtimePriority), ordering: .releasing)
        }
        context.body()
        return nil
      }, raw)
    if rc != 0 {
      Unmanaged<Context>.fromOpaque(raw).release()
      throw SystemError("pthread_create", code: rc)
    }
    thread = tid
  }

  /// 0 when SCHED_FIFO was granted, else the errno (EPERM without rights), -1 before the thread ran: for the log.
  public var realtimeStatus: Int32 { context?.realtimeResult.load(ordering: .acquiring) ?? -1 }

  /// Waits for the thread to return.
  public func join() {
    if let thread {
      pthread_join(thread, nil)
    }
    thread = nil
  }
}
