extension DaemonConfiguration {
  /// This configuration with the reloadable settings taken from `next`; the restart-only ones that
  /// differ are kept and listed by key.
  func reloading(to next: DaemonConfiguration) -> (configuration: DaemonConfiguration, restartOnly: [String]) {
    var restartOnly: [String] = []
    if next.socketPath != socketPath { restartOnly.append("socket") }
    if next.device != device { restartOnly.append("device") }
    if next.sampleRate != sampleRate { restartOnly.append("rate") }
    if next.periodFrames != periodFrames { restartOnly.append("period-frames") }
    if next.bufferFrames != bufferFrames { restartOnly.append("buffer-frames") }
    if next.idleSeconds != idleSeconds { restartOnly.append("idle-timeout") }
    if next.realtimePriority != realtimePriority { restartOnly.append("realtime-priority") }
    var applied = self
    applied.soundDirectories = next.soundDirectories
    applied.voiceLimit = next.voiceLimit
    applied.maximumCueSeconds = next.maximumCueSeconds
    applied.maximumDecodedBytes = next.maximumDecodedBytes
    applied.maximumCues = next.maximumCues
    applied.maximumClients = next.maximumClients
    applied.maximumPlayers = next.maximumPlayers
    applied.maximumSounds = next.maximumSounds
    applied.allowAnyPath = next.allowAnyPath
    // New connections see these; connected clients keep what they had.
    applied.clientQueueBytes = next.clientQueueBytes
    applied.allowedGroup = next.allowedGroup
    return (applied, restartOnly)
  }
}
