import CueOutput
import CueCore
import CuePosix
import CueProtocol
import Logging
import Testing

@testable import CueDaemon

/// A clock the test moves by hand.
final class ManualClock: DaemonClock {
  var now: UInt64 = 1_000_000_000
  func nanoseconds() -> UInt64 { now }
  func advance(milliseconds: UInt64) { now += milliseconds * 1_000_000 }
  func advance(nanoseconds: UInt64) { now += nanoseconds }
}

/// A time of day the test sets by hand, for quiet hours.
final class ManualWallClock: WallClock {
  var seconds: Double = 12 * 3600
  func secondsOfDay() -> Double { seconds }
  func set(_ hour: Int, _ minute: Int, _ second: Double = 0) { seconds = Double(hour * 3600 + minute * 60) + second }
}

/// An output device that keeps what it is given, and fails when told to.
final class TestSink: OutputDevice, PushSink, @unchecked Sendable {
  let name = "test"
  let backend = "test"
  var format = NegotiatedFormat(sampleFormat: .float32, rate: 48000, periodFrames: 240, bufferFrames: 960)
  /// Interleaved stereo, every frame written since the test began.
  var written: [Float] = []
  var isOpen = false
  var opens = 0
  /// The next open fails with this.
  var openFailure: AudioDeviceError? = nil
  /// The next write fails with this status.
  var nextWriteStatus: SinkStatus = .ok

  func open() throws(AudioDeviceError) -> NegotiatedFormat {
    if let failure = openFailure { throw failure }
    isOpen = true
    opens += 1
    return format
  }

  func close() { isOpen = false }

  func write(_ interleaved: UnsafePointer<Float>, frameCount: Int) -> SinkStatus {
    let status = nextWriteStatus
    nextWriteStatus = .ok
    if case .lost = status { return status }
    written.append(contentsOf: UnsafeBufferPointer(start: interleaved, count: frameCount * 2))
    return status
  }

  /// Frames written but not yet heard, as a device's queue holds them.
  var delay = 0
  func delayFrames() -> Int { delay }
}

/// A connection's bytes in memory: what the test writes is read by the daemon, and the other way.
final class MemoryTransport: ClientTransport {
  var input: [UInt8] = []
  var output: [UInt8] = []
  /// The peer shut down its sending side (read returns end of file once input is drained).
  var finishedSending = false
  var closed = false

  func read(into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> FileDescriptor.IOResult {
    if input.isEmpty { return finishedSending ? .endOfFile : .wouldBlock }
    let n = min(buffer.count, input.count)
    buffer.copyBytes(from: input[..<n])
    input.removeFirst(n)
    return .bytes(n)
  }

  func write(_ buffer: UnsafeRawBufferPointer) throws(SystemError) -> FileDescriptor.IOResult {
    let room = capacity - (output.count - peerTaken)
    guard room > 0 else { return .wouldBlock }
    let n = min(room, buffer.count)
    output.append(contentsOf: buffer[..<n])
    return .bytes(n)
  }

  func close() { closed = true }
  var pollDescriptor: FileDescriptor? { nil }

  /// The most bytes written and not yet taken by the peer that `write` accepts (a socket's send
  /// buffer); past it, `wouldBlock`. Unbounded unless a test sets it.
  var capacity = Int.max
  /// How much of `output` the peer has taken: the test sets it as it reads.
  var peerTaken = 0
}

/// One client of an embedded daemon: sends lines, reads what came back.
final class EmbeddedClient {
  let connection: ClientConnection
  let transport: MemoryTransport
  private unowned let daemon: EmbeddedDaemon
  private var consumed = 0

  init(connection: ClientConnection, transport: MemoryTransport, daemon: EmbeddedDaemon) {
    self.connection = connection
    self.transport = transport
    self.daemon = daemon
  }

  var serial: UInt64 { connection.serial }

  /// Sends one line and lets the daemon serve it.
  func send(_ line: String) {
    transport.input.append(contentsOf: Array((line + "\n").utf8))
    // One read per readiness, as in the loop: as many as it takes to read it all.
    repeat { daemon.daemon.clients.service(connection, events: .readable) } while !transport.input.isEmpty
  }

  /// Every line received since the last call, parsed.
  func received() -> [JSONValue] {
    let bytes = transport.output[consumed...]
    consumed = transport.output.count
    return bytes.split(separator: 0x0A).map { try! JSONParser.parse(Array($0)) }
  }

  /// Sends a request and returns the lines it produced (the reply first, unless deferred).
  @discardableResult
  func request(_ line: String) -> [JSONValue] {
    send(line)
    return received()
  }

