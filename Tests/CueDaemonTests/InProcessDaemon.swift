import CuePosix
import CueProtocol
import DaemonBehaviours

@testable import CueDaemon

/// The embedded daemon as a `DaemonUnderTest`: the behaviour bodies of DaemonBehaviours run on it
/// with no sockets, processes or audio thread, and time is the manual clock moved one period at a
/// time with the engine's cycle for that period, so a body's second passes in microseconds.
final class InProcessDaemon: DaemonUnderTest {
  let embedded: EmbeddedDaemon

  /// A fresh sound directory that `setup` fills, the config's tables (none without a config, as
  /// cued has) applied before the cues load, and the idle window as long as the live rig's (`--idle-timeout 60`).
  init(_ setup: DaemonSetup) throws {
    // A folder of its own in a directory of the test's, as the live rig's is (a body may put a file beside it).
    soundDirectory = try Files.makeTemporaryDirectory(prefix: "cued-behaviour") + "/" + (setup.soundDirectoryName ?? "sounds")
    try Files.makeDirectories(soundDirectory, mode: 0o755)
    try setup.fillSoundDirectory(soundDirectory)
    let tables = try GroupsAndLevelsTests.values(setup.config ?? "")
    embedded = try EmbeddedDaemon(
      voiceLimit: setup.maxVoices ?? 32, idleSeconds: setup.idleTimeout ?? 60, sounds: [soundDirectory], environment: setup.environment,
      tables: tables
    ) { configuration in
      if let theme = setup.soundTheme { configuration.soundTheme = theme }
      if let watch = setup.watchSounds { configuration.watchSounds = watch }
      configuration.allowAnyPath = setup.allowAnyPath
    }
  }

  static func start(_ setup: DaemonSetup) throws -> DaemonUnderTest { try InProcessDaemon(setup) }

  func connect() -> TestClient {
    let client = embedded.connect()
    client.transport.capacity = Self.socketBuffer
    clients.append(client)
    return TestClient(InProcessChannel(client, daemon: self))
  }

  /// The clock's time since the last cycle, in nanoseconds: time moves by less than a period too
  /// (lines a millisecond apart), and the engine's cycle runs when a whole period has passed.
  private var sinceCycle: UInt64 = 0

  var periodNanoseconds: UInt64 {
    let format = embedded.sink.format
    return UInt64(format.periodFrames) * 1_000_000_000 / UInt64(format.rate)
  }

  /// Time up to the next cycle and the cycle: the engine mixes and writes its period, and the
  /// control side does what its loop would then (the engine's news, finished background work, the
  /// timers that fell due).
  func step() { move(periodNanoseconds - sinceCycle) }

  private func move(_ nanoseconds: UInt64) {
    embedded.clock.advance(nanoseconds: nanoseconds)
    sinceCycle += nanoseconds
    if sinceCycle == periodNanoseconds {
      sinceCycle = 0
      embedded.runCycles(1)
    }
    let daemon = embedded.daemon
    // A watched directory's changes, noted at the clock's time, and the rescan once they settle.
    if let watch = daemon.soundWatcher.descriptor,
      let ready = try? Poll.wait([PollRequest(fd: watch, events: .readable)], timeoutMilliseconds: 0), !ready[0].isEmpty
    {
      daemon.soundWatcher.read(now: embedded.clock.nanoseconds())
    }
    daemon.rescanIfSoundsChanged()
    // Background work (a reload's scan, a file's decode) takes none of the daemon's time here: its
    // real time is waited for, so that a body's daemon time is the same on every machine.
    repeat {
      let timeout: Int32 = daemon.work.jobsRunning > 0 ? 10 : 0
      if let ready = try? Poll.wait([PollRequest(fd: daemon.work.doneFD, events: .readable)], timeoutMilliseconds: timeout), !ready[0].isEmpty {
        daemon.finishWork()
      }
    } while daemon.work.jobsRunning > 0
    // Every connection, as the loop serves them: output the peer made room for, lines held back meanwhile.
    for client in clients where daemon.clients.connection(client.connection.serial) != nil {
      var ready: PollEvents = client.connection.wantsToWrite ? .writable : []
      if client.connection.wantsToRead && client.isReadable { ready.insert(.readable) }
      daemon.clients.service(client.connection, events: ready)
    }
    daemon.clients.retireHalfClosed()
    daemon.device.retryIfDue()
    daemon.device.adaptLatencyIfDue()
    daemon.levels.checkQuietHours()
  }

  /// The cycles that `seconds` reaches (at least the whole of it).
  func periods(in seconds: Double) -> Int {
    Int((seconds * 1e9 / Double(periodNanoseconds)).rounded(.up))
  }

  func advance(seconds: Double) {
    var left = UInt64((seconds * 1e9).rounded())
    while left > 0 {
      let part = min(left, periodNanoseconds - sinceCycle)
      move(part)
      left -= part
    }
  }

  /// Everything written to the test sink (the daemon stays: nothing runs it once the test returns).
  func finish() -> [Float] { embedded.sink.written }

  /// The sound directory `setup` filled, which the daemon serves.
  let soundDirectory: String
  /// A connection's send buffer, as a Unix socket's by default (net.core.wmem_default): a client
  /// that does not read makes the daemon hold its replies, and then stop reading its requests.
  static let socketBuffer = 212_992
  /// Every client connected, for each step to serve as the loop does.
  private var clients: [EmbeddedClient] = []
}

/// An embedded client's lines: a send is served at once; a receive steps the daemon's time until a
/// line comes. It keeps its daemon, as a socket keeps a daemon's client: a body may hold only the client.
final class InProcessChannel: LineChannel {
  let client: EmbeddedClient
  private let daemon: InProcessDaemon
  private var pending: [JSONValue] = []

  init(_ client: EmbeddedClient, daemon: InProcessDaemon) {
    self.client = client
    self.daemon = daemon
  }

  func send(_ line: String) { client.send(line) }

  func receive(within seconds: Double) throws -> JSONValue? {
    try take()
    var periods = daemon.periods(in: seconds)
    while pending.isEmpty && periods > 0 {
      daemon.step()
      try take()
      periods -= 1
    }
    // Not `pending.isEmpty ? nil : …`: that nil is JSONValue's own (`null`), not "no line".
    guard !pending.isEmpty else { return nil }
    return pending.removeFirst()
  }

  /// The whole lines the daemon wrote, read off the connection (which makes room in its buffer); a
  /// line the buffer's room cut waits for its end.
  private func take() throws {
    let output = client.transport.output
    guard let end = output[taken...].lastIndex(of: 0x0A) else { return }
    pending += try output[taken..<end].split(separator: 0x0A).map { try JSONParser.parse(Array($0)) }
    taken = end + 1
    client.transport.peerTaken = taken
  }
  /// How much of the connection's output `take` has read.
  private var taken = 0

  func send(bytes: [UInt8]) { client.send(bytes: bytes) }
  func finishSending() { client.finishSending() }
  func hangUp() { client.hangUp() }
}
