/// One D-Bus message: the fixed header, the header fields, and the body's values.
///
/// `encoded()` writes and `init(decoding:)` reads the wire format (little-endian only: a peer on the
/// same machine writes the machine's order); neither touches a descriptor. `frameLength(of:)` says
/// how long a message is from its first 16 bytes, so a reader knows when it has a whole one.
public struct DBusMessage: Sendable, Equatable {
  public enum Kind: UInt8, Sendable {
    case methodCall = 1, methodReturn = 2, error = 3, signal = 4
  }

  /// Header flag: the caller wants no reply.
  public static let noReplyExpected: UInt8 = 0x1

  public var kind: Kind
  public var flags: UInt8 = 0
  /// Set by the connection when it sends the message; never 0 on the wire.
  public var serial: UInt32 = 0
  public var path: String? = nil
  public var interface: String? = nil
  public var member: String? = nil
  public var errorName: String? = nil
  public var replySerial: UInt32? = nil
  public var destination: String? = nil
  public var sender: String? = nil
  public var body: [DBusValue] = []

  public init(
    kind: Kind, path: String? = nil, interface: String? = nil, member: String? = nil, errorName: String? = nil,
    replySerial: UInt32? = nil, destination: String? = nil, body: [DBusValue] = []
  ) {
    self.kind = kind
    self.path = path
    self.interface = interface
    self.member = member
    self.errorName = errorName
    self.replySerial = replySerial
    self.destination = destination
    self.body = body
  }

  /// A method call.
  public static func methodCall(
    destination: String?, path: String, interface: String?, member: String, body: [DBusValue] = []
  ) -> DBusMessage {
    DBusMessage(kind: .methodCall, path: path, interface: interface, member: member, destination: destination, body: body)
  }

  /// The reply to `call`, addressed to its sender.
  public static func methodReturn(to call: DBusMessage, body: [DBusValue] = []) -> DBusMessage {
    DBusMessage(kind: .methodReturn, replySerial: call.serial, destination: call.sender, body: body)
  }

  /// An error reply to `call`: `name` (`org.freedesktop.DBus.Error.AccessDenied`) and a message for people.
  public static func errorReply(to call: DBusMessage, name: String, message: String) -> DBusMessage {
    DBusMessage(kind: .error, errorName: name, replySerial: call.serial, destination: call.sender, body: [.string(message)])
  }

  /// The body's signature, from its values.
  public var signature: String { body.map(\.type.signature).joined() }

  /// An error reply's first argument, the text for people (empty when there is none).
  public var errorMessage: String {
    if case .string(let text)? = body.first { return text }
    return ""
  }

  // Header field codes (the specification's table).
  private enum Field: UInt8 {
    case path = 1, interface, member, errorName, replySerial, destination, sender, signature, unixFDs
  }

  /// The message in the wire format.
  public func encoded() -> [UInt8] {
    var fields: [DBusValue] = []
    func add(_ code: Field, _ value: DBusValue?) {
      if let value { fields.append(.structure([.byte(code.rawValue), .variant(value)])) }
    }
    add(.path, path.map(DBusValue.objectPath))
    add(.interface, interface.map(DBusValue.string))
    add(.member, member.map(DBusValue.string))
    add(.errorName, errorName.map(DBusValue.string))
    add(.replySerial, replySerial.map(DBusValue.uint32))
    add(.destination, destination.map(DBusValue.string))
    add(.sender, sender.map(DBusValue.string))
    if !body.isEmpty { add(.signature, .signature(signature)) }

    var bodyWriter = DBusWriter()  // the body starts on an 8-byte boundary, so its own offsets align the same
    for value in body { bodyWriter.write(value) }
    var writer = DBusWriter()
    writer.write(.byte(UInt8(ascii: "l")))
    writer.write(.byte(kind.rawValue))
    writer.write(.byte(flags))
    writer.write(.byte(1))
    writer.write(.uint32(UInt32(bodyWriter.bytes.count)))
    writer.write(.uint32(serial))
    writer.write(.array(element: .structure([.byte, .variant]), fields))
    writer.pad(to: 8)
    return writer.bytes + bodyWriter.bytes
  }

  /// The largest message the specification allows (128 MiB).
  public static let maximumLength = 1 << 27

