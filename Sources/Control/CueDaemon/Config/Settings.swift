import CueOutput
import CuePosix
import CueProtocol

// The settings table: every setting of cued, once. The command line (parsing, `--help`, the
// completion scripts and the man page's options, DaemonCommandLine.swift), the config file (keys,
// types, ranges, the unknown-key message, ConfigFile.swift) and the reload rules
// (`DaemonConfiguration.reloading(to:)`) are all made from it.
//
// Adding a plain setting: one entry in `Settings.all` (its `ValueType`, checked by the one checker
// of ValueType.swift, and its default, written only there: `DaemonConfiguration()` applies it), the
// field it sets in DaemonConfiguration (declared with a placeholder no reader sees), and its row in
// docs/CONFIG.md.
//
// A setting only one output backend reads is not declared here but in its row of the backend table
// (CueOutput's `OutputBackend.options`, a `BackendOption`): `Settings.all` takes every row's options
// (`Setting.init(_:)` below), and their values go to `DaemonConfiguration.backendOptions`.
//
// The keys of the file's own tables (`[cues.NAME]`, `[carousel.NAME]`, `[groups.NAME]`,
// `[clients.NAME]`, `[quiet-hours]`) are declared beside these, in TableSettings.swift.

/// One setting: its key, what it takes, its default, how it is described, where it goes in
/// DaemonConfiguration, and whether a reload applies it.
public struct Setting: Sendable {
  public enum Reload: Sendable, Equatable {
    /// A reload applies it (at once, at the rescan that follows, or to new connections).
    case reloadable
    /// Read at start only; a reload that changes it is logged as needing a restart.
    case restartOnly
  }

  public let key: String
  /// The config table it is in (`system-sounds` for `[system-sounds]`), "" for the top level.
  /// Only top-level settings are command-line options.
  public let table: String
  public let type: ValueType
  /// nil when the default is worked out at start (the socket, the sound directories).
  public let defaultValue: SettingValue?
  /// How `--help` and the man page state the default, when not just `defaultValue`.
  let defaultNote: String?
  /// The value's name in `--help` (`--rate <hz>`); "" for a flag.
  public let valueName: String
  /// What it does, for `--help` and the completions (no final period; the default is added).
  public let help: String
  /// More for the man page, after the help.
  let details: String
  public let reload: Reload
  /// Stores a checked value into the configuration.
  let apply: @Sendable (SettingValue, inout DaemonConfiguration) -> Void
  /// Copies the setting from one configuration into another.
  let copy: @Sendable (DaemonConfiguration, inout DaemonConfiguration) -> Void
  /// Whether two configurations differ in this setting.
  let differs: @Sendable (DaemonConfiguration, DaemonConfiguration) -> Bool

  init<Field: Equatable & Sendable>(
    _ key: String, in table: String = "", _ type: ValueType, default defaultValue: SettingValue?, shown defaultNote: String? = nil,
    valueName: String = "", _ reload: Reload, help: String, details: String = "",
    sets field: WritableKeyPath<DaemonConfiguration, Field> & Sendable, as convert: @escaping @Sendable (SettingValue) -> Field
  ) {
    self.key = key
    self.table = table
    self.type = type
    self.defaultValue = defaultValue
    self.defaultNote = defaultNote
    self.valueName = valueName
    self.help = help
    self.details = details
    self.reload = reload
    apply = { value, configuration in configuration[keyPath: field] = convert(value) }
    copy = { from, to in to[keyPath: field] = from[keyPath: field] }
    differs = { a, b in a[keyPath: field] != b[keyPath: field] }
  }

  init<Field: SettingField>(
    _ key: String, in table: String = "", _ type: ValueType, default defaultValue: SettingValue?, shown defaultNote: String? = nil,
    valueName: String = "", _ reload: Reload, help: String, details: String = "",
    sets field: WritableKeyPath<DaemonConfiguration, Field> & Sendable
  ) {
    self.init(
      key, in: table, type, default: defaultValue, shown: defaultNote, valueName: valueName, reload, help: help, details: details,
      sets: field, as: Field.init(setting:))
  }

  /// The setting a backend row declares (`BackendOption`), stored in `DaemonConfiguration.backendOptions`.
  init(_ option: BackendOption) {
    key = option.key
    table = ""
    switch option.value {
    case .integer(let range, let value, _): (type, defaultValue) = (.integer(range), .integer(value))
    case .number(let range, let value, _): (type, defaultValue) = (.number(range), .number(value))
    }
    defaultNote = option.shownDefault
    valueName = option.valueName
    help = option.help
    details = option.details
    reload = option.reload == .reloadable ? .reloadable : .restartOnly
    apply = { value, configuration in option.store(value.double, into: &configuration.backendOptions) }
    copy = { from, to in option.store(option.read(from.backendOptions), into: &to.backendOptions) }
    differs = { a, b in option.read(a.backendOptions) != option.read(b.backendOptions) }
  }

