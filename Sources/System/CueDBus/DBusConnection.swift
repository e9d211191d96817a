import CuePosix

/// A blocking D-Bus client connection over a Unix socket, for short exchanges at start-up.
///
/// `init` connects, authenticates with `AUTH EXTERNAL` (the kernel vouches for the uid, so no
/// secret is sent), and says `Hello` to get a unique name. Every blocking step waits with poll(2)
/// no later than `deadline` (monotonic nanoseconds), so a hung bus costs at most the time left, and
/// then throws `.timedOut`. Messages that arrive while a reply is awaited are kept for `receive()`.
/// Not thread-safe: one thread uses a connection.
public final class DBusConnection {
  public static let busName = "org.freedesktop.DBus"
  public static let busPath = "/org/freedesktop/DBus"

  private let socket: FileDescriptor
  private var inbound: [UInt8] = []
  private var queued: [DBusMessage] = []
  private var nextSerial: UInt32 = 1
  /// Blocking calls give up at this `MonotonicClock.nanoseconds()`.
  public var deadline: UInt64
  /// The name the bus gave this connection (`:1.42`).
  public private(set) var uniqueName = ""

  /// Connects to the bus at `address` (a D-Bus address, `unix:path=/run/dbus/system_bus_socket`)
  /// and registers with it, all before `deadline`.
  public init(address: String, deadline: UInt64) throws(DBusError) {
    let path = try DBusAddress.socketPath(of: address)
    do {
      socket = try UnixSocket.connect(path: path, nonblocking: true)
    } catch {
      throw .system(error)
    }
    self.deadline = deadline
    // From here a throw releases self, and deinit closes the socket.
    try authenticate()
    let reply = try call(.methodCall(destination: Self.busName, path: Self.busPath, interface: Self.busName, member: "Hello"))
    guard case .string(let name)? = reply.first else { throw .unexpectedReply("Hello returned '\(reply)'") }
    uniqueName = name
  }

  deinit { socket.close() }

  /// `AUTH EXTERNAL` with the uid as hex-encoded decimal digits, then `BEGIN` (no Unix fd passing
  /// is negotiated). The leading NUL byte is the credentials byte the protocol starts with.
  private func authenticate() throws(DBusError) {
    let uid = Array(String(ProcessInfo.userID).utf8).map { byte in
      let hex = String(byte, radix: 16)
      return hex.count == 1 ? "0" + hex : hex
    }.joined()
    try write([0] + Array("AUTH EXTERNAL \(uid)\r\n".utf8))
    let answer = try readLine(awaiting: "the bus's answer to AUTH EXTERNAL")
    guard answer.hasPrefix("OK ") else { throw .authenticationRejected(answer) }
    try write(Array("BEGIN\r\n".utf8))
  }

  /// Sends `message` with the next serial; returns the serial.
  @discardableResult
  public func send(_ message: DBusMessage) throws(DBusError) -> UInt32 {
    var message = message
    message.serial = nextSerial
    nextSerial = nextSerial == UInt32.max ? 1 : nextSerial + 1
    try write(message.encoded())
    return message.serial
  }

  /// Sends a method call and waits for its reply: the returned values, or `.errorReply` for an ERROR.
  public func call(_ message: DBusMessage) throws(DBusError) -> [DBusValue] {
    let serial = try send(message)
    while true {
      let reply = try readMessage(awaiting: "the reply to \(message.member ?? "a call")")
      guard reply.replySerial == serial, reply.kind == .methodReturn || reply.kind == .error else {
        queued.append(reply)
        continue
      }
      if reply.kind == .error { throw .errorReply(name: reply.errorName ?? "", message: reply.errorMessage) }
      return reply.body
    }
  }

  /// The next message addressed to this connection (calls, signals, replies nobody awaited).
  public func receive() throws(DBusError) -> DBusMessage {
    if !queued.isEmpty { return queued.removeFirst() }
    return try readMessage(awaiting: "a message")
  }

  /// `org.freedesktop.DBus.Properties.Get`: the property's value, out of its variant.
  public func property(_ name: String, of interface: String, at path: String, on destination: String) throws(DBusError) -> DBusValue {
    let reply = try call(
      .methodCall(
        destination: destination, path: path, interface: "org.freedesktop.DBus.Properties", member: "Get",
        body: [.string(interface), .string(name)]))
    guard reply.count == 1, case .variant(let value) = reply[0] else {
      throw .unexpectedReply("Get(\(name)) returned '\(reply.map(\.type.signature).joined())', not a variant")
    }
    return value
  }

  // MARK: - The socket

  /// Milliseconds until the deadline, rounded up; throws once it has passed.
  private func millisecondsLeft(awaiting what: String) throws(DBusError) -> Int32 {
    let now = MonotonicClock.nanoseconds()
    guard now < deadline else { throw .timedOut(what) }
    return Int32(min((deadline - now + 999_999) / 1_000_000, UInt64(Int32.max)))
  }

  private func wait(for events: PollEvents, awaiting what: String) throws(DBusError) {
    let timeout = try millisecondsLeft(awaiting: what)
    let ready: [PollEvents]
    do {
      ready = try Poll.wait([PollRequest(fd: socket, events: events)], timeoutMilliseconds: timeout)
    } catch {
      throw .system(error)
    }
    if ready[0].isEmpty { throw .timedOut(what) }
  }

  private func write(_ bytes: [UInt8]) throws(DBusError) {
    var offset = 0
    while offset < bytes.count {
      let attempt = bytes.withUnsafeBytes { raw in
        Result { () throws(SystemError) -> FileDescriptor.IOResult in
          try socket.write(UnsafeRawBufferPointer(rebasing: raw[offset...]))
        }
      }
      switch attempt {
      case .success(.bytes(let count)): offset += count
      case .success(.wouldBlock): try wait(for: .writable, awaiting: "room to write to the bus")
      case .success(.endOfFile): throw .closed
      case .failure(let error): throw .system(error)
      }
    }
  }

  /// Reads what the socket has (waiting for something first) onto `inbound`.
  private func readMore(awaiting what: String) throws(DBusError) {
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
      let attempt = chunk.withUnsafeMutableBytes { raw in
        Result { () throws(SystemError) -> FileDescriptor.IOResult in try socket.read(into: raw) }
      }
      switch attempt {
      case .success(.bytes(let count)):
        inbound.append(contentsOf: chunk[0..<count])
        return
      case .success(.wouldBlock): try wait(for: .readable, awaiting: what)
      case .success(.endOfFile): throw .closed
      case .failure(let error): throw .system(error)
      }
    }
  }

  private func readLine(awaiting what: String) throws(DBusError) -> String {
    while true {
      if let end = inbound.firstIndex(of: UInt8(ascii: "\n")) {
        let line = inbound[..<end]
        inbound.removeFirst(end + 1)
        return String(decoding: line.last == UInt8(ascii: "\r") ? line.dropLast() : line, as: UTF8.self)
      }
      guard inbound.count < 16384 else { throw .authenticationRejected("an answer line longer than 16 KiB") }
      try readMore(awaiting: what)
    }
  }

  private func readMessage(awaiting what: String) throws(DBusError) -> DBusMessage {
    while true {
      if let length = try DBusMessage.frameLength(of: inbound[...]), inbound.count >= length {
        let message = try DBusMessage(decoding: Array(inbound[0..<length]))
        inbound.removeFirst(length)
        return message
      }
      try readMore(awaiting: what)
    }
  }
}
