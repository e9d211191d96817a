import CueDaemon
import CuePosix
import CueProtocol

/// cued's command line, parsed by hand.
///
/// cued is a long-running daemon whose every setting is also a config-file key, so each option is
/// `--KEY VALUE` for a key of docs/CONFIG.md, checked by the same code that checks the file. A
/// hand-written parser keeps swift-argument-parser, and with it FoundationEssentials, out of the
/// daemon: about 3 MiB of resident memory and 2 ms of start-up (docs/PERFORMANCE.md). `cuectl`,
/// which people type at, keeps swift-argument-parser.
struct CommandLineOptions {
  /// What a config key's value is on the command line.
  enum Kind { case integer, number, string, list, flag }

  struct Option {
    var key: String
    var kind: Kind
    var valueName: String
    var help: String
  }

  /// Every setting, in the order `--help` lists them. Each is also a config-file key.
  static let settings: [Option] = [
    Option(key: "sounds", kind: .list, valueName: "dir", help: "A sound directory; repeat for more (earlier wins)."),
    Option(key: "socket", kind: .string, valueName: "path",
           help: "The Unix socket to listen on (default: $CUED_SOCKET, else $XDG_RUNTIME_DIR/cued/cued.sock)."),
    Option(key: "device", kind: .string, valueName: "name",
           help: "The ALSA PCM to play through, or 'null' for a silent clock-paced sink (default: default)."),
    Option(key: "rate", kind: .integer, valueName: "hz", help: "The output sample rate; every cue is converted to it (default: 48000)."),
    Option(key: "period-frames", kind: .integer, valueName: "frames", help: "Frames per ALSA period (default: 240, 5 ms)."),
    Option(key: "buffer-frames", kind: .integer, valueName: "frames", help: "Frames in the ALSA buffer (default: 960)."),
    Option(key: "idle-timeout", kind: .number, valueName: "seconds", help: "Seconds of silence before the device is closed (default: 2)."),
    Option(key: "max-voices", kind: .integer, valueName: "n",
           help: "Voices sounding at once; past it the oldest is stolen with a fade (default: 32)."),
    Option(key: "max-cue-seconds", kind: .number, valueName: "seconds", help: "The longest cue accepted (default: 60)."),
    Option(key: "max-memory", kind: .integer, valueName: "MiB", help: "The most decoded memory all cues may take (default: 256)."),
    Option(key: "max-cues", kind: .integer, valueName: "n", help: "The most cues loaded (default: 4096)."),
    Option(key: "max-clients", kind: .integer, valueName: "n", help: "The most clients connected at once (default: 1024)."),
    Option(key: "max-players", kind: .integer, valueName: "n", help: "The most players at once (default: 1024)."),
    Option(key: "max-sounds", kind: .integer, valueName: "n", help: "The most system sounds at once (default: 1024)."),
    Option(key: "max-client-queue", kind: .integer, valueName: "KiB",
           help: "Unread replies and events one client may queue; past it its events are dropped and counted (default: 1024)."),
    Option(key: "allow-any-path", kind: .flag, valueName: "",
           help: "Let clients name MP3 files outside the sound directories (player.create / sound.create with a path)."),
    Option(key: "allow-group", kind: .string, valueName: "group",
           help: "Let members of this group connect too (the system-wide mode); otherwise only cued's own user may."),
    Option(key: "realtime-priority", kind: .integer, valueName: "n",
           help: "SCHED_FIFO priority for the audio thread, 0 for normal scheduling (default: 20)."),
    Option(key: "log-level", kind: .string, valueName: "level", help: "trace, debug, info, notice, warning, error or critical (default: info)."),
  ]

  /// The options that are not settings.
  static let others: [(flag: String, valueName: String, help: String)] = [
    ("--config", "path", "The config file (default: $XDG_CONFIG_HOME/cued/cued.toml, else /etc/cued/cued.toml, if present)."),
    ("--no-config", "", "Read no config file."),
    ("--check-config", "", "Check the config file, print what is wrong (file:line: message) and exit: 0 when it is good."),
    ("--version", "", "Show the version."),
    ("-h, --help", "", "Show help information."),
    ("--generate-completion-script", "shell", "Print a completion script for bash, zsh or fish."),
  ]

  /// What the command line asks for.
  enum Action: Equatable {
    case run
    case help
    case version
    case completionScript(String)
  }

