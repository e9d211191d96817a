import CueProtocol

/// A task waiting for an object's `create` under way: the new daemon id and its connection.
typealias CreationWaiter = CheckedContinuation<Result<(UInt64, Connection), ClientError>, Never>

/// What the client remembers of an object it makes in the daemon (a player, a system sound): where
/// the daemon's copy lives, and how to make it again there after a reconnection.
protocol DaemonObjectRecord {
  var detached: Bool { get }
  /// The daemon's id for it, the connection that made it and the daemon it lives in.
  var daemonID: UInt64? { get set }
  var connection: Int { get set }
  var epoch: Int { get set }
  /// Tasks waiting for a `create` under way (nil: none under way).
  var creationWaiters: [CreationWaiter]? { get set }
  /// False once it may not be made again (a disposed sound).
  var canBeMade: Bool { get }

  /// The error for a use of `key` once it is gone.
  static func gone(_ key: Int) -> ClientError
  /// Runs `body` on the slot of `key` in the client's table (nil once it is gone).
  static func withRecord<T>(_ key: Int, in client: isolated CueClient, _ body: (inout Self?) -> T) -> T
  /// Makes it in the daemon on `connection`: its new id, or nil when the request could not be written.
  /// Keeps what the reply says in the record, the id included.
  static func create(_ key: Int, from record: Self, on connection: Connection, in client: isolated CueClient)
    async throws(ClientError) -> UInt64?
}

extension DaemonObjectRecord {
  /// Whether `daemonID` names this object on `connection`'s daemon.
  func exists(on connection: Connection, epoch current: Int) -> Bool {
    daemonID != nil && epoch == current && (detached || self.connection == connection.serial)
  }

  /// The record of `key` in the client's table, nil once it is gone.
  static func record(_ key: Int, in client: isolated CueClient) -> Self? { withRecord(key, in: client) { $0 } }

  /// Changes the record of `key`, when there is one.
  static func update(_ key: Int, in client: isolated CueClient, _ change: (inout Self) -> Void) {
    withRecord(key, in: client) { slot in
      if slot != nil { change(&slot!) }
    }
  }

  /// Notes that the daemon of `epoch` knows it as `id`, made on `connection`.
  mutating func made(_ id: UInt64, on connection: Connection, epoch: Int) {
    daemonID = id
    self.connection = connection.serial
    self.epoch = epoch
  }
}

/// What the client remembers of a player, to reach it and to make it again on a new daemon.
struct PlayerRecord: DaemonObjectRecord {
  let source: SoundSource
  let detached: Bool
  let enableRate: Bool
  let meteringEnabled: Bool
  /// The settings last known, restored when the player is made again.
  var volume = 1.0
  var pan = 0.0
  var numberOfLoops = 0
  var rate = 1.0
  var daemonID: UInt64? = nil
  var connection = 0
  var epoch = -1
  var creationWaiters: [CreationWaiter]? = nil
  /// Feeds `CuePlayer.events`.
  let continuation: AsyncStream<CueEvent>.Continuation
  var canBeMade: Bool { true }

  static func gone(_ key: Int) -> ClientError {
    .refused(ProtocolError(.unknownPlayer, "this player was destroyed; make a new one with makePlayer"))
  }

  static func withRecord<T>(_ key: Int, in client: isolated CueClient, _ body: (inout PlayerRecord?) -> T) -> T {
    body(&client.players[key])
  }

  var creation: PlayerCreation {
    var settings = PlayerSettings()
    if volume != 1 { settings.volume = volume }
    if pan != 0 { settings.pan = pan }
    if numberOfLoops != 0 { settings.numberOfLoops = numberOfLoops }
    if enableRate && rate != 1 { settings.rate = rate }
    return PlayerCreation(
      source: source, detached: detached, enableRate: enableRate, meteringEnabled: meteringEnabled, settings: settings)
  }

