import CueDecoding
import CueProtocol
import DaemonTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// cued playing through an ALSA `file` PCM whose slave is a PulseAudio null sink: the null sink
/// paces playback like a card, and the file receives exactly what cued wrote.
final class PacedCapture {
  let directory: String
  let pulse: PulseServer
  let daemon: DaemonProcess
  var capturePath: String { directory + "/out.raw" }

  /// `prepare` gets the sound directory before cued starts (to add files of the test's own);
  /// `soundDirectoryName` is that directory's own name in the rig's.
  init(
    cues: [String: String], extra: [String] = [], config: String? = nil, environment extraEnvironment: [String: String] = [:],
    prepare: (String) throws -> Void = { _ in }, soundDirectoryName: String = "sounds"
  ) throws {
    directory = Harness.temporaryDirectory()
    pulse = try PulseServer(directory: directory)
    let sounds = try Harness.soundDirectory(in: directory, cues, named: soundDirectoryName)
    try prepare(sounds)
    var extra = extra
    if let config {
      try config.write(toFile: directory + "/cued.toml", atomically: true, encoding: .utf8)
      extra += ["--config", directory + "/cued.toml"]
    }
    var environment = pulse.environment
    environment["ALSA_CONFIG_PATH"] = try Self.teeConfiguration(pulse: pulse, capture: directory + "/out.raw", at: directory + "/asound.conf")
    environment.merge(extraEnvironment) { _, new in new }
    daemon = try DaemonProcess(
      socket: directory + "/cued.sock",
      arguments: ["--sounds", sounds, "--device", "tee", "--idle-timeout", "60"] + extra,
      environment: environment, logPath: directory + "/cued.log")
  }

  /// Writes an asound.conf at `path` whose PCM `tee` writes what it plays into `capture` (raw float32)
  /// and passes it on to the server's null sink, which paces it; returns `path` (for ALSA_CONFIG_PATH).
  static func teeConfiguration(pulse: PulseServer, capture: String, at path: String) throws -> String {
    let config = """
      </usr/share/alsa/alsa.conf>
      pcm.tee { type file slave.pcm "pulse:\(pulse.sink)" file "\(capture)" format "raw" perm 0644 }
      """
    try config.write(toFile: path, atomically: true, encoding: .utf8)
    return path
  }

  /// Stops cued (so everything it wrote is in the file) and returns the capture.
  func finish() throws -> [Float] {
    daemon.stop()
    return try readFloats(capturePath)
  }

  func client() throws -> ProtocolClient { try ProtocolClient(socket: daemon.socket) }
}

/// Requests with automatic ids; events are kept aside for `waitForEvent`.
final class ProtocolClient {
  let raw: RawClient
  var nextID = 1
  var events: [JSONValue] = []

  init(socket: String) throws { raw = try RawClient(socket: socket) }

  @discardableResult
  func request(_ op: String, _ fields: [(String, JSONValue)] = []) throws -> JSONValue {
    let message = try exchange(op, fields)
    guard message["ok"] == true else {
      throw HarnessError("\(op) failed: \(JSONWriter.write(message))")
    }
    return message
  }

  /// Sends a request and returns its reply line, keeping the events that come before it.
  private func exchange(_ op: String, _ fields: [(String, JSONValue)]) throws -> JSONValue {
    let id = nextID
    nextID += 1
    let object = JSONValue.object([("id", .number(Double(id))), ("op", .string(op))] + fields)
    try raw.send(JSONWriter.write(object) + "\n")
    while true {
      let message = try raw.receive()
      if message["event"] != nil {
        events.append(message)
        continue
      }
      if message["id"]?.intValue == id { return message }
    }
  }

  /// Sends a request that is to fail; returns its `error` object (`code`, `message`).
  func requestError(_ op: String, _ fields: [(String, JSONValue)] = []) throws -> JSONValue {
    let message = try exchange(op, fields)
    guard message["ok"] == false, let error = message["error"] else { throw HarnessError("\(op) did not fail: \(JSONWriter.write(message))") }
    return error
  }

  /// The next event of `kind` (already received, or arriving within `timeout`).
  func waitForEvent(_ kind: String, timeout: Double = 5, where matches: (JSONValue) -> Bool = { _ in true }) throws -> JSONValue {
    if let index = events.firstIndex(where: { $0["event"]?.stringValue == kind && matches($0) }) {
      return events.remove(at: index)
    }
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
      let message = try raw.receive()
      if message["event"]?.stringValue == kind && matches(message) { return message }
      if message["event"] != nil { events.append(message) }
    }
    throw HarnessError("no \(kind) event within \(timeout) s")
  }

  /// Events that arrive within `seconds`.
  func drainEvents(for seconds: Double) -> [JSONValue] {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
      guard let message = try? raw.receive(timeout: max(0.01, deadline.timeIntervalSinceNow)) else { break }
      if message["event"] != nil { events.append(message) }
    }
    defer { events.removeAll() }
    return events
  }
}
