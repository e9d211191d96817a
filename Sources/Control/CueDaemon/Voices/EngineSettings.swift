import CueCore

/// What the configuration makes of the engine (at start) and of the client server (at start and at each reload).
extension DaemonConfiguration {
  /// The engine's settings: period, idle window, voice slots, fill target and pull pause.
  var engineConfiguration: EngineConfiguration {
    EngineConfiguration(
      periodFrames: backendOptions.periodFrames, idleFrames: Int(idleSeconds * Double(sampleRate)),
      voiceCapacity: voiceLimit * 2 + 16, fillTarget: fillTargetPolicy, pullPause: pullPausePolicy)
  }

  /// Pausing a pulled sink after `pullPauseSeconds` of silence, or at the end of the idle window
  /// when that comes first; it then stays connected, paused, until the next cue (nil when
  /// `pullPauseSeconds` is 0: the stream then closes after the idle window, as a pushed device does).
  var pullPausePolicy: EngineConfiguration.PullPause? {
    let pause = pullPauseSeconds
    guard pause > 0 else { return nil }
    return EngineConfiguration.PullPause(afterFrames: Int(min(pause, idleSeconds) * Double(sampleRate)))
  }

  /// The push loop's fill target: the configured frames, twice as much after an underrun that cut
  /// sound, up to the whole buffer, half again after each `latencyDecaySeconds` of audio without one
  /// (the rule every backend's latency follows: `LatencyAdapter`).
  var fillTargetPolicy: LatencyAdapter.Policy? {
    let options = backendOptions
    guard options.fillTargetFrames > 0 else { return nil }
    return LatencyAdapter.Policy(
      minimumFrames: options.fillTargetFrames, maximumFrames: options.bufferFrames,
      decay: max(1, Int(latencyDecaySeconds * Double(sampleRate))))
  }

  /// How many clients, how much each may have queued, and who may connect.
  var clientLimits: ClientServer.Limits {
    ClientServer.Limits(maximumClients: maximumClients, queueBytes: clientQueueBytes, allowedGroup: allowedGroup)
  }
}
