import CueOutput
import CueCore
import CuePosix
import CueProtocol
import Logging

/// A failure that stops the daemon from starting, with what to do about it.
public struct StartupError: Error, CustomStringConvertible, Sendable {
  public var description: String
  public init(_ description: String) { self.description = description }
}

/// The daemon's control side: the root that makes the owners of each concern and wires their
/// news to one another.
///
/// Runs on one thread, a poll(2) loop over the listening socket, the clients, a signalfd, and the
/// eventfds through which the audio thread and background work report (`DaemonLoop.swift`); it
/// never blocks on a client. Requests go to their op's owner (`DaemonRequests.swift`), the audio
/// thread's events and finished work to the owner concerned (`DaemonNews.swift`); `status` reads
/// the owners (`DaemonStatus`). The owners (docs/ARCHITECTURE.md): `VoiceTable` (every voice's
/// start and stop), `VoiceGate`, `DeviceController`, `ClientServer`, `EventRouter`, `Players`,
/// `SystemSounds`, `FileSounds`, `ThemeSounds`, `DesktopFollowing`, `Paging`, `Reloader`,
/// `CueCatalog`, `CueRules`, `Groups`, `Levels`, `PathDecoder`, `MeterFeed`.
public final class Daemon<Device: OutputDevice> {
  let logger: Logger
  let clock: DaemonClock
  let engine: Engine<Device>
  /// The eventfds the audio thread and the control loop wake each other with (not Unix signals).
  let engineWakeups: EventFDSignals
  let audioThread = AudioThread()
  /// What `--nice-level` got for the control thread at start (`ControlPriority`, applied by the program before the daemon exists).
  public var controlPriority: ControlPriority.Outcome = .notAsked
  let work: WorkQueue
  let notifier = SystemdNotifier()
  let startedAt: UInt64

  let catalog: CueCatalog
  let device: DeviceController
  let voices: VoiceTable
  let clients: ClientServer
  let events: EventRouter
  let files: PathDecoder
  let players: Players
  let sounds: SystemSounds
  /// Sound files played by path (`play` of a `file`, a theme event's file), decoded once and kept.
  let fileSounds: FileSounds
  let themeSounds: ThemeSounds
  let paging: Paging
  let reloader: Reloader
  /// `watch-sounds`: the sound directories' changes, each burst a rescan.
  let soundWatcher: SoundWatcher
  let rules: CueRules
  /// Groups (buses): volume, mute, ducking.
  let groups: Groups
  /// The level, client ceilings and quiet hours.
  let levels: Levels
  /// The one admission path of every play.
  let gate: VoiceGate
  /// `meters`: the connections that asked for meter events.
  let meterFeed: MeterFeed
  /// Follows the desktop's sound theme and event-sounds switch (`sound-theme = "desktop"`).
  let desktop: DesktopFollowing

  /// From a request's last byte arriving to its voice's first frame handed to the device.
  var triggerLatency = LatencyHistogram()
  var status: DaemonStatus<Device> { DaemonStatus(daemon: self) }
  var running = true
  /// The control loop's (`run`): SIGTERM, SIGINT and SIGHUP read as data, and systemd's watchdog, if it asked for one.
  var signalFD: SignalFD? = nil
  var watchdog: Watchdog? = nil
  /// The handler of each op, registered by its owner (`OpOwner`): the daemon itself, or the object it names.
  lazy var routes = Routes { [unowned self] owner -> any OpHandler in
    switch owner {
    case .daemon: self
    case .players: players
    case .sounds: sounds
    case .groups: groups
    case .levels: levels
    case .reloader: reloader
    }
  }

  /// What `hello` says this daemon can do: the protocol's ops, kinds and limits, and those its settings chose.
  lazy var capabilities = HelloReply.Capabilities.current(limits: [
    ("clients", configuration.maximumClients), ("players", configuration.maximumPlayers),
    ("sounds", configuration.maximumSounds), ("voices", configuration.voiceLimit), ("cues", configuration.maximumCues),
  ])

  /// The configuration in force (reloads change the reloadable part).
  public var configuration: DaemonConfiguration { reloader.configuration }
  /// Reads the config file again (SIGHUP, `reload`); nil when cued runs without one.
  public var configReader: (@Sendable () throws(ConfigError) -> ConfigValues)? {
    get { reloader.configReader }
    set { reloader.configReader = newValue }
  }
  /// What the command line set: it wins over the file at every reload.
  public var commandLine: ConfigValues {
    get { reloader.commandLine }
    set { reloader.commandLine = newValue }
  }
  /// The config file in use (for messages), if any.
  public var configPath: String? {
    get { reloader.configPath }
    set { reloader.configPath = newValue }
  }

