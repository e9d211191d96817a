import CueOutput
import CueCore
import CuePosix
import CueProtocol
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// A failure that stops the daemon from starting, with what to do about it.
public struct StartupError: Error, CustomStringConvertible, Sendable {
  public var description: String
  public init(_ description: String) { self.description = description }
}

/// The daemon's control side: the loop, and the dispatch of requests and engine news to the
/// owner of each concern.
///
/// Runs on one thread (`run`), a poll(2) loop over the listening socket, the clients, a signalfd,
/// and the eventfds through which the audio thread and background work report. It never blocks
/// on a client. The owners (docs/ARCHITECTURE.md): `VoiceTable` (every voice's start and stop),
/// `DeviceController`, `ClientServer`, `EventRouter`, `Players`, `SystemSounds`, `Paging`,
/// `Reloader`, `CueCatalog`, `CueRules`, `PathDecoder`, `FileSounds`.
public final class Daemon<Device: OutputDevice> {
  let logger: Logger
  let clock: DaemonClock
  let engine: Engine<Device>
  /// The eventfds the audio thread and the control loop wake each other with (not Unix signals).
  let engineWakeups: EventFDSignals
  let audioThread = AudioThread()
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
  let levels: GroupsAndLevels
  /// The one admission path of every play.
  let gate: VoiceGate
  /// `meters`: the connections that asked for meter events.
  let meterFeed: MeterFeed

  /// Starts watching the desktop's sound settings, handing each change to its argument (on the
  /// watch's thread): the first reading, or why there is none. Set by `followDesktopSettings()`;
  /// nil (in-process tests): there is no desktop to follow.
  var desktopWatch:
    ((@escaping @Sendable (DesktopSoundSettings) -> Void) -> Result<DesktopSoundSettings, DesktopSettingsWatch.Unavailable>)? = nil
  /// Whether there is a desktop to follow, and why (for `follow-desktop`'s value), decided before
  /// the watch loads GLib. Set by `followDesktopSettings()`; nil (in-process tests): the watch decides.
  var desktopSession: ((String) -> DesktopSession.Verdict)? = nil
  /// The desktop's sound settings as last read; nil before a watch started, or when none could.
  private(set) var desktopSettings: DesktopSoundSettings? = nil
  private var desktopWatchTried = false
  /// Why the desktop is followed, or why not (`status`'s `soundTheme.reason`).
  private var desktopReason: String? = nil
  private let environment: (String) -> String?

