#if canImport(Testing)
import CueProtocol
import DaemonTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `watch-sounds`: cues added, replaced and removed by what happens in the sound directory,
/// without `reload`, each body written once against `DaemonUnderTest`.
public enum SoundWatching {
  public static let all: [Behaviour] = [
    Behaviour("aFileCopiedInIsACueAndADeletedOneIsGoneWhileItsVoicePlaysOn", aFileCopiedInIsACueAndADeletedOneIsGoneWhileItsVoicePlaysOn),
    Behaviour("aFileRenamedIntoPlaceAndAVariationFolderMadeInAreLoaded", aFileRenamedIntoPlaceAndAVariationFolderMadeInAreLoaded),
    Behaviour("aCorruptFileDroppedInIsADecodeErrorAndTheDaemonServesOn", aCorruptFileDroppedInIsADecodeErrorAndTheDaemonServesOn),
    Behaviour("withWatchSoundsOffANewFileWaitsForAReload", withWatchSoundsOffANewFileWaitsForAReload),
  ]

  /// A daemon on a sound directory of its own holding `pico`, watching it (or not).
  static func start(_ start: DaemonStarter, watching: Bool = true) throws -> DaemonUnderTest {
    var setup = DaemonSetup(cues: ["pico": "tone-48000-mono.mp3"])
    setup.watchSounds = watching
    return try start(setup)
  }

