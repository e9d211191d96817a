import CueCore
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

/// Runs the thread that asks an engine for audio (its sink's driver: the push loop, or the pulled
/// stream's supervisor) on a thread of its own, at real-time priority when the system allows it.
public final class AudioThread: @unchecked Sendable {
  private var thread: Threads.Joinable? = nil
  /// What the thread was granted; written by `start` and read by `status`, both on the control thread.
  public private(set) var scheduling: Threads.Scheduling = .normal

  public init() {}

  /// Starts the driver the engine's sink calls for (`Engine.makeDriver`: `PushLoop` for ALSA and
  /// null, `PullSupervisor` for a sound server's stream) on a new thread named "cued-audio", then
  /// applies `realtime` to it from here, the control thread (`RealtimePolicy.apply`: SCHED_FIFO,
  /// else RTKit, within its bounded wait). Until that is settled the driver runs at normal
  /// priority; nothing is queued for it yet.
  public func start<Sink: AudioSink>(_ engine: Engine<Sink>, realtime: RealtimePolicy) throws(SystemError) {
    let driver = engine.makeDriver()
    let thread = try Threads.Joinable(name: "cued-audio") { driver.run() }
    self.thread = thread
    scheduling = realtime.apply(toThread: thread.threadID)
  }

  /// Waits for the thread to return.
  public func join() {
    thread?.join()
    thread = nil
  }
}
