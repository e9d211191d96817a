import CuePosix
import CueProtocol

/// An async/await client for cued: one connection, requests matched to replies, events as streams.
///
/// ```swift
/// let client = CueClient()
/// let voice = try await client.play(cue: "pico")
/// ```
///
/// **One connection.** The client connects on first use and keeps one Unix-socket connection.
/// A dedicated reader thread reads it and hands every line, in the order it arrived, to this
/// actor, which resumes the request waiting for that reply (matched by id) or passes the event to
/// the streams, players and system sounds it concerns. Requests are written one line at a time.
///
/// **Reconnection.** When the daemon goes away, requests waiting for a reply fail with
/// `.disconnected`. The next call connects again, retrying with a backoff (50 ms doubling to 1 s,
/// about 2.5 s in all) before it fails with `.unreachable`; the subscription of the `events()`
/// streams is sent again, and players and system sounds are made again on the new daemon when
/// they are next used (see `CuePlayer`). While an `events()` stream is open, the client also
/// reconnects by itself, so a monitor keeps working across a daemon restart. Only the very first
/// connection is tried once, without retries.
///
/// Objects made through a client (players, system sounds) belong to its connection: the daemon
/// destroys them when the connection closes, unless they were made `detached`.
public actor CueClient {
  /// The socket this client talks to.
  public nonisolated let socketPath: String

  // MARK: Connection state

  /// The connection in use (nil before the first call, and after a loss until the next call).
  var connection: Connection? = nil
  /// The serial of the last connection made.
  var connectionSerial = 0
  /// Tasks waiting for a connection attempt under way (nil: none under way).
  var connectWaiters: [CheckedContinuation<Result<Connection, ClientError>, Never>]? = nil
  var everConnected = false
  /// The daemon's pid on the last connection, and a counter bumped whenever it changes.
  var daemonPID: Int32? = nil
  var daemonEpoch = 0
  /// Whether the last connection reached a different daemon process than the one before.
  var daemonChanged = false
  /// Reconnects in the background while `events()` streams are open.
  var reconnecting = false

  // MARK: Requests

  /// What a waiting request is resumed with.
  enum Outcome: Sendable {
    case reply(Result<JSONValue, ProtocolError>)
    case failed(ClientError)
    /// The line could not be written: the daemon never saw it, so it may be sent again.
    case notSent
  }

  /// Work done on the actor the moment a reply arrives, before any later event is handled.
  enum ReplyHook: Sendable {
    /// A system sound's `sound.play`: remember its completion handler by voice.
    case soundCompletion(@Sendable (Bool) -> Void)
  }

  struct Pending {
    let continuation: CheckedContinuation<Outcome, Never>
    let connection: Int
    let hook: ReplyHook?
  }
  private var nextRequestID = 1
  var pending: [Int: Pending] = [:]

  // MARK: Events

  struct Subscriber {
    let filter: EventFilter
    let continuation: AsyncStream<CueEvent>.Continuation
  }
  var subscribers: [Int: Subscriber] = [:]
  /// The filter the daemon has for the current connection (nil: none sent).
  var subscribed: (connection: Int, filter: EventFilter?)? = nil
  private var nextKey = 1

  // MARK: Players and system sounds

  var players: [Int: PlayerRecord] = [:]
  /// Player keys by their daemon id, for the daemon of `daemonEpoch`.
  var playerKeys: [UInt64: Int] = [:]
  var sounds: [Int: SoundRecord] = [:]
  /// Completion handlers of system-sound plays, by voice, with the connection they depend on.
  var completions: [UInt64: (connection: Int, handler: @Sendable (Bool) -> Void)] = [:]
  /// `playToEnd` waiters, by player key.
  var finishWaiters: [Int: [(connection: Int, token: Int, continuation: AsyncStream<Result<Bool, ClientError>>.Continuation)]] = [:]

  /// Makes a client for the daemon at `socketPath` (default: `DefaultPaths.socket()`, i.e.
  /// `CUED_SOCKET`, then `$XDG_RUNTIME_DIR/cued/cued.sock`, then `/tmp/cued-UID/cued.sock`).
  /// Nothing is connected until the first call.
  public init(socketPath: String? = nil) {
    self.socketPath = DefaultPaths.socket(explicit: socketPath)
  }

  deinit {
    connection?.shutdown()
    for subscriber in subscribers.values { subscriber.continuation.finish() }
    for record in players.values { record.continuation.finish() }
    for waiters in finishWaiters.values {
      for waiter in waiters { waiter.continuation.finish() }
    }
  }

  // MARK: - Public requests

  /// Sends `request` with a fresh numeric id and returns the daemon's reply object.
  ///
  /// An error reply throws `.refused` with the daemon's code and message. If the connection
  /// drops before the reply, it throws `.disconnected` (the request may or may not have been
  /// carried out). Prefer `events()` to sending `subscribe` yourself: the client keeps track of
  /// the subscription it sent.
  @discardableResult
  public func send(_ request: Request) async throws(ClientError) -> JSONValue {
    try await perform(request).reply
  }

  /// Sends `request` like `send(_:)` and reads the reply as `type` (`StatusReply`, `ListReply`, …).
  ///
  /// A reply that cannot be read as `type` throws `.protocolViolation`.
  public func send<Body: ReplyFields>(_ request: Request, as type: Body.Type) async throws(ClientError) -> Body {
    try Body.read(try await send(request))
  }

  /// Plays a cue once (fire-and-forget) and returns the new voice's id.
  ///
  /// `volume` is linear 0…1, `pan` -1 (left) … 1 (right), `loops` AVAudioPlayer's
  /// `numberOfLoops` (0 once, n: n+1 times, negative: until stopped with `stop(voice:)`).
  @discardableResult
  public func play(cue: String, volume: Double = 1, pan: Double = 0, loops: Int = 0) async throws(ClientError) -> UInt64 {
    try await send(.play(PlayParameters(cue: cue, volume: volume, pan: pan, loops: loops)), as: PlayReply.self).voice
  }

  /// Plays the desktop sound theme's sound for an event name (`message-new-instant`, as
  /// libcanberra's `event.id`); returns the reply: the voice and the file the theme gave. The first
  /// play of a name waits for its file to decode. Fails with `unknown-event` or `event-disabled`.
  @discardableResult
  public func play(event: String, volume: Double = 1, pan: Double = 0) async throws(ClientError) -> PlayReply {
    try await send(.play(PlayParameters(event: event, volume: volume, pan: pan)), as: PlayReply.self)
  }

  /// Plays a sound file that is not a cue, named by its absolute path (as libcanberra's
  /// `media.filename`); returns the reply: the voice and `file`, the file's real path. The daemon
  /// decodes the file at its first play (which waits for it) and keeps it until the file changes.
  /// Fails with `invalid-request` for a relative path and `bad-path` for a file it cannot play.
  @discardableResult
  public func play(file: String, volume: Double = 1, pan: Double = 0, loops: Int = 0) async throws(ClientError) -> PlayReply {
    try await send(.play(PlayParameters(file: file, volume: volume, pan: pan, loops: loops)), as: PlayReply.self)
  }

  /// Stops a voice started by `play(cue:)`, fading out over `fadeDuration` seconds (nil: the daemon's few milliseconds).
  public func stop(voice: UInt64, fadeDuration: Double? = nil) async throws(ClientError) {
    try await send(.stop(.voice(voice), fadeSeconds: fadeDuration))
  }

  /// Subscribes to events and returns a stream of those `filter` admits.
  ///
  /// Several streams may be open at once, each with its own filter: the client subscribes to
  /// what they want together and sorts the events out. A stream ends when its consumer stops
  /// iterating (or the client goes away); the subscription then narrows again. Besides the
  /// daemon's events, every stream gets the client's `disconnected` and `reconnected` events
  /// (see `CueEvent`); while a stream is open the client reconnects by itself.
  public func events(_ filter: EventFilter = EventFilter()) async throws(ClientError) -> AsyncStream<CueEvent> {
    let key = nextKey
    nextKey += 1
    let (stream, continuation) = AsyncStream.makeStream(of: CueEvent.self, bufferingPolicy: .unbounded)
    subscribers[key] = Subscriber(filter: filter, continuation: continuation)
    continuation.onTermination = { [weak self] _ in
      Task { await self?.subscriberEnded(key) }
    }
    do throws(ClientError) {
      try await updateSubscription(connecting: true)
    } catch {
      subscribers[key] = nil
      continuation.finish()
      throw error
    }
    return stream
  }

  /// Makes a player (AVAudioPlayer's model) for a loaded cue.
  ///
  /// - `detached`: the player outlives this client's connection (until `destroy()`).
  /// - `enableRate`: allows `setRate` (as AVAudioPlayer's `enableRate`).
  /// - `meteringEnabled`: allows `updateMeters()` / `averagePower(forChannel:)`.
  public func makePlayer(cue: String, detached: Bool = false, enableRate: Bool = false, meteringEnabled: Bool = false)
    async throws(ClientError) -> CuePlayer
  {
    try await makePlayer(source: .cue(cue), detached: detached, enableRate: enableRate, meteringEnabled: meteringEnabled)
  }

  /// Makes a player for an MP3 file inside the daemon's sound directories (decoded by the daemon on `prepareToPlay()` or `play()`).
  public func makePlayer(path: String, detached: Bool = false, enableRate: Bool = false, meteringEnabled: Bool = false)
    async throws(ClientError) -> CuePlayer
  {
    try await makePlayer(source: .path(path), detached: detached, enableRate: enableRate, meteringEnabled: meteringEnabled)
  }

  /// Makes a system sound (System Sound Services' model) for a loaded cue.
  public func makeSystemSound(cue: String, detached: Bool = false) async throws(ClientError) -> SystemSound {
    try await makeSystemSound(source: .cue(cue), detached: detached)
  }

  /// Makes a system sound for an MP3 file inside the daemon's sound directories; returns once it is decoded.
  public func makeSystemSound(path: String, detached: Bool = false) async throws(ClientError) -> SystemSound {
    try await makeSystemSound(source: .path(path), detached: detached)
  }

  /// Sets the daemon-wide system-sound volume (0…1) and mute switch (nil: unchanged); returns both as they now are.
  @discardableResult
  public func setSystemSounds(volume: Double? = nil, muted: Bool? = nil) async throws(ClientError) -> (volume: Double, muted: Bool) {
    let reply = try await send(.system(volume: volume, muted: muted), as: SystemReply.self)
    return (reply.volume, reply.muted)
  }

  /// Closes the connection now. Requests waiting for a reply fail with `.disconnected`; players
  /// and system sounds not made `detached` are destroyed by the daemon (and made again when next
  /// used). The next call connects again.
  public func close() {
    connection?.shutdown()
  }

  // MARK: - Sending

  /// Sends `request` on a working connection (reconnecting if needed) and waits for its reply;
  /// returns it with the connection that answered.
  func perform(_ request: Request, hook: ReplyHook? = nil) async throws(ClientError) -> (reply: JSONValue, connection: Connection) {
    // A write that fails never reached the daemon: try once more on a fresh connection.
    for _ in 0..<2 {
      let connection = try await connected()
      if let reply = try await exchange(request, on: connection, hook: hook) { return (reply, connection) }
    }
    throw .disconnected(socketPath: socketPath)
  }

  /// Sends `request` on `connection` and waits for the reply; nil when it could not be written.
  func exchange(_ request: Request, on connection: Connection, hook: ReplyHook? = nil) async throws(ClientError) -> JSONValue? {
    let outcome = await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
      guard connection.isOpen else {
        continuation.resume(returning: .notSent)
        return
      }
      let id = nextRequestID
      nextRequestID += 1
      pending[id] = Pending(continuation: continuation, connection: connection.serial, hook: hook)
      do {
        try connection.write(request.line(id: .number(id)))
      } catch {
        pending[id] = nil
        connection.shutdown()
        continuation.resume(returning: .notSent)
      }
    }
    switch outcome {
    case .notSent: return nil
    case .failed(let error): throw error
    case .reply(.success(let value)): return value
    case .reply(.failure(let error)): throw .refused(error)
    }
  }

  // MARK: - Subscription

  /// What the open streams want together, on connection `serial` (nil: nothing).
  ///
  /// The daemon sends a player's events to the connection that made it. A detached player reached
  /// again on a later connection has no such owner any more, so its events are subscribed to.
  private func wantedFilter(on serial: Int) -> EventFilter? {
    var filters = subscribers.values.map(\.filter)
    let adopted = players.values.filter { $0.detached && $0.epoch == daemonEpoch && $0.connection != serial }
    if !adopted.isEmpty {
      filters.append(EventFilter(kinds: [.started, .finished, .decodeError], ids: Set(adopted.compactMap(\.daemonID))))
    }
    guard !filters.isEmpty else { return nil }
    var kinds: Set<String>? = []
    var ids: Set<UInt64>? = []
    for filter in filters {
      if let k = filter.kinds { kinds?.formUnion(k) } else { kinds = nil }
      if let i = filter.ids { ids?.formUnion(i) } else { ids = nil }
    }
    return EventFilter(kinds: kinds, ids: ids)
  }

  /// Makes the daemon's subscription match the open streams and adopted players (connecting first only when asked).
  func updateSubscription(connecting: Bool) async throws(ClientError) {
    for _ in 0..<2 {
      let current: Connection
      if connecting {
        current = try await connected()
      } else {
        guard let connection, connection.isOpen else { return }
        current = connection
      }
      let wanted = wantedFilter(on: current.serial)
      if let subscribed, subscribed.connection == current.serial, subscribed.filter == wanted { return }
      if subscribed == nil || subscribed?.connection != current.serial, wanted == nil { return }
      let request: Request = wanted.map { .subscribe($0) } ?? .unsubscribe
      if try await exchange(request, on: current) != nil {
        subscribed = (current.serial, wanted)
        return
      }
      if !connecting { throw .disconnected(socketPath: socketPath) }
    }
    throw .disconnected(socketPath: socketPath)
  }

  private func subscriberEnded(_ key: Int) async {
    guard subscribers.removeValue(forKey: key) != nil else { return }
    try? await updateSubscription(connecting: false)
  }

  // MARK: - Keys

  func makeKey() -> Int {
    defer { nextKey += 1 }
    return nextKey
  }
}