  /// `value` checked for this setting; a range's problem states the default as `--help` does.
  func check(_ value: JSONValue) throws(SettingProblem) -> SettingValue {
    try type.check(value, name: key, shownDefault: shownDefault)
  }

  /// The key as the config values know it: `rate`, or `system-sounds.volume` in a table.
  public var id: String { table.isEmpty ? key : table + "." + key }

  /// Whether it is also a command-line option (`--key`).
  public var isOption: Bool { table.isEmpty }

  /// Its command-line flag: `--KEY`, or `--no-KEY` for a switch that is on by default.
  public var flag: String { type == .boolean && defaultValue == .bool(true) ? "--no-" + key : "--" + key }

  /// The default as the help states it, if it states one (not for flags).
  public var shownDefault: String? {
    if let defaultNote { return defaultNote }
    if type == .boolean { return nil }
    return defaultValue?.shown
  }

  /// The help line of `--help`: the help, the default, a period.
  public var helpText: String { help + (shownDefault.map { " (default: \($0))" } ?? "") + "." }

  /// The man page's description: the help, the default, the details, and what a reload does.
  public var manualText: String {
    help + "." + (shownDefault.map { " Default: \($0)." } ?? "") + (details.isEmpty ? "" : " " + details)
      + (reload == .reloadable ? " A reload (SIGHUP) applies a change." : " A change takes effect when cued restarts.")
  }
}

/// A DaemonConfiguration field that takes a setting's value as it is.
protocol SettingField: Equatable, Sendable { init(setting: SettingValue) }
extension Int: SettingField { init(setting: SettingValue) { self = setting.int } }
extension Int32: SettingField { init(setting: SettingValue) { self = Int32(clamping: setting.int) } }
extension Double: SettingField { init(setting: SettingValue) { self = setting.double } }
extension String: SettingField { init(setting: SettingValue) { self = setting.string } }
extension Bool: SettingField { init(setting: SettingValue) { self = setting.bool } }
extension Array: SettingField where Element == String { init(setting: SettingValue) { self = setting.strings } }

