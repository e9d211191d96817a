/// The kinds of event the daemon sends; the raw value is the `event` string on the wire.
///
/// The single list of event kinds: `EventFilter.knownKinds` derives from it.
public enum EventKind: String, CaseIterable, Sendable {
  case started, finished, completion, device, reloaded
  case decodeError = "decode-error"
  case eventsDropped = "events-dropped"
  case paging
  case level
  case meters

  /// Whether a subscription may name the kind: `events-dropped` goes to the connection that lost
  /// events, whatever it asked for; `meters` to the connections that asked for them with the `meters` op.
  public var isSubscribable: Bool { self != .eventsDropped && self != .meters }
}

/// One event line from the daemon, typed: a payload per kind, one encoder (`json`, `line`) and one decoder (`init(json:)`).
///
/// Encoding writes exactly the daemon's fields in the daemon's order (`{"event":kind,…}`); decoding
/// ignores fields it does not know, so a newer daemon's additions do not break an older client.
public enum Event: Sendable, Equatable {
  case started(Started)
  case finished(Finished)
  case completion(Completion)
  case device(Device)
  case reloaded(Reloaded)
  case decodeError(DecodeError)
  case eventsDropped(EventsDropped)
  case paging(Paging)
  case level(LevelChange)
  case meters(Meters)
  /// A kind this version does not know (or a known kind it cannot read): the kind and the whole line.
  case unknown(kind: String, JSONValue)

  /// What played a voice: a one-shot `play`, a player or a system sound.
  public enum Origin: Sendable, Equatable {
    case oneShot
    case player(UInt64)
    case sound(UInt64)

    /// `player` or `sound` with its id; nothing for a one-shot.
    var fields: [(String, JSONValue)] {
      switch self {
      case .oneShot: []
      case .player(let id): [("player", .id(id))]
      case .sound(let id): [("sound", .id(id))]
      }
    }

    /// The player's or sound's id, if any.
    public var id: UInt64? {
      switch self {
      case .oneShot: nil
      case .player(let id), .sound(let id): id
      }
    }

    static func decode(_ fields: inout FieldReader) throws(ProtocolError) -> Origin {
      if let player = try fields.id("player") { return .player(player) }
      if let sound = try fields.id("sound") { return .sound(sound) }
      return .oneShot
    }
  }

  /// `started`: a voice's first frame went out; heard at `deviceTime`, `heardIn` seconds from now.
  public struct Started: Sendable, Equatable {
    public var voice: UInt64
    public var cue: String
    public var origin: Origin
    /// Seconds on the device clock (`deviceCurrentTime`) when the first frame is heard.
    public var deviceTime: Double
    /// Seconds from the event until the first frame is heard.
    public var heardIn: Double

    public init(voice: UInt64, cue: String, origin: Origin = .oneShot, deviceTime: Double, heardIn: Double) {
      self.voice = voice
      self.cue = cue
      self.origin = origin
      self.deviceTime = deviceTime
      self.heardIn = heardIn
    }
  }

  /// `finished`: a voice stopped sounding, or (no voice, no cue) a player's file failed to decode.
  public struct Finished: Sendable, Equatable {
    /// Nil only when a player's file failed to decode (`reason` is then `error`).
    public var voice: UInt64?
    public var cue: String?
    public var origin: Origin
    public var reason: FinishReason
    /// True when it played to the end (`reason == .end`); on the wire as `successfully`.
    public var successfully: Bool { reason == .end }

    public init(voice: UInt64?, cue: String?, origin: Origin = .oneShot, reason: FinishReason) {
      self.voice = voice
      self.cue = cue
      self.origin = origin
      self.reason = reason
    }

    /// The event for a player whose file could not be decoded after `play` was asked for.
    public static func decodeFailed(player: UInt64) -> Finished {
      Finished(voice: nil, cue: nil, origin: .player(player), reason: .error)
    }
  }

