import CueCore
import CuePosix
import CueProtocol
import Testing

@testable import CueDaemon

/// Groups (volume, mute, ducking), the level and quiet hours, on the samples an in-process daemon
/// writes: a looping `wrap` hard left (the left channel is it alone) under whatever else plays right.
@Suite("Groups, ducking, levels and quiet hours, in process")
struct GroupsAndLevelsTests {
  static func daemon(_ toml: String) throws -> EmbeddedDaemon {
    let embedded = try EmbeddedDaemon()
    embedded.daemon.applyTables(try values(toml))
    return embedded
  }

  /// The tables of `toml`, written to a file and read by `ConfigFile.load`.
  static func values(_ toml: String) throws -> ConfigValues {
    let path = try Files.makeTemporaryDirectory(prefix: "cued-levels") + "/cued.toml"
    try Files.write(Array(toml.utf8), to: path)
    return try ConfigFile.load(path: path)
  }

  /// Left-channel ratio of what was written to `wrap` alone (hard left at volume 0.5), per frame, where the cue is not near 0.
  static func leftRatios(_ embedded: EmbeddedDaemon) -> [(frame: Int, ratio: Float)] {
    let wrap = embedded.samples(of: "wrap")
    let frames = wrap.count / 2
    let written = embedded.sink.written
    let gain = Float(0.5) * Float(2).squareRoot()
    var ratios: [(Int, Float)] = []
    for f in 0..<(written.count / 2) {
      let expected = wrap[2 * (f % frames)] * gain
      if abs(expected) > 0.02 { ratios.append((f, written[2 * f] / expected)) }
    }
    return ratios
  }

  static let ui = #"{"id":1,"op":"play","cue":"wrap","loops":-1,"volume":0.5,"pan":-1}"#

