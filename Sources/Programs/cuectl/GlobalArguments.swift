import CueClient
import CueProtocol

/// `cuectl --socket S play pico`: the options every command takes (`--socket`, `--json`) may come
/// before the command too, as with `pactl -s`, `git -C` or `systemctl --user`.
///
/// swift-argument-parser reads a subcommand's options only after the subcommand's name, and
/// `GlobalOptions` belongs to every leaf command, so the leading ones are moved behind the command
/// (at the end, or before a `--`). Anything else before the command (`--help`, `--version`, a
/// mistake) stops the scan and is left where it is, for the parser to answer.
enum GlobalArguments {
  static func hoisted(_ arguments: [String]) -> [String] {
    var leading: [String] = []
    var index = 0
    scan: while index < arguments.count {
      let argument = arguments[index]
      switch argument {
      case "--json":
        leading.append(argument)
        index += 1
      case "--socket" where index + 1 < arguments.count:
        leading += [argument, arguments[index + 1]]
        index += 2
      case _ where argument.hasPrefix("--socket="):
        leading.append(argument)
        index += 1
      default:
        break scan
      }
    }
    // Nothing to move, or no command after them: the parser says what is missing.
    guard !leading.isEmpty, index < arguments.count, !arguments[index].hasPrefix("-") else { return arguments }
    var command = Array(arguments[index...])
    command.insert(contentsOf: leading, at: command.firstIndex(of: "--") ?? command.count)
    return command
  }
}

/// Shell completion of cue names (`cuectl play <TAB>`): asks the daemon the command line names
/// (its `--socket`, else the default) for `list`, with a short timeout; nothing when none answers.
/// swift-argument-parser's completion scripts call `cuectl` back with the words typed so far.
@Sendable func completeCueNames(_ words: [String], _ index: Int, _ prefix: String) -> [String] {
  var socket: String? = nil
  if let flag = words.firstIndex(of: "--socket"), flag + 1 < words.count {
    socket = words[flag + 1]
  } else if let word = words.first(where: { $0.hasPrefix("--socket=") }) {
    socket = String(word.dropFirst("--socket=".count))
  }
  guard let connection = try? CueConnection.connect(socketPath: socket),
    let list = try? connection.send(.list, as: ListReply.self, timeoutSeconds: 1)
  else { return [] }
  return list.cues.map(\.name).filter { $0.hasPrefix(prefix) }
}
