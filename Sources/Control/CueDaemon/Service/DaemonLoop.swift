import CueCore
import CueOutput
import CuePosix
import CueProtocol

#if canImport(Glibc)
import Glibc
#endif

/// The control loop: the signals it reads, the audio thread it starts, the poll(2) loop that
/// serves until SIGTERM or SIGINT, and the shutdown that follows.
extension Daemon {
  // MARK: - Start-up

  /// The signals the control loop reads through a signalfd.
  static var handledSignals: [Int32] { [SIGTERM, SIGINT, SIGHUP] }

  /// Blocks the handled signals in the calling thread. Call first, before any thread exists, so
  /// that every thread inherits the mask and the signals are only ever read from the signalfd.
  public static func blockSignals() {
    try? SignalFD.block(handledSignals)
  }

  /// Starts the audio thread.
  public func startAudio() throws(StartupError) {
    do {
      try audioThread.start(engine, realtime: configuration.realtimePolicy)
    } catch {
      throw StartupError("cannot start the audio thread: \(error)")
    }
  }

  // MARK: - The loop

  /// What the loop polls.
  private enum Source: Hashable {
    case listener, signals, engineNews, workDone, soundWatch
    case client(UInt64)
  }

  /// Serves until SIGTERM or SIGINT, then fades out, closes the device, removes the socket and returns.
  public func run() throws(StartupError) {
    let signalFD: SignalFD
    do {
      signalFD = try SignalFD(signals: Self.handledSignals)
    } catch {
      throw StartupError("cannot create a signalfd: \(error)")
    }
    self.signalFD = signalFD
    defer { signalFD.close() }
    guard let listener = clients.listener else { throw StartupError("run() needs bindSocket() first") }
    notifier.notify(["READY=1", "STATUS=" + status.line])
    if let interval = notifier.watchdogInterval { watchdog = Watchdog(interval: interval, now: clock.nanoseconds()) }
    logger.info(
      "cued \(cuedVersion) ready on \(servedSocket ?? configuration.socketPath); device '\(device.name)' opens on the first cue",
      metadata: StatusReply.Scheduling(audioThread.scheduling).realtimeText.map { ["audio-thread": "\($0)"] } ?? [:])
    var poll = PollSet<Source>()
    while running {
      poll.removeAll()
      poll.register(.listener, listener, for: .readable)
      poll.register(.signals, signalFD.descriptor, for: .readable)
      poll.register(.engineNews, engineWakeups.controlNotify, for: .readable)
      poll.register(.workDone, work.doneFD, for: .readable)
      if let watch = soundWatcher.descriptor { poll.register(.soundWatch, watch, for: .readable) }
      for client in clients.connections {
        guard let fd = client.transport.pollDescriptor else { continue }
        var wanted: PollEvents = []
        if client.wantsToRead { wanted.insert(.readable) }
        if client.wantsToWrite { wanted.insert(.writable) }
        poll.register(.client(client.serial), fd, for: wanted)
      }
      let ready: PollResult<Source>
      do {
        ready = try poll.wait(timeoutMilliseconds: pollTimeout())
      } catch {
        logger.error("poll failed: \(error)")
        continue
      }
      if !ready[.engineNews].isEmpty { drainEngineEvents() }
      if !ready[.signals].isEmpty { handleSignals() }
      if !ready[.workDone].isEmpty { finishWork() }
      if !ready[.soundWatch].isEmpty { soundWatcher.read(now: clock.nanoseconds()) }
      rescanIfSoundsChanged()
      // Every connection, ready or not: lines held back while its replies piled up are served
      // once they have drained, whoever drained them.
      for client in Array(clients.connections) where clients.connection(client.serial) != nil {
        clients.service(client, events: ready[.client(client.serial)])
      }
      clients.retireHalfClosed()
      if !ready[.listener].isEmpty { clients.acceptWaiting() }
      device.retryIfDue()
      device.adaptLatencyIfDue()
      levels.checkQuietHours()
      meterFeed.sendIfDue()
      watchdog?.feedIfDue(now: clock.nanoseconds(), engine: engine, notifier: notifier, logger: logger)
    }
    shutdown()
  }

  private func pollTimeout() -> Int32 {
    let now = clock.nanoseconds()
    let quietHoursBoundary = levels.secondsToNextBoundary().map { now + UInt64(($0 + 0.01) * 1e9) }
    let deadlines = [device.retryDeadline, device.latencyDeadline, watchdog?.due, quietHoursBoundary, soundWatcher.deadline, meterFeed.deadline]
    guard let next = deadlines.compactMap({ $0 }).min() else { return -1 }
    if next <= now { return 0 }
    return Int32(min((next - now) / 1_000_000 + 1, 60_000))
  }

  // MARK: - Signals and shutdown

  func handleSignals() {
    while let signal = try? signalFD?.next() {
      switch signal {
      case SIGHUP:
        logger.info("SIGHUP: reloading the config and the sound directories")
        reloader.reloadAll()
      case SIGTERM, SIGINT:
        logger.info("\(signal == SIGTERM ? "SIGTERM" : "SIGINT"): fading out and stopping")
        running = false
      default:
        break
      }
    }
  }

  /// Fades everything out (at most 50 ms), lets the audio thread finish, closes the device and the socket.
  private func shutdown() {
    notifier.notify(["STOPPING=1", "STATUS=stopping"])
    let fade = Int(min(configuration.shutdownFadeSeconds, 0.05) * Double(configuration.sampleRate))
    var sent = engine.send(.shutdown(fadeFrames: fade))
    let deadline = clock.nanoseconds() + 1_000_000_000
    var released = false
    while !released && clock.nanoseconds() < deadline {
      if !sent { sent = engine.send(.shutdown(fadeFrames: fade)) }
      _ = try? Poll.wait([PollRequest(fd: engineWakeups.controlNotify, events: .readable)], timeoutMilliseconds: 20)
      engineWakeups.acknowledgeControl()
      while let event = engine.nextEvent() {
        switch event {
        case .ended(let end): voiceEnded(end)
        case .refused(let id): voiceEnded(VoiceEnd(id: id, reason: .error, position: 0))
        case .released(let reason):
          device.close()  // no events, no reopening: cued is on its way out
          if reason == .shutdown { released = true }
        case .started, .latencyRaised: break
        }
      }
    }
    if released {
      audioThread.join()
    } else {
      logger.warning("the audio thread did not stop within 1 s; exiting anyway")
    }
    device.close()
    clients.close()
    soundWatcher.stop()
    logger.info("stopped")
  }
}
