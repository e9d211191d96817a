import CuePosix
import CueOutput

/// Everything the daemon is told at start: flags and the config file end up here. A setting's
/// default is written once, in its declaration (Settings.all, or its backend row): every
/// initialiser starts from `init()`, which applies each declared default, so the placeholder a
/// setting's field is declared with (`0`, `""`, `false`) is never seen.
public struct DaemonConfiguration: Sendable {
  /// Sound directories in search order: a cue name found in an earlier one wins.
  public var soundDirectories: [String]
  public var socketPath: String
  /// Where to play, as given (`auto`, a backend of `OutputBackend.table` and its target, or a bare ALSA PCM name); see `output`.
  public var device: String
  /// The values of the settings only an output backend reads, each declared in its row
  /// (`OutputBackend.options`; `Settings.all` takes them from there), and which were given.
  public var backendOptions = OutputSettings.Options()
  /// Seconds of silence after which a pulled stream is paused (PipeWire: inactive, not scheduled;
  /// PulseAudio: corked) until the next cue; 0 never pauses. Below `idleSeconds` to matter.
  public var pullPauseSeconds: Double = 0
  /// Seconds without an xrun that cut sound after which a raised latency halves again (every
  /// backend's adapter: `LatencyAdapter`).
  public var latencyDecaySeconds: Double = 0
  public var sampleRate: Int = 0
  /// Seconds of silence after which the device is closed.
  public var idleSeconds: Double = 0
  /// Voices sounding at once; past it the oldest is stolen with a fade.
  public var voiceLimit: Int = 0
  public var maximumCueSeconds: Double = 0
  public var maximumDecodedBytes: Int = 0
  public var maximumCues: Int = 0
  public var maximumClients: Int = 0
  public var maximumPlayers: Int = 0
  public var maximumSounds: Int = 0
  /// Unread output one client may have queued before its events are dropped (and, at a quarter
  /// of it, before its requests stop being read): `--max-client-queue`, in bytes.
  public var clientQueueBytes: Int = 0
  /// Besides cued's own user, members of this group may connect (`--allow-group`); nil: nobody else.
  public var allowedGroup: UInt32? = nil
  /// Lets `player.create` and `sound.create` paths, and another user's `play` and `prepare` files,
  /// lead outside the sound directories (`--allow-any-path`; cued's own user plays any file anyway).
  public var allowAnyPath: Bool = false
  /// Watch the sound directories and add or remove cues as files come and go (`watch-sounds`;
  /// `--no-watch-sounds` turns it off).
  public var watchSounds: Bool = false
  /// The freedesktop sound theme `play` with an `event` looks in (`--sound-theme`); `desktop`: the
  /// desktop's own, with its event-sounds switch (`SoundThemeChoice`).
  public var soundTheme: String = ""
  /// With `sound-theme = "desktop"`: `auto` follows the desktop only in a desktop session
  /// (`DesktopSession`), `always` wherever the schema is installed (`--follow-desktop`).
  public var followDesktop: String = ""
  /// Scale every voice so that its cue sounds at `loudnessTargetLUFS` (`--loudness-normalize`).
  public var loudnessNormalize: Bool = false
  /// The integrated loudness (EBU R128, LUFS) cues are normalised to.
  public var loudnessTargetLUFS: Double = 0
  /// The fade used by stop and by stealing, in seconds.
  public var stopFadeSeconds: Double = 0.008
  /// Fade applied to everything on SIGTERM, in seconds (at most 50 ms).
  public var shutdownFadeSeconds: Double = 0.05
  /// After a device loss, one-shot voices older than this are dropped rather than played late.
  public var lateVoiceSeconds: Double = 0.5
  /// SCHED_FIFO priority to ask for on the thread that mixes; 0 disables.
  public var realtimePriority: Int32 = 0
  /// When SCHED_FIFO is refused (EPERM), ask RTKit on the system bus instead (off: `--no-rtkit`).
  public var realtimeKit: Bool = false
  /// The real-time policy for whichever thread mixes (the audio thread, libpulse's mainloop
  /// thread, PipeWire's data thread), from the two settings above.
  public var realtimePolicy: RealtimePolicy { RealtimePolicy(priority: realtimePriority, asksRealtimeKit: realtimeKit) }
  /// The nice level of the control thread and the threads it starts (0: left alone).
  public var niceLevel: Int32 = 0
  public var controlPriority: ControlPriority { ControlPriority(nice: niceLevel, asksRealtimeKit: realtimeKit) }
  /// The system-sound volume and mute switch at start.
  public var systemVolume: Double = 0
  public var systemMuted: Bool = false
  /// trace, debug, info, notice, warning, error or critical.
  public var logLevel: String = ""

