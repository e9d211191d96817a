import CSystemShims
import CueAudio
import CueCore
import CuePosix
import CueProtocol
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A failure that stops the daemon from starting, with what to do about it.
public struct StartupError: Error, CustomStringConvertible, Sendable {
  public var description: String
  public init(_ description: String) { self.description = description }
}

/// The daemon's control side: the socket, the clients, the cue library, voice lifetimes and the device.
///
/// Runs on one thread (`run`), a poll(2) loop over the listening socket, the clients, a signalfd,
/// and the eventfds through which the audio thread and reload workers report. It never blocks on
/// a client. The audio thread is driven only through the engine's command queue.
public final class Daemon<Device: OutputDevice> {
  public var configuration: DaemonConfiguration
  var logger: Logger
  var loader: CueLoader
  /// Reads the config file again (SIGHUP, `reload`); nil when cued runs without one.
  public var configReader: (@Sendable () throws(ConfigError) -> ConfigValues)? = nil
  /// What the command line set: it wins over the file at every reload.
  public var commandLine = ConfigValues()
  var library: [String: Cue] = [:]
  let device: Device
  let engine: Engine<Device>
  let signals: EventFDSignals
  let audioThread = AudioThread()
  let startedAt = MonotonicClock.nanoseconds()

  // Socket and clients.
  var listener: FileDescriptor? = nil
  /// True when this process created the socket file (and so removes it on exit).
  var ownsSocketFile = false
  var signalFD: FileDescriptor? = nil
  var clients: [UInt64: ClientConnection] = [:]
  var nextClientSerial: UInt64 = 1
  /// Connections refused because the peer was another user, and when that was last logged.
  var refusedConnections = 0
  var refusalLogs = LogThrottle(seconds: 1)
  /// A descriptor kept free for refusing clients when the process runs out (EMFILE).
  var reserve = ReservedDescriptor()
  var descriptorShortages = 0
  var shortageLogs = LogThrottle(seconds: 10)
  var readScratch = [UInt8](repeating: 0, count: 64 * 1024)

  // Voices.
  /// What a voice belongs to.
  enum VoiceOrigin: Equatable {
    /// A `play` request.
    case oneShot
    case player(UInt64)
    case sound(UInt64)
  }
  struct LiveVoice {
    let cue: Cue
    let owner: UInt64
    let notify: Bool
    let startedAt: UInt64
    let loops: LoopCount
    var origin: VoiceOrigin = .oneShot
    var stopping = false
    /// When the request that started it arrived (monotonic ns), for the trigger latency; 0 unknown.
    var requestArrival: UInt64 = 0
  }
  var voices: [VoiceID: LiveVoice] = [:]
  /// One counter for voice, player and sound ids, so an id names one thing (subscriptions filter by id).
  var nextID: UInt64 = 1

  // Players and system sounds.
  var players: [UInt64: PlayerState] = [:]
  var sounds: [UInt64: SoundState] = [:]
  /// Recently disposed sound ids, for a clear error when one is played again.
  var disposedSounds: [UInt64] = []
  var systemVolume = 1.0
  var systemMuted = false

  // Device.
  enum DeviceState {
    case closed
    case open(NegotiatedFormat)
    case lost(error: String, nextAttempt: UInt64, backoffNanoseconds: UInt64)
  }
  var deviceState = DeviceState.closed
  var lastFormat: NegotiatedFormat? = nil
  var deviceOpens = 0
  var deviceLosses = 0

  // Reload.
  /// Results of background work (reloads, decodes for paths), handed to the control loop.
  let work = WorkQueue()
  var reloadInProgress = false
  var reloadAgain = false
  /// Clients waiting for the scan under way.
  var reloadWaiters: [(client: UInt64, id: RequestID?)] = []
  /// Clients that asked while a scan was under way: they get the next one, which sees their change.
  var nextReloadWaiters: [(client: UInt64, id: RequestID?)] = []

  var running = true
  var paging = PagingState()
  /// From a request's last byte arriving to its voice's first frame handed to the device.
  var triggerLatency = LatencyHistogram()
  /// The config file in use (for messages), if any.
  public var configPath: String? = nil
  let notifier = SystemdNotifier()
  var nextWatchdog: UInt64? = nil
  var lastHeartbeat: UInt64 = .max
  /// While a request is carried out, the events it causes wait here until its reply is sent.
  var holdingEvents = false
  var heldEvents: [(kind: String, fields: [(String, JSONValue)], ids: [UInt64], alsoTo: Set<UInt64>)] = []
  /// Events dropped for clients since gone (those still connected keep their own count).
  var eventsDropped = 0
  var playsStarted: UInt64 = 0

  public init(configuration: DaemonConfiguration, device: Device, logger: Logger) throws(StartupError) {
    self.configuration = configuration
    self.logger = logger
    self.device = device
    loader = CueLoader(
      directories: configuration.soundDirectories,
      options: DecodeOptions(outputRate: configuration.sampleRate, maximumSeconds: configuration.maximumCueSeconds),
      maximumTotalBytes: configuration.maximumDecodedBytes, maximumCues: configuration.maximumCues)
    do {
      signals = try EventFDSignals()
    } catch {
      throw StartupError("cannot create an eventfd: \(error)")
    }
    do {
      try work.open()
    } catch {
      throw StartupError("cannot create an eventfd: \(error)")
    }
    let periodFrames = configuration.periodFrames
    engine = Engine(
      configuration: EngineConfiguration(
        periodFrames: periodFrames,
        idleFrames: Int(configuration.idleSeconds * Double(configuration.sampleRate)),
        voiceCapacity: configuration.voiceLimit * 2 + 16),
      sink: device, signals: signals)
    systemVolume = configuration.systemVolume
    systemMuted = configuration.systemMuted
  }

