import CueProtocol
import DaemonBehaviours
import DaemonTestSupport
import Foundation
import Testing

/// What is heard when the level and groups change, for the plays that used to escape them: the
/// real cued and cuectl, captured sample for sample through an ALSA file PCM in front of a paced
/// null sink (PacedCapture).
@Suite("The level and groups on players and system sounds, captured", .serialized)
struct GatedCaptureTests {
  /// `loop-48000-stereo.mp3`: a steady sine peaking at 0.5, looping without a seam.
  static let loop = "loop-48000-stereo.mp3"

  @Test func atSilentNeitherAPlayerNorASystemSoundIsHeard() throws {
    let rig = try PacedCapture(cues: ["loop": Self.loop])
    #expect(try rig.daemon.cuectl(["level", "silent"]).status == 0)

    let created = try rig.daemon.cuectl(["player", "create", "loop", "--loops", "-1", "--detach"])
    let player = try #require(created.stdout.split(separator: "\n").first.map(String.init))
    let played = try rig.daemon.cuectl(["player", "play", player])
    #expect(played.status == 0)
    #expect(played.stderr.contains("player \(player) is silent: level"), "\(played.stderr)")
    let properties = try rig.client().request("player.get", [("player", .number(Double(player) ?? 0))])
    #expect(properties["isPlaying"] == false)

    let sound = try #require(
      try rig.daemon.cuectl(["sound", "create", "loop", "--detach"]).stdout.split(separator: "\n").first.map(String.init))
    let fired = try rig.daemon.cuectl(["sound", "play", sound, "--wait"])
    #expect(fired.status != 0, "a silent play does not play to the end")
    #expect(fired.stderr.contains("system sound \(sound) is silent: level"), "\(fired.stderr)")

    #expect(try rig.daemon.status()["voices"] as? Int == 0)
    usleep(200_000)
    let capture = (try? rig.finish()) ?? []  // the device may never have opened: no file at all
    #expect(capture.allSatisfy { $0 == 0 }, "something was heard at silent")
  }

  /// A player at volume 1, then 0.2, then `cuectl group default --volume 0.99`: heard at 0.198,
  /// not back near 1, and `player get` still says 0.2.
  @Test func aGroupChangeScalesAPlayersOwnVolume() throws {
    let rig = try PacedCapture(cues: ["loop": Self.loop])
    let client = try rig.client()
    let player = try #require(client.request("player.create", [("cue", "loop"), ("numberOfLoops", -1)])["player"])
    try client.request("player.play", [("player", player)])
    usleep(150_000)
    #expect(try rig.daemon.cuectl(["player", "set", "\(player.intValue ?? 0)", "--volume", "0.2"]).status == 0)
    usleep(150_000)
    #expect(try rig.daemon.cuectl(["group", "default", "--volume", "0.99"]).status == 0)
    usleep(150_000)
    #expect(try client.request("player.get", [("player", player)])["volume"] == 0.2)
    // Pause: no fade, so the capture ends on the last gain.
    try client.request("player.pause", [("player", player)])
    let capture = try rig.finish()
    let source = try decoded(Self.loop)
    let frames = source.count / 2
    var gains: [Float] = []
    for f in 0..<(capture.count / 2) where abs(source[2 * (f % frames)]) > 0.05 {
      gains.append(capture[2 * f] / source[2 * (f % frames)])
    }
    let heard = gains.reversed().drop { $0 == 0 }
    #expect(heard.count > 4800)
    #expect(heard.prefix(2000).allSatisfy { abs($0 - 0.198) < 1e-4 }, "the end: \(Array(heard.prefix(4)))")
    // And before the group change, the player's own 0.2 held for a while.
    #expect(gains.contains { abs($0 - 0.2) < 1e-5 })
  }
}
