import CuePosix
import CueProtocol
import DaemonTestSupport

/// What a behaviour test asks of a daemon, so that its body is written once and runs against
/// either daemon: in process (CueDaemonTests: the test runs the engine's cycles and moves the
/// clock, so time passes as fast as the machine computes it) or live (EndToEndTests: the real
/// `cued` on a socket, playing through a paced device, in real time).
public protocol DaemonUnderTest: AnyObject {
  /// A new client connection.
  func connect() throws -> TestClient
  /// Lets `seconds` of the daemon's time pass: in process, the manual clock and the engine's
  /// cycles for that long; live, a real wait.
  func advance(seconds: Double)
  /// Stops the daemon; returns every frame its output was given, interleaved stereo.
  func finish() throws -> [Float]
  /// The sound directory the daemon serves (`--sounds`): a body adds or removes files there while
  /// it runs, then asks for a `reload`.
  var soundDirectory: String { get }
}

/// What a daemon under test starts with: what the command line and the config file give `cued`.
public struct DaemonSetup {
  /// Cues copied from Tests/Fixtures into the sound directory: cue name → fixture file (an MP3).
  public var cues: [String: String]
  /// The config file's text (its tables: `[cues.…]`, `[carousel.…]`, `[groups.…]`), if any.
  public var config: String?
  /// `--max-voices`, if not the default.
  public var maxVoices: Int?
  /// Called with the (empty) sound directory before the daemon starts, to add the test's files.
  public var prepare: (String) throws -> Void

  public init(
    cues: [String: String] = [:], config: String? = nil, maxVoices: Int? = nil, prepare: @escaping (String) throws -> Void = { _ in }
  ) {
    self.cues = cues
    self.config = config
    self.maxVoices = maxVoices
    self.prepare = prepare
  }

  /// The environment the daemon's lookups see (XDG_DATA_HOME, XDG_DATA_DIRS, …), if the test gives
  /// one: in process, all of it; live, merged over the rig's own.
  public var environment: [String: String]? = nil
  /// `--sound-theme`, if not the default.
  public var soundTheme: String? = nil
  /// `--idle-timeout`, if not the rig's 60 s.
  public var idleTimeout: Double? = nil
  /// `watch-sounds`: true watches the sound directory, false does not (`--no-watch-sounds`); nil
  /// is each surface's default (live: cued's, on; in process: off, as each watch is an inotify instance).
  public var watchSounds: Bool? = nil
  /// `--allow-any-path`: clients may name files outside the sound directories (live, the flag; in
  /// process, the configuration it sets).
  public var allowAnyPath: Bool = false
  /// The sound directory's own name (the last part of its path), if not `sounds`: a body that is
  /// about the directory's spelling names it.
  public var soundDirectoryName: String? = nil
}

extension DaemonSetup {
  /// Fills the empty sound directory `path` as `cued --sounds path` is to find it: the fixtures, then `prepare`.
  public func fillSoundDirectory(_ path: String) throws {
    for (cue, file) in cues { try Files.write(try Files.read(path: TestPaths.fixture(file), limit: 64 << 20), to: path + "/" + cue + ".mp3") }
    try prepare(path)
  }
}

/// Starts a daemon under test: each surface gives its own (`InProcessDaemon.start`, `LiveDaemon.start`).
public typealias DaemonStarter = (DaemonSetup) throws -> DaemonUnderTest

/// One connection's lines, as a surface carries them.
public protocol LineChannel: AnyObject {
  /// Sends one line (without its newline).
  func send(_ line: String) throws
  /// The next line the daemon sent, waiting at most `seconds` of the daemon's time; nil when none came.
  func receive(within seconds: Double) throws -> JSONValue?
  /// Sends bytes as they are: part of a line, several lines, or none.
  func send(bytes: [UInt8]) throws
  /// Shuts the sending side: the daemon reads end of file; lines still come back.
  func finishSending() throws
  /// Hangs up both ways: nothing more is sent or received.
  func hangUp() throws
}

/// A client of a daemon under test: requests with automatic ids, events kept aside for `waitForEvent`.
public final class TestClient {
  let channel: LineChannel
  private var nextID = 1
  private var events: [JSONValue] = []