  deinit {
    work.close()
  }

  // MARK: - Start-up

  /// The signals the control loop reads through a signalfd.
  static var handledSignals: [Int32] { [SIGTERM, SIGINT, SIGHUP] }

  /// Blocks the handled signals in the calling thread. Call first, before any thread exists, so
  /// that every thread inherits the mask and the signals are only ever read from the signalfd.
  public static func blockSignals() {
    let signals = handledSignals
    _ = signals.withUnsafeBufferPointer { cued_block_signals($0.baseAddress, Int32($0.count)) }
  }

  /// Claims the socket path: reclaims a stale socket left by a crash, refuses to displace a live daemon.
  public func bindSocket() throws(StartupError) {
    // Socket activation: systemd made and owns the socket; use it and never remove its file.
    let activated = UnixSocket.activatedSockets()
    if let first = activated.first {
      for extra in activated.dropFirst() { extra.fd.close() }
      do {
        try first.fd.setNonBlocking(true)
      } catch {
        throw StartupError("cannot use the socket systemd passed: \(error)")
      }
      listener = first.fd
      ownsSocketFile = false
      logger.info("using the socket systemd passed (socket activation)", metadata: ["name": "\(first.name)"])
      return
    }
    let path = configuration.socketPath
    if let problem = UnixSocket.validate(path: path) {
      throw StartupError("cannot use socket path \(path): \(problem); choose a shorter one with --socket")
    }
    let directory = DefaultPaths.directory(of: path)
    let existed = Files.kind(of: directory) == .directory
    do {
      try Files.makeDirectories(directory, mode: 0o700)
    } catch {
      throw StartupError("cannot create the socket directory \(directory): \(error.reason)")
    }
    if let (uid, mode) = Files.ownerAndMode(directory) {
      if !existed || (uid == ProcessInfo.userID && Self.isPrivateSocketDirectory(directory)) {
        if mode & 0o077 != 0 { try? Files.setMode(directory, 0o700) }
      }
      if Self.isPrivateSocketDirectory(directory) && uid != ProcessInfo.userID {
        throw StartupError(
          "the socket directory \(directory) belongs to uid \(uid), not to you (uid \(ProcessInfo.userID)); refusing to use it")
      }
    }
    switch Files.kind(of: path) {
    case .missing:
      break
    case .other where UnixSocket.isSocket(path: path):
      let probe: Result<FileDescriptor, SystemError> = Result { () throws(SystemError) in try UnixSocket.connect(path: path) }
      switch probe {
      case .success(let connection):
        let peer = try? UnixSocket.peerCredentials(connection)
        connection.close()
        let who = peer.map { " (pid \($0.pid))" } ?? ""
        throw StartupError(
          "another cued\(who) is already serving \(path); stop it first (`cuectl status` talks to it), or give this one another --socket")
      case .failure(let error) where error.code == ECONNREFUSED:
        Files.remove(path)
        logger.notice("reclaimed a stale socket left by an earlier cued", metadata: ["path": "\(path)"])
      case .failure(let error):
        throw StartupError("cannot check the existing socket \(path): \(error.reason)")
      }
    default:
      throw StartupError("\(path) exists and is not a socket; remove it or choose another --socket")
    }
    do {
      listener = try UnixSocket.listen(path: path, mode: 0o600)
      ownsSocketFile = true
    } catch {
      throw StartupError("cannot listen on \(path): \(error.reason)")
    }
  }

  /// The directories cued makes for itself: `…/cued` under XDG_RUNTIME_DIR and `/tmp/cued-UID`.
  static func isPrivateSocketDirectory(_ directory: String) -> Bool {
    directory.hasSuffix("/cued") || directory.hasPrefix("/tmp/cued-")
  }

  /// Sets the carousel bindings read from the config file (nil: the built-in ones).
  public func setCarousels(_ carousels: [String: CarouselBindings]?) {
    paging.carousels = carousels ?? ["default": .builtIn]
  }

  /// Decodes every cue (in parallel) and logs what was loaded, skipped and why.
  public func loadCues() {
    let began = MonotonicClock.nanoseconds()
    let scan = loader.scan()
    library = scan.cues
    report(scan)
    let elapsed = Double(MonotonicClock.nanoseconds() - began) / 1e6
    logger.info(
      "loaded \(scan.cues.count) cue\(scan.cues.count == 1 ? "" : "s") (\(scan.totalBytes / 1024) KiB decoded) in \(formatMilliseconds(elapsed)) ms",
      metadata: ["directories": "\(configuration.soundDirectories.joined(separator: ":"))"])
    if let missing = missingBoundCue(in: paging.carousels, path: configPath, known: Set(library.keys)) {
      logger.error("\(missing) (the binding plays nothing until the cue exists)")
    }
    if scan.cues.isEmpty {
      logger.warning(
        "no cues loaded: put .mp3 files in one of \(configuration.soundDirectories.joined(separator: ", ")) or pass --sounds DIR")
    }
  }

  func report(_ scan: LibraryScan) {
    for failure in scan.failures {
      logger.warning("skipped \(failure.path): \(failure.reason)")
    }
    for warning in scan.warnings {
      logger.warning("\(warning)")
    }
  }

  /// Starts the audio thread.
  public func startAudio() throws(StartupError) {
    do {
      try audioThread.start(engine, realtimePriority: configuration.realtimePriority)
    } catch {
      throw StartupError("cannot start the audio thread: \(error)")
    }
  }

