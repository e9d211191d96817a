import CueProtocol

extension CueClient {
  /// Sends the request of any op and returns the reply as that op's `Reply` type:
  /// `try await client.send(PlayerGetRequest(player: 3))` is a `PlayerProperties`.
  ///
  /// Errors as `send(_:)`; a reply that cannot be read as the op's type throws `.protocolViolation`.
  @discardableResult
  public func send<R: RequestFields>(_ request: R) async throws(ClientError) -> R.Reply {
    try await send(Request(request), as: R.Reply.self)
  }
}

extension CueConnection {
  /// Sends the request of any op and returns the reply as that op's `Reply` type.
  @discardableResult
  public func send<R: RequestFields>(_ request: R, timeoutSeconds: Double = 10) throws(ClientError) -> R.Reply {
    try send(Request(request), as: R.Reply.self, timeoutSeconds: timeoutSeconds)
  }
}
