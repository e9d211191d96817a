/// The stable error codes of the protocol. Clients branch on these; the message is for people.
public enum ErrorCode: String, Sendable, CaseIterable {
  /// The line is not valid UTF-8 JSON.
  case parseError = "parse-error"
  /// Valid JSON of the wrong shape: not an object, a missing, extra or wrongly typed field.
  case invalidRequest = "invalid-request"
  /// The `op` is not one this daemon knows.
  case unknownOp = "unknown-op"
  /// A number outside its range (volume, pan, loops, fade).
  case outOfRange = "out-of-range"
  /// No cue has that name.
  case unknownCue = "unknown-cue"
  /// No sound-theme file answers that event name (in the theme, its parents, freedesktop, or unthemed).
  case unknownEvent = "unknown-event"
  /// The sound theme silences that event name (a `NAME.disabled` file).
  case eventDisabled = "event-disabled"
  /// No playing voice has that id.
  case unknownVoice = "unknown-voice"
  /// No player has that id (never made, destroyed, or gone with the connection that owned it).
  case unknownPlayer = "unknown-player"
  /// No system sound has that id, or it was disposed of.
  case unknownSound = "unknown-sound"
  /// No group (bus) has that name.
  case unknownGroup = "unknown-group"
  /// A path outside the sound directories, or a file that cannot be loaded.
  case badPath = "bad-path"
  /// The request needs a feature the object was not made with (rate without enableRate).
  case notEnabled = "not-enabled"
  /// The line was longer than the limit (64 KiB) and was discarded.
  case lineTooLong = "line-too-long"
  /// A queue inside the daemon is full; try again shortly.
  case busy = "busy"
  /// The audio device cannot be opened right now.
  case deviceUnavailable = "device-unavailable"
  /// A configured limit (voices, clients, memory) was reached.
  case limitReached = "limit-reached"
  /// The connecting user may not use this daemon (another uid, not in the allowed group).
  case accessDenied = "access-denied"
  /// The config file has a problem (the message names the file and line); the previous config stays.
  case configError = "config-error"
  /// The daemon failed in a way it did not expect; the message says how.
  case internalError = "internal"
}

/// An error reply: a stable code and a human message that names the thing and what to do.
public struct ProtocolError: Error, Sendable, Equatable, CustomStringConvertible {
  public var code: ErrorCode
  public var message: String
  public init(_ code: ErrorCode, _ message: String) {
    self.code = code
    self.message = message
  }
  public var description: String { "\(code.rawValue): \(message)" }
}