  // MARK: - The loop

  /// Serves until SIGTERM or SIGINT, then fades out, closes the device, removes the socket and returns.
  public func run() throws(StartupError) {
    let caught = Self.handledSignals
    let sfd = caught.withUnsafeBufferPointer { cued_signalfd($0.baseAddress, Int32($0.count)) }
    guard sfd >= 0 else { throw StartupError("cannot create a signalfd: \(SystemError("signalfd"))") }
    signalFD = FileDescriptor(rawValue: sfd)
    defer { signalFD?.close() }
    guard let listener else { throw StartupError("run() needs bindSocket() first") }
    let realtime = audioThread.realtimeStatus
    notifier.notify(["READY=1", "STATUS=" + statusLine()])
    if let interval = notifier.watchdogInterval { nextWatchdog = MonotonicClock.nanoseconds() + interval }
    logger.info(
      "cued \(cuedVersion) ready on \(configuration.socketPath); device '\(device.name)' opens on the first cue",
      metadata: realtime == 0 ? ["audio-thread": "SCHED_FIFO"] : [:])

    while running {
      var requests: [PollRequest] = [
        PollRequest(fd: listener, events: .readable),
        PollRequest(fd: signalFD!, events: .readable),
        PollRequest(fd: signals.controlNotify, events: .readable),
        PollRequest(fd: work.doneFD, events: .readable),
      ]
      let fixedCount = requests.count
      var order: [ClientConnection] = []
      order.reserveCapacity(clients.count)
      for client in clients.values {
        var events: PollEvents = []
        if client.wantsToRead { events.insert(.readable) }
        if client.wantsToWrite { events.insert(.writable) }
        requests.append(PollRequest(fd: client.fd, events: events))
        order.append(client)
      }
      let ready: [PollEvents]
      do {
        ready = try Poll.wait(requests, timeoutMilliseconds: pollTimeout())
      } catch {
        logger.error("poll failed: \(error)")
        continue
      }
      if !ready[2].isEmpty { drainEngineEvents() }
      if !ready[1].isEmpty { handleSignals() }
      if !ready[3].isEmpty { finishWork() }
      for (index, client) in order.enumerated() {
        let events = ready[fixedCount + index]
        if events.contains(.writable) { client.flush() }
        if events.contains(.hangup) || events.contains(.error) {
          // Gone both ways: carry out what it sent (replies cannot arrive), then close.
          while client.receive(into: &readScratch) && client.framer.pendingByteCount < 1 << 20 { serve(client) }
          serve(client)
          client.isClosed = true
        } else if events.contains(.readable) {
          // One read per wakeup keeps one busy client from starving the others.
          _ = client.receive(into: &readScratch)
        }
        // Also after a flush: lines held back while the client's replies piled up are served now.
        serve(client)
        if client.isClosed { disconnect(client) }
      }
      retireHalfClosedClients()
      if !ready[0].isEmpty { acceptClients() }
      retryDeviceIfDue()
      feedWatchdogIfDue()
    }
    shutdown()
  }

  func pollTimeout() -> Int32 {
    var deadlines: [UInt64] = []
    if case .lost(_, let next, _) = deviceState, !voices.isEmpty { deadlines.append(next) }
    if let nextWatchdog { deadlines.append(nextWatchdog) }
    guard let next = deadlines.min() else { return -1 }  // nothing timed: sleep until something happens
    let now = MonotonicClock.nanoseconds()
    if next <= now { return 0 }
    return Int32(min((next - now) / 1_000_000 + 1, 60_000))
  }

  /// WATCHDOG=1 at systemd's cadence, but only while both threads are alive: this loop is (it
  /// runs this), and the audio thread is if it is parked (waiting for work) or has cycled since
  /// the last ping. A stuck audio thread starves the watchdog and systemd restarts cued.
  func feedWatchdogIfDue() {
    guard let interval = notifier.watchdogInterval, let due = nextWatchdog else { return }
    let now = MonotonicClock.nanoseconds()
    guard now >= due else { return }
    nextWatchdog = now + interval
    let beat = engine.counters.heartbeat.load(ordering: .relaxed)
    let audioAlive = engine.isParked || beat != lastHeartbeat
    lastHeartbeat = beat
    if audioAlive {
      notifier.notify(["WATCHDOG=1"])
    } else {
      logger.error("the audio thread has not cycled for \(interval / 1_000_000) ms; not feeding the watchdog")
    }
  }

  /// One line for systemd's STATUS=: cues and the device state.
  func statusLine() -> String {
    let state: String
    switch deviceState {
    case .closed: state = "closed (idle)"
    case .open: state = "open"
    case .lost(let error, _, _): state = "lost: \(error)"
    }
    return "\(library.count) cues; device \(device.name) \(state); \(voices.count) voices"
  }

  func acceptClients() {
    guard let listener else { return }
    while true {
      let accepted: FileDescriptor?
      do {
        accepted = try UnixSocket.accept(listener)
      } catch where error.code == EMFILE || error.code == ENFILE {
        refuseForWantOfDescriptors(listener, error)
        return
      } catch {
        logger.warning("accept failed: \(error)")
        return
      }
      guard let fd = accepted else { return }
      if let refusal = accessRefusal(for: fd) {
        refuse(fd, refusal)
        continue
      }
      if clients.count >= configuration.maximumClients {
        refuse(
          fd, ProtocolError(.limitReached, "cued already serves \(configuration.maximumClients) clients (--max-clients); try again later"))
        continue
      }
      let client = ClientConnection(
        serial: nextClientSerial, fd: fd, maximumLineBytes: 64 * 1024, queueBytes: configuration.clientQueueBytes)
      nextClientSerial += 1
      clients[client.serial] = client
    }
  }