public enum Settings {
  /// Every setting, in the order of `--help`, the man page, the unknown-key message and the
  /// reload's list of restart-only keys.
  public static let all: [Setting] = [
    Setting(
      "sounds", .directories, default: nil, valueName: "dir", .reloadable, help: "A sound directory; repeat for more (earlier wins)",
      details: "Default: $XDG_DATA_HOME/cued/sounds, /usr/local/share/cued/sounds, /usr/share/cued/sounds.",
      sets: \.soundDirectories),
    Setting(
      "socket", .path, default: nil, shown: "$CUED_SOCKET, else $XDG_RUNTIME_DIR/cued/cued.sock", valueName: "path", .restartOnly,
      help: "The Unix socket to listen on", details: "Without either it is /tmp/cued-UID/cued.sock. The socket is made mode 0600 in a 0700 directory.",
      sets: \.socketPath, as: { DefaultPaths.socket(explicit: $0.string) }),
    Setting(
      "device", .text, default: "auto", valueName: "name", .restartOnly, help: OutputBackend.deviceHelp, details: OutputBackend.deviceDetails,
      sets: \.device),
  ] + OutputBackend.options.map(Setting.init) + [
    Setting(
      "pipewire-pause-after", .number(0...86_400), default: 1.5, valueName: "seconds", .restartOnly,
      help: "Seconds of silence after which the PipeWire or PulseAudio stream is paused until the next cue (0: never)",
      details:
        "A paused PipeWire stream keeps its node and links but is not scheduled, and a corked PulseAudio stream keeps its sink input but is not asked for audio, so neither cued nor the server wakes for it; the stream stays connected, paused, however long the quiet lasts, and the next cue resumes it. Paused at the end of the idle window (idle-timeout) when that comes first; at 0 the stream is not paused and leaves the server after idle-timeout.",
      sets: \.pullPauseSeconds),
    Setting(
      "latency-decay", .number(0.1...86_400), default: 10, valueName: "seconds", .restartOnly,
      help: "Seconds without an xrun that cut sound after which a raised latency halves again (ALSA's fill target, PipeWire's, PulseAudio's)",
      details:
        "A raise within this long of a step down says the step came too soon: the window then doubles, up to four times this, and halves back for each window the latency stays down.",
      sets: \.latencyDecaySeconds),
    Setting(
      "rate", .integer(8000...192_000), default: 48000, valueName: "hz", .restartOnly,
      help: "The output sample rate; every cue is converted to it", details: "The conversion happens once, at load.", sets: \.sampleRate),
    Setting(
      "idle-timeout", .number(0...86_400), default: 2, valueName: "seconds", .restartOnly,
      help: "Seconds of silence before an ALSA or null device is closed",
      details: "A PipeWire or PulseAudio stream pauses instead, at the latest then (pipewire-pause-after), and stays connected.", sets: \.idleSeconds),
    Setting(
      "max-voices", .integer(1...4096), default: 32, valueName: "n", .reloadable,
      help: "Voices sounding at once; past it the oldest is stolen with a fade", details: "The client whose voice is stolen is told.", sets: \.voiceLimit),
    Setting(
      "max-cue-seconds", .number(0.001...3600), default: 60, valueName: "seconds", .reloadable, help: "The longest cue accepted",
      details: "Longer files are skipped.", sets: \.maximumCueSeconds),
    Setting(
      "max-memory", .integer(1...65536), default: 256, valueName: "MiB", .reloadable,
      help: "The most decoded memory all cues may take", details: "Files past it are skipped.",
      sets: \.maximumDecodedBytes, as: { $0.int << 20 }),
    Setting(
      "max-cues", .integer(1...1_000_000), default: 4096, valueName: "n", .reloadable, help: "The most cues loaded",
      sets: \.maximumCues),
    Setting(
      "max-clients", .integer(1...65536), default: 1024, valueName: "n", .reloadable, help: "The most clients connected at once",
      details: "One more is told limit-reached and closed.", sets: \.maximumClients),
    Setting(
      "max-players", .integer(1...1_000_000), default: 1024, valueName: "n", .reloadable, help: "The most players at once",
      sets: \.maximumPlayers),
    Setting(
      "max-sounds", .integer(1...1_000_000), default: 1024, valueName: "n", .reloadable, help: "The most system sounds at once",
      sets: \.maximumSounds),
    Setting(
      "max-client-queue", .integer(16...1_048_576), default: 1024, valueName: "KiB", .reloadable,
      help: "Unread replies and events one client may queue; past it its events are dropped and counted",
      details: "Past a quarter of it its requests are not read. Connected clients keep the size they had.",
      sets: \.clientQueueBytes, as: { $0.int << 10 }),
    Setting(
      "allow-any-path", .boolean, default: false, .reloadable,
      help: "Let player.create / sound.create paths, and the play / prepare files of another user's clients, lead outside the sound directories (cued's own user plays any file it can read)",
      sets: \.allowAnyPath),
    Setting(
      "watch-sounds", .boolean, default: true, .reloadable,
      help: "Watch the sound directories (inotify): a sound file saved or moved into one is loaded as a cue, one deleted or moved out is removed, without a reload (--no-watch-sounds: do not)",
      details:
        "A burst of changes is taken together 0.2 s after the last one. Directories that do not exist when cued starts (or reloads) are not watched.",
      sets: \.watchSounds),
    Setting(
      "sound-theme", .text, default: "desktop", valueName: "name", .reloadable,
      help:
        "The freedesktop sound theme that play with an event name looks in (its parents and freedesktop after it); desktop: the desktop's own, and its event-sounds switch",
      details:
        "desktop follows the desktop's sound settings as they change (org.gnome.desktop.sound's theme-name and event-sounds, read through GSettings; Cinnamon's and MATE's own schemas on those desktops): with event sounds off, plays of events are silent (event-sounds-off) and cues still sound. Without a desktop setting to read it is freedesktop. Any other name pins that theme and reads nothing from the desktop. Looked up as libcanberra does: $XDG_DATA_HOME/sounds, then each of $XDG_DATA_DIRS/sounds; the locale from LC_ALL, LC_MESSAGES or LANG; the stereo profile.",
      sets: \.soundTheme),
    Setting(
      "follow-desktop", .choice(["auto", "always"]), default: "auto", valueName: "when", .reloadable,
      help: "With sound-theme desktop: auto follows the desktop's sound settings only in a desktop session; always wherever their schema is installed",
      details:
        "auto loads GLib only where there is a desktop session: a session bus (DBUS_SESSION_BUS_ADDRESS, else $XDG_RUNTIME_DIR/bus) and a desktop's settings (XDG_CURRENT_DESKTOP, or dconf's user database), or GSETTINGS_BACKEND set; elsewhere (a server, a container) it is freedesktop and GLib is never loaded. Checked at start and again at each reload until the desktop is followed; status says why (soundTheme.reason).",
      sets: \.followDesktop),
    Setting(
      "loudness-normalize", .boolean, default: false, .reloadable,
      help: "Play every cue at loudness-target: each voice is scaled by the cue's measured EBU R128 loudness",
      details:
        "The gain is lowered where it would lift the cue's sample peak above 0 dBFS (logged once per cue); a silent cue is left as it is. Applies to voices that start after the change. With it on, each cue is measured as it is decoded, which start-up pays for (about 1 ms of work per second of audio).",
      sets: \.loudnessNormalize),
    Setting(
      "loudness-target", .number(-70...0), default: -23, valueName: "LUFS", .reloadable,
      help: "The loudness loudness-normalize brings every cue to, in LUFS",
      details:
        "-23 is EBU R128's programme level and the median of the freedesktop sound theme; a cue shorter than 400 ms counts as its energy over 400 ms.",
      sets: \.loudnessTargetLUFS),
    Setting(
      "allow-group", .group, default: nil, valueName: "group", .reloadable,
      help: "Let members of this group connect too (the system-wide mode); otherwise only cued's own user may",
      details: "A group name or number. Connections from any other user are refused, whatever the socket file's mode.",
      sets: \.allowedGroup, as: { Users.groupID(named: $0.string) }),
    Setting(
      "realtime-priority", .integer(0...99), default: 20, valueName: "n", .restartOnly,
      help: "SCHED_FIFO priority for the thread that mixes, 0 for normal scheduling", sets: \.realtimePriority),
    Setting(
      "nice-level", .integer(-20...0), default: -11, valueName: "n", .restartOnly,
      help: "Nice level of the control thread and the threads it starts (the sound server's client threads, the decoders), 0 to leave it",
      details:
        "-11 is what PipeWire and PulseAudio give their own threads: on a busy machine a cue's request and the stream's resume then do not wait behind ordinary processes. Set with setpriority when cued may, else asked of RTKit (MakeThreadHighPriority, no lower than its MinNiceLevel) unless no-rtkit.",
      sets: \.niceLevel),
    Setting(
      "no-rtkit", .boolean, default: false, .restartOnly,
      help: "When SCHED_FIFO or a nice level is refused, do not ask RTKit (org.freedesktop.RealtimeKit1 on the system bus) instead",
      details:
        "Otherwise cued asks RTKit, which grants SCHED_RR at no more than its MaxRealtimePriority once cued has capped its RLIMIT_RTTIME at RTKit's RTTimeUSecMax, for whichever thread mixes: cued's audio thread, libpulse's mainloop thread or PipeWire's data thread.",
      sets: \.realtimeKit, as: { !$0.bool }),
    Setting(
      "log-level", .choice(["trace", "debug", "info", "notice", "warning", "error", "critical"]), default: "info",
      valueName: "level", .reloadable, help: "trace, debug, info, notice, warning, error or critical", sets: \.logLevel),
    // [system-sounds]: not options (cuectl system changes them while cued runs).
    Setting(
      "volume", in: "system-sounds", .number(0...1), default: 1, .reloadable,
      help: "The system-sound volume at start (cuectl system --volume)", sets: \.systemVolume),
    Setting(
      "muted", in: "system-sounds", .boolean, default: false, .reloadable,
      help: "Whether system sounds are muted at start (cuectl system --mute)", sets: \.systemMuted),
  ]

