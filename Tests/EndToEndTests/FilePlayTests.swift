import CueDecoding
import CueProtocol
import DaemonBehaviours
import DaemonTestSupport
import Foundation
import Testing

/// `play` with a `file` and `cuectl play --file` through the real daemon, heard in a capture.
@Suite("Playing a file by its path", .serialized)
struct FilePlayTests {
  /// What is heard of a file play, and of a replaced file, is a body (DaemonBehaviours/FilePlays.swift,
  /// in process and live): here, what cuectl makes of a relative path.
  @Test func cuectlMakesARelativePathAbsoluteAndTheFileIsHeard() throws {
    let rig = try PacedCapture(cues: ["pico": "tone-48000-mono.mp3"])
    let elsewhere = rig.directory + "/elsewhere"
    try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
    let ding = elsewhere + "/ding.wav"
    let a = "tone-48000-mono.wav"
    try SoundWatching.bytes(a).write(to: URL(fileURLWithPath: ding))
    // cuectl, from the file's directory: a relative path, made absolute against cuectl's own.
    let relative = try run(
      "/bin/sh", ["-c", "cd '\(elsewhere)' && exec '\(TestPaths.cuectl)' play --file ding.wav --json --wait --socket '\(rig.daemon.socket)'"])
    #expect(relative.status == 0, "\(relative)")
    #expect(relative.stdout.contains("\"file\":\"\(ding)\""), "\(relative.stdout)")
    let capture = try rig.finish()
    let expected = try AudioFileDecoder.decode(path: Harness.fixture(a)).buffer.toArray()
    #expect(frameHolding(expected, in: capture, from: 0) != nil, "the play is not \(a)'s samples")
  }

  @Test func badPathsAreRefusedWithThePathAndTheDaemonServesOn() throws {
    let (daemon, _) = try DaemonTests.start()
    defer { daemon.stop() }
    let dir = Harness.temporaryDirectory()
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    try SoundWatching.bytes("not-audio.mp3").write(to: URL(fileURLWithPath: dir + "/broken.mp3"))
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
}
