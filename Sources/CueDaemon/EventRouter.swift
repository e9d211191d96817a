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
  private var held: [(kind: String, fields: [(String, JSONValue)], ids: [UInt64], alsoTo: Set<UInt64>)] = []

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
    for event in events { emit(event.kind, event.fields, ids: event.ids, alsoTo: event.alsoTo) }
  }

  func emit(_ kind: String, _ fields: [(String, JSONValue)], ids: [UInt64], alsoTo: Set<UInt64> = []) {
    if holdDepth > 0 {
      held.append((kind, fields, ids, alsoTo))
      return
    }
    var line: JSONValue? = nil
    for client in clients.connections {
      let subscribed = client.subscription?.admits(kind: kind, ids: ids) ?? false
      guard subscribed || alsoTo.contains(client.serial) else { continue }
      if line == nil { line = Reply.event(kind, fields) }
      client.sendEvent(line!)
    }
  }

  /// Sends a deferred reply, if its client is still connected.
  func reply(to waiter: Waiter, _ fields: [(String, JSONValue)]) {
    clients.connection(waiter.client)?.send(Reply.success(id: waiter.id, fields))
  }

  /// Sends a deferred error reply, if its client is still connected.
  func fail(_ waiter: Waiter, _ error: ProtocolError) {
    clients.connection(waiter.client)?.send(Reply.failure(id: waiter.id, error))
  }

  // MARK: - The events

  private func voiceFields(_ id: VoiceID, _ voice: LiveVoice) -> [(String, JSONValue)] {
    var fields: [(String, JSONValue)] = [("voice", .number(Double(id.rawValue))), ("cue", .string(voice.cue.name))]
    switch voice.origin {
    case .oneShot: break
    case .player(let p): fields.append(("player", .number(Double(p))))
    case .sound(let s): fields.append(("sound", .number(Double(s))))
    }
    return fields
  }

  private func voiceIDs(_ id: VoiceID, _ voice: LiveVoice) -> [UInt64] {
    [id.rawValue] + (voice.origin.objectID.map { [$0] } ?? [])
  }

  /// `started`: the voice's first frame is mixer frame `deviceTime` and is heard `heardIn` seconds from now.
  func started(_ id: VoiceID, _ voice: LiveVoice, deviceTime: Double, heardIn: Double) {
    emit(
      "started", voiceFields(id, voice) + [("deviceTime", .number(deviceTime)), ("heardIn", .number(heardIn))],
      ids: voiceIDs(id, voice))
  }

  /// `finished`: a voice ended, and why.
  func finished(_ id: VoiceID, _ voice: LiveVoice, reason: VoiceEndReason, alsoTo: Set<UInt64>) {
    emit(
      "finished", voiceFields(id, voice) + [("reason", .string(reason.name)), ("successfully", .bool(reason == .end))],
      ids: voiceIDs(id, voice), alsoTo: alsoTo)
  }

  /// `finished` for a player whose play never got a voice (its file did not decode, or the start failed).
  func playerFailed(_ player: UInt64, owner: UInt64) {
    emit(
      "finished", [("player", .number(Double(player))), ("reason", .string("error")), ("successfully", .bool(false))],
      ids: [player], alsoTo: [owner])
  }

  /// `decode-error`: a player's file could not be decoded.
  func decodeError(player: UInt64, owner: UInt64, path: String, reason: String) {
    emit(
      "decode-error", [("player", .number(Double(player))), ("path", .string(path)), ("reason", .string(reason))],
      ids: [player], alsoTo: [owner])
  }

  /// `completion`: one play of a system sound ended (`voice` nil: it did not play, `reason` says why).
  func completion(sound: UInt64, voice: VoiceID?, played: Bool, reason: String, alsoTo: Set<UInt64>) {
    var fields: [(String, JSONValue)] = [("sound", .number(Double(sound)))]
    if let voice { fields.append(("voice", .number(Double(voice.rawValue)))) }
    fields += [("played", .bool(played)), ("reason", .string(reason))]
    emit("completion", fields, ids: [sound] + (voice.map { [$0.rawValue] } ?? []), alsoTo: alsoTo)
  }

  /// `device`: the device opened, closed when idle, was lost or came back.
  func device(_ change: DeviceController.Change, name: String) {
    var fields: [(String, JSONValue)]
    switch change {
    case .opened: fields = [("state", "opened")]
    case .restored: fields = [("state", "restored")]
    case .closedIdle: fields = [("state", "closed-idle")]
    case .lost: fields = [("state", "lost")]
    }
    fields.append(("device", .string(name)))
    if case .lost(let error) = change { fields.append(("error", .string(error))) }
    emit("device", fields, ids: [])
  }

  /// `reloaded`: the sound directories were read again.
  func reloaded(_ scan: LibraryScan) {
    emit(
      "reloaded",
      [
        ("cues", .number(Double(scan.cues.count))), ("added", .array(scan.added.map { .string($0) })),
        ("changed", .array(scan.changed.map { .string($0) })), ("removed", .array(scan.removed.map { .string($0) })),
      ], ids: [])
  }

  /// `paging`: what a carousel message led to.
  func paging(_ fields: [(String, JSONValue)], voice: VoiceID?) {
    emit("paging", fields, ids: voice.map { [$0.rawValue] } ?? [])
  }
}
