import Logging

/// Follows the desktop's sound theme and event-sounds switch while `sound-theme` is `desktop`, and
/// puts the theme in force in `ThemeSounds`.
///
/// The settings are read through GSettings (`DesktopSettingsWatch`), when a schema for them is
/// installed and (with `follow-desktop = "auto"`) there is a desktop session (`DesktopSession`),
/// and heard as they change. GLib is loaded only then: on a server or in a container it is never
/// mapped. In-process tests set `watch` and `session` themselves: there is no desktop to follow.
final class DesktopFollowing {
  /// Starts watching the desktop's sound settings, handing each change to its argument (on the
  /// watch's thread): the first reading, or why there is none. Set by `useDesktop()`; nil: there
  /// is no desktop to follow.
  var watch: ((@escaping @Sendable (DesktopSoundSettings) -> Void) -> Result<DesktopSoundSettings, DesktopSettingsWatch.Unavailable>)? = nil
  /// Whether there is a desktop to follow, and why (for `follow-desktop`'s value), decided before
  /// the watch loads GLib. Set by `useDesktop()`; nil: the watch decides.
  var session: ((String) -> DesktopSession.Verdict)? = nil
  /// The desktop's sound settings as last read; nil before a watch started, or when none could.
  private(set) var settings: DesktopSoundSettings? = nil
  private var watchTried = false
  /// Why the desktop is followed, or why not (`status`'s `soundTheme.reason`).
  private var reason: String? = nil
  private var logged = false

  private let themeSounds: ThemeSounds
  private let work: WorkQueue
  private let logger: Logger
  private let environment: (String) -> String?

  init(themeSounds: ThemeSounds, work: WorkQueue, logger: Logger, environment: @escaping (String) -> String?) {
    self.themeSounds = themeSounds
    self.work = work
    self.logger = logger
    self.environment = environment
  }

  /// Reads the desktop's settings through GSettings from now on (the daemon program; never in-process tests).
  func useDesktop() {
    session = { [environment] when in
      let schemas = DesktopSoundSchemas.candidates(currentDesktop: environment("XDG_CURRENT_DESKTOP"))
      let directories = DesktopSoundSchemas.directories(environment: environment)
      guard DesktopSoundSchemas.firstNamed(schemas, in: directories, read: DesktopSoundSchemas.readCompiled) != nil else {
        return .absent("no GSettings schema for them is installed (\(schemas.joined(separator: ", ")); Debian: gsettings-desktop-schemas)")
      }
      if when == "always" { return .present("follow-desktop = \"always\"") }
      return DesktopSession.verdict(environment: environment)
    }
    watch = { [environment] post in
      DesktopSettingsWatch.start(schemas: DesktopSoundSchemas.candidates(currentDesktop: environment("XDG_CURRENT_DESKTOP")), post: post).map(\.0)
    }
  }

  /// Puts the sound theme in force: `sound-theme`, and the desktop's settings when it follows them.
  /// Logged when the choice changes.
  ///
  /// The watch is started the first time `desktop` is in force and there is a desktop to follow;
  /// until then every reload asks again (a user service may start before the session it serves:
  /// `cuectl reload` once it is there follows it). Once tried, the watch is never tried again: it
  /// either runs and hears every change, or it failed in GLib, which a reload would not mend.
  func follow(_ configuration: DaemonConfiguration) {
    let configured = configuration.soundTheme
    if configured == SoundThemeChoice.followDesktop, !watchTried, let start = watch {
      let verdict = session?(configuration.followDesktop)
      switch verdict {
      case .absent(let why):
        if why != reason { logger.info("the desktop's sound settings are not followed: \(why)") }
        reason = why
      case .present, nil:
        watchTried = true
        switch start({ [work] settings in work.post(.desktopSound(settings)) }) {
        case .success(let settings):
          self.settings = settings
          if case .present(let why) = verdict { reason = why }
        case .failure(let unavailable):
          logger.info("the desktop's sound settings are not followed: \(unavailable.reason)")
          reason = unavailable.reason
        }
      }
    }
    let choice = SoundThemeChoice(configured: configured, desktop: settings, reason: reason)
    if choice != themeSounds.choice || !logged {
      if let refused = choice.refusedName {
        logger.warning("the desktop's sound theme '\(refused)' is not a theme name; playing events from \(choice.name)")
      }
      logger.info("sound theme: \(choice.summary)")
      logged = true
    }
    themeSounds.follow(choice)
  }

  /// The watch read a change: follow it (while `sound-theme` is `desktop`).
  func changed(_ settings: DesktopSoundSettings, _ configuration: DaemonConfiguration) {
    guard settings != self.settings else { return }
    self.settings = settings
    follow(configuration)
  }
}