  /// Sends a connection one line saying why it is refused, and closes it: nothing it sends is read.
  func refuse(_ fd: FileDescriptor, _ refusal: ProtocolError) {
    _ = Reply.line(Reply.failure(id: nil, refusal)).withUnsafeBytes { try? fd.write($0) }
    fd.close()
  }

  /// Out of descriptors: frees the reserved one, accepts the waiting connection, says why and
  /// closes it, so the backlog drains and the loop does not spin on a readable listener.
  func refuseForWantOfDescriptors(_ listener: FileDescriptor, _ error: SystemError) {
    descriptorShortages += 1
    if shortageLogs.allows() {
      logger.warning(
        "out of file descriptors (\(error.reason)); new clients are refused until some disconnect. Raise LimitNOFILE or lower --max-clients",
        metadata: ["limit": "\(ResourceLimits.openFileLimit)", "refused": "\(descriptorShortages)"])
    }
    reserve.release()
    defer { _ = reserve.restore() }
    guard let fd = try? UnixSocket.accept(listener) else { return }
    refuse(fd, ProtocolError(.limitReached, "cued is out of file descriptors (limit \(ResourceLimits.openFileLimit)); try again later"))
  }

  /// Why the peer on `fd` may not connect, or nil when it may: it must run as cued's own user or
  /// be a member of the configured group (`--allow-group`), whatever the socket file's mode says.
  func accessRefusal(for fd: FileDescriptor) -> ProtocolError? {
    let ownUID = ProcessInfo.effectiveUserID
    guard let peer = try? UnixSocket.peerCredentials(fd) else {
      return ProtocolError(.accessDenied, "cued cannot tell who is connecting (SO_PEERCRED failed); connection refused")
    }
    if peer.uid == ownUID { return nil }
    if let group = configuration.allowedGroup {
      if peer.gid == group { return nil }
      if let groups = try? UnixSocket.peerGroups(fd), groups.contains(group) { return nil }
    }
    refusedConnections += 1
    if refusalLogs.allows() {
      logger.notice(
        "refused a connection from another user",
        metadata: ["uid": "\(peer.uid)", "pid": "\(peer.pid)", "refused": "\(refusedConnections)"])
    }
    let allowed = configuration.allowedGroup.map { "members of group \($0)" } ?? "no other user"
    return ProtocolError(
      .accessDenied,
      "cued here serves uid \(ownUID) and \(allowed); uid \(peer.uid) is refused. Run your own cued (systemctl --user start cued), or have the administrator start this one with --allow-group")
  }

  /// Answers the complete lines a client has sent, until its unread replies reach the pause mark.
  /// Lines from a client that has stopped sending (or hung up) are all carried out.
  func serve(_ client: ClientConnection) {
    while client.wantsToRead || client.peerFinishedSending || client.isClosed, let frame = client.framer.next() {
      switch frame {
      case .line(let bytes):
        if bytes.isEmpty || bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { continue }
        handle(line: bytes, from: client)
      case .oversize(let count):
        client.send(
          Reply.failure(
            id: nil,
            ProtocolError(.lineTooLong, "a request line of \(count)+ bytes was discarded; the limit is 65536 bytes per line")))
      }
    }
  }

  /// Closes connections whose peer stopped sending once everything owed to them is sent:
  /// queued replies, a pending reload reply, `finished` events for voices they asked about.
  func retireHalfClosedClients() {
    for client in clients.values where client.peerFinishedSending && !client.isClosed {
      if client.pendingOutputBytes > 0 { continue }
      if reloadWaiters.contains(where: { $0.client == client.serial }) { continue }
      if nextReloadWaiters.contains(where: { $0.client == client.serial }) { continue }
      if voices.values.contains(where: { $0.notify && $0.owner == client.serial }) { continue }
      if players.values.contains(where: {
        ($0.owner == client.serial && $0.isPlaying) || $0.pendingReplies.contains { $0.client == client.serial }
      }) { continue }
      if sounds.values.contains(where: { $0.pendingReply?.client == client.serial }) { continue }
      if sounds.values.contains(where: { $0.completionClients.contains(client.serial) && !$0.liveVoices.isEmpty }) { continue }
      disconnect(client)
    }
  }

  func disconnect(_ client: ClientConnection) {
    eventsDropped += client.droppedEvents
    clients[client.serial] = nil
    releaseObjects(ownedBy: client.serial)
    client.fd.close()
    reloadWaiters.removeAll { $0.client == client.serial }
    nextReloadWaiters.removeAll { $0.client == client.serial }
  }

  // MARK: - Requests

  func handle(line: [UInt8], from client: ClientConnection) {
    switch RequestDecoder.decodeLine(line) {
    case .failure(let failure):
      client.send(Reply.failure(id: failure.id, failure.error))
    case .success(.carousel(let message)):
      holdingEvents = true
      let fields = handleCarousel(message, arrivedAt: client.lastReceived, client: client)
      // Fire-and-forget: a reply only when the message asked for one with an id.
      if let id = message.id { client.send(Reply.success(id: id, fields)) }
      holdingEvents = false
      let held = heldEvents
      heldEvents.removeAll()
      for event in held { emit(event.kind, event.fields, ids: event.ids, alsoTo: event.alsoTo) }
    case .success(.request(let envelope)):
      // Events a request causes (a device opening, a muted completion) go out after its reply.
      holdingEvents = true
      do {
        if let reply = try perform(envelope.request, id: envelope.id, client: client) {
          client.send(Reply.success(id: envelope.id, reply))
        }
      } catch {
        client.send(Reply.failure(id: envelope.id, error))
      }
      holdingEvents = false
      let held = heldEvents
      heldEvents.removeAll()
      for event in held { emit(event.kind, event.fields, ids: event.ids, alsoTo: event.alsoTo) }
    }
  }

