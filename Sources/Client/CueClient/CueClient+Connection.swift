import CuePosix
import CueProtocol

#if canImport(Glibc)
import Glibc
#endif

// The client's connection: made on first use, adopted, retired and made again (with the events it
// was subscribed to) when a watched daemon restarts; and what arrives on it, routed to the waiting
// request, a completion handler or the event streams. Part of `CueClient` (CueClient.swift).
extension CueClient {
  // MARK: - Connecting

  /// The connection in use, connecting first when there is none (one attempt at a time).
  func connected() async throws(ClientError) -> Connection {
    if let connection {
      if connection.isOpen { return connection }
      retire(connection)
    }
    if connectWaiters != nil {
      let result = await withCheckedContinuation { connectWaiters?.append($0) }
      return try result.get()
    }
    connectWaiters = []
    // In a task of its own, so that a caller's cancellation does not cut the attempts of the others waiting.
    let result = await Task { await self.establish() }.value
    let waiters = connectWaiters ?? []
    connectWaiters = nil
    for waiter in waiters { waiter.resume(returning: result) }
    return try result.get()
  }

  /// Delays between connection attempts after a loss: about 2.5 s in all.
  static let reconnectDelaysMilliseconds = [50, 100, 200, 400, 800, 1000]

  func establish() async -> Result<Connection, ClientError> {
    let isReconnection = everConnected
    var delays = isReconnection ? Self.reconnectDelaysMilliseconds[...] : []
    while true {
      do throws(ClientError) {
        let made = try Connection(socketPath: socketPath, serial: connectionSerial + 1)
        connectionSerial += 1
        adopt(made)
        if isReconnection {
          // The subscription was the old connection's: send it again before anything else.
          try await updateSubscription(connecting: false)
          broadcast(.connection(.reconnected, restarted: made.daemonPID != nil && daemonChanged))
        }
        return .success(made)
      } catch {
        guard let delay = delays.popFirst() else { return .failure(error) }
        try? await Task.sleep(for: .milliseconds(delay))
      }
    }
  }

  /// Takes `made` into use: starts the task that consumes its reader's lines.
  func adopt(_ made: Connection) {
    daemonChanged = everConnected && made.daemonPID != daemonPID
    if daemonChanged || made.daemonPID == nil {
      // A new daemon: nothing made on the old one exists there.
      daemonEpoch += 1
      playerKeys.removeAll()
    }
    daemonPID = made.daemonPID
    everConnected = true
    connection = made
    let stream = made.messages
    let serial = made.serial
    Task { [weak self] in
      for await inbound in stream {
        guard let self else { return }
        await self.receive(inbound, connection: serial)
      }
    }
  }

  /// Stops using a connection that has ended: tells the streams, and keeps them fed by reconnecting.
  func retire(_ old: Connection) {
    guard connection === old else { return }
    connection = nil
    subscribed = nil
    old.shutdown()
    broadcast(.connection(.disconnected))
    startReconnectingIfWatched()
  }

  func startReconnectingIfWatched() {
    guard !subscribers.isEmpty, !reconnecting else { return }
    reconnecting = true
    Task { [weak self] in
      while await self?.reconnectRound() == true {
        try? await Task.sleep(for: .milliseconds(500))
      }
    }
  }

  /// One round of background reconnection; true to go on after a pause.
  func reconnectRound() async -> Bool {
    if subscribers.isEmpty || connection?.isOpen == true {
      reconnecting = false
      return false
    }
    do throws(ClientError) {
      _ = try await connected()
      reconnecting = false
      return false
    } catch {
      if subscribers.isEmpty { reconnecting = false }
      return !subscribers.isEmpty
    }
  }

  // MARK: - Receiving

  /// One line (or the end) from the reader of connection `serial`, in order.
  func receive(_ inbound: Inbound, connection serial: Int) {
    switch inbound {
    case .message(.reply(let id, let result)):
      var key: Int? = nil
      if case .number(let n)? = id, pending[n]?.connection == serial {
        key = n
      } else if id == nil {
        // An id-less reply (parse-error, limit-reached) answers the oldest request not yet answered.
        key = pending.filter { $0.value.connection == serial }.keys.min()
      }
      guard let key, let request = pending.removeValue(forKey: key) else { return }
      if case .success(let value) = result, let hook = request.hook { run(hook, reply: value, connection: serial) }
      request.continuation.resume(returning: .reply(result))
    case .message(.event(let event, let object)):
      dispatch(CueEvent(event, object: object))
    case .closed(let error):
      connectionEnded(serial, error: error)
    }
  }

  func run(_ hook: ReplyHook, reply: JSONValue, connection serial: Int) {
    switch hook {
    case .soundCompletion(let handler):
      switch try? SoundPlayReply(reply: reply) {
      case .playing(let play)?: completions[play.voice] = (serial, handler)
      case .silent?, nil: handler(false)
      }
    }
  }

  /// Hands an event to the streams whose filter admits it, to its player, and to a completion handler.
  func dispatch(_ event: CueEvent) {
    for subscriber in subscribers.values where event.passes(subscriber.filter) {
      subscriber.continuation.yield(event)
    }
    if let player = event.player, let key = playerKeys[player], let record = players[key] {
      record.continuation.yield(event)
      if case .finished(let finished)? = event.daemonEvent, let waiters = finishWaiters.removeValue(forKey: key) {
        for waiter in waiters {
          waiter.continuation.yield(.success(finished.successfully))
          waiter.continuation.finish()
        }
      }
    }
    if case .completion(let completion)? = event.daemonEvent, let voice = completion.voice,
      let entry = completions.removeValue(forKey: voice)
    {
      entry.handler(completion.played)
    }
  }

  /// Sends a client-side event to every stream.
  func broadcast(_ event: CueEvent) {
    for subscriber in subscribers.values { subscriber.continuation.yield(event) }
  }

  /// The reader of connection `serial` stopped: what waited on it fails.
  func connectionEnded(_ serial: Int, error: ClientError) {
    for (id, request) in pending where request.connection == serial {
      pending[id] = nil
      request.continuation.resume(returning: .failed(error))
    }
    for (voice, entry) in completions where entry.connection == serial {
      completions[voice] = nil
      entry.handler(false)
    }
    for (key, waiters) in finishWaiters {
      let (lost, kept) = (waiters.filter { $0.connection == serial }, waiters.filter { $0.connection != serial })
      finishWaiters[key] = kept.isEmpty ? nil : kept
      for waiter in lost {
        waiter.continuation.yield(.failure(error))
        waiter.continuation.finish()
      }
    }
    if let connection, connection.serial == serial { retire(connection) }
  }
}
