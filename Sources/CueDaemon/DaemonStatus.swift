import CueAudio
import CueCore
import CuePosix
import CueProtocol

/// What `status` and systemd's STATUS line say: a read-only view of the daemon's owners.
///
/// It holds the owners as the daemon hands them over, in one tuple, and reads them only when
/// `line` or `reply` is asked for.
struct DaemonStatus {
  /// The owners a status reads, as the daemon hands them over.
  private typealias Owners = (
    configuration: DaemonConfiguration, startedAt: UInt64, clock: DaemonClock, engine: EngineControl, device: DeviceController,
    voices: VoiceTable, catalog: CueCatalog, clients: ClientServer, players: Players, sounds: SystemSounds, paging: Paging,
    triggerLatency: LatencyHistogram
  )
  private let owners: Owners

  init(
    configuration: DaemonConfiguration, startedAt: UInt64, clock: DaemonClock, engine: EngineControl, device: DeviceController,
    voices: VoiceTable, catalog: CueCatalog, clients: ClientServer, players: Players, sounds: SystemSounds, paging: Paging,
    triggerLatency: LatencyHistogram
  ) {
    owners = (configuration, startedAt, clock, engine, device, voices, catalog, clients, players, sounds, paging, triggerLatency)
  }

  /// One line for systemd's STATUS=: cues and the device state.
  var line: String {
    let (_, _, _, _, device, voices, catalog, _, _, _, _, _) = owners
    let state = device.lossError.map { "lost: \($0)" } ?? (device.stateName == "open" ? "open" : "closed (idle)")
    return "\(catalog.count) cues; device \(device.name) \(state); \(voices.voices.count) voices"
  }

  /// `status`'s reply.
  var reply: StatusReply {
    let (configuration, startedAt, clock, engine, device, voices, catalog, clients, players, sounds, paging, triggerLatency) = owners
    let state: StatusReply.Device.State
    switch device.stateName {
    case "open": state = .open
    case "lost": state = .lost
    default: state = .closed
    }
    let format = device.lastFormat.map {
      StatusReply.Device.Format(sampleFormat: $0.sampleFormat.rawValue, rate: $0.rate, periodFrames: $0.periodFrames, bufferFrames: $0.bufferFrames)
    }
    let counters = engine.counters
    return StatusReply(
      pid: Int(ProcessInfo.processID), uptime: Double(clock.nanoseconds() - startedAt) / 1e9,
      device: StatusReply.Device(
        name: device.name, backend: device.backend, state: state, error: device.lossError, format: format, delayFrames: device.delayFrames, opens: device.opens,
        losses: device.losses),
      voices: voices.soundingCount, voiceLimit: voices.limit, plays: Int(voices.playsStarted),
      underruns: Int(counters.underruns.load(ordering: .relaxed)), framesWritten: Int(counters.framesWritten.load(ordering: .relaxed)),
      cues: catalog.count, cueBytes: catalog.byteCount, clients: clients.count, players: players.count,
      // Held sounds count: disposed ones stay until their last play ends.
      sounds: sounds.count, systemVolume: sounds.volume, systemMuted: sounds.muted,
      deviceCurrentTime: Double(device.heardFrame()) / Double(configuration.sampleRate), triggerLatency: triggerLatency.summary,
      paging: StatusReply.PagingCounts(paging.counts), eventsDropped: clients.eventsDropped,
      refusedConnections: clients.refusedConnections, socket: configuration.socketPath)
  }
}

extension StatusReply.Scheduling {
  /// What the scheduler granted the audio thread, as `status` says it.
  init(_ scheduling: Threads.Scheduling) {
    switch scheduling {
    case .normal: self.init(policy: "other")
    case .realtime(let priority): self.init(policy: "fifo", priority: Int(priority))
    case .refused(let errno): self.init(policy: "other", refused: errno.description)
    }
  }
}
