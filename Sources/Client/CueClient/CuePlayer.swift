import CueProtocol
import Synchronization

/// A player's properties at one moment, as the daemon reports them (AVAudioPlayer's names).
///
/// The reply's `PlayerProperties`, read through: `status.volume`, `status.currentTime`,
/// `status.cue`, … (see `PlayerProperties` for each); the meters read as empty arrays without
/// `meteringEnabled`.
@dynamicMemberLookup
public struct PlayerStatus: Sendable, Equatable {
  /// The properties as the reply carried them.
  public var properties: PlayerProperties

  /// The properties of a `player.*` reply.
  public init(_ properties: PlayerProperties) {
    self.properties = properties
  }

  /// Reads a `player.*` reply object; one that is not a player's properties reads as a new player's defaults.
  public init(reply: JSONValue) {
    self.init((try? PlayerProperties(reply: reply)) ?? PlayerProperties())
  }

  public subscript<Value>(dynamicMember property: WritableKeyPath<PlayerProperties, Value>) -> Value {
    get { properties[keyPath: property] }
    set { properties[keyPath: property] = newValue }
  }

  /// Per channel, in dBFS (-160…0), when the player was made with `meteringEnabled`; else empty.
  public var averagePower: [Double] {
    get { properties.averagePower ?? [] }
    set { properties.averagePower = newValue }
  }

  public var peakPower: [Double] {
    get { properties.peakPower ?? [] }
    set { properties.peakPower = newValue }
  }
}

/// A player in cued, modelled on AVAudioPlayer: play, pause, seek, loop, fade, rate, meters.
///
/// Made with `CueClient.makePlayer(cue:)`. Every property read and every action is one request to
/// the daemon, hence `async`. The player belongs to its client's connection: the daemon destroys
/// it when the connection closes, unless it was made `detached`. When this object is released, a
/// player that is not detached is destroyed (its sound stops), as an AVAudioPlayer's would.
///
/// **Reconnection.** If the daemon restarts (or the connection is lost), the player is made again
/// on the next call, with its cue, flags, volume, pan, numberOfLoops and rate. What is lost: its
/// position (`currentTime` starts at 0 again), whether it was playing (it is stopped), and its
/// daemon id (events name the new one). A detached player whose daemon is still the same process is
/// found again as it was.
@dynamicMemberLookup
public final class CuePlayer: Sendable {
  /// The client this player talks through.
  public let client: CueClient
  let key: Int
  /// What it plays: a cue or a file.
  public let source: SoundSource
  /// Made with `detached: true`: outlives the connection (until `destroy()`).
  public let isDetached: Bool
  /// Made with `enableRate: true`: `setRate` works.
  public let enableRate: Bool
  /// Made with `meteringEnabled: true`: `updateMeters()` fills `averagePower`/`peakPower`.
  public let isMeteringEnabled: Bool
  /// This player's `started`, `finished` and `decode-error` events, in order.
  ///
  /// The daemon sends the owner of a player its `finished` and `decode-error` events without a
  /// subscription; `started` events arrive while an `events()` stream admits them. One consumer
  /// at a time; the newest 256 events are kept when nobody reads. The stream ends on `destroy()`.
  public let events: AsyncStream<CueEvent>
  private let meters = Mutex<(average: [Double], peak: [Double])>(([], []))

  init(
    client: CueClient, key: Int, source: SoundSource, detached: Bool, enableRate: Bool, meteringEnabled: Bool,
    events: AsyncStream<CueEvent>
  ) {
    self.client = client
    self.key = key
    self.source = source
    self.isDetached = detached
    self.enableRate = enableRate
    self.isMeteringEnabled = meteringEnabled
    self.events = events
  }

  deinit {
    let client = self.client
    let key = self.key
    Task { await client.releasePlayer(key) }
  }

  // MARK: Properties

  /// Reads every property in one request.
  public func status() async throws(ClientError) -> PlayerStatus {
    PlayerStatus(try await client.playerRequest(key) { PlayerGetRequest(player: $0) })
  }

  /// The player's id in the daemon now (events carry it); it changes when the player is made again after a reconnection.
  public var id: UInt64 {
    get async throws(ClientError) { try await client.playerID(key) }
  }

