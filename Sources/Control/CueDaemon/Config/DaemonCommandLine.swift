import CueOutput
import CuePosix
import CueProtocol

/// cued's command line, parsed by hand.
///
/// cued is a long-running daemon whose every setting is also a config-file key, so each option is
/// `--KEY VALUE` for a setting of the table (Settings.swift), checked by the same code that checks
/// the file; `--help`, the completion scripts and the man page's options come from the same table.
/// A hand-written parser keeps swift-argument-parser, and with it FoundationEssentials, out of the
/// daemon: about 3 MiB of resident memory and 2 ms of start-up (docs/PERFORMANCE.md). `cuectl`,
/// which people type at, keeps swift-argument-parser.
public struct DaemonCommandLine: Sendable {
  /// One option as `--help`, the completion scripts and the man page show it.
  struct Option {
    /// As `--help` writes it: `--rate`, `-h, --help`.
    var flag: String
    /// The value's name ("" when it takes none).
    var valueName: String
    var help: String
    /// The man page's text, in mdoc.
    var manual: String
    var completion: ValueCompletion
  }

  /// What a shell offers for an option's value.
  enum ValueCompletion: Equatable {
    case anything, directory, file, words(String)

    init(_ type: ValueType) {
      switch type {
      case .directories: self = .directory
      case .path: self = .file
      case .choice(let words, _): self = .words(words.joined(separator: " "))
      default: self = .anything
      }
    }
  }

  /// The options that are not settings.
  static let others: [Option] = [
    Option(
      flag: "--config", valueName: "path",
      help: "The config file (default: $XDG_CONFIG_HOME/cued/cued.toml, else /etc/cued/cued.toml, if present).",
      manual: "The config file. Default:\n.Pa $XDG_CONFIG_HOME/cued/cued.toml ,\nelse\n.Pa /etc/cued/cued.toml ,\nif present.",
      completion: .file),
    Option(flag: "--no-config", valueName: "", help: "Read no config file.", manual: "Read no config file.", completion: .anything),
    Option(
      flag: "--check-config", valueName: "",
      help: "Check the config file, print what is wrong (file:line: message) and exit: 0 when it is good.",
      manual: "Check the config file, print what is wrong as FILE:LINE: message, and exit: 0 when it is good.", completion: .anything),
    Option(flag: "--version", valueName: "", help: "Show the version.", manual: "Print the version.", completion: .anything),
    Option(flag: "-h, --help", valueName: "", help: "Show help information.", manual: "Print the options.", completion: .anything),
    Option(
      flag: "--generate-completion-script", valueName: "shell", help: "Print a completion script for bash, zsh or fish.",
      manual: "Print a completion script for bash, zsh or fish.", completion: .words("bash zsh fish")),
  ]

  /// Every option, in the order of `--help`: the settings (Settings.all), then the others.
  static var options: [Option] {
    Settings.all.filter(\.isOption).map { setting in
      Option(
        flag: setting.flag, valueName: setting.type == .boolean ? "" : setting.valueName, help: setting.helpText,
        manual: mdocText(setting.manualText), completion: ValueCompletion(setting.type))
    } + others
  }

  /// Not in `--help`: prints the man page's OPTIONS list (mdoc), which `packaging/install.sh` puts
  /// into packaging/man/cued.1 when it stages the page.
  public static let manualOptionsFlag = "--generate-manual-options"

  /// What the command line asks for.
  public enum Action: Equatable, Sendable {
    case run
    case help
    case version
    case completionScript(String)
    case manualOptions
  }

  public var action = Action.run
  /// The settings given, as config values (absent where an option was not given).
  public var values = ConfigValues()
  public var configPath: String?
  public var noConfig = false
  public var checkConfig = false

  /// A command line that cannot be used: the message names the option and what to do.
  public struct UsageError: Error, Sendable { public var message: String }