  var action = Action.run
  /// The settings given, as config values (nil where an option was not given).
  var values = ConfigValues()
  var configPath: String?
  var noConfig = false
  var checkConfig = false

  /// A command line that cannot be used: the message names the option and what to do.
  struct UsageError: Error { var message: String }

  init(arguments: [String]) throws(UsageError) {
    var members: [(String, JSONValue)] = []
    var sounds: [JSONValue] = []
    var index = 0
    func usage(_ message: String) -> UsageError { UsageError(message: message + "\nSee 'cued --help'.") }
    while index < arguments.count {
      let argument = arguments[index]
      index += 1
      var name = argument
      var inlineValue: String? = nil
      if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
        name = String(argument[..<equals])
        inlineValue = String(argument[argument.index(after: equals)...])
      }
      func value() throws(UsageError) -> String {
        if let inlineValue { return inlineValue }
        guard index < arguments.count else { throw usage("\(name) needs a value") }
        index += 1
        return arguments[index - 1]
      }
      switch name {
      case "-h", "--help": action = .help; return
      case "--version": action = .version; return
      case "--generate-completion-script": action = .completionScript(try value()); return
      case "--config": configPath = try value()
      case "--no-config": noConfig = true
      case "--check-config": checkConfig = true
      default:
        guard name.hasPrefix("--"), let option = Self.settings.first(where: { "--" + $0.key == name }) else {
          let hint = name.hasPrefix("-") ? "" : " (cued takes no arguments, only options)"
          throw usage("unknown option '\(argument)'\(hint)")
        }
        switch option.kind {
        case .flag:
          guard inlineValue == nil else { throw usage("\(name) takes no value") }
          members.append((option.key, .bool(true)))
        case .list:
          sounds.append(.string(try value()))
        case .string:
          members.append((option.key, .string(try value())))
        case .integer, .number:
          let text = try value()
          // Anything that is not a number goes through as a string, so the check below says what is wanted.
          let number = Double(text).flatMap { $0.isFinite ? $0 : nil }
          members.append((option.key, number.map(JSONValue.number) ?? .string(text)))
        }
      }
    }
    if !sounds.isEmpty { members.append(("sounds", .array(sounds))) }
    if noConfig && configPath != nil { throw usage("--config and --no-config contradict each other") }
    // The checks the config file gets, so a flag and a key mean the same thing.
    do {
      values = try ConfigFile.interpret(.object(members), path: "command line", text: "")
    } catch {
      throw usage(error.message.replacingKeysWithFlags())
    }
  }

  static var helpText: String {
    var text = """
      cued: plays short pre-decoded sound cues through ALSA on request.

      cued decodes every *.mp3 in its sound directories once, at start, and plays them on request
      from clients on a Unix socket (see cuectl(1), and docs/PROTOCOL.md). When nothing plays it
      closes the audio device and sleeps. SIGHUP reloads the config and the sounds; SIGTERM fades
      out and exits.

      Settings come from the command line, then the config file ($XDG_CONFIG_HOME/cued/cued.toml,
      else /etc/cued/cued.toml; docs/CONFIG.md, where every option is a key of the same name),
      then the defaults shown here.

      USAGE: cued [options]

      OPTIONS:

      """
    let column = 28
    let indent = String(repeating: " ", count: column)
    func line(_ flag: String, _ help: String) {
      // The help, wrapped at 100 columns, beside the flag or under it when the flag is long.
      var lines: [String] = []
      var current = ""
      for word in help.split(separator: " ") {
        if !current.isEmpty && column + current.count + 1 + word.count > 100 {
          lines.append(current)
          current = ""
        }
        current += (current.isEmpty ? "" : " ") + word
      }
      lines.append(current)
      if flag.count + 2 < column {
        text += "  " + flag + String(repeating: " ", count: column - 2 - flag.count) + lines[0] + "\n"
      } else {
        text += "  " + flag + "\n" + indent + lines[0] + "\n"
      }
      for rest in lines.dropFirst() { text += indent + rest + "\n" }
    }
    for option in settings {
      line(option.kind == .flag ? "--\(option.key)" : "--\(option.key) <\(option.valueName)>", option.help)
    }
    for other in others {
      line(other.valueName.isEmpty ? other.flag : "\(other.flag) <\(other.valueName)>", other.help)
    }
    text += """

      EXAMPLES:
        cued                                 # default sound directories, ALSA 'default'
        cued --sounds ./sounds --device null
        cued --device pulse --period-frames 128 --buffer-frames 512
        cued --check-config                  # check the config file and exit

      """
    return text
  }

  /// Every option as written on the command line, with its value's name ("" for none) and help.
  static var allFlags: [(flag: String, valueName: String, help: String)] {
    settings.map { ("--" + $0.key, $0.kind == .flag ? "" : $0.valueName, $0.help) }
      + others.flatMap { other in other.flag.split(separator: ", ").map { (String($0), other.valueName, other.help) } }
  }

  /// What a shell offers for an option's value.
  enum ValueCompletion: Equatable {
    case anything, directory, file, words(String)

    init(valueName: String) {
      switch valueName {
      case "dir": self = .directory
      case "path": self = .file
      case "level": self = .words("trace debug info notice warning error critical")
      case "shell": self = .words("bash zsh fish")
      default: self = .anything
      }
    }
  }

  /// A completion script for `shell` (bash, zsh or fish), from the same table as `--help`.
  static func completionScript(for shell: String) -> String? {
    let flags = allFlags
    switch shell {
    case "bash":
      var cases = ""
      for (flag, valueName, _) in flags where !valueName.isEmpty {
        let action: String
        switch ValueCompletion(valueName: valueName) {
        case .directory: action = "COMPREPLY=($(compgen -d -- \"$cur\"))"
        case .file: action = "COMPREPLY=($(compgen -f -- \"$cur\"))"
        case .anything: action = "COMPREPLY=()"
        case .words(let words): action = "COMPREPLY=($(compgen -W '\(words)' -- \"$cur\"))"
        }
        cases += "    \(flag)) \(action); return ;;\n"
      }
      return """
        # bash completion for cued (generated by cued --generate-completion-script bash)
        _cued() {
          local cur prev
          cur="${COMP_WORDS[COMP_CWORD]}"
          prev="${COMP_WORDS[COMP_CWORD-1]}"
          case "$prev" in
        \(cases)  esac
          COMPREPLY=($(compgen -W '\(flags.map(\.flag).joined(separator: " "))' -- "$cur"))
        }
        complete -F _cued cued

        """
    case "zsh":
      var specs = ""
      for (flag, valueName, help) in flags {
        let text = help.replacingOccurrences(of: "'", with: "'\\''").replacingOccurrences(of: "[", with: "(")
          .replacingOccurrences(of: "]", with: ")").replacingOccurrences(of: ":", with: "\\:")
        var action = ""
        switch valueName.isEmpty ? nil : ValueCompletion(valueName: valueName) {
        case nil: action = ""
        case .directory?: action = ":\(valueName):_files -/"
        case .file?: action = ":\(valueName):_files"
        case .anything?: action = ":\(valueName): "
        case .words(let words)?: action = ":\(valueName):(\(words))"
        }
        specs += "    '\(flag)[\(text)]\(action)' \\\n"
      }
      return """
        #compdef cued
        # zsh completion for cued (generated by cued --generate-completion-script zsh)
        _arguments -s \\
        \(specs)    && return 0

        """
    case "fish":
      var lines = "# fish completion for cued (generated by cued --generate-completion-script fish)\n"
      for (flag, valueName, help) in flags {
        let name = flag.hasPrefix("--") ? "-l \(flag.dropFirst(2))" : "-s \(flag.dropFirst())"
        var extra = ""
        switch valueName.isEmpty ? nil : ValueCompletion(valueName: valueName) {
        case nil: extra = ""
        case .directory?, .file?: extra = " -r -F"
        case .anything?: extra = " -r -f"
        case .words(let words)?: extra = " -r -f -a '\(words)'"
        }
        lines += "complete -c cued \(name)\(extra) -d '\(help.replacingOccurrences(of: "'", with: "\\'"))'\n"
      }
      return lines
    default:
      return nil
    }
  }
}

extension String {
  /// A config-file message about `key` rewritten for the command line (`--key`).
  func replacingKeysWithFlags() -> String {
    var text = self
    for key in ConfigFile.flagKeys where text.hasPrefix(key + " ") { text = "--" + text }
    return text
  }

  /// Every `target` replaced with `replacement` (FoundationEssentials is not linked here).
  func replacingOccurrences(of target: String, with replacement: String) -> String {
    guard !target.isEmpty else { return self }
    var result = ""
    var rest = self[...]
    while let range = rest.firstRange(of: target) {
      result += rest[..<range.lowerBound] + replacement
      rest = rest[range.upperBound...]
    }
    return result + rest
  }
}