  /// Keeps the settings a reply reports (every player reply carries them).
  mutating func remember(_ properties: PlayerProperties) {
    volume = properties.volume
    pan = properties.pan
    numberOfLoops = properties.numberOfLoops
    rate = properties.rate
  }
}

/// What the client remembers of a system sound.
struct SoundRecord: DaemonObjectRecord {
  let source: SoundSource
  let detached: Bool
  var daemonID: UInt64? = nil
  var connection = 0
  var epoch = -1
  var creationWaiters: [CreationWaiter]? = nil
  /// The connection on which `sound.completion` was turned on.
  var completionConnection: Int? = nil
  var disposed = false
  var canBeMade: Bool { !disposed }

  static func gone(_ key: Int) -> ClientError {
    .refused(ProtocolError(.unknownSound, "this system sound was disposed of; make a new one to play it again"))
  }

  static func withRecord<T>(_ key: Int, in client: isolated CueClient, _ body: (inout SoundRecord?) -> T) -> T {
    body(&client.sounds[key])
  }
}

extension CueClient {
  // MARK: - Players

  func makePlayer(source: SoundSource, detached: Bool, enableRate: Bool, meteringEnabled: Bool) async throws(ClientError) -> CuePlayer {
    let key = makeKey()
    let (stream, continuation) = AsyncStream.makeStream(of: CueEvent.self, bufferingPolicy: .bufferingNewest(256))
    players[key] = PlayerRecord(
      source: source, detached: detached, enableRate: enableRate, meteringEnabled: meteringEnabled, continuation: continuation)
    do throws(ClientError) {
      _ = try await playerHandle(key)
    } catch {
      forgetPlayer(key)
      throw error
    }
    return CuePlayer(
      client: self, key: key, source: source, detached: detached, enableRate: enableRate, meteringEnabled: meteringEnabled,
      events: stream)
  }

  /// The player's daemon id and the connection it is valid on, making the player (again) when the
  /// daemon does not have it: after a reconnection its settings are restored, its position is not.
  func playerHandle(_ key: Int) async throws(ClientError) -> (id: UInt64, connection: Connection) {
    try await handle(key, of: PlayerRecord.self)
  }

  /// Sends the player request `make` builds from the player's current id, on the connection where
  /// that id is valid; returns the reply as the op's type. A reply with the player's properties
  /// (`player.get`, `.set`, …) updates the settings the client restores after a reconnection.
  func playerRequest<R: RequestFields>(_ key: Int, _ make: @Sendable (UInt64) -> R) async throws(ClientError) -> R.Reply {
    for _ in 0..<2 {
      let (id, current) = try await playerHandle(key)
      if let reply = try await exchange(Request(make(id)), on: current) {
        let body = try R.Reply.read(reply)
        if let properties = body as? PlayerProperties { players[key]?.remember(properties) }
        return body
      }
    }
    throw .disconnected(socketPath: socketPath)
  }

  /// The player's id on the daemon now (it changes when the player is made again after a reconnection).
  func playerID(_ key: Int) async throws(ClientError) -> UInt64 {
    try await playerHandle(key).id
  }

  /// Plays and waits for the `finished` event of the player; returns its `successfully`.
  func playToEnd(_ key: Int) async throws(ClientError) -> Bool {
    for _ in 0..<2 {
      let (id, current) = try await playerHandle(key)
      let token = makeKey()
      let (stream, continuation) = AsyncStream.makeStream(of: Result<Bool, ClientError>.self)
      finishWaiters[key, default: []].append((current.serial, token, continuation))
      let reply: JSONValue?
      do throws(ClientError) {
        reply = try await exchange(Request(PlayerPlayRequest(player: id, atDeviceTime: nil)), on: current)
      } catch {
        removeFinishWaiter(key, token: token)
        throw error
      }
      guard reply != nil else {
        removeFinishWaiter(key, token: token)
        continue
      }
      for await result in stream { return try result.get() }
      removeFinishWaiter(key, token: token)
      return false
    }
    throw .disconnected(socketPath: socketPath)
  }

