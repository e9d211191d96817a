import CuePosix

/// Everything the daemon is told at start: flags and the config file end up here. The fields that
/// settings set (Settings.all) start at the settings' defaults; a test keeps the two equal.
public struct DaemonConfiguration: Sendable {
  /// Sound directories in search order: a cue name found in an earlier one wins.
  public var soundDirectories: [String]
  public var socketPath: String
  /// ALSA PCM name, or `null` for the clock-paced silent sink.
  public var device: String
  public var sampleRate: Int = 48000
  public var periodFrames: Int = 240
  public var bufferFrames: Int = 960
  /// Seconds of silence after which the device is closed.
  public var idleSeconds: Double = 2
  /// Voices sounding at once; past it the oldest is stolen with a fade.
  public var voiceLimit: Int = 32
  public var maximumCueSeconds: Double = 60
  public var maximumDecodedBytes: Int = 256 << 20
  public var maximumCues: Int = 4096
  public var maximumClients: Int = 1024
  public var maximumPlayers: Int = 1024
  public var maximumSounds: Int = 1024
  /// Unread output one client may have queued before its events are dropped (and, at a quarter
  /// of it, before its requests stop being read): `--max-client-queue`, in bytes.
  public var clientQueueBytes: Int = 1024 << 10
  /// Besides cued's own user, members of this group may connect (`--allow-group`); nil: nobody else.
  public var allowedGroup: UInt32? = nil
  /// Lets clients name MP3 files outside the sound directories (`--allow-any-path`).
  public var allowAnyPath = false
  /// The fade used by stop and by stealing, in seconds.
  public var stopFadeSeconds: Double = 0.008
  /// Fade applied to everything on SIGTERM, in seconds (at most 50 ms).
  public var shutdownFadeSeconds: Double = 0.05
  /// After a device loss, one-shot voices older than this are dropped rather than played late.
  public var lateVoiceSeconds: Double = 0.5
  /// SCHED_FIFO priority to ask for on the audio thread; 0 disables.
  public var realtimePriority: Int32 = 20
  /// When SCHED_FIFO is refused (EPERM), ask RTKit on the system bus instead (off: `--no-rtkit`).
  public var realtimeKit = true
  /// The system-sound volume and mute switch at start.
  public var systemVolume = 1.0
  public var systemMuted = false
  /// trace, debug, info, notice, warning, error or critical.
  public var logLevel = "info"

  public init(soundDirectories: [String], socketPath: String, device: String) {
    self.soundDirectories = soundDirectories
    self.socketPath = socketPath
    self.device = device
  }

  /// The configuration that `values` describe (flags over the config file), the settings' defaults for the rest.
  public init(_ values: ConfigValues) {
    self.init(soundDirectories: Self.defaultSoundDirectories(), socketPath: DefaultPaths.socket(), device: "default")
    for setting in Settings.all {
      if let value = values[setting] ?? setting.defaultValue { setting.apply(value, &self) }
    }
  }

  /// What is wrong with this combination of settings, if anything (each value alone was checked).
  public var problem: String? {
    if bufferFrames < periodFrames * 2 { return "buffer-frames (\(bufferFrames)) must hold at least two periods (\(periodFrames * 2) frames)" }
    return nil
  }

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
