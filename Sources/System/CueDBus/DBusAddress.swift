import CuePosix

/// Where a bus listens, from a D-Bus address string.
public enum DBusAddress {
  /// The system bus's address: `$DBUS_SYSTEM_BUS_ADDRESS`, else the specification's default.
  public static var systemBus: String {
    ProcessInfo.environment("DBUS_SYSTEM_BUS_ADDRESS").flatMap { $0.isEmpty ? nil : $0 }
      ?? "unix:path=/run/dbus/system_bus_socket"
  }

  /// The socket path of the first `unix:path=` entry of `address` (entries are separated by `;`,
  /// keys by `,`; values are %-escaped). Other transports (tcp, abstract sockets) are skipped.
  public static func socketPath(of address: String) throws(DBusError) -> String {
    for entry in address.split(separator: ";") {
      guard entry.hasPrefix("unix:") else { continue }
      for pair in entry.dropFirst(5).split(separator: ",") where pair.hasPrefix("path=") {
        if let path = unescape(pair.dropFirst(5)), !path.isEmpty { return path }
      }
    }
    throw DBusError.unsupportedAddress(address)
  }

  /// `%2f` → `/`; nil for a broken escape.
  static func unescape(_ text: Substring) -> String? {
    var bytes: [UInt8] = []
    var utf8 = text.utf8.makeIterator()
    while let byte = utf8.next() {
      guard byte == UInt8(ascii: "%") else {
        bytes.append(byte)
        continue
      }
      guard let high = utf8.next(), let low = utf8.next(),
        let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)
      else { return nil }
      bytes.append(value)
    }
    return String(validating: bytes, as: UTF8.self)
  }
}