  public convenience init(configuration: DaemonConfiguration, device: Device, logger: Logger) throws(StartupError) {
    try self.init(configuration: configuration, device: device, logger: logger, clock: SystemClock())
  }

  /// `environment`: where the sound-theme lookup reads XDG_DATA_HOME and friends (tests give their own).
  init(
    configuration: DaemonConfiguration, device sink: Device, logger: Logger, clock: DaemonClock, wallClock: WallClock = LocalWallClock(),
    environment: @escaping (String) -> String? = { ProcessInfo.environment($0) }
  ) throws(StartupError) {
    self.logger = logger
    self.clock = clock
    startedAt = clock.nanoseconds()
    do {
      engineWakeups = try EventFDSignals()
      work = try WorkQueue()
    } catch {
      throw StartupError("cannot create an eventfd: \(error)")
    }
    let rate = configuration.sampleRate
    engine = Engine(configuration: configuration.engineConfiguration, sink: sink, signals: engineWakeups)
    let ids = IDAllocator()
    catalog = CueCatalog(sampleRate: rate)
    sink.pulls(from: engine)
    device = DeviceController(device: sink, engine: engine, clock: clock, logger: logger)
    voices = VoiceTable(
      engine: engine, device: device, ids: ids, clock: clock, limit: configuration.voiceLimit,
      stopFadeFrames: max(1, Int(configuration.stopFadeSeconds * Double(rate))),
      loudness: LoudnessNormalizer(policy: LoudnessNormalizer.Policy(configuration), logger: logger))
    clients = ClientServer(limits: configuration.clientLimits, clock: clock, logger: logger)
    events = EventRouter(clients: clients)
    meterFeed = MeterFeed(bank: engine.meters, clients: clients, clock: clock)
    files = PathDecoder(
      soundDirectories: configuration.soundDirectories, allowAnyPath: configuration.allowAnyPath,
      options: Reloader.loader(for: configuration).options, work: work)
    rules = CueRules(seed: clock.nanoseconds() ^ UInt64(ProcessInfo.processID))
    groups = Groups(voices: voices, sampleRate: rate)
    levels = Levels(voices: voices, groups: groups, events: events, wallClock: wallClock, sampleRate: rate)
    gate = VoiceGate(voices: voices, rules: rules, groups: groups, levels: levels)
    players = Players(
      maximum: configuration.maximumPlayers, gate: gate, device: device, catalog: catalog, files: files, events: events, ids: ids,
      sampleRate: rate, logger: logger)
    sounds = SystemSounds(maximum: configuration.maximumSounds, gate: gate, catalog: catalog, files: files, events: events, ids: ids)
    fileSounds = FileSounds(gate: gate, files: files, events: events, ids: ids)
    themeSounds = ThemeSounds(theme: configuration.soundTheme, files: fileSounds, environment: environment)
    desktop = DesktopFollowing(themeSounds: themeSounds, work: work, logger: logger, environment: environment)
    paging = Paging(gate: gate, catalog: catalog, events: events, clock: clock, sampleRate: configuration.sampleRate)
    reloader = Reloader(configuration: configuration, catalog: catalog, events: events, work: work, logger: logger)
    soundWatcher = SoundWatcher(logger: logger)
    wire()
    _ = routes  // built now: a daemon that lacks a handler for an op does not start
    groups.set(CueRule.systemGroup, volume: configuration.systemVolume, muted: configuration.systemMuted)
  }

