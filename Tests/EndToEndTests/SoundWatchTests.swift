import CueProtocol
import DaemonBehaviours
import DaemonTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `watch-sounds` through the real daemon, where the process is the point (cuectl, the log).
@Suite("Watched sound directories", .serialized)
struct SoundWatchTests {
  /// A daemon on a sound directory of its own holding `pico`; its socket, and the directory.
  static func start() throws -> (DaemonProcess, String) {
    let (daemon, dir) = try DaemonTests.start(sounds: ["pico": "tone-48000-mono.mp3"])
    return (daemon, dir + "/sounds")
  }

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

  /// What only the real process shows of a watched directory: cuectl lists a file copied in, and
  /// the log names a corrupt one. (What a client sees of the same: SoundWatching's bodies, in
  /// process in CueDaemonTests, live in LiveSoundWatchingTests.)
  @Test func cuectlListsAFileCopiedInAndTheLogNamesACorruptOne() throws {
    let (daemon, sounds) = try Self.start()
    defer { daemon.stop() }
    let client = try ProtocolClient(socket: daemon.socket)
    let watcher = try ProtocolClient(socket: daemon.socket)
    try watcher.request("subscribe", [("kinds", ["decode-error"])])
    try SoundWatching.bytes("loop-48000-stereo.mp3").write(to: URL(fileURLWithPath: sounds + "/hum.mp3"))
    try SoundWatching.bytes("not-audio.mp3").write(to: URL(fileURLWithPath: sounds + "/broken.mp3"))
    #expect(try Self.eventually(client) { $0.contains("hum") }, "hum never appeared in list")
    let listed = try daemon.cuectl(["list"])
    #expect(listed.status == 0 && listed.stdout.contains("hum"), "\(listed)")
    #expect(try watcher.waitForEvent("decode-error")["path"] == .string(sounds + "/broken.mp3"))
    let log = try String(contentsOfFile: daemon.logPath, encoding: .utf8)
    #expect(log.contains("skipped \(sounds)/broken.mp3"), "the log does not name the file that did not load")
  }
}
