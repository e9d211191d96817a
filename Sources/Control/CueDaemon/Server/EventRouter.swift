import CueCore
import CueProtocol

/// A reply owed to a client that comes later than its request's turn (a deferred reply).
struct Waiter: Equatable {
  let client: UInt64
  let id: RequestID?
}

/// Delivers events to the connections that want them, and deferred replies to those owed them.
///
/// An event goes to every connection whose subscription (kinds, ids) admits it, plus `alsoTo`
/// (connections owed it regardless: a player's owner, a `notify` play, a completion
/// registration), once each, in the order emitted. While a request is carried out its events are
/// held and go out after its reply (`holding`), so a client reads the reply first.
final class EventRouter {
  private unowned let clients: ClientServer
  private var holdDepth = 0
  private var held: [(event: Event, alsoTo: Set<UInt64>)] = []

  init(clients: ClientServer) {
    self.clients = clients
  }

  /// Runs `body` (which sends a reply) and then the events it emitted.
  func holding(_ body: () -> Void) {
    holdDepth += 1
    body()
    holdDepth -= 1
    guard holdDepth == 0 else { return }
    let events = held
    held.removeAll()
    for (event, alsoTo) in events { emit(event, alsoTo: alsoTo) }
  }

  /// Sends `event` to every connection whose subscription admits it, and to `alsoTo`.
  func emit(_ event: Event, alsoTo: Set<UInt64> = []) {
    if holdDepth > 0 {
      held.append((event, alsoTo))
      return
    }
    var line: [UInt8]? = nil  // encoded once, for every connection that gets it
    for client in clients.connections {
      let subscribed = client.subscription?.admits(event) ?? false
      guard subscribed || alsoTo.contains(client.serial) else { continue }
      if line == nil { line = event.line }
      client.sendEvent(line!)
    }
  }

  /// Sends a deferred reply, if its client is still connected.
  func reply(to waiter: Waiter, _ body: ReplyBody) {
    clients.connection(waiter.client)?.send(.success(id: waiter.id, body))
  }

  /// Sends a deferred error reply, if its client is still connected.
  func fail(_ waiter: Waiter, _ error: ProtocolError) {
    clients.connection(waiter.client)?.send(.failure(id: waiter.id, error))
  }

  // MARK: - The events the engine's news turns into

  /// `started`: the voice's first frame is mixer frame `deviceTime` and is heard `heardIn` seconds from now.
  func started(_ id: VoiceID, _ voice: LiveVoice, deviceTime: Double, heardIn: Double) {
    emit(.started(Event.Started(voice: id.rawValue, cue: voice.cue.name, origin: voice.origin, deviceTime: deviceTime, heardIn: heardIn)))
  }

  /// `finished`: a voice ended, and why.
  func finished(_ id: VoiceID, _ voice: LiveVoice, reason: VoiceEndReason, alsoTo: Set<UInt64>) {
    emit(
      .finished(Event.Finished(voice: id.rawValue, cue: voice.cue.name, origin: voice.origin, reason: FinishReason(reason))),
      alsoTo: alsoTo)
  }
}

extension FinishReason {
  /// The engine's reason, as the protocol says it (`paused` never reaches a client as a finish).
  init(_ reason: VoiceEndReason) {
    self = FinishReason(rawValue: reason.name) ?? .error
  }
}
