import CueAudio
import CueCore
import CuePosix
import CueProtocol

/// What `status` and systemd's STATUS line say, read from the owners at one moment.
struct DaemonStatus {
  let configuration: DaemonConfiguration
  let startedAt: UInt64
  let clock: DaemonClock
  let engine: EngineControl
  let device: DeviceController
  let voices: VoiceTable
  let catalog: CueCatalog
  let clients: ClientServer
  let players: Players
  let sounds: SystemSounds
  let paging: Paging
  let triggerLatency: LatencyHistogram

  /// One line for systemd's STATUS=: cues and the device state.
  var line: String {
    let state = device.lossError.map { "lost: \($0)" } ?? (device.stateName == "open" ? "open" : "closed (idle)")
    return "\(catalog.count) cues; device \(device.name) \(state); \(voices.voices.count) voices"
  }

  /// `status`'s reply.
  var fields: [(String, JSONValue)] {
    var deviceFields: [(String, JSONValue)] = [("name", .string(device.name)), ("state", .string(device.stateName))]
    if let error = device.lossError { deviceFields.append(("error", .string(error))) }
    if let format = device.lastFormat {
      deviceFields.append(("format", .string(format.sampleFormat.rawValue)))
      deviceFields.append(("rate", .number(Double(format.rate))))
      deviceFields.append(("periodFrames", .number(Double(format.periodFrames))))
      deviceFields.append(("bufferFrames", .number(Double(format.bufferFrames))))
    }
    deviceFields.append(("delayFrames", .number(Double(device.delayFrames))))
    deviceFields.append(("opens", .number(Double(device.opens))))
    deviceFields.append(("losses", .number(Double(device.losses))))
    let counters = engine.counters
    let pagingNames = ["played", "ignored", "too-soon", "late", "unbound", "merged", "unchanged", "failed"]
    return [
      ("version", .string(cuedVersion)),
      ("pid", .number(Double(ProcessInfo.processID))),
      ("uptime", .number(Double(clock.nanoseconds() - startedAt) / 1e9)),
      ("device", .object(deviceFields)),
      ("voices", .number(Double(voices.soundingCount))),
      ("voiceLimit", .number(Double(voices.limit))),
      ("plays", .number(Double(voices.playsStarted))),
      ("underruns", .number(Double(counters.underruns.load(ordering: .relaxed)))),
      ("framesWritten", .number(Double(counters.framesWritten.load(ordering: .relaxed)))),
      ("cues", .number(Double(catalog.count))),
      ("cueBytes", .number(Double(catalog.byteCount))),
      ("clients", .number(Double(clients.count))),
      ("players", .number(Double(players.count))),
      ("sounds", .number(Double(sounds.count))),  // held: disposed ones count until their last play ends
      ("systemVolume", .number(sounds.volume)),
      ("systemMuted", .bool(sounds.muted)),
      ("deviceCurrentTime", .number(Double(device.heardFrame()) / Double(configuration.sampleRate))),
      ("triggerLatency", triggerLatency.json),
      ("paging", .object(pagingNames.map { ($0, .number(Double(paging.counts[$0] ?? 0))) })),
      ("eventsDropped", .number(Double(clients.eventsDropped))),
      ("refusedConnections", .number(Double(clients.refusedConnections))),
      ("socket", .string(configuration.socketPath)),
    ]
  }
}
