import ArgumentParser
import CueClient
import CuePosix
import CueProtocol

/// `cuectl play CUE [--volume V] [--pan P] [--loops N] [--socket PATH] [--json]`, parsed by hand.
///
/// This is the command scripts and key bindings run for every sound, so its start-up is its
/// latency ("shell to sound" in docs/PERFORMANCE.md). Building swift-argument-parser's command
/// tree for every subcommand costs about 5 ms per run, more than the rest of cuectl together, so
/// these forms (valid values, no `--wait`, no `--opt=value`) are recognised here and run
/// directly, through the same `Play.play` as the full command. Anything else, including every
/// mistake, returns nil and goes to swift-argument-parser, which owns help and error messages.
enum QuickPlay {
  static func run(_ arguments: ArraySlice<String>) -> ExitStatus? {
    guard arguments.first == "play" else { return nil }
    var parameters = PlayParameters(cue: "", volume: 1, pan: 0, loops: 0, notify: false)
    var cue: String? = nil
    var socket: String? = nil
    var json = false
    var rest = arguments.dropFirst()
    while let argument = rest.popFirst() {
      switch argument {
      case "--json":
        json = true
      case "--volume", "--pan", "--loops", "--socket":
        guard let value = rest.popFirst() else { return nil }
        switch argument {
        case "--volume":
          guard let volume = Double(value), volume.isFinite, (0...1).contains(volume) else { return nil }
          parameters.volume = volume
        case "--pan":
          guard let pan = Double(value), pan.isFinite, (-1...1).contains(pan) else { return nil }
          parameters.pan = pan
        case "--loops":
          guard let loops = Int(value) else { return nil }
          parameters.loops = loops
        default:
          socket = value
        }
      default:
        guard cue == nil, !argument.hasPrefix("-"), !argument.isEmpty else { return nil }
        cue = argument
      }
    }
    guard let cue else { return nil }
    parameters.cue = cue
    do {
      try Play.play(Session(socket: socket, json: json), parameters)
      return .ok
    } catch let exit as ExitCode {
      return ExitStatus(rawValue: exit.rawValue) ?? .unreachable
    } catch {
      return Session.report(.protocolViolation("\(error)"), json: json, id: nil)
    }
  }
}