  /// Connects the owners' news to those who act on it.
  private func wire() {
    device.voicesWaiting = { [unowned self] in !voices.voices.isEmpty }
    device.onChange = { [unowned self] change in
      notifier.notify(["STATUS=" + status.line])
      events.emit(.device(Event.Device(change: change, device: device.name)))
      if change == .restored { voices.dropLate(olderThan: UInt64(configuration.lateVoiceSeconds * 1e9)) }
    }
    players.clientName = { [unowned self] serial in clients.connection(serial)?.name }
    sounds.clientName = { [unowned self] serial in clients.connection(serial)?.name }
    voices.groupFactor = { [unowned self] group in groups.factor(group) }
    voices.onStart = { [unowned self] id, voice in groups.voiceStarted(id, group: voice.group) }
    voices.onStopping = { [unowned self] id, voice in
      if case .player(let player) = voice.origin { players.voiceStopping(id, player: player) }
    }
    clients.handleLine = { [unowned self] line, client in handle(line: line, from: client) }
    clients.obligations = [
      { [unowned self] client in reloader.owes(client) },
      { [unowned self] client in voices.voices.values.contains { $0.notify && $0.owner == client } },
      { [unowned self] client in players.owes(client) },
      { [unowned self] client in sounds.owes(client) },
      { [unowned self] client in fileSounds.owes(client) },
    ]
    clients.onDisconnect = [
      { [unowned self] client in players.release(ownedBy: client) },
      { [unowned self] client in sounds.release(ownedBy: client) },
      { [unowned self] client in reloader.release(client) },
      { [unowned self] client in meterFeed.release(client) },
    ]
    meterFeed.isLive = { [unowned self] voice in voices.voices[voice] != nil }
    meterFeed.isMixing = { [unowned self] in
      if case .attached = device.state { return true }
      return false
    }
    reloader.onScanning = { [unowned self] scanning in
      if scanning {
        notifier.notify(["RELOADING=1", "MONOTONIC_USEC=\(clock.nanoseconds() / 1000)", "STATUS=reloading"])
      } else {
        notifier.notify(["READY=1", "STATUS=" + status.line])
      }
    }
    reloader.apply = { [unowned self] configuration, values in
      voices.limit = configuration.voiceLimit
      let loudness = LoudnessNormalizer.Policy(configuration)
      if loudness != voices.loudness.policy {
        voices.loudness.policy = loudness
        // Normalisation on, off or to another target: what sounds follows over the group ramp.
        voices.refreshGains(rampFrames: Int(Groups.volumeRampSeconds * Double(configuration.sampleRate)))
      }
      players.maximum = configuration.maximumPlayers
      sounds.maximum = configuration.maximumSounds
      clients.limits = configuration.clientLimits
      files.soundDirectories = configuration.soundDirectories
      files.allowAnyPath = configuration.allowAnyPath
      files.options = reloader.loader.options
      applyTables(values)
      // Given in the file: the system group's volume and mute (else what `cuectl system` set stays).
      groups.set(CueRule.systemGroup, volume: values.systemVolume, muted: values.systemMuted)
    }
    reloader.refresh = { [unowned self] configuration in
      followSoundTheme()
      // Watched afresh, with a config file or without: the directories may be others, and one made since is watched now.
      soundWatcher.watch(configuration.soundDirectories, enabled: configuration.watchSounds)
    }
  }

  // MARK: - The desktop's sound settings

  /// Follows the desktop's settings through GSettings from now on (`DesktopFollowing`).
  public func followDesktopSettings() {
    desktop.useDesktop()
    followSoundTheme()
  }

  /// Puts the sound theme in force: `sound-theme`, and the desktop's settings when it follows them.
  func followSoundTheme() { desktop.follow(configuration) }

  // MARK: - Start-up

  /// Claims the socket path (or takes the socket systemd passed).
  public func bindSocket() throws(StartupError) {
    servedSocket = try clients.bind(path: configuration.socketPath)
  }

  /// The socket clients reach this daemon on: `socket` as configured, or the one systemd passed.
  private(set) var servedSocket: String? = nil

  /// Sets the tables read from the config file: carousel bindings (nil: the built-in ones), cue
  /// rules, client settings, quiet hours and groups.
  public func applyTables(_ values: ConfigValues) {
    paging.setCarousels(values.carousels)
    rules.setRules(values.cueRules)
    catalog.setRules(rules.rules)
    // The level first: what quiet hours beginning now silence fades out before the groups' gains move.
    levels.configure(clients: values.clients, quietHours: values.quietHours)
    groups.configure(values.groups)
  }

  /// Decodes every cue (in parallel) and logs what was loaded, skipped and why; then watches the
  /// sound directories (`watch-sounds`), so that a file that comes after this scan is seen.
  public func loadCues() {
    soundWatcher.watch(configuration.soundDirectories, enabled: configuration.watchSounds)
    reloader.loadAll(carousels: paging.carousels)
  }

  /// Rescans when the sound directories' changes have settled.
  func rescanIfSoundsChanged() {
    if let changed = soundWatcher.due(now: clock.nanoseconds()) { reloader.rescan(changed: changed) }
  }
}