  /// The setting `key` of `table` ("" for the top level).
  public static func setting(_ key: String, in table: String = "") -> Setting? {
    all.first { $0.key == key && $0.table == table }
  }

  /// The top-level keys, in table order.
  public static var topLevelKeys: [String] { all.filter(\.isOption).map(\.key) }

  /// The tables settings are in (`system-sounds`), in table order.
  public static var tables: [String] {
    var seen: [String] = []
    for setting in all where !setting.table.isEmpty && !seen.contains(setting.table) { seen.append(setting.table) }
    return seen
  }

  /// `~/x` → `$HOME/x`.
  static func expandHome(_ path: String) -> String {
    guard path.hasPrefix("~/"), let home = ProcessInfo.environment("HOME") else { return path }
    return home + path.dropFirst(1)
  }
}

extension DaemonConfiguration {
  /// The configuration a reload makes: the reloadable settings taken from `next`, the restart-only
  /// ones kept from this one, and the keys of the restart-only ones that `next` changes, in table order
  /// (to log that they need a restart). Fields that are not settings are kept.
  public func reloading(to next: DaemonConfiguration) -> (configuration: DaemonConfiguration, restartOnly: [String]) {
    var result = self
    var restartOnly: [String] = []
    for setting in Settings.all {
      switch setting.reload {
      case .reloadable: setting.copy(next, &result)
      case .restartOnly: if setting.differs(self, next) { restartOnly.append(setting.key) }
      }
    }
    return (result, restartOnly)
  }
}
