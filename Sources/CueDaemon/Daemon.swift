import CSystemShims
import CueAudio
import CueCore
import CuePosix
import CueProtocol
import Dispatch
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
  public let configuration: DaemonConfiguration
  let logger: Logger
  let loader: CueLoader
  private(set) var library: [String: Cue] = [:]
  private let device: Device
  private let engine: Engine<Device>
  private let signals: EventFDSignals
  private let audioThread = AudioThread()
  private let startedAt = MonotonicClock.nanoseconds()

  // Socket and clients.
  private var listener: FileDescriptor? = nil
  /// True when this process created the socket file (and so removes it on exit).
  private var ownsSocketFile = false
  private var signalFD: FileDescriptor? = nil
  private var clients: [UInt64: ClientConnection] = [:]
  private var nextClientSerial: UInt64 = 1
  private var readScratch = [UInt8](repeating: 0, count: 64 * 1024)

  // Voices.
  struct LiveVoice {
    let cue: Cue
    let owner: UInt64
    let notify: Bool
    let startedAt: UInt64
    let loops: LoopCount
    var stopping = false
  }
  private var voices: [VoiceID: LiveVoice] = [:]
  private var nextVoiceID: UInt64 = 1

  // Device.
  enum DeviceState {
    case closed
    case open(NegotiatedFormat)
    case lost(error: String, nextAttempt: UInt64, backoffNanoseconds: UInt64)
  }
  private var deviceState = DeviceState.closed
  private var lastFormat: NegotiatedFormat? = nil
  private var deviceOpens = 0
  private var deviceLosses = 0

  // Reload.
  private let reloadDone: FileDescriptor
  private let reloadMailbox = Mailbox<LibraryScan>()
  private var reloadInProgress = false
  private var reloadAgain = false
  /// Clients waiting for the scan under way.
  private var reloadWaiters: [(client: UInt64, id: RequestID?)] = []
  /// Clients that asked while a scan was under way: they get the next one, which sees their change.
  private var nextReloadWaiters: [(client: UInt64, id: RequestID?)] = []

  private var running = true
  /// Events dropped for clients since gone (those still connected keep their own count).
  private var eventsDropped = 0
  private var playsStarted: UInt64 = 0

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
    let fd = cued_eventfd(0, 1)
    guard fd >= 0 else { throw StartupError("cannot create an eventfd: \(SystemError("eventfd"))") }
    reloadDone = FileDescriptor(rawValue: fd)
    let periodFrames = configuration.periodFrames
    engine = Engine(
      configuration: EngineConfiguration(
        periodFrames: periodFrames,
        idleFrames: Int(configuration.idleSeconds * Double(configuration.sampleRate)),
        voiceCapacity: configuration.voiceLimit * 2 + 16),
      sink: device, signals: signals)
  }

  deinit {
    reloadDone.close()
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
    if scan.cues.isEmpty {
      logger.warning(
        "no cues loaded: put .mp3 files in one of \(configuration.soundDirectories.joined(separator: ", ")) or pass --sounds DIR")
    }
  }

  private func report(_ scan: LibraryScan) {
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
    logger.info(
      "cued \(cuedVersion) ready on \(configuration.socketPath); device '\(device.name)' opens on the first cue",
      metadata: realtime == 0 ? ["audio-thread": "SCHED_FIFO"] : [:])

    while running {
      var requests: [PollRequest] = [
        PollRequest(fd: listener, events: .readable),
        PollRequest(fd: signalFD!, events: .readable),
        PollRequest(fd: signals.controlNotify, events: .readable),
        PollRequest(fd: reloadDone, events: .readable),
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
      if !ready[3].isEmpty { finishReload() }
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
    }
    shutdown()
  }

  private func pollTimeout() -> Int32 {
    guard case .lost(_, let next, _) = deviceState, !voices.isEmpty else { return -1 }
    let now = MonotonicClock.nanoseconds()
    if next <= now { return 0 }
    return Int32(min((next - now) / 1_000_000 + 1, 60_000))
  }

  private func acceptClients() {
    guard let listener else { return }
    while true {
      let accepted: FileDescriptor?
      do {
        accepted = try UnixSocket.accept(listener)
      } catch {
        logger.warning("accept failed: \(error); the system may be out of file descriptors")
        return
      }
      guard let fd = accepted else { return }
      let client = ClientConnection(serial: nextClientSerial, fd: fd, maximumLineBytes: 64 * 1024)
      nextClientSerial += 1
      if clients.count >= configuration.maximumClients {
        client.send(
          Reply.failure(
            id: nil,
            ProtocolError(.limitReached, "cued already serves \(configuration.maximumClients) clients (--max-clients); try again later")))
        fd.close()
        continue
      }
      clients[client.serial] = client
    }
  }

  /// Answers the complete lines a client has sent, until its unread replies reach the pause mark.
  /// Lines from a client that has stopped sending (or hung up) are all carried out.
  private func serve(_ client: ClientConnection) {
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
  private func retireHalfClosedClients() {
    for client in clients.values where client.peerFinishedSending && !client.isClosed {
      if client.pendingOutputBytes > 0 { continue }
      if reloadWaiters.contains(where: { $0.client == client.serial }) { continue }
      if nextReloadWaiters.contains(where: { $0.client == client.serial }) { continue }
      if voices.values.contains(where: { $0.notify && $0.owner == client.serial }) { continue }
      disconnect(client)
    }
  }

  private func disconnect(_ client: ClientConnection) {
    eventsDropped += client.droppedEvents
    clients[client.serial] = nil
    client.fd.close()
    reloadWaiters.removeAll { $0.client == client.serial }
    nextReloadWaiters.removeAll { $0.client == client.serial }
  }

  // MARK: - Requests

  private func handle(line: [UInt8], from client: ClientConnection) {
    switch RequestDecoder.decode(line: line) {
    case .failure(let failure):
      client.send(Reply.failure(id: failure.id, failure.error))
    case .success(let envelope):
      do {
        if let reply = try perform(envelope.request, id: envelope.id, client: client) {
          client.send(Reply.success(id: envelope.id, reply))
        }
      } catch {
        client.send(Reply.failure(id: envelope.id, error))
      }
    }
  }

  /// Carries out one request; returns the reply's fields, or nil when the reply comes later (reload).
  private func perform(_ request: Request, id: RequestID?, client: ClientConnection) throws(ProtocolError) -> [(String, JSONValue)]? {
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
    case .reload:
      if reloadInProgress {
        nextReloadWaiters.append((client.serial, id))
      } else {
        reloadWaiters.append((client.serial, id))
      }
      startReload()
      return nil
    }
  }

  private func play(_ p: PlayParameters, client: ClientConnection) throws(ProtocolError) -> [(String, JSONValue)] {
    guard let cue = library[p.cue] else {
      throw ProtocolError(.unknownCue, "no cue named '\(p.cue.prefix(200))'; \(cueHint())")
    }
    // The device opens first but is handed to the audio thread after the start, so the voice's
    // first frame is the first frame the device plays.
    let attachPending = try ensureDeviceOpen()
    defer { if attachPending { attachDevice() } }
    var fields: [(String, JSONValue)] = []
    // Past the voice limit, the oldest voice makes room, fading out.
    let sounding = voices.filter { !$0.value.stopping }
    if sounding.count >= configuration.voiceLimit, let oldest = sounding.keys.min(by: { $0.rawValue < $1.rawValue }) {
      if engine.send(.stop(oldest, fadeFrames: stopFadeFrames, reason: .stolen)) {
        voices[oldest]?.stopping = true
        fields.append(("stole", .number(Double(oldest.rawValue))))
      }
    }
    let id = VoiceID(nextVoiceID)
    let start = VoiceStart(
      id: id, samples: cue.decoded.buffer.samples,
      gain: StereoGain.voice(volume: p.volume, pan: p.pan, sourceIsMono: cue.isMono),
      loops: LoopCount(numberOfLoops: p.loops))
    guard engine.send(.start(start)) else {
      throw ProtocolError(.busy, "the audio thread's queue is full; try again in a few milliseconds")
    }
    nextVoiceID += 1
    playsStarted += 1
    voices[id] = LiveVoice(
      cue: cue, owner: client.serial, notify: p.notify, startedAt: MonotonicClock.nanoseconds(),
      loops: LoopCount(numberOfLoops: p.loops))
    return [("voice", .number(Double(id.rawValue)))] + fields
  }

  private func stop(_ target: StopTarget, fadeSeconds: Double?) throws(ProtocolError) -> [(String, JSONValue)] {
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
      stopped += 1
    }
    return [("stopped", .number(Double(stopped)))]
  }

  private var stopFadeFrames: Int { max(1, Int(configuration.stopFadeSeconds * Double(configuration.sampleRate))) }

  private func cueHint() -> String {
    if library.isEmpty { return "no cues are loaded (see the daemon's log for why)" }
    let names = library.keys.sorted()
    let shown = names.prefix(8).joined(separator: ", ")
    return "loaded: \(shown)\(names.count > 8 ? ", … (\(names.count) in all; `cuectl list`)" : "")"
  }

  private func describe(_ cue: Cue) -> JSONValue {
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

  private func statusFields() -> [(String, JSONValue)] {
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
      ("eventsDropped", .number(Double(eventsDropped + clients.values.reduce(0) { $0 + $1.droppedEvents }))),
      ("socket", .string(configuration.socketPath)),
    ]
  }

  // MARK: - Device

  /// Makes sure the device is open; returns true when it was opened now and still has to be attached.
  private func ensureDeviceOpen() throws(ProtocolError) -> Bool {
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
  private func attachDevice() {
    if !engine.send(.attach) {
      device.close()
      deviceState = .lost(
        error: "the audio thread's queue is full", nextAttempt: MonotonicClock.nanoseconds() + 100_000_000,
        backoffNanoseconds: 100_000_000)
    }
  }

  /// Opens the device (and, with `attach`, hands it to the audio thread); on failure enters (or stays in) `lost` with backoff.
  @discardableResult
  private func openDevice(attach: Bool = true) -> Bool {
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
      let next = wasLost ? min(backoff * 2, 2_000_000_000) : backoff
      if !wasLost { logger.error("\(error)") }
      deviceState = .lost(error: error.description, nextAttempt: MonotonicClock.nanoseconds() + next, backoffNanoseconds: next)
      return false
    }
  }

  /// After a loss, one-shot voices that would now play too late are dropped; loops carry on.
  private func dropLateVoices() {
    let now = MonotonicClock.nanoseconds()
    let limit = UInt64(configuration.lateVoiceSeconds * 1e9)
    for (id, voice) in voices where !voice.stopping && voice.loops != .forever && now - voice.startedAt > limit {
      if engine.send(.stop(id, fadeFrames: 0, reason: .deviceLost)) { voices[id]?.stopping = true }
    }
  }

  private func retryDeviceIfDue() {
    guard case .lost(_, let next, _) = deviceState, !voices.isEmpty, MonotonicClock.nanoseconds() >= next else { return }
    openDevice()
  }

  private func drainEngineEvents() {
    signals.acknowledgeControl()
    while let event = engine.nextEvent() {
      switch event {
      case .started:
        break
      case .ended(let end):
        voiceEnded(end.id, reason: end.reason)
      case .refused(let id):
        logger.warning("voice \(id) was refused: the voice table is full")
        voiceEnded(id, reason: .error)
      case .released(let reason):
        device.close()
        switch reason {
        case .idle:
          deviceState = .closed
          logger.debug("closed the idle audio device")
          // A start may have crossed the release: reopen for it.
          if !voices.isEmpty { openDevice() }
        case .lost(let code):
          deviceLosses += 1
          let error = "write failed: \(alsaErrorText(code))"
          logger.error("lost audio device '\(device.name)': \(error); reopening with backoff")
          deviceState = .lost(error: error, nextAttempt: MonotonicClock.nanoseconds() + 100_000_000, backoffNanoseconds: 100_000_000)
        case .shutdown:
          deviceState = .closed
        }
      }
    }
  }

  private func alsaErrorText(_ code: Int32) -> String {
    "\(String(cString: strerror(-code))) (error \(code))"
  }

  private func voiceEnded(_ id: VoiceID, reason: VoiceEndReason) {
    guard let voice = voices.removeValue(forKey: id) else { return }
    if voice.notify, let owner = clients[voice.owner] {
      owner.sendEvent(
        Reply.event(
          "finished",
          [
            ("voice", .number(Double(id.rawValue))), ("cue", .string(voice.cue.name)),
            ("reason", .string(reason.name)), ("successfully", .bool(reason == .end)),
          ]))
    }
  }

  // MARK: - Reload

  private func startReload() {
    if reloadInProgress {
      reloadAgain = true
      return
    }
    reloadInProgress = true
    let loader = self.loader
    let previous = library
    let mailbox = reloadMailbox
    let done = reloadDone
    DispatchQueue.global().async {
      let scan = loader.scan(previous: previous)
      mailbox.put(scan)
      var one: UInt64 = 1
      _ = Glibc.write(done.rawValue, &one, 8)
    }
  }

  private func finishReload() {
    var value: UInt64 = 0
    _ = Glibc.read(reloadDone.rawValue, &value, 8)
    guard let scan = reloadMailbox.take() else { return }
    reloadInProgress = false
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
    if reloadAgain {
      reloadAgain = false
      startReload()
    }
  }

  // MARK: - Signals and shutdown

  private func handleSignals() {
    guard let signalFD else { return }
    while true {
      let signal = cued_signalfd_read(signalFD.rawValue)
      if signal <= 0 { return }
      switch signal {
      case SIGHUP:
        logger.info("SIGHUP: reloading the sound directories")
        startReload()
      case SIGTERM, SIGINT:
        logger.info("\(signal == SIGTERM ? "SIGTERM" : "SIGINT"): fading out and stopping")
        running = false
      default:
        break
      }
    }
  }

  private func shutdown() {
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
        case .ended(let end): voiceEnded(end.id, reason: end.reason)
        case .refused(let id): voiceEnded(id, reason: .error)
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

/// One value handed from a worker thread to the control loop.
final class Mailbox<Value: Sendable>: Sendable {
  private let slot = Mutex<Value?>(nil)
  func put(_ value: Value) { slot.withLock { $0 = value } }
  func take() -> Value? {
    slot.withLock { value in
      defer { value = nil }
      return value
    }
  }
}

func formatMilliseconds(_ value: Double) -> String {
  let tenths = (value * 10).rounded() / 10
  return String(tenths)
}