  /// `completion`: one play of a system sound ended (or, muted, never started).
  public struct Completion: Sendable, Equatable {
    public var sound: UInt64
    /// Nil when muted (nothing played).
    public var voice: UInt64?
    public var reason: CompletionReason
    /// True when it played to the end (`reason == .end`); on the wire as `played`.
    public var played: Bool { reason == .end }

    public init(sound: UInt64, voice: UInt64?, reason: CompletionReason) {
      self.sound = sound
      self.voice = voice
      self.reason = reason
    }

    /// The event for a play refused because system sounds are muted.
    public static func muted(sound: UInt64) -> Completion {
      Completion(sound: sound, voice: nil, reason: .muted)
    }
  }

  /// `device`: the output device changed state.
  public struct Device: Sendable, Equatable {
    /// The device's new state.
    public enum State: String, CaseIterable, Sendable {
      case opened
      case closedIdle = "closed-idle"
      case lost
      case restored
    }

    public var state: State
    /// The device's name (as configured, for example `default`).
    public var device: String
    /// Why it was lost (only with `lost`).
    public var error: String?

    public init(state: State, device: String, error: String? = nil) {
      self.state = state
      self.device = device
      self.error = error
    }
  }

  /// `reloaded`: the cue library was scanned again.
  public struct Reloaded: Sendable, Equatable {
    /// The number of cues loaded now.
    public var cues: Int
    public var added: [String]
    public var changed: [String]
    public var removed: [String]

    public init(cues: Int, added: [String] = [], changed: [String] = [], removed: [String] = []) {
      self.cues = cues
      self.added = added
      self.changed = changed
      self.removed = removed
    }

    /// `cues`, `added`, `changed`, `removed` (also the start of the `reload` reply).
    var fields: [(String, JSONValue)] {
      [("cues", .int(cues)), ("added", .strings(added)), ("changed", .strings(changed)), ("removed", .strings(removed))]
    }

    static func decode(_ fields: inout FieldReader, in what: String) throws(ProtocolError) -> Reloaded {
      Reloaded(
        cues: try required(fields.integer("cues"), "cues", in: what), added: try fields.stringArray("added") ?? [],
        changed: try fields.stringArray("changed") ?? [], removed: try fields.stringArray("removed") ?? [])
    }
  }

  /// `decode-error`: a player's file could not be decoded.
  public struct DecodeError: Sendable, Equatable {
    /// The player whose file it is; nil for a file a watched sound directory gained (`watch-sounds`).
    public var player: UInt64?
    public var path: String
    public var reason: String

    public init(player: UInt64?, path: String, reason: String) {
      self.player = player
      self.path = path
      self.reason = reason
    }
  }

  /// `events-dropped`: this connection read too slowly and `count` events were not sent to it.
  public struct EventsDropped: Sendable, Equatable {
    public var count: Int

    public init(count: Int) { self.count = count }
  }

  /// `paging`: what a carousel message did.
  public struct Paging: Sendable, Equatable {
    public var carousel: String
    /// The carousel message's event name (`page-changed`, `wrapped`, `drag-began`, …).
    public var message: String
    /// The pages of a `page-changed` that changed the page, or of a `wrapped`.
    public var from: Int?
    public var to: Int?
    /// What the message said, echoed so that a watcher sees the lifecycle cued received: a
    /// `page-changed`'s reason and the direction cued took it in (given, or derived), a
    /// `will-end-dragging`'s velocity and target page, a `drag-ended`'s decelerate, an `edge`'s end.
    public var reason: CarouselMessage.Reason?
    public var direction: CarouselMessage.Direction?
    public var velocity: Double?
    public var targetPage: Int?
    public var decelerate: Bool?
    public var edge: CarouselMessage.Edge?
    public var outcome: PagingOutcome

