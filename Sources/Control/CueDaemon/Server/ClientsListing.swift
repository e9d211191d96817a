import CueProtocol

extension Daemon {
  /// `clients`: every connection, oldest first, with what it asked of the daemon.
  func clientsReply(asking: UInt64) -> ClientsReply {
    ClientsReply(
      clients: clients.connections.sorted { $0.serial < $1.serial }.map { connection in
        ClientsReply.Client(
          connection: connection.serial, name: connection.name, subscribed: connection.subscription != nil,
          meters: meterFeed.rate(of: connection.serial).map { ($0 * 1000).rounded() / 1000 }, asking: connection.serial == asking)
      })
  }
}