  /// From a request's last byte arriving to its voice's first frame handed to the device.
  var triggerLatency = LatencyHistogram()
  var status: DaemonStatus<Device> { DaemonStatus(daemon: self) }
  var running = true
  private var signalFD: SignalFD? = nil
  private var watchdog: Watchdog? = nil
  /// The handler of each op, registered by its owner (`OpOwner`): the daemon itself, or the object it names.
  lazy var routes = Routes { [unowned self] owner -> any OpHandler in
    switch owner {
    case .daemon: self
    case .players: players
    case .sounds: sounds
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
    self.environment = environment
    startedAt = clock.nanoseconds()
    do {
      engineWakeups = try EventFDSignals()
      work = try WorkQueue()
    } catch {
      throw StartupError("cannot create an eventfd: \(error)")
    }
    let rate = configuration.sampleRate
    engine = Engine(
      configuration: EngineConfiguration(
        periodFrames: configuration.periodFrames, idleFrames: Int(configuration.idleSeconds * Double(rate)),
        voiceCapacity: configuration.voiceLimit * 2 + 16, fillTarget: Self.fillTargetPolicy(configuration),
        pullPause: Self.pullPausePolicy(configuration)),
      sink: sink, signals: engineWakeups)
    let ids = IDAllocator()
    catalog = CueCatalog(sampleRate: rate)
    sink.pulls(from: engine)
    device = DeviceController(device: sink, engine: engine, clock: clock, logger: logger)
    voices = VoiceTable(
      engine: engine, device: device, ids: ids, clock: clock, limit: configuration.voiceLimit,
      stopFadeFrames: max(1, Int(configuration.stopFadeSeconds * Double(rate))),
      loudness: LoudnessNormalizer(policy: LoudnessNormalizer.Policy(configuration), logger: logger))
    clients = ClientServer(limits: Self.clientLimits(configuration), clock: clock, logger: logger)
    events = EventRouter(clients: clients)
    meterFeed = MeterFeed(bank: engine.meters, clients: clients, clock: clock)
    files = PathDecoder(
      soundDirectories: configuration.soundDirectories, allowAnyPath: configuration.allowAnyPath,
      options: Reloader.loader(for: configuration).options, work: work)
    rules = CueRules(seed: clock.nanoseconds() ^ UInt64(ProcessInfo.processID))
    levels = GroupsAndLevels(voices: voices, events: events, wallClock: wallClock, sampleRate: rate)
    gate = VoiceGate(voices: voices, rules: rules, levels: levels)
    players = Players(
      maximum: configuration.maximumPlayers, gate: gate, device: device, catalog: catalog, files: files, events: events, ids: ids,
      sampleRate: rate, logger: logger)
    sounds = SystemSounds(maximum: configuration.maximumSounds, gate: gate, catalog: catalog, files: files, events: events, ids: ids)
    fileSounds = FileSounds(gate: gate, files: files, events: events, ids: ids)
    themeSounds = ThemeSounds(theme: configuration.soundTheme, files: fileSounds, environment: environment)
    paging = Paging(gate: gate, catalog: catalog, events: events, clock: clock, sampleRate: configuration.sampleRate)
    reloader = Reloader(configuration: configuration, catalog: catalog, events: events, work: work, logger: logger)
    soundWatcher = SoundWatcher(logger: logger)
    wire()
    _ = routes  // built now: a daemon that lacks a handler for an op does not start
    levels.set(CueRule.systemGroup, volume: configuration.systemVolume, muted: configuration.systemMuted)
  }

  /// Pausing a pulled sink after `pipewire-pause-after` seconds of silence; it then stays connected,
  /// paused, until the next cue (nil when it is 0 or not shorter than the idle window, which then
  /// closes the stream as it closes an ALSA device).
  static func pullPausePolicy(_ configuration: DaemonConfiguration) -> EngineConfiguration.PullPause? {
    let pause = configuration.pipeWirePauseSeconds
    guard pause > 0, pause < configuration.idleSeconds else { return nil }
    return EngineConfiguration.PullPause(afterFrames: Int(pause * Double(configuration.sampleRate)))
  }

  /// The push loop's fill target: `fill-target` frames, twice as much after an underrun that cut sound,
  /// up to the whole buffer, half again after each `latency-decay` seconds of audio without one (the
  /// rule every backend's latency follows: `LatencyAdapter`).
  static func fillTargetPolicy(_ configuration: DaemonConfiguration) -> LatencyAdapter.Policy? {
    guard configuration.fillTargetFrames > 0 else { return nil }
    return LatencyAdapter.Policy(
      minimumFrames: configuration.fillTargetFrames, maximumFrames: configuration.bufferFrames,
      decay: max(1, Int(configuration.latencyDecaySeconds * Double(configuration.sampleRate))))
  }

  static func clientLimits(_ configuration: DaemonConfiguration) -> ClientServer.Limits {
    ClientServer.Limits(
      maximumClients: configuration.maximumClients, queueBytes: configuration.clientQueueBytes, allowedGroup: configuration.allowedGroup)
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
    voices.groupFactor = { [unowned self] group in levels.factor(group) }
    voices.onStart = { [unowned self] id, voice in levels.voiceStarted(id, group: voice.group) }
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
        voices.refreshGains(rampFrames: Int(GroupsAndLevels.volumeRampSeconds * Double(configuration.sampleRate)))
      }
      players.maximum = configuration.maximumPlayers
      sounds.maximum = configuration.maximumSounds
      clients.limits = Self.clientLimits(configuration)
      files.soundDirectories = configuration.soundDirectories
      files.allowAnyPath = configuration.allowAnyPath
      files.options = reloader.loader.options
      applyTables(values)
      // Given in the file: the system group's volume and mute (else what `cuectl system` set stays).
      levels.set(CueRule.systemGroup, volume: values.systemVolume, muted: values.systemMuted)
    }
    reloader.refresh = { [unowned self] configuration in
      followSoundTheme()
      // Watched afresh, with a config file or without: the directories may be others, and one made since is watched now.
      soundWatcher.watch(configuration.soundDirectories, enabled: configuration.watchSounds)
    }
  }

  // MARK: - The desktop's sound settings

  /// Follows the desktop's sound theme and event-sounds switch while `sound-theme` is `desktop`:
  /// read through GSettings (`DesktopSettingsWatch`), when a schema for them is installed and (with
  /// `follow-desktop = "auto"`) there is a desktop session (`DesktopSession`), and heard as they
  /// change. GLib is loaded only then: on a server or in a container it is never mapped.
  public func followDesktopSettings() {
    desktopSession = { [environment] when in
      let schemas = DesktopSoundSchemas.candidates(currentDesktop: environment("XDG_CURRENT_DESKTOP"))
      let directories = DesktopSoundSchemas.directories(environment: environment)
      guard DesktopSoundSchemas.firstNamed(schemas, in: directories, read: DesktopSoundSchemas.readCompiled) != nil else {
        return .absent("no GSettings schema for them is installed (\(schemas.joined(separator: ", ")); Debian: gsettings-desktop-schemas)")
      }
      if when == "always" { return .present("follow-desktop = \"always\"") }
      return DesktopSession.verdict(environment: environment)
    }
    desktopWatch = { [environment] post in
      DesktopSettingsWatch.start(schemas: DesktopSoundSchemas.candidates(currentDesktop: environment("XDG_CURRENT_DESKTOP")), post: post).map(\.0)
    }
    followSoundTheme()
  }

  /// Puts the sound theme in force: `sound-theme`, and the desktop's settings when it follows them.
  /// Logged when the choice changes.
  ///
  /// The watch is started the first time `desktop` is in force and there is a desktop to follow;
  /// until then every reload asks again (a user service may start before the session it serves:
  /// `cuectl reload` once it is there follows it). Once tried, the watch is never tried again: it
  /// either runs and hears every change, or it failed in GLib, which a reload would not mend.
  func followSoundTheme() {
    let configured = configuration.soundTheme
    if configured == SoundThemeChoice.followDesktop, !desktopWatchTried, let start = desktopWatch {
      let verdict = desktopSession?(configuration.followDesktop)
      switch verdict {
      case .absent(let why):
        if why != desktopReason { logger.info("the desktop's sound settings are not followed: \(why)") }
        desktopReason = why
      case .present, nil:
        desktopWatchTried = true
        switch start({ [work] settings in work.post(.desktopSound(settings)) }) {
        case .success(let settings):
          desktopSettings = settings
          if case .present(let why) = verdict { desktopReason = why }
        case .failure(let unavailable):
          logger.info("the desktop's sound settings are not followed: \(unavailable.reason)")
          desktopReason = unavailable.reason
        }
      }
    }
    let choice = SoundThemeChoice(configured: configured, desktop: desktopSettings, reason: desktopReason)
    if choice != themeSounds.choice || !soundThemeLogged {
      if let refused = choice.refusedName {
        logger.warning("the desktop's sound theme '\(refused)' is not a theme name; playing events from \(choice.name)")
      }
      logger.info("sound theme: \(choice.summary)")
      soundThemeLogged = true
    }
    themeSounds.follow(choice)
  }
  private var soundThemeLogged = false

  /// The watch read a change: follow it (while `sound-theme` is `desktop`).
  func desktopSoundChanged(_ settings: DesktopSoundSettings) {
    guard settings != desktopSettings else { return }
    desktopSettings = settings
    followSoundTheme()
  }

  // MARK: - Start-up

  /// The signals the control loop reads through a signalfd.
  static var handledSignals: [Int32] { [SIGTERM, SIGINT, SIGHUP] }

  /// Blocks the handled signals in the calling thread. Call first, before any thread exists, so
  /// that every thread inherits the mask and the signals are only ever read from the signalfd.
  public static func blockSignals() {
    try? SignalFD.block(handledSignals)
  }

  /// Claims the socket path (or takes the socket systemd passed).
  public func bindSocket() throws(StartupError) {
    servedSocket = try clients.bind(path: configuration.socketPath)
  }

  /// The socket clients reach this daemon on: `socket` as configured, or the one systemd passed.
  private(set) var servedSocket: String? = nil

  /// Sets the tables read from the config file: carousel bindings (nil: the built-in ones) and cue rules.
  public func applyTables(_ values: ConfigValues) {
    paging.setCarousels(values.carousels)
    rules.setRules(values.cueRules)
    catalog.setRules(rules.rules)
    levels.configure(groups: values.groups, clients: values.clients, quietHours: values.quietHours)
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

  /// Starts the audio thread.
  public func startAudio() throws(StartupError) {
    do {
      try audioThread.start(engine, realtime: configuration.realtimePolicy)
    } catch {
      throw StartupError("cannot start the audio thread: \(error)")
    }
  }

  // MARK: - The loop

  /// What the loop polls.
  private enum Source: Hashable {
    case listener, signals, engineNews, workDone, soundWatch
    case client(UInt64)
  }

  /// Serves until SIGTERM or SIGINT, then fades out, closes the device, removes the socket and returns.
  public func run() throws(StartupError) {
    let signalFD: SignalFD
    do {
      signalFD = try SignalFD(signals: Self.handledSignals)
    } catch {
      throw StartupError("cannot create a signalfd: \(error)")
    }
    self.signalFD = signalFD
    defer { signalFD.close() }
    guard let listener = clients.listener else { throw StartupError("run() needs bindSocket() first") }
    notifier.notify(["READY=1", "STATUS=" + status.line])
    if let interval = notifier.watchdogInterval { watchdog = Watchdog(interval: interval, now: clock.nanoseconds()) }
    logger.info(
      "cued \(cuedVersion) ready on \(servedSocket ?? configuration.socketPath); device '\(device.name)' opens on the first cue",
      metadata: StatusReply.Scheduling(audioThread.scheduling).realtimeText.map { ["audio-thread": "\($0)"] } ?? [:])
    var poll = PollSet<Source>()
    while running {
      poll.removeAll()
      poll.register(.listener, listener, for: .readable)
      poll.register(.signals, signalFD.descriptor, for: .readable)
      poll.register(.engineNews, engineWakeups.controlNotify, for: .readable)
      poll.register(.workDone, work.doneFD, for: .readable)
      if let watch = soundWatcher.descriptor { poll.register(.soundWatch, watch, for: .readable) }
      for client in clients.connections {
        guard let fd = client.transport.pollDescriptor else { continue }
        var wanted: PollEvents = []
        if client.wantsToRead { wanted.insert(.readable) }
        if client.wantsToWrite { wanted.insert(.writable) }
        poll.register(.client(client.serial), fd, for: wanted)
      }
      let ready: PollResult<Source>
      do {
        ready = try poll.wait(timeoutMilliseconds: pollTimeout())
      } catch {
        logger.error("poll failed: \(error)")
        continue
      }
      if !ready[.engineNews].isEmpty { drainEngineEvents() }
      if !ready[.signals].isEmpty { handleSignals() }
      if !ready[.workDone].isEmpty { finishWork() }
      if !ready[.soundWatch].isEmpty { soundWatcher.read(now: clock.nanoseconds()) }
      rescanIfSoundsChanged()
      // Every connection, ready or not: lines held back while its replies piled up are served
      // once they have drained, whoever drained them.
      for client in Array(clients.connections) where clients.connection(client.serial) != nil {
        clients.service(client, events: ready[.client(client.serial)])
      }
      clients.retireHalfClosed()
      if !ready[.listener].isEmpty { clients.acceptWaiting() }
      device.retryIfDue()
      device.adaptLatencyIfDue()
      levels.checkQuietHours()
      meterFeed.sendIfDue()
      watchdog?.feedIfDue(now: clock.nanoseconds(), engine: engine, notifier: notifier, logger: logger)
    }
    shutdown()
  }

  private func pollTimeout() -> Int32 {
    let now = clock.nanoseconds()
    let quietHoursBoundary = levels.secondsToNextBoundary().map { now + UInt64(($0 + 0.01) * 1e9) }
    let deadlines = [device.retryDeadline, device.latencyDeadline, watchdog?.due, quietHoursBoundary, soundWatcher.deadline, meterFeed.deadline]
    guard let next = deadlines.compactMap({ $0 }).min() else { return -1 }
    if next <= now { return 0 }
    return Int32(min((next - now) / 1_000_000 + 1, 60_000))
  }

  // MARK: - News from the audio thread and background work

  /// Takes every event the audio thread posted and hands it to the owner concerned.
  func drainEngineEvents() {
    engineWakeups.acknowledgeControl()
    while let event = engine.nextEvent() {
      switch event {
      case .started(let id, let frame, let clock, let delay, let handedAt):
        voiceStarted(id, frame: frame, clock: clock, delayFrames: delay, handedAt: handedAt)
      case .ended(let end):
        voiceEnded(end)
      case .refused(let id):
        logger.warning("voice \(id) was refused: the voice table is full")
        voiceEnded(VoiceEnd(id: id, reason: .error, position: 0))
      case .released(let reason):
        device.released(reason)
      case .latencyRaised(let raise):
        device.noteRaise(raise)
      }
    }
    // A pulled sink's first callback since it connected has run (it sent these events): make its thread real-time.
    device.settleMixingThread()
  }

  /// A voice's first frame went out: its latency, its player's clock, and when it will be heard.
  private func voiceStarted(_ id: VoiceID, frame: UInt64, clock mixerClock: UInt64, delayFrames: Int, handedAt: UInt64) {
    guard let voice = voices.started(id) else { return }
    if voice.requestArrival > 0 && handedAt >= voice.requestArrival {
      triggerLatency.record(nanoseconds: handedAt - voice.requestArrival)
    }
    if case .player(let player) = voice.origin { players.voiceStarted(id, player: player, frame: frame) }
    let rate = Double(configuration.sampleRate)
    // Frames queued in the device after the first one, then the first one itself is heard.
    let aheadFrames = Double(delayFrames) - Double(mixerClock &- frame)
    events.started(id, voice, deviceTime: Double(frame) / rate, heardIn: max(0, aheadFrames / rate))
  }

  /// A voice stopped sounding: forget it, and tell whoever is owed the news.
  private func voiceEnded(_ end: VoiceEnd) {
    guard let voice = voices.ended(end.id) else { return }
    levels.voiceEnded(end.id, group: voice.group)
    switch voice.origin {
    case .oneShot: events.finished(end.id, voice, reason: end.reason, alsoTo: voice.notify ? [voice.owner] : [])
    case .player(let player): players.voiceEnded(end, voice: voice, player: player)
    case .sound(let sound): sounds.voiceEnded(end, voice: voice, sound: sound)
    }
  }

  /// Takes every finished piece of background work and applies it, on the control thread.
  func finishWork() {
    for result in work.take() {
      switch result {
      case .reload(let scan):
        reloader.finished(scan)
      case .desktopSound(let settings):
        desktopSoundChanged(settings)
      case .decoded(let token, let outcome):
        // A deferred reply (the first `play` of a file or theme event, `player.prepare`, `sound.create`) comes
        // before the events its request caused (the device's `opened`, the voice's `started`).
        events.holding {
          if !players.decoded(token: token, outcome), !fileSounds.decoded(token: token, outcome) {
            _ = sounds.decoded(token: token, outcome) { [unowned self] client in clients.connection(client) != nil }
          }
        }
      }
    }
  }

  // MARK: - Status, signals and shutdown

  private func handleSignals() {
    while let signal = try? signalFD?.next() {
      switch signal {
      case SIGHUP:
        logger.info("SIGHUP: reloading the config and the sound directories")
        reloader.reloadAll()
      case SIGTERM, SIGINT:
        logger.info("\(signal == SIGTERM ? "SIGTERM" : "SIGINT"): fading out and stopping")
        running = false
      default:
        break
      }
    }
  }

  /// Fades everything out (at most 50 ms), lets the audio thread finish, closes the device and the socket.
  private func shutdown() {
    notifier.notify(["STOPPING=1", "STATUS=stopping"])
    let fade = Int(min(configuration.shutdownFadeSeconds, 0.05) * Double(configuration.sampleRate))
    var sent = engine.send(.shutdown(fadeFrames: fade))
    let deadline = clock.nanoseconds() + 1_000_000_000
    var released = false
    while !released && clock.nanoseconds() < deadline {
      if !sent { sent = engine.send(.shutdown(fadeFrames: fade)) }
      _ = try? Poll.wait([PollRequest(fd: engineWakeups.controlNotify, events: .readable)], timeoutMilliseconds: 20)
      engineWakeups.acknowledgeControl()
      while let event = engine.nextEvent() {
        switch event {
        case .ended(let end): voiceEnded(end)
        case .refused(let id): voiceEnded(VoiceEnd(id: id, reason: .error, position: 0))
        case .released(let reason):
          device.close()  // no events, no reopening: cued is on its way out
          if reason == .shutdown { released = true }
        case .started, .latencyRaised: break
        }
      }
    }
    if released {
      audioThread.join()
    } else {
      logger.warning("the audio thread did not stop within 1 s; exiting anyway")
    }
    device.close()
    clients.close()
    soundWatcher.stop()
    logger.info("stopped")
  }
}