  /// Carries out one request; returns the reply's fields, or nil when the reply comes later (reload).
  func perform(_ request: Request, id: RequestID?, client: ClientConnection) throws(ProtocolError) -> [(String, JSONValue)]? {
    switch request {
    case .hello(let name):
      if let name { logger.debug("client \(client.serial) is \(name.prefix(64))") }
      return [
        ("server", "cued"), ("version", .string(cuedVersion)), ("protocol", .number(Double(protocolVersion))),
      ]
    case .ping:
      return [("pong", true)]
    case .play(let parameters):
      return try play(parameters, client: client)
    case .stop(let target, let fade):
      return try stop(target, fadeSeconds: fade)
    case .list:
      return [("cues", .array(library.values.sorted { $0.name < $1.name }.map(describe)))]
    case .status:
      return statusFields()
    case .subscribe(let filter):
      client.subscription = filter
      return [("kinds", .array((filter.kinds ?? EventFilter.knownKinds).sorted().map { .string($0) }))]
    case .unsubscribe:
      client.subscription = nil
      return []
    case .player(let request):
      return try performPlayer(request, id: id, client: client)
    case .sound(let request):
      return try performSound(request, id: id, client: client)
    case .system(let volume, let muted):
      return performSystem(volume: volume, muted: muted)
    case .reload:
      if let problem = reloadConfiguration() {
        throw ProtocolError(.configError, "the config file has a problem, so nothing was reloaded: \(problem)")
      }
      if reloadInProgress {
        nextReloadWaiters.append((client.serial, id))
      } else {
        reloadWaiters.append((client.serial, id))
      }
      startReload()
      return nil
    }
  }

  func play(_ p: PlayParameters, client: ClientConnection) throws(ProtocolError) -> [(String, JSONValue)] {
    guard let cue = library[p.cue] else {
      throw ProtocolError(.unknownCue, "no cue named '\(p.cue.prefix(200))'; \(cueHint())")
    }
    // The device opens first but is handed to the audio thread after the start, so the voice's
    // first frame is the first frame the device plays.
    let attachPending = try prepareDevice()
    defer { if attachPending { attachDevice() } }
    var fields: [(String, JSONValue)] = []
    // Past the voice limit, the oldest voice makes room, fading out.
    if let stolen = try makeRoomForAVoice() { fields.append(("stole", .number(Double(stolen.rawValue)))) }
    let id = VoiceID(nextID)
    let start = VoiceStart(
      id: id, samples: cue.decoded.buffer.samples,
      gain: StereoGain.voice(volume: p.volume, pan: p.pan, sourceIsMono: cue.isMono),
      loops: LoopCount(numberOfLoops: p.loops))
    guard engine.send(.start(start)) else {
      throw ProtocolError(.busy, "the audio thread's queue is full; try again in a few milliseconds")
    }
    nextID += 1
    playsStarted += 1
    voices[id] = LiveVoice(
      cue: cue, owner: client.serial, notify: p.notify, startedAt: MonotonicClock.nanoseconds(),
      loops: LoopCount(numberOfLoops: p.loops), requestArrival: client.lastReceived)
    return [("voice", .number(Double(id.rawValue)))] + fields
  }

  func stop(_ target: StopTarget, fadeSeconds: Double?) throws(ProtocolError) -> [(String, JSONValue)] {
    let fade = fadeSeconds.map { Int($0 * Double(configuration.sampleRate)) } ?? stopFadeFrames
    var ids: [VoiceID] = []
    switch target {
    case .voice(let raw):
      let id = VoiceID(raw)
      guard let voice = voices[id], !voice.stopping else {
        throw ProtocolError(.unknownVoice, "no voice \(raw) is playing (it may have finished); `cuectl status` counts the voices playing")
      }
      ids = [id]
    case .cue(let name):
      guard library[name] != nil || voices.values.contains(where: { $0.cue.name == name }) else {
        throw ProtocolError(.unknownCue, "no cue named '\(name.prefix(200))'; \(cueHint())")
      }
      ids = voices.filter { $0.value.cue.name == name && !$0.value.stopping }.map(\.key)
    case .all:
      ids = voices.filter { !$0.value.stopping }.map(\.key)
    }
    var stopped = 0
    for id in ids.sorted(by: { $0.rawValue < $1.rawValue }) {
      guard engine.send(.stop(id, fadeFrames: fade, reason: .stopped)) else {
        throw ProtocolError(.busy, "the audio thread's queue is full; \(stopped) voice(s) stopped, try again")
      }
      voices[id]?.stopping = true
      if case .player(let p) = voices[id]?.origin, let player = players[p], player.voice == id { player.ending = true }
      stopped += 1
    }
    return [("stopped", .number(Double(stopped)))]
  }

  var stopFadeFrames: Int { max(1, Int(configuration.stopFadeSeconds * Double(configuration.sampleRate))) }