  private func removeFinishWaiter(_ key: Int, token: Int) {
    guard var waiters = finishWaiters[key] else { return }
    waiters.removeAll { $0.token == token }
    finishWaiters[key] = waiters.isEmpty ? nil : waiters
  }

  /// Destroys the player in the daemon (when it exists there) and forgets it.
  func destroyPlayer(_ key: Int) async throws(ClientError) {
    guard let record = players[key] else { return }
    defer {
      forgetPlayer(key)
      if record.detached { Task { try? await updateSubscription(connecting: false) } }
    }
    guard let id = record.daemonID, let current = try await reachable(record.detached, madeOn: record.connection) else { return }
    guard players[key]?.exists(on: current, epoch: daemonEpoch) == true else { return }
    do throws(ClientError) {
      _ = try await exchange(Request(PlayerDestroyRequest(player: id)), on: current)
    } catch {
      if case .refused(let refusal) = error, refusal.code == .unknownPlayer { return }
      throw error
    }
  }

  /// The connection on which an object made on connection `serial` can still be reached, or nil
  /// when it is gone: an object that is not detached goes with the connection that made it, so
  /// only a detached one is worth connecting for.
  private func reachable(_ detached: Bool, madeOn serial: Int) async throws(ClientError) -> Connection? {
    if detached { return try await connected() }
    guard let connection, connection.isOpen, connection.serial == serial else { return nil }
    return connection
  }

  /// The `CuePlayer` went away: a detached player stays in the daemon, any other is destroyed.
  func releasePlayer(_ key: Int) async {
    guard let record = players[key] else { return }
    if record.detached {
      forgetPlayer(key)
    } else {
      try? await destroyPlayer(key)
    }
  }

  func forgetPlayer(_ key: Int) {
    guard let record = players.removeValue(forKey: key) else { return }
    if let id = record.daemonID, playerKeys[id] == key { playerKeys[id] = nil }
    record.continuation.finish()
    for waiter in finishWaiters.removeValue(forKey: key) ?? [] { waiter.continuation.finish() }
    for waiter in record.creationWaiters ?? [] { waiter.resume(returning: .failure(PlayerRecord.gone(key))) }
  }

  // MARK: - System sounds

  func makeSystemSound(source: SoundSource, detached: Bool) async throws(ClientError) -> SystemSound {
    let key = makeKey()
    sounds[key] = SoundRecord(source: source, detached: detached)
    do throws(ClientError) {
      _ = try await soundHandle(key)
    } catch {
      sounds[key] = nil
      throw error
    }
    return SystemSound(client: self, key: key, source: source, detached: detached)
  }

  /// The sound's daemon id and the connection it is valid on, making it (again) when needed.
  func soundHandle(_ key: Int) async throws(ClientError) -> (id: UInt64, connection: Connection) {
    try await handle(key, of: SoundRecord.self)
  }

  /// Plays a system sound; with a `completion`, turns on `sound.completion` first and calls it once for this play.
  func playSound(_ key: Int, completion: (@Sendable (Bool) -> Void)?) async throws(ClientError) -> UInt64? {
    for _ in 0..<2 {
      let (id, current) = try await soundHandle(key)
      if completion != nil, sounds[key]?.completionConnection != current.serial {
        guard try await exchange(Request(SoundCompletionRequest(sound: id, enabled: true)), on: current) != nil else { continue }
        sounds[key]?.completionConnection = current.serial
      }
      let hook = completion.map { ReplyHook.soundCompletion($0) }
      guard let reply = try await exchange(Request(SoundPlayRequest(sound: id)), on: current, hook: hook) else { continue }
      return try SoundPlayReply.read(reply).voice
    }
    throw .disconnected(socketPath: socketPath)
  }

