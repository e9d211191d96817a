import CueDecoding
import CuePosix
import CueProtocol
import Logging

/// `reload` and SIGHUP: the config file read again, then the sound directories scanned again in
/// the background, with the clients that asked answered when the scan they need is done.
///
/// A bad config file keeps the previous configuration. Settings that can change while running
/// take effect (through `apply`); the others are named in a warning and wait for a restart.
final class Reloader {
  /// Reads the config file again; nil when cued runs without one.
  var configReader: (@Sendable () throws(ConfigError) -> ConfigValues)? = nil
  /// What the command line set: it wins over the file at every reload.
  var commandLine = ConfigValues()
  /// The config file in use, for messages.
  var configPath: String? = nil
  /// The configuration in force.
  private(set) var configuration: DaemonConfiguration
  private(set) var loader: CueLoader
  private let catalog: CueCatalog
  private let events: EventRouter
  private let work: WorkQueue
  private var logger: Logger
  private var inProgress = false
  private var scanAgain = false
  /// Clients waiting for the scan under way.
  private var waiters: [Waiter] = []
  /// Clients that asked while a scan was under way: they get the next one, which sees their change.
  private var nextWaiters: [Waiter] = []
  /// Paths a watched sound directory changed at (`SoundWatcher`), for the next scan, and those of
  /// the scan under way: what fails to load there is a `decode-error` event.
  private var watchedChanges: Set<String> = []
  private var scanning: Set<String> = []
  /// Whether the next scan, and the one under way, were asked for by a reload (not only by the watch).
  private var reloadAsked = false
  private var scanningForReload = false
  /// systemd was told RELOADING and waits for READY.
  private var toldReloading = false

  /// Hands a reloaded configuration (and the values it came from) to the owners.
  var apply: (DaemonConfiguration, ConfigValues) -> Void = { _, _ in }
  /// What every reload refreshes, with a config file or without one (the sound theme's index
  /// files, the watches of the sound directories), after `apply`; not called when a bad config
  /// file stops the reload.
  var refresh: (DaemonConfiguration) -> Void = { _ in }
  /// Tells systemd: RELOADING when a scan starts, READY when the last one is done.
  var onScanning: (Bool) -> Void = { _ in }

  init(configuration: DaemonConfiguration, catalog: CueCatalog, events: EventRouter, work: WorkQueue, logger: Logger) {
    self.configuration = configuration
    self.catalog = catalog
    self.events = events
    self.work = work
    self.logger = logger
    loader = Self.loader(for: configuration)
  }

  static func loader(for configuration: DaemonConfiguration) -> CueLoader {
    CueLoader(
      directories: configuration.soundDirectories,
      options: DecodeOptions(outputRate: configuration.sampleRate, maximumSeconds: configuration.maximumCueSeconds),
      maximumTotalBytes: configuration.maximumDecodedBytes, maximumCues: configuration.maximumCues,
      measuresLoudness: configuration.loudnessNormalize)
  }

  /// The first cue a binding names that is not loaded (or about to be), with its config line.
  func missingBoundCue(in carousels: [String: CarouselBindings], known: Set<String>) -> String? {
    Paging.missingBoundCue(in: carousels, path: configPath, known: known, hint: catalog.hint())
  }

  /// The first load, at start: every cue decoded (in parallel), what was skipped and why logged.
  func loadAll(carousels: [String: CarouselBindings]) {
    let began = MonotonicClock.nanoseconds()
    let scan = loader.scan()
    catalog.replace(with: scan.cues, folders: scan.folders)
    report(scan)
    let elapsed = Double(MonotonicClock.nanoseconds() - began) / 1e6
    logger.info(
      "loaded \(scan.cues.count) cue\(scan.cues.count == 1 ? "" : "s") (\(scan.totalBytes / 1024) KiB decoded) in \(formatTenths(elapsed)) ms",
      metadata: ["directories": "\(configuration.soundDirectories.joined(separator: ":"))"])
    if let missing = missingBoundCue(in: carousels, known: catalog.names) {
      // The built-in bindings name the shipped sounds; a sound directory of one's own need not have
      // them, and that is no error worth a line at every start. Bindings the config gave are.
      if carousels == PagingState.builtInCarousels {
        logger.debug("\(missing) (a built-in binding; it plays nothing until the cue exists)")
      } else {
        logger.error("\(missing) (the binding plays nothing until the cue exists)")
      }
    }
    if scan.cues.isEmpty {
      logger.warning(
        "no cues loaded: put .mp3 files in one of \(configuration.soundDirectories.joined(separator: ", ")) or pass --sounds DIR")
    }
  }

  /// Reads the config file again and applies what can change while running. Returns the problem, if any.
  @discardableResult
  func reloadConfiguration() -> String? {
    guard let reader = configReader else {
      refresh(configuration)
      return nil
    }
    let file: ConfigValues
    do {
      file = try reader()
    } catch {
      logger.error("config not reloaded, the previous one stays: \(error)")
      return error.description
    }
    let values = commandLine.overriding(file)
    let next = DaemonConfiguration(values)
    if let problem = next.problem {
      logger.error("config not reloaded, the previous one stays: \(problem)")
      return problem
    }
    if let carousels = values.carousels {
      // Bound cues must exist: loaded now, or among the files the rescan that follows will load.
      var names = catalog.names.union((values.cueRules ?? [:]).filter { !$0.value.variations.isEmpty }.keys)
      for directory in next.soundDirectories {
        for file in (try? Files.list(directory: directory)) ?? [] {
          if let name = CueLoader.cueName(forFile: file) {
            names.insert(name)
          } else if CueLoader.isVariationFolder(file, in: directory) {
            names.insert(file)
          }
        }
      }
      if let missing = missingBoundCue(in: carousels, known: names) {
        logger.error("config not reloaded, the previous one stays: \(missing)")
        return missing
      }
    }
    let (applied, restartOnly) = configuration.reloading(to: next)
    if !restartOnly.isEmpty {
      logger.warning("config: \(restartOnly.joined(separator: ", ")) changed; that takes effect when cued restarts")
    }
    configuration = applied
    loader = Self.loader(for: applied)
    if let level = values.logLevel.flatMap(Logger.Level.init(rawValue:)) { logger.logLevel = level }
    apply(applied, values)
    refresh(applied)
    logger.info("config reloaded")
    return nil
  }