  public static func bytes(_ fixture: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: TestPaths.fixture(fixture))) }

  /// The cue names `list` gives.
  static func names(_ client: TestClient) throws -> Set<String> {
    Set((try client.request("list")["cues"]?.arrayValue ?? []).compactMap { $0["name"]?.stringValue })
  }

  /// Asks `list` until `holds` is true of its names, for at most `seconds` of the daemon's time; whether it came to hold.
  static func eventually(_ daemon: DaemonUnderTest, _ client: TestClient, within seconds: Double = 10, _ holds: (Set<String>) -> Bool) throws -> Bool {
    var waited = 0.0
    while waited < seconds {
      if holds(try names(client)) { return true }
      daemon.advance(seconds: 0.02)
      waited += 0.02
    }
    return holds(try names(client))
  }

  static func aFileCopiedInIsACueAndADeletedOneIsGoneWhileItsVoicePlaysOn(_ start: DaemonStarter) throws {
    let daemon = try Self.start(start)
    let sounds = daemon.soundDirectory
    let client = try daemon.connect()
    let watcher = try daemon.connect()
    try watcher.request("subscribe", [("kinds", ["reloaded", "decode-error"])])
    #expect(try names(client) == ["pico"])

    // Copied in (written, then closed): loaded as a file found at start would be (cuectl's list of it: SoundWatchTests).
    try bytes("loop-48000-stereo.mp3").write(to: URL(fileURLWithPath: sounds + "/hum.mp3"))
    #expect(try eventually(daemon, client) { $0.contains("hum") }, "hum never appeared in list")
    let reloaded = try watcher.waitForEvent("reloaded")
    #expect(reloaded["added"] == ["hum"] && reloaded["removed"] == [], "\(JSONWriter.write(reloaded))")

    // Playing, then deleted: later plays are unknown-cue, the voice that plays goes on.
    let voice = try #require(try client.request("play", [("cue", "hum"), ("loops", -1)])["voice"])
    #expect(unlink(sounds + "/hum.mp3") == 0)
    #expect(try eventually(daemon, client) { !$0.contains("hum") }, "hum is still listed after its file was deleted")
    #expect(try watcher.waitForEvent("reloaded")["removed"] == ["hum"])
    #expect(try client.requestError("play", [("cue", "hum")])["code"] == "unknown-cue")
    let voices = try client.request("voices")["voices"]?.arrayValue ?? []
    #expect(voices.contains { $0["voice"] == voice && $0["cue"] == "hum" }, "the playing voice was cut: \(voices)")
    try client.request("stop", [("all", true)])
  }

  static func aFileRenamedIntoPlaceAndAVariationFolderMadeInAreLoaded(_ start: DaemonStarter) throws {
    let daemon = try Self.start(start)
    let sounds = daemon.soundDirectory
    let client = try daemon.connect()
    // As an editor saves: a temporary file (no sound name: no rescan of its own), renamed into place.
    try bytes("tone-48000-stereo.ogg").write(to: URL(fileURLWithPath: sounds + "/.chime.ogg.part"))
    #expect(rename(sounds + "/.chime.ogg.part", sounds + "/chime.ogg") == 0)
    #expect(try eventually(daemon, client) { $0.contains("chime") }, "chime never appeared")
    #expect(try client.request("play", [("cue", "chime")])["played"] == .bool(true))

    // A variation set: a folder made, then its files.
    try FileManager.default.createDirectory(atPath: sounds + "/blip", withIntermediateDirectories: false)
    try bytes("tone-48000-mono.wav").write(to: URL(fileURLWithPath: sounds + "/blip/a.wav"))
    try bytes("tone-8000-mono.mp3").write(to: URL(fileURLWithPath: sounds + "/blip/b.mp3"))
    #expect(try eventually(daemon, client) { $0.isSuperset(of: ["blip/a", "blip/b"]) }, "the set's members never appeared")
    let variation = try client.request("play", [("cue", "blip")])["variation"]?.stringValue
    #expect(variation == "blip/a" || variation == "blip/b")

    // Replaced: the same name, another sound (a new file renamed over it) is decoded afresh.
    func chime() throws -> JSONValue? { try client.request("list")["cues"]?.arrayValue?.first { $0["name"] == "chime" } }
    let before = try chime()
    try bytes("tone-44100-stereo.flac").write(to: URL(fileURLWithPath: sounds + "/.chime.new"))
    #expect(rename(sounds + "/.chime.new", sounds + "/chime.ogg") == 0)
    var after = before
    var waited = 0.0
    while waited < 10, after?["sourceRate"] == before?["sourceRate"] {
      daemon.advance(seconds: 0.02)
      waited += 0.02
      after = try chime()
    }
    #expect(before?["sourceRate"] == 48000 && after?["sourceRate"] == 44100, "\(String(describing: after))")
  }

  /// A corrupt file is a decode-error event and the daemon serves on (the log's line naming it: SoundWatchTests).
  static func aCorruptFileDroppedInIsADecodeErrorAndTheDaemonServesOn(_ start: DaemonStarter) throws {
    let daemon = try Self.start(start)
    let sounds = daemon.soundDirectory
    let watcher = try daemon.connect()
    try watcher.request("subscribe", [("kinds", ["decode-error"])])
    try bytes("not-audio.mp3").write(to: URL(fileURLWithPath: sounds + "/broken.mp3"))
    let error = try watcher.waitForEvent("decode-error")
    #expect(error["path"] == .string(sounds + "/broken.mp3") && error["player"] == nil, "\(JSONWriter.write(error))")
    #expect(error["reason"]?.stringValue?.isEmpty == false)
    let client = try daemon.connect()
    #expect(try names(client) == ["pico"])
    #expect(try client.request("play", [("cue", "pico")])["played"] == .bool(true))
    // A good file after it still loads.
    try bytes("tone-22050-mono.mp3").write(to: URL(fileURLWithPath: sounds + "/ding.mp3"))
    #expect(try eventually(daemon, client) { $0.contains("ding") })
  }

  static func withWatchSoundsOffANewFileWaitsForAReload(_ start: DaemonStarter) throws {
    let daemon = try Self.start(start, watching: false)
    let client = try daemon.connect()
    try bytes("tone-22050-mono.mp3").write(to: URL(fileURLWithPath: daemon.soundDirectory + "/ding.mp3"))
    // Five times the settle delay: a watching daemon has it by then (the bodies above wait for it).
    daemon.advance(seconds: 1)
    #expect(try names(client) == ["pico"])
    try client.request("reload")
    #expect(try names(client) == ["ding", "pico"])
  }
}
#endif