  func cueHint() -> String {
    if library.isEmpty { return "no cues are loaded (see the daemon's log for why)" }
    let names = library.keys.sorted()
    let shown = names.prefix(8).joined(separator: ", ")
    return "loaded: \(shown)\(names.count > 8 ? ", … (\(names.count) in all; `cuectl list`)" : "")"
  }

  func describe(_ cue: Cue) -> JSONValue {
    .object([
      ("name", .string(cue.name)),
      ("duration", .number(Double(cue.frameCount) / Double(configuration.sampleRate))),
      ("frames", .number(Double(cue.frameCount))),
      ("sourceRate", .number(Double(cue.decoded.sourceRate))),
      ("channels", .number(Double(cue.decoded.sourceChannels))),
      ("bytes", .number(Double(cue.byteCount))),
      ("gapless", .bool(cue.decoded.hasGaplessInfo)),
      ("path", .string(cue.path)),
    ])
  }

  func statusFields() -> [(String, JSONValue)] {
    var deviceFields: [(String, JSONValue)] = [("name", .string(device.name))]
    switch deviceState {
    case .closed: deviceFields.append(("state", "closed"))
    case .open: deviceFields.append(("state", "open"))
    case .lost(let error, _, _):
      deviceFields.append(("state", "lost"))
      deviceFields.append(("error", .string(error)))
    }
    if let format = lastFormat {
      deviceFields.append(("format", .string(format.sampleFormat.rawValue)))
      deviceFields.append(("rate", .number(Double(format.rate))))
      deviceFields.append(("periodFrames", .number(Double(format.periodFrames))))
      deviceFields.append(("bufferFrames", .number(Double(format.bufferFrames))))
    }
    deviceFields.append(("delayFrames", .number(Double(engine.counters.delayFrames.load(ordering: .relaxed)))))
    deviceFields.append(("opens", .number(Double(deviceOpens))))
    deviceFields.append(("losses", .number(Double(deviceLosses))))
    let counters = engine.counters
    return [
      ("version", .string(cuedVersion)),
      ("pid", .number(Double(ProcessInfo.processID))),
      ("uptime", .number(Double(MonotonicClock.nanoseconds() - startedAt) / 1e9)),
      ("device", .object(deviceFields)),
      ("voices", .number(Double(voices.values.filter { !$0.stopping }.count))),
      ("voiceLimit", .number(Double(configuration.voiceLimit))),
      ("plays", .number(Double(playsStarted))),
      ("underruns", .number(Double(counters.underruns.load(ordering: .relaxed)))),
      ("framesWritten", .number(Double(counters.framesWritten.load(ordering: .relaxed)))),
      ("cues", .number(Double(library.count))),
      ("cueBytes", .number(Double(library.values.reduce(0) { $0 + $1.byteCount }))),
      ("clients", .number(Double(clients.count))),
      ("players", .number(Double(players.count))),
      ("sounds", .number(Double(sounds.count))),  // held: disposed ones count until their last play ends
      ("systemVolume", .number(systemVolume)),
      ("systemMuted", .bool(systemMuted)),
      ("deviceCurrentTime", .number(deviceCurrentTime)),
      ("triggerLatency", triggerLatency.json),
      ("paging", .object(["played", "ignored", "too-soon", "late", "unbound", "merged", "unchanged", "failed"].map { ($0, .number(Double(paging.counts[$0] ?? 0))) })),
      ("eventsDropped", .number(Double(eventsDropped + clients.values.reduce(0) { $0 + $1.droppedEvents }))),
      ("refusedConnections", .number(Double(refusedConnections))),
      ("socket", .string(configuration.socketPath)),
    ]
  }

  // MARK: - Device

  /// Makes sure the device is open; returns true when it was opened now and still has to be attached.
  func prepareDevice() throws(ProtocolError) -> Bool {
    switch deviceState {
    case .open:
      return false
    case .lost(let error, let next, _) where MonotonicClock.nanoseconds() < next:
      let wait = (next - MonotonicClock.nanoseconds()) / 1_000_000 + 1
      throw ProtocolError(
        .deviceUnavailable, "audio device '\(device.name)' is unavailable (\(error)); the next play after \(wait) ms tries again")
    case .closed, .lost:
      if !openDevice(attach: false) {
        if case .lost(let error, _, _) = deviceState {
          throw ProtocolError(.deviceUnavailable, "audio device '\(device.name)' is unavailable: \(error)")
        }
        throw ProtocolError(.deviceUnavailable, "audio device '\(device.name)' is unavailable")
      }
      return true
    }
  }

  /// Hands the open device to the audio thread.
  func attachDevice() {
    if !engine.send(.attach) {
      device.close()
      deviceState = .lost(
        error: "the audio thread's queue is full", nextAttempt: MonotonicClock.nanoseconds() + 100_000_000,
        backoffNanoseconds: 100_000_000)
    }
  }

  /// Opens the device (and, with `attach`, hands it to the audio thread); on failure enters (or stays in) `lost` with backoff.
  @discardableResult
  func openDevice(attach: Bool = true) -> Bool {
    let wasLost: Bool
    var backoff: UInt64 = 100_000_000
    if case .lost(_, _, let b) = deviceState {
      wasLost = true
      backoff = b
    } else {
      wasLost = false
    }
    do {
      let format = try device.open()
      lastFormat = format
      deviceOpens += 1
      emitDevice(wasLost ? "restored" : "opened")
      if wasLost {
        dropLateVoices()
        logger.notice("audio device '\(device.name)' is back: \(format)")
      } else if deviceOpens == 1 {
        logger.info("opened audio device '\(device.name)': \(format)")
      }
      deviceState = .open(format)
      if attach { attachDevice() }
      return true
    } catch {
      let next = wasLost ? min(backoff * 2, 1_000_000_000) : backoff  // at most 1 s: back within 2 s of the server
      if !wasLost { logger.error("\(error)") }
      deviceState = .lost(error: error.description, nextAttempt: MonotonicClock.nanoseconds() + next, backoffNanoseconds: next)
      return false
    }
  }