  @Test func aGroupDucksAnotherWithItsAttackAndRelease() throws {
    let embedded = try Self.daemon("""
      [groups.ui]
      volume = 1
      [groups.alerts]
      duck = { group = "ui", by = -12, attack = 0.02, release = 0.1 }
      [cues.wrap]
      group = "ui"
      [cues.pico]
      group = "alerts"
      """)
    let client = embedded.connect()
    _ = client.reply(Self.ui)
    embedded.runCycles(20)
    let alert = client.reply(#"{"id":2,"op":"play","cue":"pico","pan":1,"notify":true}"#)
    #expect(alert["played"] == .bool(true))
    #expect(embedded.daemon.groups.reply("ui").groups.first?.ducked ?? 1 < 0.26)
    embedded.runCycles(until: { client.received().contains { $0["event"] == .string("finished") } })
    embedded.runCycles(40)
    let ratios = Self.leftRatios(embedded)
    let ducked = Float(0.25118864)
    let start = try #require(ratios.first { $0.ratio < 0.999 }?.frame)
    #expect(start >= 20 * 240 && start <= 21 * 240)
    let attack = 960  // 0.02 s at 48 kHz
    // Linear from 1 to -12 dB over exactly the attack, then held.
    for (frame, ratio) in ratios where frame >= start && frame < start + attack {
      let expected = 1 - (1 - ducked) * Float(frame - start + 1) / Float(attack)
      #expect(abs(ratio - expected) < 0.01, "frame \(frame): \(ratio), not \(expected)")
      if abs(ratio - expected) >= 0.01 { break }
    }
    let held = ratios.filter { $0.frame >= start + attack && $0.frame < start + attack + 2000 }
    #expect(!held.isEmpty && held.allSatisfy { abs($0.ratio - ducked) < 1e-3 })
    // After the alert: back to 1 over the release (0.1 s), then unity again.
    // The release began while the loop's quiet tail played: where it began follows from the first
    // louder frame on the line the release must follow; every later frame must lie on it too.
    let release = 4800
    let slope = (1 - ducked) / Float(release)
    let first = try #require(ratios.first { $0.frame > start + attack && $0.ratio > ducked + 0.001 })
    let rise = first.frame - Int(((first.ratio - ducked) / slope).rounded()) + 1
    #expect(rise >= start + 4800 - 1, "the release began before the alert (4800 frames) ended")
    let rising = ratios.filter { $0.frame >= rise && $0.frame < rise + release }
    #expect(rising.count > 100 && rising.count < release)
    for (frame, ratio) in rising {
      let expected = ducked + (1 - ducked) * Float(frame - rise + 1) / Float(release)
      #expect(abs(ratio - expected) < 0.01, "frame \(frame): \(ratio), not \(expected)")
      if abs(ratio - expected) >= 0.01 { break }
    }
    let after = ratios.filter { $0.frame >= rise + release }
    #expect(!after.isEmpty && after.allSatisfy { abs($0.ratio - 1) < 1e-4 })
    #expect(embedded.daemon.groups.reply("ui").groups.first?.ducked == 1)
  }

  @Test func aGroupsVolumeAndMuteChangeItsVoicesAndMutedGroupsPlayNothing() throws {
    let embedded = try Self.daemon("[groups.ui]\nvolume = 1\n[cues.wrap]\ngroup = \"ui\"\n[cues.tick]\ngroup = \"ui\"\n")
    let client = embedded.connect()
    _ = client.reply(Self.ui)
    embedded.runCycles(10)
    let half = client.reply(#"{"id":2,"op":"group","group":"ui","volume":0.5}"#)
    #expect(half["groups"]?.arrayValue?.first?["volume"] == .number(0.5))
    embedded.runCycles(10)
    var ratios = Self.leftRatios(embedded).filter { $0.frame >= 10 * 240 + 480 }
    #expect(!ratios.isEmpty && ratios.allSatisfy { abs($0.ratio - 0.5) < 1e-4 })
    let muted = client.reply(#"{"id":3,"op":"group","group":"ui","muted":true}"#)
    #expect(muted["groups"]?.arrayValue?.first?["muted"] == .bool(true))
    embedded.runCycles(10)
    ratios = Self.leftRatios(embedded).filter { $0.frame >= 20 * 240 + 480 }
    #expect(!ratios.isEmpty && ratios.allSatisfy { $0.ratio == 0 })
    let silent = client.reply(#"{"id":4,"op":"play","cue":"tick"}"#)
    #expect(silent["played"] == .bool(false))
    #expect(silent["reason"] == .string("group-muted"))
    _ = client.reply(#"{"id":5,"op":"group","group":"ui","muted":false}"#)
    embedded.runCycles(10)
    ratios = Self.leftRatios(embedded).filter { $0.frame >= 30 * 240 + 480 }
    #expect(!ratios.isEmpty && ratios.allSatisfy { abs($0.ratio - 0.5) < 1e-4 })
    #expect(client.reply(#"{"id":6,"op":"group","group":"nope"}"#)["error"]?["code"] == .string("unknown-group"))
    #expect(embedded.daemon.rules.silenced[.groupMuted] == 1)
  }

  static let levels = """
    [groups.alerts]
    at-quiet = true
    [cues.pico]
    group = "alerts"
    [cues.tick]
    important = true
    [clients.notifier]
    ceiling = "quiet"
    [clients.pager]
    breaks-silence = true
    """

  @Test func aLevelChangeFadesOutWhatItNoLongerAllowsAndSaysSo() throws {
    let embedded = try Self.daemon(Self.levels)
    let client = embedded.connect()
    client.request(#"{"op":"subscribe","kinds":["level","finished"]}"#)
    let wrap = client.reply(Self.ui)
    _ = client.reply(#"{"id":2,"op":"play","cue":"pico","loops":-1,"pan":1}"#)
    embedded.runCycles(10)
    let lines = client.request(#"{"id":3,"op":"level","level":"quiet"}"#)
    #expect(lines.first?["level"] == .string("quiet"))
    #expect(lines.contains { $0["event"] == .string("level") && $0["previous"] == .string("full") && $0["setBy"] == .string("client") })
    embedded.runCycles(20)
    let finished = client.received().first { $0["event"] == .string("finished") }
    #expect(finished?["voice"] == wrap["voice"])
    #expect(finished?["reason"] == .string("level"))
    // The wrap faded out over 50 ms (2400 frames) from the next cycle, then nothing on the left.
    let fadeStart = 10 * 240
    for (frame, ratio) in Self.leftRatios(embedded) where frame >= fadeStart {
      let expected = max(0, 1 - Float(frame - fadeStart + 1) / 2400)
      #expect(abs(ratio - expected) < 0.01, "frame \(frame): \(ratio), not \(expected)")
      if abs(ratio - expected) >= 0.01 { break }
    }
    #expect(embedded.sink.written.suffix(2 * 240).enumerated().allSatisfy { $0.offset % 2 == 1 || $0.element == 0 })
    // The alerts group plays at quiet: its right channel goes on.
    #expect(embedded.sink.written.suffix(2 * 240).enumerated().contains { $0.offset % 2 == 1 && $0.element != 0 })
    #expect(client.reply(#"{"id":4,"op":"play","cue":"wrap"}"#)["reason"] == .string("level"))
    #expect(client.reply(#"{"id":5,"op":"play","cue":"tick"}"#)["played"] == .bool(true))
    _ = client.reply(#"{"id":6,"op":"level","level":"silent"}"#)
    #expect(client.reply(#"{"id":7,"op":"play","cue":"tick"}"#)["reason"] == .string("level"))
    let pager = embedded.connect()
    _ = pager.reply(#"{"id":1,"op":"hello","client":"pager"}"#)
    #expect(pager.reply(#"{"id":2,"op":"play","cue":"tick"}"#)["played"] == .bool(true))
    #expect(pager.reply(#"{"id":3,"op":"play","cue":"pico"}"#)["reason"] == .string("level"))
    #expect(embedded.daemon.rules.silenced[.level] == 3)
  }

  @Test func aClientsCeilingHoldsItsPlaysBelowTheLevel() throws {
    let embedded = try Self.daemon(Self.levels)
    let notifier = embedded.connect()
    _ = notifier.reply(#"{"id":1,"op":"hello","client":"notifier"}"#)
    #expect(notifier.reply(#"{"id":2,"op":"play","cue":"wrap"}"#)["reason"] == .string("level"))
    #expect(notifier.reply(#"{"id":3,"op":"play","cue":"pico"}"#)["played"] == .bool(true))
    #expect(notifier.reply(#"{"id":4,"op":"play","cue":"tick"}"#)["played"] == .bool(true))
    let anyone = embedded.connect()
    #expect(anyone.reply(#"{"id":1,"op":"play","cue":"wrap"}"#)["played"] == .bool(true))
  }

  @Test func quietHoursSetTheLevelAtTheirStartAndRestoreItAtTheirEnd() throws {
    let embedded = try EmbeddedDaemon()
    embedded.wallClock.set(21, 59, 59)
    let toml = "[quiet-hours]\nfrom = \"22:00\"\nto = \"07:00\"\nlevel = \"quiet\"\n"
    embedded.daemon.applyTables(try Self.values(toml))
    let client = embedded.connect()
    client.request(#"{"op":"subscribe","kinds":["level"]}"#)
    #expect(embedded.daemon.levels.level == .full)
    #expect(embedded.daemon.levels.secondsToNextBoundary() == 1)
    let wrap = client.reply(Self.ui)
    embedded.runCycles(10)
    embedded.wallClock.set(22, 0, 0.5)
    embedded.daemon.levels.checkQuietHours()
    #expect(embedded.daemon.levels.level == .quiet)
    let event = client.received().first { $0["event"] == .string("level") }
    #expect(event?["setBy"] == .string("quiet-hours"))
    embedded.runCycles(20)
    #expect(!embedded.daemon.voices.isSounding(VoiceID(UInt64(wrap["voice"]?.intValue ?? 0))))
    #expect(embedded.sink.written.suffix(2 * 240).allSatisfy { $0 == 0 })
    let reply = client.reply(#"{"id":2,"op":"level"}"#)
    #expect(reply["quietHours"] == .string("22:00-07:00") && reply["inQuietHours"] == .bool(true))
    #expect(client.reply(#"{"id":3,"op":"play","cue":"wrap"}"#)["reason"] == .string("level"))
    embedded.wallClock.set(7, 0, 0)
    embedded.daemon.levels.checkQuietHours()
    #expect(embedded.daemon.levels.level == .full)
    #expect(client.reply(#"{"id":4,"op":"play","cue":"wrap"}"#)["played"] == .bool(true))
  }
}

