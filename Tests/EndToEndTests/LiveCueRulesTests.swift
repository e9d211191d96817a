import CueProtocol
import DaemonBehaviours
import DaemonTestSupport
import Foundation
import Testing

/// The cue rules' bodies (DaemonBehaviours/CueRules.swift), which CueDaemonTests runs in process,
/// on the real cued: the same body, live, in real time.
@Suite("Cue rules, live: the in-process bodies on the real cued", .serialized, .liveBehaviours)
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
