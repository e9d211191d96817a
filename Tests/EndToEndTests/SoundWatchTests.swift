import CueProtocol
import DaemonTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `watch-sounds`: cues added, replaced and removed by what happens in the sound directories,
/// without `reload`, through the real daemon.
@Suite("Watched sound directories", .serialized)
struct SoundWatchTests {
  /// A daemon on a sound directory of its own holding `pico`; its socket, and the directory.
  static func start(_ extra: [String] = []) throws -> (DaemonProcess, String) {
    let (daemon, dir) = try DaemonTests.start(extra, sounds: ["pico": "tone-48000-mono.mp3"])
    return (daemon, dir + "/sounds")
  }

  static func bytes(_ fixture: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: Harness.fixture(fixture))) }

  /// The cue names `list` gives.
  static func names(_ client: ProtocolClient) throws -> Set<String> {
    Set((try client.request("list")["cues"]?.arrayValue ?? []).compactMap { $0["name"]?.stringValue })
  }

  /// Asks `list` until `holds` is true of its names, for at most `seconds`; whether it came to hold.
  static func eventually(_ client: ProtocolClient, within seconds: Double = 10, _ holds: (Set<String>) -> Bool) throws -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
      if holds(try names(client)) { return true }
      usleep(20_000)
    }
    return holds(try names(client))
  }

  @Test func aFileCopiedInIsACueAndADeletedOneIsGoneWhileItsVoicePlaysOn() throws {
    let (daemon, sounds) = try Self.start()
    defer { daemon.stop() }
    let client = try ProtocolClient(socket: daemon.socket)
    let watcher = try ProtocolClient(socket: daemon.socket)
    try watcher.request("subscribe", [("kinds", ["reloaded", "decode-error"])])
    #expect(try Self.names(client) == ["pico"])

    // Copied in (written, then closed): loaded as a file found at start would be.
    try Self.bytes("loop-48000-stereo.mp3").write(to: URL(fileURLWithPath: sounds + "/hum.mp3"))
    #expect(try Self.eventually(client) { $0.contains("hum") }, "hum never appeared in list")
    let reloaded = try watcher.waitForEvent("reloaded")
    #expect(reloaded["added"] == ["hum"] && reloaded["removed"] == [], "\(JSONWriter.write(reloaded))")
    let listed = try daemon.cuectl(["list"])
    #expect(listed.status == 0 && listed.stdout.contains("hum"), "\(listed)")

    // Playing, then deleted: later plays are unknown-cue, the voice that plays goes on.
    let voice = try #require(try client.request("play", [("cue", "hum"), ("loops", -1)])["voice"])
    #expect(unlink(sounds + "/hum.mp3") == 0)
    #expect(try Self.eventually(client) { !$0.contains("hum") }, "hum is still listed after its file was deleted")
    #expect(try watcher.waitForEvent("reloaded")["removed"] == ["hum"])
    #expect(try client.requestError("play", [("cue", "hum")])["code"] == "unknown-cue")
    let voices = try client.request("voices")["voices"]?.arrayValue ?? []
    #expect(voices.contains { $0["voice"] == voice && $0["cue"] == "hum" }, "the playing voice was cut: \(voices)")
    try client.request("stop", [("all", true)])
  }

  @Test func aFileRenamedIntoPlaceAndAVariationFolderMadeInAreLoaded() throws {
    let (daemon, sounds) = try Self.start()
    defer { daemon.stop() }
    let client = try ProtocolClient(socket: daemon.socket)
    // As an editor saves: a temporary file (no sound name: no rescan of its own), renamed into place.
    try Self.bytes("tone-48000-stereo.ogg").write(to: URL(fileURLWithPath: sounds + "/.chime.ogg.part"))
    #expect(rename(sounds + "/.chime.ogg.part", sounds + "/chime.ogg") == 0)
    #expect(try Self.eventually(client) { $0.contains("chime") }, "chime never appeared")
    #expect(try client.request("play", [("cue", "chime")])["played"] == .bool(true))

    // A variation set: a folder made, then its files.
    try FileManager.default.createDirectory(atPath: sounds + "/blip", withIntermediateDirectories: false)
    try Self.bytes("tone-48000-mono.wav").write(to: URL(fileURLWithPath: sounds + "/blip/a.wav"))
    try Self.bytes("tone-8000-mono.mp3").write(to: URL(fileURLWithPath: sounds + "/blip/b.mp3"))
    #expect(try Self.eventually(client) { $0.isSuperset(of: ["blip/a", "blip/b"]) }, "the set's members never appeared")
    let variation = try client.request("play", [("cue", "blip")])["variation"]?.stringValue
    #expect(variation == "blip/a" || variation == "blip/b")

    // Replaced: the same name, another sound (a new file renamed over it) is decoded afresh.
    let before = try client.request("list")["cues"]?.arrayValue?.first { $0["name"] == "chime" }
    try Self.bytes("tone-44100-stereo.flac").write(to: URL(fileURLWithPath: sounds + "/.chime.new"))
    #expect(rename(sounds + "/.chime.new", sounds + "/chime.ogg") == 0)
    let deadline = Date().addingTimeInterval(10)
    var after = before
    while Date() < deadline, after?["sourceRate"] == before?["sourceRate"] {
      usleep(20_000)
      after = try client.request("list")["cues"]?.arrayValue?.first { $0["name"] == "chime" }
    }
    #expect(before?["sourceRate"] == 48000 && after?["sourceRate"] == 44100, "\(String(describing: after))")
  }

  @Test func aCorruptFileDroppedInIsADecodeErrorAndTheDaemonServesOn() throws {
    let (daemon, sounds) = try Self.start()
    defer { daemon.stop() }
    let watcher = try ProtocolClient(socket: daemon.socket)
    try watcher.request("subscribe", [("kinds", ["decode-error"])])
    try Self.bytes("not-audio.mp3").write(to: URL(fileURLWithPath: sounds + "/broken.mp3"))
    let error = try watcher.waitForEvent("decode-error")
    #expect(error["path"] == .string(sounds + "/broken.mp3") && error["player"] == nil, "\(JSONWriter.write(error))")
    #expect(error["reason"]?.stringValue?.isEmpty == false)
    let client = try ProtocolClient(socket: daemon.socket)
    #expect(try Self.names(client) == ["pico"])
    #expect(try client.request("play", [("cue", "pico")])["played"] == .bool(true))
    // A good file after it still loads.
    try Self.bytes("tone-22050-mono.mp3").write(to: URL(fileURLWithPath: sounds + "/ding.mp3"))
    #expect(try Self.eventually(client) { $0.contains("ding") })
    let log = try String(contentsOfFile: daemon.logPath, encoding: .utf8)
    #expect(log.contains("skipped \(sounds)/broken.mp3"), "the log does not name the file that did not load")
  }

  @Test func withWatchSoundsOffANewFileWaitsForAReload() throws {
    let (daemon, sounds) = try Self.start(["--no-watch-sounds"])
    defer { daemon.stop() }
    let client = try ProtocolClient(socket: daemon.socket)
    try Self.bytes("tone-22050-mono.mp3").write(to: URL(fileURLWithPath: sounds + "/ding.mp3"))
    // Five times the settle delay: a watching daemon has it by then (the tests above wait for it).
    usleep(1_000_000)
    #expect(try Self.names(client) == ["pico"])
    try client.request("reload")
    #expect(try Self.names(client) == ["ding", "pico"])
  }
}
