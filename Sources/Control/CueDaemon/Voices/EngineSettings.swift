import CueCore

/// What the configuration makes of the engine (at start) and of the client server (at start and at each reload).
extension DaemonConfiguration {
  /// The engine's settings: period, idle window, voice slots, fill target and pull pause.
  var engineConfiguration: EngineConfiguration {
    EngineConfiguration(
      periodFrames: periodFrames, idleFrames: Int(idleSeconds * Double(sampleRate)),
      voiceCapacity: voiceLimit * 2 + 16, fillTarget: fillTargetPolicy, pullPause: pullPausePolicy)
  }

  /// Pausing a pulled sink after `pipewire-pause-after` seconds of silence, or at the end of the
  /// idle window when that comes first; it then stays connected, paused, until the next cue (nil
  /// when `pipewire-pause-after` is 0: the stream then closes after the idle window, as an ALSA
  /// device does).
  var pullPausePolicy: EngineConfiguration.PullPause? {
    let pause = pipeWirePauseSeconds
    guard pause > 0 else { return nil }
    return EngineConfiguration.PullPause(afterFrames: Int(min(pause, idleSeconds) * Double(sampleRate)))
  }

  /// The push loop's fill target: `fill-target` frames, twice as much after an underrun that cut sound,
  /// up to the whole buffer, half again after each `latency-decay` seconds of audio without one (the
  /// rule every backend's latency follows: `LatencyAdapter`).
  var fillTargetPolicy: LatencyAdapter.Policy? {
    guard fillTargetFrames > 0 else { return nil }
    return LatencyAdapter.Policy(
      minimumFrames: fillTargetFrames, maximumFrames: bufferFrames,
      decay: max(1, Int(latencyDecaySeconds * Double(sampleRate))))
  }

  /// How many clients, how much each may have queued, and who may connect.
  var clientLimits: ClientServer.Limits {
    ClientServer.Limits(maximumClients: maximumClients, queueBytes: clientQueueBytes, allowedGroup: allowedGroup)
  }
}