    public init(
      carousel: String, message: String, from: Int? = nil, to: Int? = nil, reason: CarouselMessage.Reason? = nil,
      direction: CarouselMessage.Direction? = nil, velocity: Double? = nil, targetPage: Int? = nil, decelerate: Bool? = nil,
      edge: CarouselMessage.Edge? = nil, outcome: PagingOutcome
    ) {
      self.carousel = carousel
      self.message = message
      self.from = from
      self.to = to
      self.reason = reason
      self.direction = direction
      self.velocity = velocity
      self.targetPage = targetPage
      self.decelerate = decelerate
      self.edge = edge
      self.outcome = outcome
    }

    /// `carousel`, `message`, then each echoed field that is present, in the order they are declared.
    var fields: [(String, JSONValue)] {
      var members: [(String, JSONValue)] = [("carousel", .string(carousel)), ("message", .string(message))]
      if let from { members.append(("from", .int(from))) }
      if let to { members.append(("to", .int(to))) }
      if let reason { members.append(("reason", .string(reason.rawValue))) }
      if let direction { members.append(("direction", .string(direction.rawValue))) }
      if let velocity { members.append(("velocity", .number(velocity))) }
      if let targetPage { members.append(("targetPage", .int(targetPage))) }
      if let decelerate { members.append(("decelerate", .bool(decelerate))) }
      if let edge { members.append(("edge", .string(edge.rawValue))) }
      return members + outcome.fields
    }
  }

  /// The `event` string.
  public var kindName: String {
    switch self {
    case .unknown(let kind, _): kind
    default: kind!.rawValue
    }
  }

  /// The kind, or nil for `.unknown`.
  public var kind: EventKind? {
    switch self {
    case .started: .started
    case .finished: .finished
    case .completion: .completion
    case .device: .device
    case .reloaded: .reloaded
    case .decodeError: .decodeError
    case .eventsDropped: .eventsDropped
    case .paging: .paging
    case .level: .level
    case .meters: .meters
    case .unknown: nil
    }
  }

  /// The ids a subscription's `ids` filter matches, in wire order: started/finished the voice then the
  /// player or sound; completion the sound then the voice; decode-error the player; paging the voice.
  public var subjectIDs: [UInt64] {
    switch self {
    case .started(let e): [e.voice] + (e.origin.id.map { [$0] } ?? [])
    case .finished(let e): (e.voice.map { [$0] } ?? []) + (e.origin.id.map { [$0] } ?? [])
    case .completion(let e): [e.sound] + (e.voice.map { [$0] } ?? [])
    case .decodeError(let e): e.player.map { [$0] } ?? []
    case .paging(let e): e.outcome.voice.map { [$0] } ?? []
    case .device, .reloaded, .eventsDropped, .level, .meters, .unknown: []
    }
  }

  /// The event as the daemon writes it: `{"event":kind,…}`, fields in the daemon's order.
  public var json: JSONValue {
    var members: [(String, JSONValue)] = [("event", .string(kindName))]
    switch self {
    case .started(let e):
      members += [("voice", .id(e.voice)), ("cue", .string(e.cue))] + e.origin.fields
      members += [("deviceTime", .number(e.deviceTime)), ("heardIn", .number(e.heardIn))]
    case .finished(let e):
      if let voice = e.voice { members.append(("voice", .id(voice))) }
      if let cue = e.cue { members.append(("cue", .string(cue))) }
      members += e.origin.fields
      members += [("reason", .string(e.reason.rawValue)), ("successfully", .bool(e.successfully))]
    case .completion(let e):
      members.append(("sound", .id(e.sound)))
      if let voice = e.voice { members.append(("voice", .id(voice))) }
      members += [("played", .bool(e.played)), ("reason", .string(e.reason.rawValue))]
    case .device(let e):
      members += [("state", .string(e.state.rawValue)), ("device", .string(e.device))]
      if let error = e.error { members.append(("error", .string(error))) }
    case .reloaded(let e):
      members += e.fields
    case .decodeError(let e):
      if let player = e.player { members.append(("player", .id(player))) }
      members += [("path", .string(e.path)), ("reason", .string(e.reason))]
    case .eventsDropped(let e):
      members.append(("count", .int(e.count)))
    case .paging(let e):
      members += e.fields
    case .level(let e):
      members += [("level", .string(e.level.rawValue)), ("previous", .string(e.previous.rawValue)), ("setBy", .string(e.setBy))]
    case .meters(let e):
      members += e.fields
    case .unknown(_, let value):
      return value
    }
    return .object(members)
  }

