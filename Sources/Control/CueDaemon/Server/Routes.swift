import CueProtocol

/// What a handler gets besides its request: the connection that sent it, and where a deferred reply goes.
struct RequestContext {
  /// Where a reply that comes later goes (`EventRouter.reply(to:)`).
  let waiter: Waiter
  let connection: ClientConnection

  /// When the request's last byte arrived (for trigger latency).
  var arrival: UInt64 { connection.lastReceived }
  /// The connection's `hello` name, if it gave one.
  var clientName: String? { connection.name }
}

/// An object of the daemon that carries out the ops of one `OpOwner`.
protocol OpHandler: AnyObject {
  /// Registers one handler for each op whose owner this object is.
  func register(_ routes: inout Routes)
}

/// The handler of every op, each registered by the op's owner, as a router holds its routes:
/// `routes.on(PlayerGetRequest.self) { request, context in … }` returns the op's `Reply` (the
/// compiler checks it is that type), or nil when the reply comes later, to `context.waiter`.
struct Routes {
  private var handlers: [Op: any Route] = [:]
  /// The owner registering now: it may register its own ops only.
  private var owner: OpOwner

  /// The routes of every owner, `object(owner)` being the object that carries out the ops of `owner`.
  /// Traps when an op has no handler, or a handler is registered by another owner than its op's:
  /// a daemon that cannot answer one of the ops it lists in `hello` does not start.
  init(_ object: (OpOwner) -> any OpHandler) {
    owner = .daemon
    for owner in OpOwner.allCases {
      self.owner = owner
      object(owner).register(&self)
    }
    let missing = Op.allCases.filter { handlers[$0] == nil }
    precondition(missing.isEmpty, "no handler for the ops \(missing); register one in the owner the op names")
  }

  /// Registers the handler of `R`'s op.
  mutating func on<R: RequestFields>(_ type: R.Type, _ handle: @escaping (R, RequestContext) throws(ProtocolError) -> R.Reply?) {
    precondition(R.op.owner == owner, "\(R.op) is an op of \(R.op.owner), registered by \(owner)")
    precondition(handlers[R.op] == nil, "\(R.op) has two handlers")
    handlers[R.op] = TypedRoute(handle: handle)
  }

  /// The ops that have a handler.
  var ops: Set<Op> { Set(handlers.keys) }

  /// Carries out `request`: its reply, or nil when the reply comes later (to `context.waiter`).
  func perform(_ request: Request, _ context: RequestContext) throws(ProtocolError) -> ReplyBody? {
    guard let handler = handlers[request.op] else {
      throw ProtocolError(.internalError, "this daemon has no handler for \(request.op)")
    }
    return try handler.perform(request.body, context)
  }
}

/// One op's handler, behind the op's name.
private protocol Route {
  func perform(_ request: any RequestFields, _ context: RequestContext) throws(ProtocolError) -> ReplyBody?
}

private struct TypedRoute<R: RequestFields>: Route {
  let handle: (R, RequestContext) throws(ProtocolError) -> R.Reply?

  func perform(_ request: any RequestFields, _ context: RequestContext) throws(ProtocolError) -> ReplyBody? {
    // The decoder made `request` with the type that declares the op this route was found by.
    guard let request = request as? R else { throw ProtocolError(.internalError, "\(R.op)'s handler was given another op's request") }
    return try handle(request, context).map { ReplyBody($0) }
  }
}

extension EventRouter {
  /// Sends a deferred reply of any op's type.
  func reply(to waiter: Waiter, _ reply: some ReplyFields) {
    self.reply(to: waiter, ReplyBody(reply))
  }
}
