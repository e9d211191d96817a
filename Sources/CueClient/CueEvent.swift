import CueProtocol

/// One event from cued (or from the client about its connection), with typed access to its fields.
///
/// `kind` is the event's `"event"` value and `body` the whole event object as it arrived. The
/// daemon's kinds are `started`, `finished`, `completion`, `device`, `reloaded`, `decode-error`
/// and `events-dropped` (see docs/PROTOCOL.md). The client adds two of its own, which every
/// `events()` stream receives whatever its filter: `disconnected` (the connection to the daemon
/// was lost; events may be missed until it is back) and `reconnected` (a connection is up again
/// and the subscription has been sent anew; `body["restarted"]` is true when it is a new daemon
/// process). Unknown kinds and fields must be ignored: the protocol grows without notice.
public struct CueEvent: Sendable, Equatable, CustomStringConvertible {
  /// The event's kind, e.g. `"finished"`.
  public var kind: String
  /// The whole event object, e.g. `{"event":"finished","voice":3,"cue":"pico","reason":"end","successfully":true}`.
  public var body: JSONValue

  /// Makes an event from its kind and its object.
  public init(kind: String, body: JSONValue) {
    self.kind = kind
    self.body = body
  }

  /// The voice the event concerns (`started`, `finished`, `completion`).
  public var voice: UInt64? { id("voice") }
  /// The player the event concerns (`started`, `finished` and `decode-error` of a player).
  public var player: UInt64? { id("player") }
  /// The system sound the event concerns (`completion`, and `started`/`finished` of a system sound).
  public var sound: UInt64? { id("sound") }
  /// The cue's name (`started`, `finished`).
  public var cue: String? { body["cue"]?.stringValue }
  /// Why a voice ended (`finished`: `end`, `stopped`, `stolen`, `disposed`, …; `completion`), or why a decode failed.
  public var reason: String? { body["reason"]?.stringValue }
  /// For `finished`: whether the voice played to its end (AVAudioPlayer's `successfully`). nil for other kinds.
  public var successfully: Bool? { kind == "finished" ? body["successfully"]?.boolValue : nil }
  /// For `completion`: whether the system sound was heard to its end. nil for other kinds.
  public var played: Bool? { kind == "completion" ? body["played"]?.boolValue : nil }
  /// For `started`: the device time (seconds, as `deviceCurrentTime`) of the voice's first frame.
  public var deviceTime: Double? { body["deviceTime"]?.doubleValue }
  /// For `started`: seconds until the first frame is heard.
  public var heardIn: Double? { body["heardIn"]?.doubleValue }
  /// For `device`: `opened`, `closed-idle`, `lost` or `restored`.
  public var state: String? { body["state"]?.stringValue }
  /// For `events-dropped`: how many events the daemon dropped because this client did not read.
  public var count: Int? { body["count"]?.intValue }

  /// True for a `finished` event whose `successfully` is `successfully`: `event.isFinished(successfully: true)`.
  public func isFinished(successfully: Bool) -> Bool {
    self.successfully == successfully
  }

  /// The ids the daemon filters this event by (its voice, player and sound), as `EventFilter.ids` matches them.
  public var ids: [UInt64] { [voice, player, sound].compactMap { $0 } }

  /// The event as one line of JSON.
  public var description: String { body.description }

  private func id(_ key: String) -> UInt64? {
    guard let n = body[key]?.intValue, n >= 0 else { return nil }
    return UInt64(n)
  }

  /// The kinds the client itself produces, which pass every filter.
  static let connectionKinds: Set<String> = ["disconnected", "reconnected", "events-dropped"]

  /// Whether an `events(filter)` stream gets this event.
  func passes(_ filter: EventFilter) -> Bool {
    if Self.connectionKinds.contains(kind) { return true }
    return filter.admits(kind: kind, ids: ids)
  }
}