  /// Disposes of a system sound: no more plays; what plays finishes unless `now`.
  func disposeSound(_ key: Int, now: Bool) async throws(ClientError) {
    guard let record = sounds[key], !record.disposed else { return }
    sounds[key]?.disposed = true
    guard let id = record.daemonID, let current = try await reachable(record.detached, madeOn: record.connection) else { return }
    guard sounds[key]?.exists(on: current, epoch: daemonEpoch) == true else { return }
    do throws(ClientError) {
      _ = try await exchange(Request(SoundDisposeRequest(sound: id, now: now)), on: current)
    } catch {
      if case .refused(let refusal) = error, refusal.code == .unknownSound { return }
      throw error
    }
  }

  /// The `SystemSound` went away: dispose of it gently (what plays finishes) unless it is detached.
  func releaseSound(_ key: Int) async {
    guard let record = sounds[key] else { return }
    if !record.detached && !record.disposed { try? await disposeSound(key, now: false) }
    sounds[key] = nil
  }

  // MARK: - Either

  /// The object's daemon id and the connection it is valid on, making it (again) when the daemon
  /// does not have it. Tasks that ask while it is being made wait for that creation.
  func handle<Record: DaemonObjectRecord>(_ key: Int, of _: Record.Type) async throws(ClientError) -> (
    id: UInt64, connection: Connection
  ) {
    for _ in 0..<3 {
      let current = try await connected()
      guard let record = Record.record(key, in: self) else { throw Record.gone(key) }
      if record.exists(on: current, epoch: daemonEpoch), let id = record.daemonID { return (id, current) }
      if !record.canBeMade { throw Record.gone(key) }
      if record.creationWaiters != nil {
        let result = await withCheckedContinuation { continuation in
          if Record.record(key, in: self)?.creationWaiters != nil {
            Record.update(key, in: self) { $0.creationWaiters?.append(continuation) }
          } else {
            continuation.resume(returning: .failure(Record.gone(key)))
          }
        }
        return try result.get()
      }
      Record.update(key, in: self) { $0.creationWaiters = [] }
      var result: Result<(UInt64, Connection), ClientError>? = nil
      do throws(ClientError) {
        if let id = try await Record.create(key, from: record, on: current, in: self) { result = .success((id, current)) }
      } catch {
        result = .failure(error)
      }
      let waiters = Record.record(key, in: self)?.creationWaiters ?? []
      Record.update(key, in: self) { $0.creationWaiters = nil }
      guard let result else {
        // Not written (the connection had just ended): try on a new one.
        for waiter in waiters { waiter.resume(returning: .failure(.disconnected(socketPath: socketPath))) }
        continue
      }
      for waiter in waiters { waiter.resume(returning: result) }
      return try result.get()
    }
    throw .disconnected(socketPath: socketPath)
  }
}

extension PlayerRecord {
  static func create(_ key: Int, from record: PlayerRecord, on current: Connection, in client: isolated CueClient)
    async throws(ClientError) -> UInt64?
  {
    guard let reply = try await client.exchange(Request(PlayerCreateRequest(record.creation)), on: current) else { return nil }
    let created = try PlayerCreateReply.read(reply)
    let id = created.player
    guard client.players[key] != nil else {
      // Destroyed while it was being made: do not leave it behind.
      _ = try? await client.exchange(Request(PlayerDestroyRequest(player: id)), on: current)
      throw gone(key)
    }
    if let old = client.players[key]?.daemonID, client.playerKeys[old] == key { client.playerKeys[old] = nil }
    client.players[key]?.made(id, on: current, epoch: client.daemonEpoch)
    client.players[key]?.remember(created.properties)
    client.playerKeys[id] = key
    return id
  }
}

extension SoundRecord {
  static func create(_ key: Int, from record: SoundRecord, on current: Connection, in client: isolated CueClient)
    async throws(ClientError) -> UInt64?
  {
    guard let reply = try await client.exchange(Request(SoundCreateRequest(record.source, detached: record.detached)), on: current) else {
      return nil
    }
    let id = try SoundCreateReply.read(reply).sound
    client.sounds[key]?.made(id, on: current, epoch: client.daemonEpoch)
    client.sounds[key]?.completionConnection = nil
    return id
  }
}