  public init(arguments: [String]) throws(UsageError) {
    var members: [(String, JSONValue)] = []
    // Repeated options (--sounds), given to the check as one list each, after the others.
    var lists: [String: [JSONValue]] = [:]
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
      case Self.manualOptionsFlag: action = .manualOptions; return
      case "--config": configPath = try value()
      case "--no-config": noConfig = true
      case "--check-config": checkConfig = true
      default:
        if name.hasPrefix("--no-"), let option = Settings.setting(String(name.dropFirst(5))), option.flag == name {
          // A switch that is on by default: its flag turns it off.
          guard inlineValue == nil else { throw usage("\(name) takes no value") }
          members.append((option.key, .bool(false)))
          continue
        }
        guard name.hasPrefix("--"), let option = Settings.setting(String(name.dropFirst(2))), option.flag == name else {
          let hint = name.hasPrefix("-") ? "" : " (cued takes no arguments, only options)"
          throw usage("unknown option '\(argument)'\(hint)")
        }
        switch option.type {
        case .boolean:
          guard inlineValue == nil else { throw usage("\(name) takes no value") }
          members.append((option.key, .bool(true)))
        case .directories:
          lists[option.key, default: []].append(.string(try value()))
        case .text, .path, .choice, .group, .name, .timeOfDay, .structured:
          members.append((option.key, .string(try value())))
        case .integer, .number, .numberAbove:
          let text = try value()
          // Anything that is not a number goes through as a string, so the check below says what is wanted.
          let number = Double(text).flatMap { $0.isFinite ? $0 : nil }
          members.append((option.key, number.map(JSONValue.number) ?? .string(text)))
        }
      }
    }
    for setting in Settings.all { if let list = lists[setting.key] { members.append((setting.key, .array(list))) } }
    if noConfig && configPath != nil { throw usage("--config and --no-config contradict each other") }
    // The checks the config file gets, so a flag and a key mean the same thing.
    do {
      values = try ConfigFile.interpret(.object(members), path: "command line")
    } catch {
      throw usage(error.message.replacingKeysWithFlags())
    }
  }

  public static var helpText: String {
    var text = """
      cued: plays short pre-decoded sound cues through \(OutputBackend.playsThrough) on request.

      cued decodes every sound file in its sound directories (MP3, Ogg Vorbis and Opus, FLAC, WAV;
      8,000 to 384,000 Hz, mono or stereo) once, at start, and plays them on request from clients
      on a Unix socket (see cuectl(1), and docs/PROTOCOL.md). When nothing plays it closes the
      audio device and sleeps. SIGHUP reloads the config and the sounds; SIGTERM fades
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
    for option in options {
      line(option.valueName.isEmpty ? option.flag : "\(option.flag) <\(option.valueName)>", option.help)
    }
    // The examples of a backend's options are its row's (OutputBackend.examples).
    text += """

      EXAMPLES:
        cued                                 # the default sound directories and device (auto)
        cued --sounds ./sounds --device null

      """
    for example in OutputBackend.table.flatMap(\.examples) { text += "  " + example + "\n" }
    text += """
        cued --check-config                  # check the config file and exit

      """
    return text
  }

  /// Every option as written on the command line (`-h, --help` is two), with its value's name and help.
  static var allFlags: [Option] {
    options.flatMap { option in
      option.flag.split(separator: ", ").map { flag in
        var one = option
        one.flag = String(flag)
        return one
      }
    }
  }

  /// A completion script for `shell` (bash, zsh or fish), from the same table as `--help`.
  public static func completionScript(for shell: String) -> String? {
    let flags = allFlags
    switch shell {
    case "bash":
      var cases = ""
      for option in flags where !option.valueName.isEmpty {
        let action: String
        switch option.completion {
        case .directory: action = "COMPREPLY=($(compgen -d -- \"$cur\"))"
        case .file: action = "COMPREPLY=($(compgen -f -- \"$cur\"))"
        case .anything: action = "COMPREPLY=()"
        case .words(let words): action = "COMPREPLY=($(compgen -W '\(words)' -- \"$cur\"))"
        }
        cases += "    \(option.flag)) \(action); return ;;\n"
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
      for option in flags {
        let (flag, valueName) = (option.flag, option.valueName)
        let text = option.help.replacingOccurrences(of: "'", with: "'\\''").replacingOccurrences(of: "[", with: "(")
          .replacingOccurrences(of: "]", with: ")").replacingOccurrences(of: ":", with: "\\:")
        var action = ""
        switch valueName.isEmpty ? nil : option.completion {
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
      for option in flags {
        let flag = option.flag
        let name = flag.hasPrefix("--") ? "-l \(flag.dropFirst(2))" : "-s \(flag.dropFirst())"
        var extra = ""
        switch option.valueName.isEmpty ? nil : option.completion {
        case nil: extra = ""
        case .directory?, .file?: extra = " -r -F"
        case .anything?: extra = " -r -f"
        case .words(let words)?: extra = " -r -f -a '\(words)'"
        }
        lines += "complete -c cued \(name)\(extra) -d '\(option.help.replacingOccurrences(of: "'", with: "\\'"))'\n"
      }
      return lines
    default:
      return nil
    }
  }

  /// Plain text as one mdoc text line: backslashes escaped, and a leading period or apostrophe
  /// (which would make it a request) guarded.
  static func mdocText(_ text: String) -> String {
    let escaped = text.replacingOccurrences(of: "\\", with: "\\e").replacingOccurrences(of: "\n", with: " ")
    return escaped.hasPrefix(".") || escaped.hasPrefix("'") ? "\\&" + escaped : escaped
  }

  /// The man page's OPTIONS list (mdoc), from the same table as `--help`.
  public static var manualOptions: String {
    var text = ".Bl -tag -width Ds\n"
    for option in options {
      let flags = option.flag.split(separator: ", ").map { "Fl " + $0.dropFirst() }.joined(separator: " , ")
      text += ".It " + flags + (option.valueName.isEmpty ? "" : " Ar " + option.valueName) + "\n"
      text += option.manual + "\n"
    }
    return text + ".El\n"
  }
}

extension String {
  /// A config-file message about `key` rewritten for the command line (`--key`).
  func replacingKeysWithFlags() -> String {
    var text = self
    for key in Settings.topLevelKeys where text.hasPrefix(key + " ") { text = "--" + text }
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
