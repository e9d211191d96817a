import CueOutput
import CueCore
import CuePosix
import CueProtocol

/// What `status` and systemd's STATUS line say: a read-only view of the daemon's owners, read
/// when `line` or `reply` is asked for.
struct DaemonStatus<Device: OutputDevice> {
  unowned let daemon: Daemon<Device>

  /// One line for systemd's STATUS=: cues and the device state.
  var line: String {
    let device = daemon.device
    let state = device.lossError.map { "lost: \($0)" } ?? (device.reportedState == .open ? "open" : "closed (idle)")
    return "\(daemon.catalog.count) cues; device \(device.name) \(state); \(daemon.voices.voices.count) voices"
  }

  /// The thread that runs the mix: the server's callback thread for a pulled sink (nil until it
  /// has run), cued's audio thread otherwise.
  var mixingThread: Threads.Scheduling? {
    daemon.device.device.outputModel == .pull ? daemon.device.device.mixingThread : daemon.audioThread.scheduling
  }

  /// `status`'s reply.
  var reply: StatusReply {
    let (device, voices, clients, sounds) = (daemon.device, daemon.voices, daemon.clients, daemon.sounds)
    let format = device.lastFormat.map {
      StatusReply.Device.Format(sampleFormat: $0.sampleFormat.rawValue, rate: $0.rate, periodFrames: $0.periodFrames, bufferFrames: $0.bufferFrames)
    }
    let counters = daemon.engine.counters
    // The push loop's fill target now (0 from the engine: the whole buffer), for a device that asks
    // for one (ALSA) or a configured one.
    var fillTarget: Int? = nil
    let traits = device.device.traits
    if device.device.outputModel == .push, traits.asks == .fill || daemon.engine.configuration.fillTarget != nil,
      let buffer = device.lastFormat?.bufferFrames
    {
      let target = counters.fillTargetFrames.load(ordering: .relaxed)
      fillTarget = target > 0 ? min(target, buffer) : buffer
    }
    let adapts = fillTarget != nil || traits.adapts != nil
    let started = daemon.startedAt
    let raises = device.recentRaises.map {
      StatusReply.Device.LatencyRaise(
        uptime: Double($0.atNanoseconds > started ? $0.atNanoseconds - started : 0) / 1e9, fromFrames: $0.fromFrames,
        toFrames: $0.toFrames, cause: traits.glitch, voices: $0.voicesSounding)
    }
    let ignored = StatusReply.Device.IgnoredXruns(
      silent: Int(counters.silentXruns.load(ordering: .relaxed)), afterResume: Int(counters.xrunsAfterResume.load(ordering: .relaxed)),
      graphWide: Int(counters.graphWideXruns.load(ordering: .relaxed)))
    let pauses = traits.pauses && daemon.engine.configuration.pullPause != nil
    return StatusReply(
      pid: Int(ProcessInfo.processID), uptime: Double(daemon.clock.nanoseconds() - daemon.startedAt) / 1e9,
      device: StatusReply.Device(
        name: device.name, backend: device.backend, state: device.reportedState, error: device.lossError, format: format,
        delayFrames: device.delayFrames, quantumFrames: device.device.quantumInUse, fillTargetFrames: fillTarget,
        latencyFrames: device.device.latencyAskedFrames, latencyRaises: adapts ? device.raiseCount : nil,
        recentRaises: adapts ? raises : nil, ignoredXruns: adapts ? ignored : nil,
        mixingThread: mixingThread.map { StatusReply.Scheduling($0, backend: device.backend) },
        mixingThreadName: device.device.outputModel == .pull ? traits.mixingThread : nil,
        paused: pauses ? daemon.engine.isPullPaused && device.reportedState == .open : nil,
        pauses: pauses ? Int(counters.pullPauses.load(ordering: .relaxed)) : nil,
        opens: device.opens, losses: device.losses),
      voices: voices.soundingCount, voiceLimit: voices.limit, plays: Int(voices.playsStarted),
      underruns: Int(counters.underruns.load(ordering: .relaxed)) + device.device.xruns, framesWritten: Int(counters.framesWritten.load(ordering: .relaxed)),
      cues: daemon.catalog.count, cueBytes: daemon.catalog.byteCount, clients: clients.count, players: daemon.players.count,
      // Held sounds count: disposed ones stay until their last play ends.
      sounds: sounds.count, systemVolume: daemon.groups.volume(CueRule.systemGroup), systemMuted: daemon.groups.isMuted(CueRule.systemGroup),
      deviceCurrentTime: Double(device.heardFrame()) / Double(daemon.configuration.sampleRate),
      triggerLatency: daemon.triggerLatency.summary, paging: daemon.paging.counts, silenced: daemon.rules.silenced,
      eventsDropped: clients.eventsDropped, refusedConnections: clients.refusedConnections,
      socket: daemon.servedSocket ?? daemon.configuration.socketPath, scheduling: StatusReply.Scheduling(daemon.audioThread.scheduling),
      controlThread: StatusReply.ControlThread(daemon.controlPriority),
      soundTheme: daemon.themeSounds.choice.status)
  }
}

extension StatusReply.ControlThread {
  /// What the control thread got, as `status` says it; nil when nothing was asked.
  public init?(_ outcome: ControlPriority.Outcome) {
    switch outcome {
    case .notAsked: return nil
    case .raised(let nice, let via): self.init(nice: Int(nice), via: via.rawValue)
    case .refused(let errno, let rtkit):
      self.init(nice: Int(Threads.nice(ofThread: Threads.currentThreadID) ?? 0), refused: errno.description, rtkit: rtkit)
    }
  }
}

extension StatusReply.Scheduling {
  /// What the scheduler granted a thread, as `status` says it; a thread the sound server's client
  /// library had already made real-time says `via` the `backend` (`pipewire`).
  init(_ scheduling: Threads.Scheduling, backend: String = "") {
    switch scheduling {
    case .normal: self.init(policy: "other")
    case .realtime(let priority, let policy, let grant):
      let via =
        switch grant {
        case .rtkit: "rtkit"
        case .schedSetscheduler: "sched_setscheduler"
        case .soundServer: backend
        }
      self.init(policy: policy == .fifo ? "fifo" : "rr", priority: Int(priority), via: via)
    case .refused(let errno, let rtkit): self.init(policy: "other", refused: errno.description, rtkit: rtkit)
    }
  }
}
