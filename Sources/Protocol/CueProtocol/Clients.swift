/// The `clients` op: the connections the daemon serves now.

/// The ops about connections, in the order `hello` lists them.
let clientOps: [any RequestFields.Type] = [ClientsRequest.self]

/// `clients`: every connection open now, the asking one included.
public struct ClientsRequest: FieldlessRequest {
  public static let op = Op("clients", owner: .daemon)
  public typealias Reply = ClientsReply
  public init() {}
}

/// `clients`: the connections, oldest first.
public struct ClientsReply: ReplyFields {
  public struct Client: Sendable, Equatable {
    /// The daemon's number for the connection (1 for the first since it started).
    public var connection: UInt64
    /// The `client` name it gave in `hello`; nil when it gave none.
    public var name: String?
    /// It has a subscription (`subscribe`).
    public var subscribed: Bool
    /// The meter events a second it asked for (`meters`); nil when none.
    public var meters: Double?
    /// It is the connection that asked.
    public var asking: Bool

    public init(connection: UInt64, name: String? = nil, subscribed: Bool = false, meters: Double? = nil, asking: Bool = false) {
      (self.connection, self.name, self.subscribed, self.meters, self.asking) = (connection, name, subscribed, meters, asking)
    }

    var json: JSONValue {
      var members: [(String, JSONValue)] = [("connection", .id(connection))]
      if let name { members.append(("name", .string(name))) }
      members.append(("subscribed", .bool(subscribed)))
      if let meters { members.append(("meters", .number(meters))) }
      members.append(("asking", .bool(asking)))
      return .object(members)
    }

    init(json: JSONValue) throws(ProtocolError) {
      var fields = FieldReader(json)
      let what = "a client of the clients reply"
      connection = try required(fields.id("connection"), "connection", in: what)
      name = try fields.string("name")
      subscribed = try fields.bool("subscribed") ?? false
      meters = try fields.double("meters")
      asking = try fields.bool("asking") ?? false
    }
  }

  public var clients: [Client]

  public init(clients: [Client]) { self.clients = clients }

  public var fields: [(String, JSONValue)] { [("clients", .array(clients.map(\.json)))] }

  public init(reply: JSONValue) throws(ProtocolError) {
    var fields = FieldReader(reply)
    guard let list = fields.take("clients")?.arrayValue else {
      throw ProtocolError(.invalidRequest, "the clients reply has no \"clients\" array")
    }
    var clients: [Client] = []
    for value in list { clients.append(try Client(json: value)) }
    self.clients = clients
  }
}