  /// The reply to a request sent now (the first line that is not an event).
  func reply(_ line: String) -> JSONValue {
    request(line).first { $0["event"] == nil } ?? .null
  }

  /// Sends bytes as they are (part of a line, many lines): the daemon reads once, as on the
  /// readiness a socket's bytes cause (unless it stopped reading the connection, its replies
  /// waiting for room); the rest waits for the loop's next service (`isReadable`). So bytes sent
  /// one at a time arrive one read at a time, as a request split across writes does.
  func send(bytes: [UInt8]) {
    transport.input.append(contentsOf: bytes)
    if connection.wantsToRead { daemon.daemon.clients.service(connection, events: .readable) }
  }

  /// The peer shuts its sending side: once the daemon has read what was sent, it reads end of file.
  func finishSending() { transport.finishedSending = true }

  /// Whether poll would report the connection readable: bytes wait, or the end of file does.
  var isReadable: Bool { !transport.input.isEmpty || (transport.finishedSending && !connection.peerFinishedSending) }

  /// The peer hangs up: the daemon carries out what it sent, and closes the connection.
  func hangUp() {
    transport.finishedSending = true
    daemon.daemon.clients.service(connection, events: .hangup)
  }
}

/// A whole daemon in the test's thread, with no sockets, processes or audio thread: the test
/// drives the push loop's cycles and the clock itself (the spirit of SwiftNIO's EmbeddedChannel).
final class EmbeddedDaemon {
  let daemon: Daemon<TestSink>
  /// The driver the audio thread would run, run here one cycle at a time.
  let audioLoop: PushLoop<TestSink>
  let sink = TestSink()
  let clock = ManualClock()
  let wallClock = ManualWallClock()

  /// `environment`: what the sound-theme lookup sees (XDG_DATA_HOME, …), by default this process's;
  /// `tables`: a config file's tables, applied before the cues load (as cued does).
  init(
    voiceLimit: Int = 32, idleSeconds: Double = 0.02, sounds: [String]? = nil, environment: [String: String]? = nil,
    tables: ConfigValues? = nil, configure: (inout DaemonConfiguration) -> Void = { _ in }
  ) throws {
    var configuration = DaemonConfiguration(
      soundDirectories: sounds ?? [Self.repositorySounds], socketPath: "/nonexistent/cued.sock", device: "test")
    configuration.voiceLimit = voiceLimit
    configuration.idleSeconds = idleSeconds
    // Each watch is an inotify instance, of which a user has 128: the tests that watch ask for it.
    configuration.watchSounds = false
    configure(&configuration)
    var logger = Logger(label: "cued-test")
    logger.logLevel = .critical
    let lookup: (String) -> String? = environment.map { given in { given[$0] } } ?? { ProcessInfo.environment($0) }
    daemon = try Daemon(configuration: configuration, device: sink, logger: logger, clock: clock, wallClock: wallClock, environment: lookup)
    audioLoop = PushLoop(daemon.engine)
    if let tables { daemon.applyTables(tables) }
    daemon.loadCues()
  }

  static var repositorySounds: String {
    // This file is Tests/CueDaemonTests/EmbeddedDaemon.swift; the sounds are at the root.
    #filePath.split(separator: "/", omittingEmptySubsequences: false).dropLast(3).joined(separator: "/") + "/sounds"
  }

  func connect() -> EmbeddedClient {
    let transport = MemoryTransport()
    let connection = daemon.clients.connect(transport)
    return EmbeddedClient(connection: connection, transport: transport, daemon: self)
  }

  /// Runs `count` audio cycles (each one period), then hands the engine's news to the daemon.
  func runCycles(_ count: Int = 1) {
    for _ in 0..<count { _ = audioLoop.runCycle() }
    daemon.drainEngineEvents()
  }

  /// Runs cycles until `done` holds or `limit` cycles have run; returns whether it held.
  @discardableResult
  func runCycles(until done: () -> Bool, limit: Int = 2000) -> Bool {
    for _ in 0..<limit {
      if done() { return true }
      runCycles(1)
    }
    return done()
  }

  /// Waits (for real, a few seconds at most) for background work such as a decode, and applies it.
  func finishBackgroundWork() {
    _ = try? Poll.wait([PollRequest(fd: daemon.work.doneFD, events: .readable)], timeoutMilliseconds: 5000)
    daemon.finishWork()
  }

  func cue(_ name: String) -> Cue { daemon.catalog[name]! }

  /// The decoded samples of a cue, interleaved stereo.
  func samples(of name: String) -> [Float] {
    let cue = cue(name)
    return Array(UnsafeBufferPointer(start: cue.decoded.buffer.samples.base, count: cue.frameCount * 2))
  }
}