  /// After a loss, one-shot voices that would now play too late are dropped; loops carry on.
  func dropLateVoices() {
    let now = MonotonicClock.nanoseconds()
    let limit = UInt64(configuration.lateVoiceSeconds * 1e9)
    for (id, voice) in voices where !voice.stopping && voice.loops != .forever && now - voice.startedAt > limit {
      if engine.send(.stop(id, fadeFrames: 0, reason: .deviceLost)) { voices[id]?.stopping = true }
    }
  }

  func retryDeviceIfDue() {
    guard case .lost(_, let next, _) = deviceState, !voices.isEmpty, MonotonicClock.nanoseconds() >= next else { return }
    openDevice()
  }

  func drainEngineEvents() {
    signals.acknowledgeControl()
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
        device.close()
        switch reason {
        case .idle:
          deviceState = .closed
          logger.debug("closed the idle audio device")
          emitDevice("closed-idle")
          // A start may have crossed the release: reopen for it.
          if !voices.isEmpty { openDevice() }
        case .lost(let code):
          deviceLosses += 1
          let error = "write failed: \(alsaErrorText(code))"
          logger.error("lost audio device '\(device.name)': \(error); reopening with backoff")
          emitDevice("lost", error: error)
          deviceState = .lost(error: error, nextAttempt: MonotonicClock.nanoseconds() + 100_000_000, backoffNanoseconds: 100_000_000)
        case .shutdown:
          deviceState = .closed
        }
      }
    }
  }

  func alsaErrorText(_ code: Int32) -> String {
    "\(String(cString: strerror(-code))) (error \(code))"
  }


  // MARK: - Reload

  /// Reads the config file again and applies what can change while running; a bad file keeps the
  /// previous configuration. Returns the problem, if any.
  @discardableResult
  func reloadConfiguration() -> String? {
    guard let reader = configReader else { return nil }
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
      var names = Set(library.keys)
      for directory in next.soundDirectories {
        for file in (try? Files.list(directory: directory)) ?? [] { if let name = CueLoader.cueName(forFile: file) { names.insert(name) } }
      }
      if let missing = missingBoundCue(in: carousels, path: configPath, known: names) {
        logger.error("config not reloaded, the previous one stays: \(missing)")
        return missing
      }
    }
    var restartOnly: [String] = []
    if next.socketPath != configuration.socketPath { restartOnly.append("socket") }
    if next.device != configuration.device { restartOnly.append("device") }
    if next.sampleRate != configuration.sampleRate { restartOnly.append("rate") }
    if next.periodFrames != configuration.periodFrames { restartOnly.append("period-frames") }
    if next.bufferFrames != configuration.bufferFrames { restartOnly.append("buffer-frames") }
    if next.idleSeconds != configuration.idleSeconds { restartOnly.append("idle-timeout") }
    if next.realtimePriority != configuration.realtimePriority { restartOnly.append("realtime-priority") }
    if !restartOnly.isEmpty {
      logger.warning("config: \(restartOnly.joined(separator: ", ")) changed; that takes effect when cued restarts")
    }
    configuration.soundDirectories = next.soundDirectories
    configuration.voiceLimit = next.voiceLimit
    configuration.maximumCueSeconds = next.maximumCueSeconds
    configuration.maximumDecodedBytes = next.maximumDecodedBytes
    configuration.maximumCues = next.maximumCues
    configuration.maximumClients = next.maximumClients
    configuration.maximumPlayers = next.maximumPlayers
    configuration.maximumSounds = next.maximumSounds
    configuration.allowAnyPath = next.allowAnyPath
    // New connections see these; connected clients keep what they had.
    configuration.clientQueueBytes = next.clientQueueBytes
    configuration.allowedGroup = next.allowedGroup
    loader = CueLoader(
      directories: next.soundDirectories,
      options: DecodeOptions(outputRate: configuration.sampleRate, maximumSeconds: next.maximumCueSeconds),
      maximumTotalBytes: next.maximumDecodedBytes, maximumCues: next.maximumCues)
    if let volume = values.systemVolume { systemVolume = volume }
    if let muted = values.systemMuted { systemMuted = muted }
    if let level = values.logLevel.flatMap(Logger.Level.init(rawValue:)) { logger.logLevel = level }
    paging.carousels = values.carousels ?? ["default": .builtIn]
    logger.info("config reloaded")
    return nil
  }

  func startReload() {
    if reloadInProgress {
      reloadAgain = true
      return
    }
    reloadInProgress = true
    notifier.notify(["RELOADING=1", "MONOTONIC_USEC=\(MonotonicClock.nanoseconds() / 1000)", "STATUS=reloading"])
    let loader = self.loader
    let previous = library
    work.run { .reload(loader.scan(previous: previous)) }
  }

  /// Takes every finished piece of background work and applies it, on the control thread.
  func finishWork() {
    for result in work.take() {
      switch result {
      case .reload(let scan): finishReload(scan)
      case .decoded(let token, let outcome): finishDecode(token: token, outcome)
      }
    }
  }

  func finishReload(_ scan: LibraryScan) {
    reloadInProgress = false
    defer { if !reloadInProgress { notifier.notify(["READY=1", "STATUS=" + statusLine()]) } }
    // Voices keep their own reference to the cue they play, so nothing playing is cut.
    library = scan.cues
    report(scan)
    logger.info(
      "reloaded: \(scan.cues.count) cues (added \(scan.added.count), changed \(scan.changed.count), removed \(scan.removed.count), skipped \(scan.failures.count))"
    )
    let fields: [(String, JSONValue)] = [
      ("cues", .number(Double(scan.cues.count))),
      ("added", .array(scan.added.map { .string($0) })),
      ("changed", .array(scan.changed.map { .string($0) })),
      ("removed", .array(scan.removed.map { .string($0) })),
      (
        "failed",
        .array(scan.failures.map { .object([("path", .string($0.path)), ("reason", .string($0.reason))]) })
      ),
    ]
    for waiter in reloadWaiters {
      clients[waiter.client]?.send(Reply.success(id: waiter.id, fields))
    }
    reloadWaiters = nextReloadWaiters
    nextReloadWaiters.removeAll()
    emit(
      "reloaded",
      [
        ("cues", .number(Double(scan.cues.count))), ("added", .array(scan.added.map { .string($0) })),
        ("changed", .array(scan.changed.map { .string($0) })), ("removed", .array(scan.removed.map { .string($0) })),
      ], ids: [])
    if reloadAgain {
      reloadAgain = false
      startReload()
    }
  }

  // MARK: - Signals and shutdown

  func handleSignals() {
    guard let signalFD else { return }
    while true {
      let signal = cued_signalfd_read(signalFD.rawValue)
      if signal <= 0 { return }
      switch signal {
      case SIGHUP:
        logger.info("SIGHUP: reloading the config and the sound directories")
        reloadConfiguration()
        startReload()
      case SIGTERM, SIGINT:
        logger.info("\(signal == SIGTERM ? "SIGTERM" : "SIGINT"): fading out and stopping")
        running = false
      default:
        break
      }
    }
  }

  func shutdown() {
    notifier.notify(["STOPPING=1", "STATUS=stopping"])
    let fade = Int(min(configuration.shutdownFadeSeconds, 0.05) * Double(configuration.sampleRate))
    var sent = engine.send(.shutdown(fadeFrames: fade))
    let deadline = MonotonicClock.nanoseconds() + 1_000_000_000
    var released = false
    while !released && MonotonicClock.nanoseconds() < deadline {
      if !sent { sent = engine.send(.shutdown(fadeFrames: fade)) }
      _ = try? Poll.wait([PollRequest(fd: signals.controlNotify, events: .readable)], timeoutMilliseconds: 20)
      signals.acknowledgeControl()
      while let event = engine.nextEvent() {
        switch event {
        case .ended(let end): voiceEnded(end)
        case .refused(let id): voiceEnded(VoiceEnd(id: id, reason: .error, position: 0))
        case .released(let reason):
          device.close()
          if reason == .shutdown { released = true }
        case .started: break
        }
      }
    }
    if released {
      audioThread.join()
    } else {
      logger.warning("the audio thread did not stop within 1 s; exiting anyway")
    }
    device.close()
    for client in clients.values {
      client.flush()
      client.fd.close()
    }
    clients.removeAll()
    listener?.close()
    if ownsSocketFile { Files.remove(configuration.socketPath) }
    logger.info("stopped")
  }
}

