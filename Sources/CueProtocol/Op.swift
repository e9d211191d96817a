/// One operation of the protocol: its raw value is the `op` string on the wire.
///
/// The single list of op names: `Request.op`, `Request.knownOps` and `RequestDecoder`'s dispatch all
/// derive from it, so a new op is added here and the compiler points at every switch to extend.
public enum Op: String, CaseIterable, Sendable {
  case hello, ping, play, stop, list, status, reload, subscribe, unsubscribe
  case playerCreate = "player.create"
  case playerPrepare = "player.prepare"
  case playerPlay = "player.play"
  case playerPause = "player.pause"
  case playerStop = "player.stop"
  case playerSet = "player.set"
  case playerGet = "player.get"
  case playerDestroy = "player.destroy"
  case soundCreate = "sound.create"
  case soundPlay = "sound.play"
  case soundCompletion = "sound.completion"
  case soundDispose = "sound.dispose"
  case system

  /// The `unknown-op` error a family's decoder (`player.`, `sound.`) answers for an op of another family.
  func notOf(family prefix: String) -> ProtocolError {
    let family = prefix.dropLast()
    return ProtocolError(
      .unknownOp, "\(rawValue) is not a \(family) op; the \(family) ops are \(Op.names(withPrefix: prefix).joined(separator: ", "))")
  }

  /// The ops of one family (`player.`, `sound.`), in declaration order, for error messages.
  static func names(withPrefix prefix: String) -> [String] {
    allCases.map(\.rawValue).filter { $0.hasPrefix(prefix) }
  }
}
