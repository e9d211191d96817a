import CueProtocol
import DaemonBehaviours
import DaemonTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The real cued as a `DaemonUnderTest`: playing through the ALSA tee into a paced PulseAudio null
/// sink (`PacedCapture`), on a socket, in real time; `advance` is a real wait.
final class LiveDaemon: DaemonUnderTest {
  let rig: PacedCapture

  init(_ setup: DaemonSetup) throws {
    rig = try PacedCapture(
      cues: [:], extra: setup.maxVoices.map { ["--max-voices", String($0)] } ?? [], config: setup.config, prepare: setup.prepare)
  }

  static func start(_ setup: DaemonSetup) throws -> DaemonUnderTest { try LiveDaemon(setup) }

  func connect() throws -> TestClient { TestClient(LiveChannel(try RawClient(socket: rig.daemon.socket))) }
  func advance(seconds: Double) { usleep(UInt32(seconds * 1_000_000)) }
  func finish() throws -> [Float] { try rig.finish() }
}

/// A socket connection's lines.
final class LiveChannel: LineChannel {
  let raw: RawClient
  init(_ raw: RawClient) { self.raw = raw }
  func send(_ line: String) throws { try raw.send(line + "\n") }
  func receive(within seconds: Double) throws -> JSONValue? { try raw.receive(within: seconds) }
}

/// Whether the behaviour bodies that run in process in `make test` also run here against the real
/// cued (`make test-live`).
let liveBehaviours = ProcessInfo.processInfo.environment["CUED_TEST_LIVE"] == "1"

/// The cue rules' bodies (DaemonBehaviours/CueRules.swift), which CueDaemonTests runs in process,
/// on the real cued: the same body, live, in real time.
@Suite(
  "Cue rules, live: the in-process bodies on the real cued", .serialized,
  .enabled(if: liveBehaviours, "runs in process in make test; live with CUED_TEST_LIVE=1 (make test-live)"))
struct LiveCueRulesTests {
  @Test(arguments: CueRules.all) func rule(_ behaviour: Behaviour) throws {
    try behaviour.body(LiveDaemon.start)
  }
}

/// cuectl's `level` and `group` commands: what a person types, on the real programs.
@Suite("cuectl level and group", .serialized)
struct CuectlLevelAndGroupTests {
  @Test func cuectlShowsAndSetsTheLevelAndTheGroups() throws {
    let config = "[groups.ui]\nvolume = 0.8\n[groups.alerts]\nduck = { group = \"ui\", by = -12 }\n[quiet-hours]\nfrom = \"03:00\"\nto = \"03:01\"\n"
    let rig = try PacedCapture(cues: ["pico": "tone-48000-mono.mp3"], config: config)
    let daemon = rig.daemon
    #expect(try daemon.cuectl(["level"]).stdout.hasPrefix("level: full (set by start)\nquiet hours: 03:00-03:01"))
    let quiet = try daemon.cuectl(["level", "quiet"])
    #expect(quiet.status == 0 && quiet.stdout.hasPrefix("level: quiet (set by client)"), "\(quiet.stderr)")
    let silent = try daemon.cuectl(["play", "pico"])
    #expect(silent.status == 0 && silent.stderr.contains("pico is silent: level"), "\(silent.stderr)")
    #expect(try daemon.cuectl(["level", "loud"]).status != 0)
    let groups = try daemon.cuectl(["group"]).stdout
    #expect(groups.contains("GROUP") && groups.contains("alerts") && groups.contains("default") && groups.contains("ui"), "\(groups)")
    let ui = try daemon.cuectl(["group", "ui", "--volume", "0.5", "--mute"]).stdout
    #expect(ui.contains("ui") && ui.contains("0.5") && ui.contains("yes"), "\(ui)")
    let json = try daemon.cuectl(["--json", "group", "ui"]).stdout
    #expect(json.contains(#""muted":true"#) && json.contains(#""volume":0.5"#), "\(json)")
    let unknown = try daemon.cuectl(["group", "nope"])
    #expect(unknown.status != 0 && unknown.stderr.contains("no group named 'nope'"), "\(unknown.stderr)")
    // Nothing was heard: the level allowed nothing that was asked for.
    #expect(daemon.stop() == 0)
  }
}
