/// The protocol's fixed limits, stated once.
extension LineFramer {
  /// The longest request line, in bytes without its newline (64 KiB).
  public static let protocolLineLimit = 64 * 1024
}

extension ProtocolError {
  /// The reply to a request line over `LineFramer.protocolLineLimit`, which was discarded.
  public static func lineTooLong(byteCount: Int) -> ProtocolError {
    ProtocolError(
      .lineTooLong, "a request line of \(byteCount)+ bytes was discarded; the limit is \(LineFramer.protocolLineLimit) bytes per line")
  }
}
