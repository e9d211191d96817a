import Foundation
import Testing

/// Clients written in another language from docs/PROTOCOL.md alone (Python, standard library only),
/// run against the real daemon: if the document and the daemon disagree, these fail.
@Suite("Clients written from the protocol document alone")
struct OutsideClientTests {
  /// A daemon on the shared test output whose sound directory holds pico, tick and wrap, and
  /// notes.txt (not an MP3), with a short idle window; returns it and its sound directory.
  static func start() throws -> (DaemonProcess, String) {
    let dir = Harness.temporaryDirectory()
    let sounds = try Harness.soundDirectory(
      in: dir, ["pico": "tone-48000-mono.mp3", "tick": "tone-44100-stereo.mp3", "wrap": "loop-48000-stereo.mp3"])
    try "not audio\n".write(toFile: sounds + "/notes.txt", atomically: true, encoding: .utf8)
    let output = Harness.sharedOutput
    let daemon = try DaemonProcess(
      socket: dir + "/cued.sock", arguments: ["--sounds", sounds, "--device", output.device, "--idle-timeout", "0.3"],
      environment: output.environment, logPath: dir + "/cued.log")
    return (daemon, sounds)
  }

  static func python(_ script: String, _ arguments: [String]) throws -> CommandResult {
    try run("/usr/bin/env", ["python3", Harness.repositoryRoot + "/" + script] + arguments, timeout: 60)
  }

  @Test func thePythonClientPlaysPausesResumesAndHandlesEvents() throws {
    let (daemon, _) = try Self.start()
    defer { daemon.stop() }
    let result = try Self.python("examples/cued_client.py", ["--socket", daemon.socket])
    #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    #expect(result.stdout.contains("player") && result.stdout.contains("paused at"))
    #expect(result.stdout.hasSuffix("ok\n"), "\(result.stdout)")
  }

  @Test func everyOrderingAndDeferralRuleHoldsForPipelinedRequests() throws {
    let (daemon, sounds) = try Self.start()
    defer { daemon.stop() }
    let result = try Self.python("Tests/Protocol/ordering.py", ["--socket", daemon.socket, "--sounds", sounds])
    #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    #expect(!result.stdout.contains("FAIL"), "\(result.stdout)")
    #expect(result.stdout.contains("all ordering rules hold"))
  }
}