  /// How many bytes the message starting at `bytes` takes in all, once its first 16 bytes are
  /// there (nil before). Throws for a big-endian or oversized message.
  public static func frameLength(of bytes: ArraySlice<UInt8>) throws(DBusError) -> Int? {
    guard bytes.count >= 16 else { return nil }
    let start = bytes.startIndex
    guard bytes[start] == UInt8(ascii: "l") else {
      throw DBusError.malformed("the message's byte order is '\(bytes[start])', not little-endian 'l'")
    }
    func uint32(at offset: Int) -> Int {
      (0..<4).reduce(0) { $0 | Int(bytes[start + offset + $1]) << (8 * $1) }
    }
    let fieldsLength = uint32(at: 12)
    let bodyLength = uint32(at: 4)
    let total = (16 + fieldsLength + 7) / 8 * 8 + bodyLength
    guard total <= maximumLength else { throw DBusError.malformed("a message of \(total) bytes (at most 128 MiB)") }
    return total
  }

  /// Reads one whole message (exactly `frameLength(of:)` bytes).
  public init(decoding bytes: [UInt8]) throws(DBusError) {
    guard let length = try Self.frameLength(of: bytes[...]), length == bytes.count else {
      throw DBusError.malformed("\(bytes.count) bytes are not one whole message")
    }
    var reader = DBusReader(bytes, offset: 1)
    guard case .byte(let rawKind) = try reader.read(.byte), case .byte(let flags) = try reader.read(.byte),
      case .byte(let version) = try reader.read(.byte), case .uint32(let bodyLength) = try reader.read(.uint32),
      case .uint32(let serial) = try reader.read(.uint32),
      case .array(_, let fields) = try reader.read(.array(.structure([.byte, .variant])))
    else { preconditionFailure("DBusReader reads the type it is asked for") }
    guard version == 1 else { throw DBusError.malformed("protocol version \(version), not 1") }
    guard serial != 0 else { throw DBusError.malformed("a message with serial 0") }
    // Unknown kinds are to be ignored by the receiver; this one reads them as signals nobody matches.
    self.init(kind: Kind(rawValue: rawKind) ?? .signal)
    self.flags = flags
    self.serial = serial
    var signature = ""
    for field in fields {
      guard case .structure(let pair) = field, case .byte(let code) = pair[0], case .variant(let value) = pair[1] else {
        preconditionFailure("a header field is a (yv) struct")
      }
      func expect<T>(_ wanted: DBusType, _ extract: (DBusValue) -> T?) throws(DBusError) -> T {
        guard value.type == wanted, let result = extract(value) else {
          throw DBusError.malformed("header field \(code) holds a '\(value.type.signature)', not '\(wanted.signature)'")
        }
        return result
      }
      switch Field(rawValue: code) {
      case .path: path = try expect(.objectPath) { if case .objectPath(let v) = $0 { v } else { nil } }
      case .interface: interface = try expect(.string, \.text)
      case .member: member = try expect(.string, \.text)
      case .errorName: errorName = try expect(.string, \.text)
      case .replySerial: replySerial = try expect(.uint32) { if case .uint32(let v) = $0 { v } else { nil } }
      case .destination: destination = try expect(.string, \.text)
      case .sender: sender = try expect(.string, \.text)
      case .signature: signature = try expect(.signature) { if case .signature(let v) = $0 { v } else { nil } }
      case .unixFDs: throw DBusError.malformed("a message passes file descriptors, which this client does not take")
      case nil: break  // unknown fields are ignored, as the specification says
      }
    }
    switch kind {
    case .methodCall where path == nil || member == nil: throw DBusError.malformed("a method call without a path or member")
    case .methodReturn where replySerial == nil: throw DBusError.malformed("a method return without a reply serial")
    case .error where errorName == nil || replySerial == nil: throw DBusError.malformed("an error without a name or reply serial")
    case .signal where path == nil || interface == nil || member == nil:
      throw DBusError.malformed("a signal without a path, interface or member")
    default: break
    }
    try reader.skipPadding(to: 8)
    guard bytes.count - reader.offset == Int(bodyLength) else { preconditionFailure("frameLength counted the body") }
    // The body's offsets count from the message start, which is also 8-aligned.
    for type in try DBusType.parse(signature: signature) { body.append(try reader.read(type)) }
    guard reader.offset == bytes.count else { throw DBusError.malformed("the body is longer than its signature says") }
  }
}

extension DBusValue {
  /// The text of a string (not of an object path or signature).
  var text: String? {
    if case .string(let text) = self { return text }
    return nil
  }
}
