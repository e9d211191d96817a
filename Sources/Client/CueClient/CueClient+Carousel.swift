import CueProtocol

extension CueClient {
  /// Sends a carousel message fire-and-forget: writes its line and returns, waiting for no reply.
  ///
  /// The line goes out without an `id` whatever `message.id` says, so the daemon never answers
  /// it (an id here could be mistaken for one of this client's own requests). What cued made of
  /// it arrives, if at all, as a `paging` event to `events(EventFilter(kinds: [.paging]))`.
  ///
  /// Connects (or reconnects after a loss, with the usual backoff) as the other calls do; a
  /// write that fails never reached the daemon, so it is tried once more on a fresh connection.
  /// Lines written on one connection reach the daemon in the order they were posted; a caller
  /// that posts from several tasks at once has to order them itself.
  ///
  /// Throws `.unreachable` when no daemon answers, `.disconnected` when the line could not be
  /// written on two connections in a row.
  public func post(_ message: CarouselMessage) async throws(ClientError) {
    var message = message
    message.id = nil
    let line = message.line
    for _ in 0..<2 {
      let connection = try await connected()
      guard connection.isOpen else { continue }
      do {
        try connection.write(line)
        return
      } catch {
        // As in `exchange`: the daemon never saw the line; drop this connection and go again.
        connection.shutdown()
      }
    }
    throw .disconnected(socketPath: socketPath)
  }
}
