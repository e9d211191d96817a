import CueProtocol

/// The daemon's side of requests: a line to its op's handler, and the handlers of the ops whose
/// owner is the daemon itself (`OpOwner.daemon`). The other owners register theirs in their own files.
extension Daemon: OpHandler {
  /// Decodes a line and carries it out: a request through `routes`, a carousel message through `Paging`.
  func handle(line: [UInt8], from client: ClientConnection) {
    client.traceReceived(line)
    switch RequestDecoder.decodeLine(line) {
    case .failure(let failure):
      client.send(.failure(id: failure.id, failure.error))
    case .success(.carousel(let message)):
      events.holding {
        let outcome = paging.handle(message, arrivedAt: client.lastReceived, client: client.name)
        // Fire-and-forget: a reply only when the message asked for one with an id.
        if let id = message.id { client.send(.success(id: id, ReplyBody(outcome))) }
      }
    case .success(.request(let envelope)):
      // Events a request causes (a device opening, a muted completion) go out after its reply.
      events.holding {
        do throws(ProtocolError) {
          let context = RequestContext(waiter: Waiter(client: client.serial, id: envelope.id), connection: client)
          if let reply = try routes.perform(envelope.request, context) {
            client.send(.success(id: envelope.id, reply))
          }
        } catch {
          client.send(.failure(id: envelope.id, error))
        }
      }
    }
  }

  func register(_ routes: inout Routes) {
    routes.on(HelloRequest.self) { [unowned self] request, context in
      if let name = request.client {
        logger.debug("client \(context.connection.serial) is \(name.prefix(64))")
        context.connection.name = String(name.prefix(128))
      }
      return HelloReply(capabilities: capabilities)
    }
    routes.on(PingRequest.self) { _, _ in PingReply() }
    routes.on(PlayRequest.self) { [unowned self] request, context throws(ProtocolError) in try play(request.parameters, context) }
    routes.on(PrepareRequest.self) { [unowned self] request, context throws(ProtocolError) in
      switch request.sound {
      case .event(let event):
        return try themeSounds.prepare(event: event, waiter: context.waiter)
      case .file(let file):
        let ownUser = context.connection.isOwnUser
        return fileSounds.prepare(
          path: try files.playable(file, ownUser: ownUser), waiter: context.waiter, confined: !ownUser, failure: PathDecoder.failure)
      }
    }
    routes.on(StopRequest.self) { [unowned self] request, _ throws(ProtocolError) in
      let fadeFrames = request.fadeSeconds.map { Int($0 * Double(configuration.sampleRate)) }
      return StopReply(stopped: try voices.stop(request.target, fadeFrames: fadeFrames, catalog: catalog))
    }
    routes.on(ListRequest.self) { [unowned self] _, _ in ListReply(cues: catalog.listing()) }
    routes.on(StatusRequest.self) { [unowned self] _, _ in status.reply }
    routes.on(VoicesRequest.self) { [unowned self] _, _ in voicesReply() }
    routes.on(SubscribeRequest.self) { request, context in
      context.connection.subscription = request.filter
      return SubscribeReply(filter: request.filter)
    }
    routes.on(MetersRequest.self) { [unowned self] r, context in MetersReply(rate: meterFeed.set(client: context.connection.serial, rate: r.rate)) }
    routes.on(ClientsRequest.self) { [unowned self] _, context in clientsReply(asking: context.connection.serial) }
    routes.on(UnsubscribeRequest.self) { _, context in
      context.connection.subscription = nil
      return EmptyReply()
    }
  }

  /// `play`: a cue through the gate, a sound-theme event through `ThemeSounds`, or a file through
  /// `FileSounds` (nil: its file is decoding).
  private func play(_ p: PlayParameters, _ context: RequestContext) throws(ProtocolError) -> PlayReply? {
    if let file = p.file {
      let ownUser = context.connection.isOwnUser
      let path = try files.playable(file, ownUser: ownUser)
      // No `[cues.NAME]` table names a path: the default group and rules, as an event without a table.
      return try fileSounds.play(
        p, path: path, rule: path, waiter: context.waiter, client: context.clientName, arrival: context.arrival,
        confined: !ownUser, failure: PathDecoder.failure)
    }
    guard let event = p.event else {
      return try gate.playOneShot(
        p, named: p.cue, owner: context.waiter.client, client: context.clientName, arrival: context.arrival, events: events,
        catalog: catalog)
    }
    do {
      return try themeSounds.play(p, event: event, waiter: context.waiter, client: context.clientName, arrival: context.arrival)
    } catch {
      if error.code == .unknownEvent { rules.count(.unknown) }
      throw error
    }
  }

  /// `voices`: what sounds now, oldest first.
  private func voicesReply() -> VoicesReply {
    let now = clock.nanoseconds()
    return VoicesReply(
      voices: voices.voices.sorted { $0.key.rawValue < $1.key.rawValue }.map { id, voice in
        VoicesReply.Voice(
          voice: id.rawValue, cue: voice.cue.name, origin: voice.origin, loops: voice.loops.numberOfLoops,
          seconds: Double(now - voice.startedAt) / 1e9, stopping: voice.stopping, mix: self.voices.mix(of: voice, client: clients.connection(voice.owner)?.name))
      })
  }
}