/// What background work hands back to the control loop.
enum WorkResult: Sendable {
  case reload(LibraryScan)
  /// A file decoded for a player or system sound made from a path; `token` says which request.
  case decoded(token: UInt64, Result<Cue, DecodeError>)
}

/// Runs jobs on their own short-lived threads and hands their results to the control loop, which polls `doneFD`.
final class WorkQueue: Sendable {
  private let results = Mutex<[WorkResult]>([])
  private let fd = Atomic<Int32>(-1)

  func open() throws(SystemError) {
    let raw = cued_eventfd(0, 1)
    if raw < 0 { throw SystemError("eventfd") }
    fd.store(raw, ordering: .releasing)
  }

  func close() {
    let raw = fd.exchange(-1, ordering: .acquiringAndReleasing)
    if raw >= 0 { Glibc.close(raw) }
  }

  var doneFD: FileDescriptor { FileDescriptor(rawValue: fd.load(ordering: .acquiring)) }

  /// Runs `job` in the background; its result arrives through `take()`.
  func run(_ job: @escaping @Sendable () -> WorkResult) {
    Threads.spawn {
      let result = job()
      self.results.withLock { $0.append(result) }
      var one: UInt64 = 1
      _ = Glibc.write(self.fd.load(ordering: .acquiring), &one, 8)
    }
  }

  /// Every result that arrived, in order; clears the notification.
  func take() -> [WorkResult] {
    var value: UInt64 = 0
    _ = Glibc.read(fd.load(ordering: .acquiring), &value, 8)
    return results.withLock { list in
      defer { list.removeAll() }
      return list
    }
  }
}

func formatMilliseconds(_ value: Double) -> String {
  let tenths = (value * 10).rounded() / 10
  return String(tenths)
}

/// At most one log line per interval, for what a client can make happen at will (connections
/// refused, descriptors run out): the first is logged, the rest counted until the interval passes.
struct LogThrottle {
  let interval: UInt64
  private var last: UInt64? = nil

  init(seconds: Double) { interval = UInt64(seconds * 1e9) }

  mutating func allows(now: UInt64 = MonotonicClock.nanoseconds()) -> Bool {
    if let last, now - last < interval { return false }
    last = now
    return true
  }
}
