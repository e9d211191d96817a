import CueProtocol

/// A system sound in cued, modelled on System Sound Services: made once, played fire-and-forget.
///
/// Made with `CueClient.makeSystemSound(cue:)`. It plays at the daemon-wide system-sound volume
/// (`CueClient.setSystemSounds`) and not at all while system sounds are muted. Disposing of it
/// right after a play does not cut the play: what sounds finishes, then the daemon frees it. When
/// this object is released without `dispose`, it is disposed of in the same gentle way (unless it
/// was made `detached`). After a reconnection it is made again on the next play.
public final class SystemSound: Sendable {
  /// The client this sound talks through.
  public let client: CueClient
  let key: Int
  /// What it plays: a cue or a file.
  public let source: SoundSource
  /// Made with `detached: true`: outlives the connection (until disposed of).
  public let isDetached: Bool

  init(client: CueClient, key: Int, source: SoundSource, detached: Bool) {
    self.client = client
    self.key = key
    self.source = source
    self.isDetached = detached
  }

  deinit {
    let client = self.client
    let key = self.key
    Task { await client.releaseSound(key) }
  }

  /// Plays the sound once and returns without waiting for it; returns the voice id (nil when the play is silent: system sounds muted, the level, …).
  ///
  /// With a `completion`, the client turns on the sound's `completion` events and calls
  /// `completion` once for this play when it has ended: `true` when it was heard to its end,
  /// `false` when it was muted, cut (`dispose(now: true)`, stolen) or the connection was lost. It
  /// runs on the client's actor: keep it short. It is not called when `play` throws.
  @discardableResult
  public func play(completion: (@Sendable (Bool) -> Void)? = nil) async throws(ClientError) -> UInt64? {
    try await client.playSound(key, completion: completion)
  }

  /// Disposes of the sound: it takes no more plays (they throw `.refused`, `unknown-sound`).
  /// What is playing finishes, unless `now`, which fades it out at once.
  public func dispose(now: Bool = false) async throws(ClientError) {
    try await client.disposeSound(key, now: now)
  }
}
