/// Who in the daemon carries out an op.
///
/// This module cannot name the daemon's types, so an op names its owner by this tag; the daemon
/// maps each tag to the one object that registers a handler for each op of that owner, and checks
/// at start-up that every op has its handler, from its owner.
public enum OpOwner: String, CaseIterable, Sendable {
  /// The daemon itself: the connection (`hello`, `subscribe`), one-shot voices (`play`, `stop`, `voices`), `list`, `status`.
  case daemon
  /// `player.*`: AVAudioPlayer's model.
  case players
  /// `sound.*`: System Sound Services' model.
  case sounds
  /// `system`, `group`: groups (buses), the system group being the system-sound switch.
  case groups
  /// `level`: the level, client ceilings and quiet hours.
  case levels
  /// `reload`.
  case reloader
}

/// One op of the protocol: its wire name (`rawValue`, the `op` string) and its owner.
///
/// Each op is declared once, by the `RequestFields` type of its request (`static let op`); the
/// list of ops, `hello`'s capabilities, request decoding and reply decoding all derive from
/// `Op.declarations`.
public struct Op: Hashable, Sendable, CaseIterable, CustomStringConvertible {
  /// The `op` string on the wire.
  public let rawValue: String
  /// Who in the daemon carries it out.
  public let owner: OpOwner

  /// Declares an op; used once per op, by its request type.
  public init(_ rawValue: String, owner: OpOwner) {
    self.rawValue = rawValue
    self.owner = owner
  }

  /// The op named `rawValue`, or nil when this protocol version has none of that name.
  public init?(rawValue: String) {
    guard let declaration = Self.byName[rawValue] else { return nil }
    self = declaration.op
  }

  /// Every op, in the order `hello` lists them.
  public static var allCases: [Op] { declarations.map { $0.op } }

  /// The request type that declares this op (and through it, its fields and its reply type).
  public var declaration: any RequestFields.Type {
    // Every `Op` value comes from a declaration in the table (OpTests checks that each is listed).
    Self.byName[rawValue]!
  }

  public var description: String { rawValue }

  /// The table of ops: every request type, family by family, in the order `hello` lists them.
  /// A new op is listed in its family's table, next to its declaration.
  public static let declarations: [any RequestFields.Type] = coreOps + playerOps + soundOps + levelOps + meterOps + clientOps

  private static let byName: [String: any RequestFields.Type] = Dictionary(
    declarations.map { ($0.op.rawValue, $0) }, uniquingKeysWith: { first, _ in first })

  /// The ops of one family (`player.`, `sound.`), in declaration order, for error messages.
  static func names(withPrefix prefix: String) -> [String] {
    allCases.map(\.rawValue).filter { $0.hasPrefix(prefix) }
  }

  /// The `unknown-op` error for `name`: a name of the player or sound family is told that
  /// family's ops, any other name all of them.
  static func unknown(_ name: String) -> ProtocolError {
    for family in ["player", "sound"] where name.hasPrefix(family + ".") {
      return ProtocolError(
        .unknownOp, "unknown op \"\(name.prefix(64))\"; the \(family) ops are \(names(withPrefix: family + ".").joined(separator: ", "))")
    }
    return ProtocolError(.unknownOp, "unknown op \"\(name.prefix(64))\"; this daemon knows: \(Request.knownOps.joined(separator: ", "))")
  }
}

/// The request of one op, and the declaration of that op: its name and owner (`op`), how its
/// fields are read and written, and the type of its reply.
///
/// ```swift
/// public struct PlayerGetRequest: PlayerTargeted {
///   public static let op = Op("player.get", owner: .players)
///   public typealias Reply = PlayerProperties
///   public var player: UInt64
///   public init(player: UInt64) { self.player = player }
/// }
/// ```
///
/// A client sends one with `send(_:)` and gets its `Reply`; the daemon's owner registers a handler
/// that takes it and returns its `Reply` (or nil, to answer later).
public protocol RequestFields: Sendable, Equatable {
  /// What a successful reply to this op carries.
  associatedtype Reply: ReplyFields
  /// The op's wire name and owner.
  static var op: Op { get }
  /// The declarations of the request's fields, in the order they are read and checked (and the
  /// field table lists them): the reader refuses any other key.
  static var fieldSpecs: [FieldSpec] { get }
  /// The rules across its fields, for the docs.
  static var fieldRules: [FieldRule] { get }
  /// The request's fields after `"id"` and `"op"`, in the order a client writes them.
  var fields: [(String, JSONValue)] { get }
  /// Reads the request from its object; the decoder refuses any field this leaves unread.
  init(fields: inout FieldReader) throws(ProtocolError)
}

extension RequestFields {
  /// The reply to this op, read from a reply object.
  static func readReply(_ reply: JSONValue) throws(ProtocolError) -> ReplyBody {
    ReplyBody(try Reply(reply: reply))
  }

  func isEqual(to other: any RequestFields) -> Bool {
    self == (other as? Self)
  }
}

/// An op whose request has no fields (`ping`, `list`, `status`, …).
public protocol FieldlessRequest: RequestFields {
  init()
}

extension FieldlessRequest {
  public init(fields: inout FieldReader) throws(ProtocolError) { self.init() }
  public var fields: [(String, JSONValue)] { [] }
}
