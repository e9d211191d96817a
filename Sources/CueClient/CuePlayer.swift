import CueProtocol
import Synchronization

/// A player's properties at one moment, as the daemon reports them (AVAudioPlayer's names).
public struct PlayerStatus: Sendable, Equatable {
  /// Linear gain, 0…1.
  public var volume: Double
  /// -1 (left) … 1 (right).
  public var pan: Double
  /// 0 plays once, n plays n+1 times, negative loops until stopped.
  public var numberOfLoops: Int
  /// The playback position in seconds.
  public var currentTime: Double
  /// The sound's length in seconds (0 while a file given by path is still to be decoded).
  public var duration: Double
  public var isPlaying: Bool
  public var numberOfChannels: Int
  /// The device clock in seconds, the time base of `play(atTime:)`.
  public var deviceCurrentTime: Double
  /// Playback speed, 0.5…2 (changeable only with `enableRate`).
  public var rate: Double
  /// The cue it plays (nil while a file given by path is still to be decoded).
  public var cue: String?
  /// Per channel, in dBFS (-160…0), when the player was made with `meteringEnabled`.
  public var averagePower: [Double]
  public var peakPower: [Double]

  /// The properties of a `player.*` reply (meters empty without `meteringEnabled`).
  public init(_ properties: PlayerProperties) {
    volume = properties.volume
    pan = properties.pan
    numberOfLoops = properties.numberOfLoops
    currentTime = properties.currentTime
    duration = properties.duration
    isPlaying = properties.isPlaying
    numberOfChannels = properties.numberOfChannels
    deviceCurrentTime = properties.deviceCurrentTime
    rate = properties.rate
    cue = properties.cue
    averagePower = properties.averagePower ?? []
    peakPower = properties.peakPower ?? []
  }

  /// Reads a `player.*` reply object; one that is not a player's properties reads as a new player's defaults.
  public init(reply: JSONValue) {
    self.init((try? PlayerProperties(reply: reply)) ?? PlayerProperties())
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
    PlayerStatus(try await client.playerProperties(key) { .get(player: $0) })
  }

  /// The player's id in the daemon now (events carry it); it changes when the player is made again after a reconnection.
  public var id: UInt64 {
    get async throws(ClientError) { try await client.playerID(key) }
  }

  /// Linear gain, 0…1.
  public var volume: Double {
    get async throws(ClientError) { try await status().volume }
  }

  /// -1 (left) … 1 (right).
  public var pan: Double {
    get async throws(ClientError) { try await status().pan }
  }

  /// 0 plays once, n plays n+1 times, negative loops until stopped.
  public var numberOfLoops: Int {
    get async throws(ClientError) { try await status().numberOfLoops }
  }

  /// The playback position in seconds (estimated from the device clock while playing, exact when paused).
  public var currentTime: Double {
    get async throws(ClientError) { try await status().currentTime }
  }

  /// Playback speed, 0.5…2.
  public var rate: Double {
    get async throws(ClientError) { try await status().rate }
  }

  /// The sound's length in seconds.
  public var duration: Double {
    get async throws(ClientError) { try await status().duration }
  }

  /// True while playing (or about to: a play waiting for a decode counts).
  public var isPlaying: Bool {
    get async throws(ClientError) { try await status().isPlaying }
  }

  /// The source's channel count.
  public var numberOfChannels: Int {
    get async throws(ClientError) { try await status().numberOfChannels }
  }

  /// The device clock in seconds: the time base of `play(atTime:)`.
  public var deviceCurrentTime: Double {
    get async throws(ClientError) { try await status().deviceCurrentTime }
  }

  // MARK: Settings

  /// Sets the volume (0…1), ramping to it over `fadeDuration` seconds while playing.
  public func setVolume(_ volume: Double, fadeDuration: Double = 0) async throws(ClientError) {
    _ = try await client.playerRequest(key) {
      .set(player: $0, PlayerSettings(volume: volume, fade: fadeDuration > 0 ? fadeDuration : nil))
    }
  }

  /// Sets the pan, -1 (left) … 1 (right).
  public func setPan(_ pan: Double) async throws(ClientError) {
    _ = try await client.playerRequest(key) { .set(player: $0, PlayerSettings(pan: pan)) }
  }

  /// Sets the loop count (AVAudioPlayer's numberOfLoops; applies to the play under way too).
  public func setNumberOfLoops(_ loops: Int) async throws(ClientError) {
    _ = try await client.playerRequest(key) { .set(player: $0, PlayerSettings(numberOfLoops: loops)) }
  }

  /// Seeks to `time` seconds (while playing, the jump is sample-accurate).
  public func setCurrentTime(_ time: Double) async throws(ClientError) {
    _ = try await client.playerRequest(key) { .set(player: $0, PlayerSettings(currentTime: time)) }
  }

  /// Sets the speed, 0.5…2; needs `enableRate` (else `.refused` with `not-enabled`).
  public func setRate(_ rate: Double) async throws(ClientError) {
    _ = try await client.playerRequest(key) { .set(player: $0, PlayerSettings(rate: rate)) }
  }

  // MARK: Actions

  /// Decodes (for a file) and opens the device, so that `play()` starts within one period.
  public func prepareToPlay() async throws(ClientError) {
    _ = try await client.playerRequest(key) { .prepare(player: $0) }
  }

  /// Starts or resumes playing from `currentTime`; does nothing while already playing.
  public func play() async throws(ClientError) {
    _ = try await client.playerRequest(key) { .play(player: $0, atDeviceTime: nil) }
  }

  /// Starts playing when the device clock reaches `time` (a `deviceCurrentTime` value), to the sample.
  public func play(atTime time: Double) async throws(ClientError) {
    _ = try await client.playerRequest(key) { .play(player: $0, atDeviceTime: time) }
  }

  /// Plays and waits until the player finishes; returns `successfully` of its `finished` event
  /// (false when it was stopped early, destroyed, or this task was cancelled). A pause makes it wait on.
  public func playToEnd() async throws(ClientError) -> Bool {
    try await client.playToEnd(key)
  }

  /// Pauses at once, keeping the position; `play()` resumes from there. Sends no `finished`.
  public func pause() async throws(ClientError) {
    _ = try await client.playerRequest(key) { .pause(player: $0) }
  }

  /// Stops with a short fade, keeping the position (as AVAudioPlayer's stop). Sends no `finished`.
  public func stop() async throws(ClientError) {
    _ = try await client.playerRequest(key) { .stop(player: $0) }
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