  /// Reads one property of `status()`, by its name on the player: `try await player.volume`,
  /// `.pan`, `.numberOfLoops`, `.currentTime` (estimated from the device clock while playing, exact
  /// when paused), `.rate`, `.duration`, `.isPlaying` (a play waiting for a decode counts),
  /// `.numberOfChannels`, `.deviceCurrentTime` (the time base of `play(atTime:)`), `.cue`. Each read
  /// is one request; read `status()` once for several.
  public subscript<Value>(dynamicMember property: KeyPath<PlayerStatus, Value>) -> Value {
    get async throws(ClientError) { try await status()[keyPath: property] }
  }

  // MARK: Settings

  /// Sets the volume (0…1), ramping to it over `fadeDuration` seconds while playing.
  public func setVolume(_ volume: Double, fadeDuration: Double = 0) async throws(ClientError) {
    _ = try await client.playerRequest(key) {
      PlayerSetRequest(player: $0, PlayerSettings(volume: volume, fade: fadeDuration > 0 ? fadeDuration : nil))
    }
  }

  /// Sets the pan, -1 (left) … 1 (right).
  public func setPan(_ pan: Double) async throws(ClientError) {
    _ = try await client.playerRequest(key) { PlayerSetRequest(player: $0, PlayerSettings(pan: pan)) }
  }

  /// Sets the loop count (AVAudioPlayer's numberOfLoops; applies to the play under way too).
  public func setNumberOfLoops(_ loops: Int) async throws(ClientError) {
    _ = try await client.playerRequest(key) { PlayerSetRequest(player: $0, PlayerSettings(numberOfLoops: loops)) }
  }

  /// Seeks to `time` seconds (while playing, the jump is sample-accurate).
  public func setCurrentTime(_ time: Double) async throws(ClientError) {
    _ = try await client.playerRequest(key) { PlayerSetRequest(player: $0, PlayerSettings(currentTime: time)) }
  }

  /// Sets the speed, 0.5…2; needs `enableRate` (else `.refused` with `not-enabled`).
  public func setRate(_ rate: Double) async throws(ClientError) {
    _ = try await client.playerRequest(key) { PlayerSetRequest(player: $0, PlayerSettings(rate: rate)) }
  }

  // MARK: Actions

  /// Decodes (for a file) and opens the device, so that `play()` starts within one period.
  public func prepareToPlay() async throws(ClientError) {
    _ = try await client.playerRequest(key) { PlayerPrepareRequest(player: $0) }
  }

  /// Starts or resumes playing from `currentTime`; does nothing while already playing.
  public func play() async throws(ClientError) {
    _ = try await client.playerRequest(key) { PlayerPlayRequest(player: $0, atDeviceTime: nil) }
  }

  /// Starts playing when the device clock reaches `time` (a `deviceCurrentTime` value), to the sample.
  public func play(atTime time: Double) async throws(ClientError) {
    _ = try await client.playerRequest(key) { PlayerPlayRequest(player: $0, atDeviceTime: time) }
  }

  /// Plays and waits until the player finishes; returns `successfully` of its `finished` event
  /// (false when it was stopped early, destroyed, or this task was cancelled). A pause makes it wait on.
  public func playToEnd() async throws(ClientError) -> Bool {
    try await client.playToEnd(key)
  }

  /// Pauses at once, keeping the position; `play()` resumes from there. Sends no `finished`.
  public func pause() async throws(ClientError) {
    _ = try await client.playerRequest(key) { PlayerPauseRequest(player: $0) }
  }

  /// Stops with a short fade, keeping the position (as AVAudioPlayer's stop). Sends no `finished`.
  public func stop() async throws(ClientError) {
    _ = try await client.playerRequest(key) { PlayerStopRequest(player: $0) }
  }

  /// Destroys the player in the daemon and ends `events`; later calls throw `.refused` (`unknown-player`).
  public func destroy() async throws(ClientError) {
    try await client.destroyPlayer(key)
  }

  // MARK: Meters

  /// Fetches the current meter levels, read afterwards by `averagePower(forChannel:)` and `peakPower(forChannel:)`.
  public func updateMeters() async throws(ClientError) {
    let status = try await status()
    meters.withLock { $0 = (status.averagePower, status.peakPower) }
  }

  /// The RMS level of `channel` in dBFS (-160…0) at the last `updateMeters()`; -160 without meters.
  public func averagePower(forChannel channel: Int) -> Double {
    meters.withLock { channel >= 0 && channel < $0.average.count ? $0.average[channel] : -160 }
  }

  /// The peak level of `channel` in dBFS (-160…0) at the last `updateMeters()`; -160 without meters.
  public func peakPower(forChannel channel: Int) -> Double {
    meters.withLock { channel >= 0 && channel < $0.peak.count ? $0.peak[channel] : -160 }
  }
}