  /// The event as one wire line (`json`, compact, and a newline).
  public var line: [UInt8] { json.line }

  /// Decodes an event object; a kind this version does not know becomes `.unknown(kind, json)`.
  ///
  /// Throws when `json` is not an object with an `event` string, or when a known kind lacks a field it
  /// must have or has one of the wrong type or an unknown value. Fields it does not know are ignored.
  public init(json: JSONValue) throws(ProtocolError) {
    guard case .object = json, let name = json["event"]?.stringValue else {
      throw ProtocolError(.invalidRequest, "an event must be a JSON object with an \"event\" string")
    }
    guard let kind = EventKind(rawValue: name) else {
      self = .unknown(kind: name, json)
      return
    }
    var fields = FieldReader(json)
    let what = "the \(name) event"
    switch kind {
    case .started:
      self = .started(
        Started(
          voice: try required(fields.id("voice"), "voice", in: what), cue: try required(fields.string("cue"), "cue", in: what),
          origin: try Origin.decode(&fields), deviceTime: try required(fields.double("deviceTime"), "deviceTime", in: what),
          heardIn: try required(fields.double("heardIn"), "heardIn", in: what)))
    case .finished:
      let voice = try fields.id("voice")
      let cue = try fields.string("cue")
      let origin = try Origin.decode(&fields)
      let reason = try required(fields.value("reason", as: FinishReason.self), "reason", in: what)
      self = .finished(Finished(voice: voice, cue: cue, origin: origin, reason: reason))
    case .completion:
      let sound = try required(fields.id("sound"), "sound", in: what)
      let voice = try fields.id("voice")
      let reason = try required(fields.value("reason", as: CompletionReason.self), "reason", in: what)
      self = .completion(Completion(sound: sound, voice: voice, reason: reason))
    case .device:
      self = .device(
        Device(
          state: try required(fields.value("state", as: Device.State.self), "state", in: what),
          device: try required(fields.string("device"), "device", in: what), error: try fields.string("error")))
    case .reloaded:
      self = .reloaded(try Reloaded.decode(&fields, in: what))
    case .decodeError:
      self = .decodeError(
        DecodeError(
          player: try fields.id("player"), path: try required(fields.string("path"), "path", in: what),
          reason: try required(fields.string("reason"), "reason", in: what)))
    case .eventsDropped:
      self = .eventsDropped(EventsDropped(count: try required(fields.integer("count"), "count", in: what)))
    case .level:
      self = .level(
        LevelChange(
          level: try required(fields.value("level", as: SoundLevel.self), "level", in: what),
          previous: try required(fields.value("previous", as: SoundLevel.self), "previous", in: what),
          setBy: try fields.string("setBy") ?? "client"))
    case .meters:
      self = .meters(try Meters.decode(&fields, in: what))
    case .paging:
      self = .paging(
        Paging(
          carousel: try required(fields.string("carousel"), "carousel", in: what),
          message: try required(fields.string("message"), "message", in: what), from: try fields.integer("from"),
          to: try fields.integer("to"), reason: try fields.value("reason", as: CarouselMessage.Reason.self),
          direction: try fields.value("direction", as: CarouselMessage.Direction.self), velocity: try fields.double("velocity"),
          targetPage: try fields.integer("targetPage"), decelerate: try fields.bool("decelerate"),
          edge: try fields.value("edge", as: CarouselMessage.Edge.self), outcome: try PagingOutcome.decode(&fields, in: what)))
    }
  }
}
