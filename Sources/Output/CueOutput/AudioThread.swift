import CueCore
import CueDBus
import CuePosix

/// Eventfd-based signals between the control loop and the audio thread.
///
/// The audio thread parks in poll(2) on `audioWake` (so a parked daemon uses no CPU and has no
/// wakeups); the control loop polls `controlNotify` alongside its sockets. Every call the audio
/// thread makes here (`EventFD` signal, wait, drain; the monotonic clock) is allocation-free.
public final class EventFDSignals: EngineSignals, @unchecked Sendable {
  private let audio: EventFD
  private let control: EventFD
  public var audioWake: FileDescriptor { audio.descriptor }
  public var controlNotify: FileDescriptor { control.descriptor }

  public init() throws(SystemError) {
    audio = try EventFD()
    do {
      control = try EventFD()
    } catch {
      audio.close()
      throw error
    }
  }

  deinit {
    audio.close()
    control.close()
  }

  public func wakeAudioThread() { audio.signal() }

  public func parkAudioThread(timeoutMilliseconds: Int32) {
    audio.wait(timeoutMilliseconds: timeoutMilliseconds)
    audio.drain()
  }

  public func notifyControl() { control.signal() }

  public func nowNanoseconds() -> UInt64 { MonotonicClock.nanoseconds() }

  /// Clears the control-side notification; call before draining events.
  public func acknowledgeControl() { control.drain() }
}

/// Runs an engine on its own thread, at real-time priority when the system allows it.
public final class AudioThread: @unchecked Sendable {
  private var thread: Threads.Joinable? = nil
  /// What the thread was granted; written by `start` and read by `status`, both on the control thread.
  public private(set) var scheduling: Threads.Scheduling = .normal

  public init() {}

  /// Starts `engine.run()` on a new thread named "cued-audio", asking for SCHED_FIFO at
  /// `realtimePriority` when it is above 0. When that is refused with EPERM (an unprivileged user
  /// service) and `realtimeKit` is on, asks RTKit on the system bus (`rtkitBusAddress`) to make the
  /// thread real-time, as PulseAudio and PipeWire do; that takes at most `rtkitTimeoutSeconds`.
  ///
  /// RTKit is asked from here, the control thread, naming the audio thread by its kernel thread id:
  /// the audio thread never connects, allocates for or waits on the bus, and a hung bus delays
  /// start-up by the timeout, not the audio. Until RTKit answers the engine runs at normal priority.
  public func start<Sink: AudioSink>(
    _ engine: Engine<Sink>, realtimePriority: Int32, realtimeKit: Bool = false,
    rtkitBusAddress: String = DBusAddress.systemBus, rtkitTimeoutSeconds: Double = 1
  ) throws(SystemError) {
    // The engine is Sendable, but a closure naming it would capture `Sink.Type`, which need not be.
    let runner = Runner { engine.run() }
    let thread = try Threads.Joinable(name: "cued-audio", realtimePriority: realtimePriority) { runner.run() }
    self.thread = thread
    scheduling = thread.scheduling
    if realtimeKit, case .refused(let refusal, _) = scheduling, refusal == .notPermitted {
      scheduling = RealtimeKit.schedule(
        threadID: thread.threadID, priority: realtimePriority, refused: refusal, address: rtkitBusAddress,
        timeoutSeconds: rtkitTimeoutSeconds)
    }
  }

  private final class Runner: @unchecked Sendable {
    let run: () -> Void
    init(_ run: @escaping () -> Void) { self.run = run }
  }

  /// Waits for the thread to return.
  public func join() {
    thread?.join()
    thread = nil
  }
}