  /// Every setting at its declared default; the sound directories and the socket as worked out at start.
  public init() {
    (soundDirectories, socketPath, device) = (Self.defaultSoundDirectories(), DefaultPaths.socket(), "")
    for setting in Settings.all {
      if let value = setting.defaultValue { setting.apply(value, &self) }
    }
  }

  /// The defaults, with these sound directories, socket and device.
  public init(soundDirectories: [String], socketPath: String, device: String) {
    self.init()
    (self.soundDirectories, self.socketPath, self.device) = (soundDirectories, socketPath, device)
  }

  /// The configuration that `values` describe (flags over the config file), the settings' defaults for the rest.
  public init(_ values: ConfigValues) {
    self.init()
    for setting in Settings.all {
      if let value = values[setting] { setting.apply(value, &self) }
    }
    let given = OutputBackend.options.map(\.key).filter { key in Settings.setting(key).map { values[$0] != nil } ?? false }
    backendOptions.given = Set(given)
  }

  /// What the output backends read (`OutputBackend.make`), and what they hand back adjusted (the
  /// ALSA layout for PipeWire's ALSA plugin, `OutputSettings.forPipeWirePlugin`).
  public var outputSettings: OutputSettings {
    get {
      var settings = OutputSettings(
        sampleRate: sampleRate, latencyDecaySeconds: latencyDecaySeconds, realtime: realtimePolicy, options: backendOptions)
      settings.control = controlPriority
      return settings
    }
    set {
      (sampleRate, latencyDecaySeconds, backendOptions) = (newValue.sampleRate, newValue.latencyDecaySeconds, newValue.options)
      (realtimePriority, realtimeKit) = (newValue.realtime.priority, newValue.realtime.asksRealtimeKit)
      niceLevel = newValue.control.nice
    }
  }

  /// What is wrong with this combination of settings, if anything (each value alone was checked).
  public var problem: String? {
    if output == nil { return OutputChoice.refusal(device) }
    return OutputBackend.problem(in: backendOptions)
  }

  /// The output `device` chooses; nil when it is malformed (a backend's name and a colon with no target).
  public var output: OutputChoice? { OutputChoice(device) }

  /// The sound directories used when none are given: the XDG data directory, the system ones,
  /// and the repository's `sounds/` when the binary runs from a checkout's `.build`.
  public static func defaultSoundDirectories(executablePath: String? = ProcessInfo.executablePath) -> [String] {
    var directories: [String] = []
    if let dataHome = ProcessInfo.environment("XDG_DATA_HOME"), dataHome.hasPrefix("/") {
      directories.append(dataHome + "/cued/sounds")
    } else if let home = ProcessInfo.environment("HOME"), home.hasPrefix("/") {
      directories.append(home + "/.local/share/cued/sounds")
    }
    directories.append("/usr/local/share/cued/sounds")
    directories.append("/usr/share/cued/sounds")
    if let checkout = checkoutRoot(executablePath: executablePath) {
      directories.append(checkout + "/sounds")
    }
    return directories
  }

  /// The repository root when `executablePath` lies under `<root>/.build…/`, with `Package.swift` and `sounds/` there.
  static func checkoutRoot(executablePath: String?) -> String? {
    guard let executablePath, let range = executablePath.firstRange(of: "/.build") else { return nil }
    let root = String(executablePath[..<range.lowerBound])
    guard Files.kind(of: root + "/Package.swift") == .regular, Files.kind(of: root + "/sounds") == .directory else {
      return nil
    }
    return root
  }
}