  public init(_ channel: LineChannel) { self.channel = channel }

  /// Sends one line as it is (without its newline).
  public func send(_ line: String) throws { try channel.send(line) }

  /// Sends a request that is to succeed; returns its reply, keeping the events that come before it.
  @discardableResult
  public func request(_ op: String, _ fields: [(String, JSONValue)] = []) throws -> JSONValue {
    let message = try exchange(op, fields)
    guard message["ok"] == true else { throw HarnessError("\(op) failed: \(JSONWriter.write(message))") }
    return message
  }

  /// Sends a request that is to fail; returns its `error` object (`code`, `message`).
  public func requestError(_ op: String, _ fields: [(String, JSONValue)] = []) throws -> JSONValue {
    let message = try exchange(op, fields)
    guard message["ok"] == false, let error = message["error"] else { throw HarnessError("\(op) did not fail: \(JSONWriter.write(message))") }
    return error
  }

  /// Sends a carousel message with an id; returns cued's decision reply.
  @discardableResult
  public func carousel(_ event: CarouselMessage.Event, carousel: String = "default") throws -> JSONValue {
    try exchange("carousel message") { CarouselMessage(carousel: carousel, event: event, id: .number($0)).json }
  }

  /// A `page-changed` by key, as a carousel sends it; cued's decision reply.
  @discardableResult
  public func page(_ from: Int, _ to: Int, of count: Int, carousel: String = "default") throws -> JSONValue {
    try self.carousel(.pageChanged(from: from, to: to, count: count, reason: .key), carousel: carousel)
  }

  /// The events received so far (kept aside or waiting to be read), without waiting for more; the
  /// other lines waiting are dropped.
  public func eventsSoFar() throws -> [JSONValue] {
    while let message = try channel.receive(within: 0) {
      if message["event"] != nil { events.append(message) }
    }
    defer { events.removeAll() }
    return events
  }

  private func exchange(_ op: String, _ fields: [(String, JSONValue)]) throws -> JSONValue {
    try exchange(op) { .object([("id", .number(Double($0))), ("op", .string(op))] + fields) }
  }

  /// Sends the message `make` builds with the next id; returns the reply to it, keeping the events that come before it.
  private func exchange(_ what: String, timeout: Double = 5, _ make: (Int) -> JSONValue) throws -> JSONValue {
    let id = nextID
    nextID += 1
    try send(JSONWriter.write(make(id)))
    while let message = try channel.receive(within: timeout) {
      if message["event"] != nil {
        events.append(message)
      } else if message["id"]?.intValue == id {
        return message
      }
    }
    throw HarnessError("no reply to \(what) within \(timeout) s")
  }

  /// The next event of `kind` that `matches`: already received, or arriving before `timeout` seconds
  /// of the daemon's time pass without a line.
  @discardableResult
  public func waitForEvent(_ kind: String, timeout: Double = 5, where matches: (JSONValue) -> Bool = { _ in true }) throws -> JSONValue {
    if let index = events.firstIndex(where: { $0["event"]?.stringValue == kind && matches($0) }) {
      return events.remove(at: index)
    }
    while let message = try channel.receive(within: timeout) {
      if message["event"]?.stringValue == kind && matches(message) { return message }
      if message["event"] != nil { events.append(message) }
    }
    throw HarnessError("no \(kind) event within \(timeout) s")
  }

  /// Sends bytes as they are (part of a line, many lines, bytes that are no UTF-8).
  public func send(bytes: [UInt8]) throws { try channel.send(bytes: bytes) }

  /// The next line the daemon sent, reply or event (not one kept aside already), waiting at most
  /// `timeout` seconds of the daemon's time: for what `send` sent, which has no id of `request`'s.
  public func receive(timeout: Double = 5) throws -> JSONValue {
    guard let message = try channel.receive(within: timeout) else { throw HarnessError("no line from the daemon within \(timeout) s") }
    return message
  }

  /// Shuts the sending side (`shutdown(SHUT_WR)`): the daemon reads end of file, and still answers.
  public func finishSending() throws { try channel.finishSending() }

  /// Hangs up (the connection closed both ways), with whatever was sent before still to be read by the daemon.
  public func hangUp() throws { try channel.hangUp() }
}
