import CuePosix
import CueProtocol
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The `status` fields the soak reads.
struct StatusFigures: Sendable {
  var voices = 0
  var players = 0
  var sounds = 0
  var clients = 0
  var plays = 0
  var underruns = 0
  var eventsDropped = 0

  init() {}

  init(_ status: StatusReply) {
    voices = status.voices
    players = status.players
    sounds = status.sounds
    clients = status.clients
    plays = status.plays
    underruns = status.underruns
    eventsDropped = status.eventsDropped
  }

  var json: JSONValue {
    .object([
      ("voices", .number(Double(voices))), ("players", .number(Double(players))), ("sounds", .number(Double(sounds))),
      ("clients", .number(Double(clients))), ("plays", .number(Double(plays))),
      ("underruns", .number(Double(underruns))), ("eventsDropped", .number(Double(eventsDropped))),
    ])
  }
}

/// One measurement: /proc and `status`.
struct Snapshot: Sendable {
  var process: ProcessFigures
  var status: StatusFigures
}
