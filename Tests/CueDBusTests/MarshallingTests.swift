@testable import CueDBus
import Testing

/// Bytes written as hex, spaces ignored.
func hex(_ text: String) -> [UInt8] {
  let digits = Array(text.filter { !$0.isWhitespace })
  return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(digits[$0...$0 + 1]), radix: 16)! }
}

/// Writes `values` as a message body (which starts 8-aligned, so offsets count from 0).
func marshal(_ values: [DBusValue]) -> [UInt8] {
  var writer = DBusWriter()
  for value in values { writer.write(value) }
  return writer.bytes
}

func unmarshal(_ bytes: [UInt8], signature: String) throws(DBusError) -> [DBusValue] {
  var reader = DBusReader(bytes)
  var values: [DBusValue] = []
  for type in try DBusType.parse(signature: signature) { values.append(try reader.read(type)) }
  guard reader.offset == bytes.count else { throw .malformed("\(bytes.count - reader.offset) bytes left over") }
  return values
}

@Suite("CueDBus: the wire format")
struct MarshallingTests {
  /// Values and their bytes, worked out from the specification's alignment and encoding rules.
  static let table: [(values: [DBusValue], signature: String, bytes: String)] = [
    ([.byte(0x2a)], "y", "2a"),
    ([.boolean(true)], "b", "01000000"),
    ([.int16(-2)], "n", "feff"),
    ([.uint32(0x0102_0304)], "u", "04030201"),
    ([.int32(-1)], "i", "ffffffff"),
    ([.uint64(1234)], "t", "d204000000000000"),
    ([.int64(-200_000)], "x", "c0f2fcffffffffff"),
    ([.double(1.5)], "d", "000000000000f83f"),
    // Length, bytes, NUL.
    ([.string("abc")], "s", "03000000 61626300"),
    ([.string("")], "s", "00000000 00"),
    ([.objectPath("/a")], "o", "02000000 2f6100"),
    // A signature's length is one byte.
    ([.signature("tu")], "g", "02 747500"),
    // A byte, then a uint32 on the next 4-byte boundary.
    ([.byte(1), .uint32(2)], "yu", "01 000000 02000000"),
    // A byte, then a uint64 on the next 8-byte boundary.
    ([.byte(1), .uint64(2)], "yt", "01 00000000000000 0200000000000000"),
    // A variant: its signature, then the value on its own boundary.
    ([.variant(.uint32(7))], "v", "01 7500 00 07000000"),
    ([.variant(.int64(200_000))], "v", "01 7800 0000000000 400d030000000000"),
    // A struct starts on an 8-byte boundary.
    ([.byte(1), .structure([.uint32(2), .byte(3)])], "y(uy)", "01 00000000000000 02000000 03"),
    // An array's length counts from the first element, after the padding to it; an empty one still pads.
    ([.array(element: .uint64, [])], "at", "00000000 00000000"),
    ([.array(element: .uint64, [.uint64(1)])], "at", "08000000 00000000 0100000000000000"),
    ([.array(element: .string, [.string("a"), .string("bc")])], "as", "0f000000 01000000 6100 0000 02000000 626300"),
    (
      [.array(element: .dictEntry(key: .string, value: .variant), [.dictEntry(key: .string("k"), value: .variant(.boolean(true)))])],
      "a{sv}", "10000000 00000000 01000000 6b00 01 6200 000000 01000000"
    ),
  ]

  @Test(arguments: table.indices)
  func valuesAreWrittenAsTheSpecificationSays(_ index: Int) throws {
    let (values, signature, bytes) = Self.table[index]
    #expect(values.map(\.type.signature).joined() == signature)
    #expect(marshal(values) == hex(bytes))
    #expect(try unmarshal(hex(bytes), signature: signature) == values)
  }

  @Test func signaturesParseIntoCompleteTypes() throws {
    #expect(try DBusType.parse(signature: "a(yv)") == [.array(.structure([.byte, .variant]))])
    #expect(try DBusType.parse(signature: "tu") == [.uint64, .uint32])
    #expect(try DBusType.parse(signature: "a{sv}as") == [.array(.dictEntry(key: .string, value: .variant)), .array(.string)])
    #expect(try DBusType.parse(signature: "") == [])
  }

  @Test(arguments: ["(", "()", "a", "{sv}", "a{vs}", "a{s}", "a{svs}", "z", "(u", String(repeating: "a", count: 33) + "u"])
  func invalidSignaturesAreRefused(_ signature: String) {
    #expect(throws: DBusError.self) { try DBusType.parse(signature: signature) }
  }

  @Test(arguments: [
    ("01000000", "y", "one byte and three left over"),
    ("02000000", "b", "a boolean that is 2"),
    ("03000000 616263", "s", "a string without its NUL"),
    ("03000000 61006300", "s", "a string with a NUL inside"),
    ("02000000 c32800", "s", "invalid UTF-8"),
    ("ff000000 61626300", "s", "a length past the end"),
    ("01 ff000000", "yu", "non-zero padding"),
    ("01 7600 00", "v", "a variant of a variant with nothing in it"),
    ("02 757500 07000000", "v", "a variant signature of two types"),
    ("09000000 00000000 0100000000000000", "at", "an array length that ends inside an element"),
  ])
  func malformedBytesAreRefused(_ bytes: String, _ signature: String, _ what: String) {
    #expect(throws: DBusError.self, "\(what)") { try unmarshal(hex(bytes), signature: signature) }
  }

