import CueProtocol

/// One event from cued (or from the client about its connection), typed, with the object as it arrived.
///
/// `daemonEvent` is the daemon's event as a `CueProtocol.Event` (a payload per kind; kinds this
/// version does not know are `.unknown`); it is nil for the two kinds the client adds, which every
/// `events()` stream receives whatever its filter: `disconnected` (the connection to the daemon was
/// lost; events may be missed until it is back) and `reconnected` (a connection is up again and the
/// subscription has been sent anew; `body["restarted"]` is true when it is a new daemon process).
/// `kind` is the `"event"` string and `body` the whole object, with any fields this version does not
/// know. The accessors (`voice`, `reason`, …) read the typed event. Unknown kinds and fields must be
/// ignored: the protocol grows without notice.
public struct CueEvent: Sendable, Equatable, CustomStringConvertible {
  /// The event's kind: an `EventKind` raw value, `disconnected`, `reconnected`, or a kind this version does not know.
  public var kind: String
  /// The whole event object as it arrived.
  public var body: JSONValue
  /// The daemon's event, typed; nil for the client's own `disconnected` and `reconnected`.
  public var daemonEvent: Event?

  /// Makes an event from its kind and its object; a daemon kind is decoded into `daemonEvent`
  /// (`.unknown` when it cannot be read). `disconnected` and `reconnected` are the client's own.
  public init(kind: String, body: JSONValue) {
    self.kind = kind
    self.body = body
    if Self.clientKinds.contains(kind) {
      daemonEvent = nil
    } else {
      daemonEvent = (try? Event(json: body)) ?? .unknown(kind: kind, body)
    }
  }

  /// The event the daemon sent: `event` typed, `object` as it arrived.
  public init(_ event: Event, object: JSONValue) {
    kind = event.kindName
    body = object
    daemonEvent = event
  }

  /// The client's own event: `disconnected`, or `reconnected` with whether the daemon is a new process.
  static func connection(_ kind: ClientKind, restarted: Bool = false) -> CueEvent {
    var members: [(String, JSONValue)] = [("event", .string(kind.rawValue))]
    if kind == .reconnected { members.append(("restarted", .bool(restarted))) }
    return CueEvent(kind: kind.rawValue, body: .object(members))
  }

  /// The kinds the client itself produces.
  enum ClientKind: String, CaseIterable {
    case disconnected, reconnected
  }

  private static let clientKinds = Set(ClientKind.allCases.map(\.rawValue))

  /// The voice the event concerns (`started`, `finished`, `completion`, `paging`).
  public var voice: UInt64? {
    switch daemonEvent {
    case .started(let e)?: e.voice
    case .finished(let e)?: e.voice
    case .completion(let e)?: e.voice
    case .paging(let e)?: e.outcome.voice
    default: nil
    }
  }

  // The daemon event's payload, when it is of that kind.
  private var started: Event.Started? { if case .started(let e)? = daemonEvent { e } else { nil } }
  private var finished: Event.Finished? { if case .finished(let e)? = daemonEvent { e } else { nil } }
  private var completion: Event.Completion? { if case .completion(let e)? = daemonEvent { e } else { nil } }

  /// Who played the voice of a `started` or `finished` event.
  private var origin: Event.Origin? { started?.origin ?? finished?.origin }

  /// The player the event concerns (`started`, `finished` and `decode-error` of a player).
  public var player: UInt64? {
    if case .decodeError(let e)? = daemonEvent { return e.player }
    if case .player(let id)? = origin { return id }
    return nil
  }

  /// The system sound the event concerns (`completion`, and `started`/`finished` of a system sound).
  public var sound: UInt64? {
    if case .completion(let e)? = daemonEvent { return e.sound }
    if case .sound(let id)? = origin { return id }
    return nil
  }

  /// The cue's name (`started`, `finished`, and `paging` when a cue was chosen).
  public var cue: String? {
    switch daemonEvent {
    case .started(let e)?: e.cue
    case .finished(let e)?: e.cue
    case .paging(let e)?: e.outcome.cue
    default: nil
    }
  }

  /// Why a voice ended (`finished`: `end`, `stopped`, `stolen`, `disposed`, …; `completion`), or why a decode failed.
  public var reason: String? {
    switch daemonEvent {
    case .finished(let e)?: e.reason.rawValue
    case .completion(let e)?: e.reason.rawValue
    case .decodeError(let e)?: e.reason
    default: nil
    }
  }

  /// For `finished`: whether the voice played to its end (AVAudioPlayer's `successfully`). nil for other kinds.
  public var successfully: Bool? { finished?.successfully }

  /// For `completion`: whether the system sound was heard to its end. nil for other kinds.
  public var played: Bool? { completion?.played }

  /// For `started`: the device time (seconds, as `deviceCurrentTime`) of the voice's first frame.
  public var deviceTime: Double? { started?.deviceTime }

  /// For `started`: seconds until the first frame is heard.
  public var heardIn: Double? { started?.heardIn }

  /// For `device`: `opened`, `closed-idle`, `lost` or `restored`.
  public var state: String? {
    if case .device(let e)? = daemonEvent { return e.state.rawValue }
    return nil
  }

  /// For `events-dropped`: how many events the daemon dropped because this client did not read.
  public var count: Int? {
    if case .eventsDropped(let e)? = daemonEvent { return e.count }
    return nil
  }

  /// True for a `finished` event whose `successfully` is `successfully`: `event.isFinished(successfully: true)`.
  public func isFinished(successfully: Bool) -> Bool {
    self.successfully == successfully
  }

  /// The ids the daemon filters this event by, as `EventFilter.ids` matches them (`Event.subjectIDs`).
  public var ids: [UInt64] { daemonEvent?.subjectIDs ?? [] }

  /// The event as one line of JSON.
  public var description: String { body.description }

  /// Whether an `events(filter)` stream gets this event: the client's own kinds and `events-dropped` pass every filter.
  func passes(_ filter: EventFilter) -> Bool {
    guard let event = daemonEvent else { return true }
    if case .eventsDropped = event { return true }
    return filter.admits(event)
  }
}

extension ReplyFields {
  /// Reads a reply object from the daemon; one that cannot be read is a protocol violation.
  static func read(_ reply: JSONValue) throws(ClientError) -> Self {
    do {
      return try Self(reply: reply)
    } catch {
      throw .protocolViolation("\(error.message): \(reply)")
    }
  }
}
