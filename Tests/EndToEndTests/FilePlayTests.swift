import CueDecoding
import CueProtocol
import DaemonBehaviours
import DaemonTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `play` with a `file` and `cuectl play --file` through the real daemon, heard in a capture.
@Suite("Playing a file by its path", .serialized)
struct FilePlayTests {
  static func bytes(_ fixture: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: Harness.fixture(fixture))) }

  @Test func aFileOutsideTheSoundDirectoriesIsHeardAndAReplacedOneItsNewSound() throws {
    let rig = try PacedCapture(cues: ["pico": "tone-48000-mono.mp3"])
    let elsewhere = rig.directory + "/elsewhere"
    try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
    let ding = elsewhere + "/ding.wav"
    let a = "tone-48000-mono.wav", b = "tone-44100-stereo.mp3"
    try Self.bytes(a).write(to: URL(fileURLWithPath: ding))
    // cuectl, from the file's directory: a relative path, made absolute against cuectl's own.
    let relative = try run(
      "/bin/sh", ["-c", "cd '\(elsewhere)' && exec '\(TestPaths.cuectl)' play --file ding.wav --json --wait --socket '\(rig.daemon.socket)'"])
    #expect(relative.status == 0, "\(relative)")
    #expect(relative.stdout.contains("\"file\":\"\(ding)\""), "\(relative.stdout)")
    // Replaced by an editor's save (a new file renamed over it): the next play decodes it afresh.
    try Self.bytes(b).write(to: URL(fileURLWithPath: ding + ".new"))
    #expect(rename(ding + ".new", ding) == 0)
    let client = try rig.client()
    let reply = try client.request("play", [("file", .string(ding)), ("notify", true)])
    #expect(reply["played"] == .bool(true) && reply["file"] == .string(ding))
    let finished = try client.waitForEvent("finished") { $0["voice"] == reply["voice"] }
    #expect(finished["cue"] == "ding" && finished["reason"] == "end")
    let capture = try rig.finish()
    // Heard in order, each sample for sample: the file as it was at each play.
    var from = 0
    for (step, file) in [a, b].enumerated() {
      let expected = try AudioFileDecoder.decode(path: Harness.fixture(file)).buffer.toArray()
      let at = SoundsAndEvents.frame(of: expected, in: capture, from: from)
      #expect(at != nil, "play \(step + 1) is not \(file)'s samples")
      from = (at ?? from) + expected.count / 2
    }
  }

  @Test func badPathsAreRefusedWithThePathAndTheDaemonServesOn() throws {
    let (daemon, _) = try DaemonTests.start()
    defer { daemon.stop() }
    let dir = Harness.temporaryDirectory()
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    try Self.bytes("not-audio.mp3").write(to: URL(fileURLWithPath: dir + "/broken.mp3"))
    let missing = try daemon.cuectl(["play", "--file", dir + "/missing.ogg"])
    #expect(missing.status == 1 && missing.stderr.contains(dir + "/missing.ogg does not exist"), "\(missing)")
    let directory = try daemon.cuectl(["play", "--file", dir])
    #expect(directory.status == 1 && directory.stderr.contains(dir + " is a directory"), "\(directory)")
    let broken = try daemon.cuectl(["play", "--file", dir + "/broken.mp3"])
    #expect(broken.status == 1 && broken.stderr.contains(dir + "/broken.mp3: "), "\(broken)")
    #expect(try daemon.cuectl(["play", "pico", "--file", dir + "/broken.mp3"]).status == 2)
    let client = try ProtocolClient(socket: daemon.socket)
    let relative = try client.requestError("play", [("file", "broken.mp3")])
    #expect(relative["code"] == "invalid-request" && relative["message"]?.stringValue?.contains("absolute path") == true)
    #expect(try daemon.cuectl(["play", "--file", Harness.fixture("tone-48000-mono.wav"), "--wait"]).status == 0)
  }

  @Test func aClientsCeilingHoldsAFilePlay() throws {
    let dir = Harness.temporaryDirectory()
    let sounds = try Harness.soundDirectory(in: dir, ["pico": "tone-48000-mono.mp3"])
    try "[clients.kiosk]\nceiling = \"quiet\"\n".write(toFile: dir + "/cued.toml", atomically: true, encoding: .utf8)
    let daemon = try DaemonProcess(
      socket: dir + "/cued.sock", arguments: ["--sounds", sounds, "--device", "null", "--config", dir + "/cued.toml"],
      logPath: dir + "/cued.log")
    defer { daemon.stop() }
    let kiosk = try ProtocolClient(socket: daemon.socket)
    try kiosk.request("hello", [("client", "kiosk")])
    let file = Harness.fixture("tone-48000-mono.wav")
    let held = try kiosk.request("play", [("file", .string(file)), ("notify", true)])
    #expect(held["played"] == .bool(false) && held["reason"] == "level", "\(JSONWriter.write(held))")
    let finished = try kiosk.waitForEvent("finished") { $0["voice"] == held["voice"] }
    #expect(finished["reason"] == "level")
    // Another client has no ceiling: the same file sounds.
    #expect(try ProtocolClient(socket: daemon.socket).request("play", [("file", .string(file))])["played"] == .bool(true))
  }
}