  @Test func variantsNestedPast64AreRefused() {
    var value = DBusValue.byte(1)
    for _ in 0..<65 { value = .variant(value) }
    #expect(throws: DBusError.malformed("variants nested deeper than 64")) { try unmarshal(marshal([value]), signature: "v") }
  }
}

@Suite("CueDBus: messages")
struct MessageTests {
  /// `dbus-send --print-reply --dest=org.freedesktop.RealtimeKit1 /org/freedesktop/RealtimeKit1
  /// org.freedesktop.RealtimeKit1.MakeThreadRealtime uint64:1234 uint32:20` as libdbus 1.14.10
  /// wrote it (captured on a socket that answered its AUTH EXTERNAL): the call RTKit gets.
  static let libdbusCall = hex(
    """
    6c010001 0c000000 01000000 a0000000
    01016f00 1d000000 2f6f72672f667265656465736b746f702f5265616c74696d654b697431 00 0000
    02017300 1c000000 6f72672e667265656465736b746f702e5265616c74696d654b697431 00 000000
    03017300 12000000 4d616b655468726561645265616c74696d65 00 0000000000
    06017300 1c000000 6f72672e667265656465736b746f702e5265616c74696d654b697431 00 000000
    08016700 027475 00
    d204000000000000 14000000
    """)

  static var makeThreadRealtime: DBusMessage {
    .methodCall(
      destination: RealtimeKit.busName, path: RealtimeKit.objectPath, interface: RealtimeKit.interface, member: "MakeThreadRealtime",
      body: [.uint64(1234), .uint32(20)])
  }

  @Test func aCallIsWrittenByteForByteAsLibdbusWritesIt() {
    var message = Self.makeThreadRealtime
    message.serial = 1
    #expect(message.encoded() == Self.libdbusCall)
  }

  @Test func libdbusCallIsRead() throws {
    #expect(try DBusMessage.frameLength(of: Self.libdbusCall[...]) == Self.libdbusCall.count)
    let message = try DBusMessage(decoding: Self.libdbusCall)
    var expected = Self.makeThreadRealtime
    expected.serial = 1
    #expect(message == expected)
    #expect(message.signature == "tu")
  }

  @Test func anErrorReplyRoundTrips() throws {
    var call = Self.makeThreadRealtime
    call.serial = 7
    call.sender = ":1.3"
    var error = DBusMessage.errorReply(to: call, name: "org.freedesktop.DBus.Error.AccessDenied", message: "no")
    error.serial = 9
    let decoded = try DBusMessage(decoding: error.encoded())
    #expect(decoded == error)
    #expect(decoded.kind == .error)
    #expect(decoded.replySerial == 7)
    #expect(decoded.destination == ":1.3")
    #expect(decoded.errorMessage == "no")
  }

  @Test func aMessageIsFramedFromItsFirst16Bytes() throws {
    let bytes = Self.libdbusCall
    #expect(try DBusMessage.frameLength(of: bytes[0..<15]) == nil)
    #expect(try DBusMessage.frameLength(of: bytes[0..<16]) == bytes.count)
    var bigEndian = bytes
    bigEndian[0] = UInt8(ascii: "B")
    #expect(throws: DBusError.self) { try DBusMessage.frameLength(of: bigEndian[...]) }
    // 128 MiB of body is past the limit.
    var huge = bytes
    huge[4...7] = [0, 0, 0, 8]
    #expect(throws: DBusError.self) { try DBusMessage.frameLength(of: huge[...]) }
  }

  @Test func incompleteOrInconsistentMessagesAreRefused() {
    var noMember = Self.makeThreadRealtime
    noMember.member = nil
    noMember.serial = 1
    #expect(throws: DBusError.malformed("a method call without a path or member")) { try DBusMessage(decoding: noMember.encoded()) }
    var zeroSerial = Self.libdbusCall
    zeroSerial[8] = 0
    #expect(throws: DBusError.malformed("a message with serial 0")) { try DBusMessage(decoding: zeroSerial) }
    // One body byte short of what the header says.
    #expect(throws: DBusError.self) { try DBusMessage(decoding: Array(Self.libdbusCall.dropLast())) }
  }

  @Test func addressesNameTheirSocketPath() throws {
    #expect(try DBusAddress.socketPath(of: "unix:path=/run/dbus/system_bus_socket") == "/run/dbus/system_bus_socket")
    #expect(try DBusAddress.socketPath(of: "tcp:host=x,port=1;unix:guid=ab,path=/tmp/a%20b") == "/tmp/a b")
    #expect(throws: DBusError.unsupportedAddress("unix:abstract=/tmp/x")) { try DBusAddress.socketPath(of: "unix:abstract=/tmp/x") }
    #expect(throws: DBusError.self) { try DBusAddress.socketPath(of: "unix:path=%zz") }
  }
}
