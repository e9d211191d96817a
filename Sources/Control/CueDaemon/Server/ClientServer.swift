import CuePosix
import CueProtocol
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// The socket and the connections on it: listen, accept, who may connect, and when a connection retires.
///
/// It knows no feature. Whatever a feature still owes a connection (a deferred reply, a promised
/// `finished`) it says through `obligations`, and whatever it must release when a connection goes
/// it does in `onDisconnect`.
final class ClientServer {
  struct Limits {
    var maximumClients: Int
    /// Unread output a connection may queue (`--max-client-queue`), for new connections.
    var queueBytes: Int
    /// Besides cued's own user, members of this group may connect.
    var allowedGroup: UInt32?
  }

  private let logger: Logger
  private let clock: DaemonClock
  var limits: Limits
  private(set) var listener: FileDescriptor? = nil
  /// True when this process created the socket file (and so removes it on exit).
  private var ownsSocketFile = false
  private var socketPath: String = ""
  private var clients: [UInt64: ClientConnection] = [:]
  private var nextSerial: UInt64 = 1
  /// Connections refused because the peer was another user, and when that was last logged.
  private(set) var refusedConnections = 0
  private var refusalLogs = LogThrottle(seconds: 1)
  /// A descriptor kept free for refusing clients when the process runs out (EMFILE).
  private var reserve = ReservedDescriptor()
  private var descriptorShortages = 0
  private var shortageLogs = LogThrottle(seconds: 10)
  private var readScratch = [UInt8](repeating: 0, count: 64 * 1024)
  /// Events dropped for connections since gone (those still connected keep their own count).
  private var eventsDroppedByGone = 0

  /// Carries out one request line of a connection.
  var handleLine: (_ line: [UInt8], _ client: ClientConnection) -> Void = { _, _ in }
  /// Each feature's answer to "do I still owe this connection something?" (it stays open until all say no).
  var obligations: [(UInt64) -> Bool] = []
  /// Each feature's clean-up when a connection goes.
  var onDisconnect: [(UInt64) -> Void] = []

  init(limits: Limits, clock: DaemonClock, logger: Logger) {
    self.limits = limits
    self.clock = clock
    self.logger = logger
  }

  var connections: Dictionary<UInt64, ClientConnection>.Values { clients.values }
  var count: Int { clients.count }
  func connection(_ serial: UInt64) -> ClientConnection? { clients[serial] }

  /// Events dropped for slow readers, gone or connected.
  var eventsDropped: Int { eventsDroppedByGone + clients.values.reduce(0) { $0 + $1.droppedEvents } }

  // MARK: - The socket

