import CuePosix

/// Why a D-Bus exchange failed; `description` is what `status` and the log say.
public enum DBusError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The bus address names no transport this client speaks (only `unix:path=`).
  case unsupportedAddress(String)
  /// The socket could not be reached, read or written.
  case system(SystemError)
  /// The bus did not accept `AUTH EXTERNAL` (its answer).
  case authenticationRejected(String)
  /// Nothing came back before the deadline; what was awaited.
  case timedOut(String)
  /// The bus closed the connection.
  case closed
  /// Bytes that are not a D-Bus message (or not one this client reads).
  case malformed(String)
  /// The peer answered with an ERROR: its name (`org.freedesktop.DBus.Error.ServiceUnknown`) and message.
  case errorReply(name: String, message: String)
  /// A reply whose arguments are not what the method returns.
  case unexpectedReply(String)

  public var description: String {
    switch self {
    case .unsupportedAddress(let address): "the bus address '\(address)' has no unix:path= entry"
    case .system(let error): error.description
    case .authenticationRejected(let answer): "the bus rejected authentication: \(answer)"
    case .timedOut(let what): "timed out waiting for \(what)"
    case .closed: "the bus closed the connection"
    case .malformed(let problem): "a malformed message: \(problem)"
    case .errorReply(let name, let message): message.isEmpty ? name : "\(name): \(message)"
    case .unexpectedReply(let problem): "an unexpected reply: \(problem)"
    }
  }
}