  /// A `reload` request: the config now, the scan in the background; the reply when the scan that
  /// sees this request is done.
  func request(from waiter: Waiter) throws(ProtocolError) {
    if let problem = reloadConfiguration() {
      throw ProtocolError(.configError, "the config file has a problem, so nothing was reloaded: \(problem)")
    }
    if inProgress { nextWaiters.append(waiter) } else { waiters.append(waiter) }
    scan()
  }

  /// SIGHUP: the config and a scan, nobody waiting.
  func reloadAll() {
    reloadConfiguration()
    scan()
  }

  /// A watched sound directory changed at `paths` (`watch-sounds`): a scan, the config file
  /// untouched. What fails to load at those paths is sent as `decode-error`.
  func rescan(changed paths: Set<String>) {
    watchedChanges.formUnion(paths)
    scan(forReload: false)
  }

  /// Scans the sound directories in the background (once more after the one under way, if any).
  func scan(forReload: Bool = true) {
    if forReload { reloadAsked = true }
    if inProgress {
      scanAgain = true
      return
    }
    inProgress = true
    scanning = watchedChanges
    watchedChanges.removeAll()
    scanningForReload = reloadAsked
    reloadAsked = false
    // systemd hears of reloads; a watch's rescan is not one.
    if scanningForReload {
      toldReloading = true
      onScanning(true)
    }
    let loader = self.loader
    let previous = catalog.cues
    work.run { .reload(loader.scan(previous: previous)) }
  }

  /// A scan is done: the new cues replace the old (voices keep theirs), waiters get their reply,
  /// subscribers the `reloaded` event.
  func finished(_ scan: LibraryScan) {
    inProgress = false
    let forReload = scanningForReload
    let changedPaths = scanning
    scanning.removeAll()
    defer {
      if !inProgress && toldReloading {
        toldReloading = false
        onScanning(false)
      }
    }
    catalog.replace(with: scan.cues, folders: scan.folders)
    // What the watch saw change: a file there that did not load is news to subscribers.
    func changed(_ path: String) -> Bool { changedPaths.contains { path == $0 || path.hasPrefix($0 + "/") } }
    let watchedFailures = scan.failures.filter { changed($0.path) }
    if forReload {
      report(scan)
    } else {
      // Only what changed: the files skipped all along were logged when they were met.
      for failure in watchedFailures { logger.warning("skipped \(failure.path): \(failure.reason)") }
      for warning in scan.warnings where changedPaths.contains(where: { warning.hasPrefix($0) }) { logger.warning("\(warning)") }
    }
    let library = Event.Reloaded(cues: scan.cues.count, added: scan.added, changed: scan.changed, removed: scan.removed)
    let news = !(scan.added.isEmpty && scan.changed.isEmpty && scan.removed.isEmpty)
    if forReload {
      logger.info(
        "reloaded: \(scan.cues.count) cues (added \(scan.added.count), changed \(scan.changed.count), removed \(scan.removed.count), skipped \(scan.failures.count))"
      )
    } else if news {
      func named(_ names: [String]) -> String { names.isEmpty ? "" : " " + names.joined(separator: ", ") }
      logger.info(
        "the sound directories changed: \(scan.cues.count) cues (added\(named(scan.added)); changed\(named(scan.changed)); removed\(named(scan.removed)))")
    }
    let reply = ReloadReply(library: library, failed: scan.failures.map { ReloadReply.Failure(path: $0.path, reason: $0.reason) })
    for waiter in waiters { events.reply(to: waiter, reply) }
    waiters = nextWaiters
    nextWaiters.removeAll()
    for failure in watchedFailures {
      events.emit(.decodeError(Event.DecodeError(player: nil, path: failure.path, reason: failure.reason)))
    }
    // A watch's rescan that changed no cue is no news.
    if forReload || news { events.emit(.reloaded(library)) }
    if scanAgain {
      scanAgain = false
      self.scan(forReload: false)  // a reload that asked meanwhile set reloadAsked
    }
  }

  /// Logs what did not load, and why.
  func report(_ scan: LibraryScan) {
    for failure in scan.failures { logger.warning("skipped \(failure.path): \(failure.reason)") }
    for warning in scan.warnings { logger.warning("\(warning)") }
  }

  /// True while `client` waits for a reload's reply.
  func owes(_ client: UInt64) -> Bool {
    waiters.contains { $0.client == client } || nextWaiters.contains { $0.client == client }
  }

  func release(_ client: UInt64) {
    waiters.removeAll { $0.client == client }
    nextWaiters.removeAll { $0.client == client }
  }
}

/// `value` to one decimal (milliseconds, dB): `12.3`.
func formatTenths(_ value: Double) -> String {
  let tenths = (value * 10).rounded() / 10
  return String(tenths)
}

extension Reloader: OpHandler {
  /// `reload`: answered when the scan that sees it is done.
  func register(_ routes: inout Routes) {
    routes.on(ReloadRequest.self) { [unowned self] _, context throws(ProtocolError) in
      try request(from: context.waiter)
      return nil
    }
  }
}