  /// Claims the socket path: reclaims a stale socket left by a crash, refuses to displace a live
  /// daemon; under socket activation uses the socket systemd passed. Returns a description of the
  /// socket served, for the log.
  @discardableResult
  func bind(path: String) throws(StartupError) -> String {
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
      let served = UnixSocket.boundPath(first.fd) ?? "the socket systemd passed"
      logger.info("using the socket systemd passed (socket activation): \(served)", metadata: ["name": "\(first.name)"])
      if served != path {
        logger.debug("--socket/CUED_SOCKET (\(path)) is not used under socket activation")
      }
      return served
    }
    socketPath = path
    if let problem = UnixSocket.validate(path: path) {
      throw StartupError("cannot use socket path \(path): \(problem); choose a shorter one with --socket")
    }
    try claimDirectory(of: path)
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
    return path
  }

  /// Makes the socket's directory, private (0700) when cued made it or it is cued's own.
  private func claimDirectory(of path: String) throws(StartupError) {
    let directory = DefaultPaths.directory(of: path)
    try Self.checkRuntimeDirectory(for: directory)
    let existed = Files.kind(of: directory) == .directory
    do {
      try Files.makeDirectories(directory, mode: 0o700)
    } catch {
      throw StartupError("cannot create the socket directory \(directory): \(error.reason)")
    }
    guard let (uid, mode) = Files.ownerAndMode(directory) else { return }
    let isPrivate = Self.isPrivateSocketDirectory(directory)
    if !existed || (uid == ProcessInfo.userID && isPrivate) {
      if mode & 0o077 != 0 { try? Files.setMode(directory, 0o700) }
    }
    if isPrivate && uid != ProcessInfo.userID {
      throw StartupError(
        "the socket directory \(directory) belongs to uid \(uid), not to you (uid \(ProcessInfo.userID)); refusing to use it")
    }
  }

  /// When the socket's directory is `$XDG_RUNTIME_DIR/cued` (the default), cued makes that one
  /// directory and never the runtime directory itself: XDG_RUNTIME_DIR is the login session's, made by
  /// systemd-logind (pam_systemd) and owned by the user. One that is missing, is not a directory or
  /// belongs to someone else was set by mistake or leaked from another user's environment (`sudo`
  /// keeps it): making it would leave a root-owned /run/user/1000, or a chain of directories at
  /// the filesystem root, in the user's way. Say so instead.
  static func checkRuntimeDirectory(
    for directory: String, runtime: String? = ProcessInfo.environment("XDG_RUNTIME_DIR"), userID: UInt32 = ProcessInfo.userID
  ) throws(StartupError) {
    guard let runtime, runtime.hasPrefix("/"), directory == runtime + "/cued" else { return }
    let fix = "set XDG_RUNTIME_DIR to your session's runtime directory (/run/user/\(userID)), unset it (cued then uses /tmp/cued-\(userID)), or choose a --socket"
    switch Files.kind(of: runtime) {
    case .directory: break
    case .missing:
      throw StartupError("XDG_RUNTIME_DIR is \(runtime), which does not exist; cued does not make a session's runtime directory: \(fix)")
    default:
      throw StartupError("XDG_RUNTIME_DIR is \(runtime), which is not a directory: \(fix)")
    }
    if let (owner, _) = Files.ownerAndMode(runtime), owner != userID {
      throw StartupError("XDG_RUNTIME_DIR is \(runtime), which belongs to uid \(owner), not to you (uid \(userID)): \(fix)")
    }
  }

  /// The directories cued makes for itself: `…/cued` under XDG_RUNTIME_DIR and `/tmp/cued-UID`.
  static func isPrivateSocketDirectory(_ directory: String) -> Bool {
    directory.hasSuffix("/cued") || directory.hasPrefix("/tmp/cued-")
  }

  // MARK: - Connections

  /// Takes a new connection on `transport` (accepted and admitted) and returns it.
  @discardableResult
  func connect(_ transport: any ClientTransport) -> ClientConnection {
    let client = ClientConnection(serial: nextSerial, transport: transport, queueBytes: limits.queueBytes)
    nextSerial += 1
    clients[client.serial] = client
    return client
  }

  /// Accepts every waiting connection that may connect.
  func acceptWaiting() {
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
      let isOwnUser: Bool
      switch admission(of: fd) {
      case .refused(let refusal):
        refuse(fd, refusal)
        continue
      case .ownUser: isOwnUser = true
      case .group: isOwnUser = false
      }
      if clients.count >= limits.maximumClients {
        refuse(fd, ProtocolError(.limitReached, "cued already serves \(limits.maximumClients) clients (--max-clients); try again later"))
        continue
      }
      connect(fd).isOwnUser = isOwnUser
    }
  }

  /// Sends a connection one line saying why it is refused, and closes it: nothing it sends is read.
  private func refuse(_ fd: FileDescriptor, _ refusal: ProtocolError) {
    _ = ReplyEnvelope.failure(id: nil, refusal).line.withUnsafeBytes { try? fd.write($0) }
    fd.close()
  }

  /// Out of descriptors: frees the reserved one, accepts the waiting connection, says why and
  /// closes it, so the backlog drains and the loop does not spin on a readable listener.
  private func refuseForWantOfDescriptors(_ listener: FileDescriptor, _ error: SystemError) {
    descriptorShortages += 1
    if shortageLogs.allows(now: clock.nanoseconds()) {
      logger.warning(
        "out of file descriptors (\(error.reason)); new clients are refused until some disconnect. Raise LimitNOFILE or lower --max-clients",
        metadata: ["limit": "\(ResourceLimits.openFileLimit)", "refused": "\(descriptorShortages)"])
    }
    reserve.release()
    defer { _ = reserve.restore() }
    guard let fd = try? UnixSocket.accept(listener) else { return }
    refuse(fd, ProtocolError(.limitReached, "cued is out of file descriptors (limit \(ResourceLimits.openFileLimit)); try again later"))
  }

  /// Who may connect: cued's own user, or a member of the configured group (`--allow-group`).
  private enum Admission {
    case ownUser, group
    case refused(ProtocolError)
  }

  /// Whether the peer on `fd` may connect, and as whom: it must run as cued's own user or be a
  /// member of the configured group (`--allow-group`), whatever the socket file's mode says.
  private func admission(of fd: FileDescriptor) -> Admission {
    let ownUID = ProcessInfo.effectiveUserID
    guard let peer = try? UnixSocket.peerCredentials(fd) else {
      return .refused(ProtocolError(.accessDenied, "cued cannot tell who is connecting (SO_PEERCRED failed); connection refused"))
    }
    if peer.uid == ownUID { return .ownUser }
    if let group = limits.allowedGroup {
      if peer.gid == group { return .group }
      if let groups = try? UnixSocket.peerGroups(fd), groups.contains(group) { return .group }
    }
    refusedConnections += 1
    if refusalLogs.allows(now: clock.nanoseconds()) {
      logger.notice(
        "refused a connection from another user",
        metadata: ["uid": "\(peer.uid)", "pid": "\(peer.pid)", "refused": "\(refusedConnections)"])
    }
    let allowed = limits.allowedGroup.map { "members of group \($0)" } ?? "no other user"
    return .refused(ProtocolError(
      .accessDenied,
      "cued here serves uid \(ownUID) and \(allowed); uid \(peer.uid) is refused. Run your own cued (systemctl --user start cued), or have the administrator start this one with --allow-group"))
  }

  // MARK: - Serving

  /// What poll reported for one connection: reads, writes and serves it, and closes it when it broke.
  func service(_ client: ClientConnection, events: PollEvents) {
    if events.contains(.writable) { client.flush() }
    if events.contains(.hangup) || events.contains(.error) {
      // Gone both ways: carry out what it sent (replies cannot arrive), then close.
      while client.receive(into: &readScratch, now: clock.nanoseconds()) && client.framer.pendingByteCount < 1 << 20 { serve(client) }
      serve(client)
      client.isClosed = true
    } else if events.contains(.readable) {
      // One read per wakeup keeps one busy client from starving the others.
      _ = client.receive(into: &readScratch, now: clock.nanoseconds())
    }
    // Also after a flush: lines held back while the client's replies piled up are served now.
    serve(client)
    if client.isClosed { disconnect(client) }
  }

  /// Answers the complete lines a client has sent, until its unread replies reach the pause mark.
  /// Lines from a client that has stopped sending (or hung up) are all carried out.
  func serve(_ client: ClientConnection) {
    while client.wantsToRead || client.peerFinishedSending || client.isClosed, let frame = client.framer.next() {
      switch frame {
      case .line(let bytes):
        if bytes.isEmpty || bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { continue }
        handleLine(bytes, client)
      case .oversize(let count):
        client.send(.failure(id: nil, .lineTooLong(byteCount: count)))
      }
    }
  }

  /// Closes connections whose peer stopped sending once nothing more is owed to them: queued
  /// output, and whatever a feature says it still owes (`obligations`).
  func retireHalfClosed() {
    for client in clients.values where client.peerFinishedSending && !client.isClosed {
      if client.pendingOutputBytes > 0 { continue }
      if obligations.contains(where: { $0(client.serial) }) { continue }
      disconnect(client)
    }
  }

  func disconnect(_ client: ClientConnection) {
    guard clients.removeValue(forKey: client.serial) != nil else { return }
    eventsDroppedByGone += client.droppedEvents
    for release in onDisconnect { release(client.serial) }
    client.transport.close()
  }

  /// At exit: sends what is queued, closes every connection and the listener, removes the socket file if cued made it.
  func close() {
    for client in clients.values {
      client.flush()
      client.transport.close()
    }
    clients.removeAll()
    listener?.close()
    listener = nil
    if ownsSocketFile { Files.remove(socketPath) }
  }
}

/// At most one log line per interval, for what a client can make happen at will (connections
/// refused, descriptors run out): the first is logged, the rest counted until the interval passes.
struct LogThrottle {
  let interval: UInt64
  private var last: UInt64? = nil

  init(seconds: Double) { interval = UInt64(seconds * 1e9) }

  mutating func allows(now: UInt64) -> Bool {
    if let last, now - last < interval { return false }
    last = now
    return true
  }
}
