import CueCore
import CuePosix
import CueProtocol
import Testing

#if canImport(Glibc)
import Glibc
#endif

@testable import CueDaemon

/// Every way a voice starts, as a client asks for it.
enum PlayOrigin: String, CaseIterable, CustomTestStringConvertible, Sendable {
  case oneShot, themeEvent, file, paging, player, systemSound

  var testDescription: String { rawValue }
  /// The group its plays sound in: system sounds play in `system`, the rest in `default`.
  var group: String { self == .systemSound ? CueRule.systemGroup : CueRule.defaultGroup }
}

/// An in-process daemon whose only sound is `tone`: a 1 kHz sine of amplitude 0.25 at 48 kHz, 48
/// frames a period, so its peak over any 48 written frames is 0.25 × the voice's gain. The same
/// file is a cue (`sounds/tone.wav`), a theme event's file (`$XDG_DATA_HOME/sounds/tone.wav`), a
/// file played by path (`elsewhere/tone.wav`, outside the sound directories) and the default
/// carousel's `page-next`.
final class VoicePathRig {
  let embedded: EmbeddedDaemon
  /// The file `play` with a `file` plays.
  let file: String
  let client: EmbeddedClient
  private var nextID = 100
  private var page = 0
  /// The player or system sound the last `play` made.
  private(set) var object: Int? = nil

  init(_ toml: String = "") throws {
    let root = try Files.makeTemporaryDirectory(prefix: "cued-voice-path")
    for directory in ["/sounds", "/data/sounds", "/none", "/elsewhere"] { try Files.makeDirectories(root + directory, mode: 0o755) }
    try Files.write(Self.toneWAV(), to: root + "/sounds/tone.wav")
    try Files.write(Self.toneWAV(), to: root + "/data/sounds/tone.wav")
    file = root + "/elsewhere/tone.wav"
    try Files.write(Self.toneWAV(), to: file)
    embedded = try EmbeddedDaemon(
      sounds: [root + "/sounds"], environment: ["XDG_DATA_HOME": root + "/data", "XDG_DATA_DIRS": root + "/none"])
    let tables = "[carousel.default]\npage-next = { cue = \"tone\", loops = 1000 }\n" + toml
    embedded.daemon.applyTables(try GroupsAndLevelsTests.values(tables))
    client = embedded.connect()
    client.request(#"{"op":"subscribe","kinds":["finished","completion"]}"#)
  }

  /// A mono float32 WAV: 2 s of the 48-frame sine.
  static func toneWAV() -> [UInt8] { sineWAV(amplitude: 0.25) }

  /// A mono float32 WAV of `frames` frames of the 48-frame sine at `amplitude`.
  static func sineWAV(amplitude: Double, frames: Int = 96_000) -> [UInt8] {
    var bytes: [UInt8] = []
    func u32(_ v: Int) { bytes += withUnsafeBytes(of: UInt32(v).littleEndian, Array.init) }
    func u16(_ v: Int) { bytes += withUnsafeBytes(of: UInt16(v).littleEndian, Array.init) }
    bytes += Array("RIFF".utf8)
    u32(36 + frames * 4)
    bytes += Array("WAVEfmt ".utf8)
    u32(16); u16(3); u16(1); u32(48000); u32(48000 * 4); u16(4); u16(32)
    bytes += Array("data".utf8)
    u32(frames * 4)
    for f in 0..<frames {
      let sample = Float(amplitude * sin(2 * Double.pi * Double(f % 48) / 48))
      bytes += withUnsafeBytes(of: sample.bitPattern.littleEndian, Array.init)
    }
    return bytes
  }

  private func id() -> Int {
    nextID += 1
    return nextID
  }

  /// A request's reply, waiting for background work (a theme file's decode) when it is deferred.
  func reply(_ line: String, id: Int) -> JSONValue {
    var lines = client.request(line)
    if !lines.contains(where: { $0["id"]?.intValue == id }) {
      embedded.finishBackgroundWork()
      lines += client.received()
    }
    seen += lines.filter { $0["event"] != nil }
    return lines.first { $0["id"]?.intValue == id } ?? .null
  }

  /// Events that came with replies, kept for `events()`.
  private var seen: [JSONValue] = []

  /// Starts a looping play of `tone` by `origin`; whether it sounds and why not, as its reply says.
  @discardableResult
  func play(_ origin: PlayOrigin, volume: Double = 1, role: String? = nil) -> (played: Bool, reason: String?) {
    let n = id()
    switch origin {
    case .oneShot, .themeEvent, .file:
      let what = [PlayOrigin.oneShot: #""cue":"tone""#, .themeEvent: #""event":"tone""#, .file: #""file":"\#(file)""#][origin]!
      let withRole = role.map { #","role":"\#($0)""# } ?? ""
      let r = reply(#"{"id":\#(n),"op":"play",\#(what),"loops":-1,"volume":\#(volume)\#(withRole)}"#, id: n)
      return (r["played"] == .bool(true), r["reason"]?.stringValue)
    case .paging:
      page += 1
      let r = reply(#"{"id":\#(n),"carousel":"default","event":"page-changed","from":\#(page - 1),"to":\#(page),"count":1000}"#, id: n)
      // A carousel reply's `reason` echoes the page change's; why it is silent is `silenced`.
      return (r["decision"] == .string("played"), r["silenced"]?.stringValue)
    case .player:
      let created = reply(#"{"id":\#(n),"op":"player.create","cue":"tone","numberOfLoops":-1,"volume":\#(volume)}"#, id: n)
      object = created["player"]?.intValue
      let m = id()
      let r = reply(#"{"id":\#(m),"op":"player.play","player":\#(object ?? 0)}"#, id: m)
      return (r["playing"] == .bool(true), r["reason"]?.stringValue)
    case .systemSound:
      object = reply(#"{"id":\#(n),"op":"sound.create","cue":"tone"}"#, id: n)["sound"]?.intValue
      let m = id()
      let r = reply(#"{"id":\#(m),"op":"sound.play","sound":\#(object ?? 0)}"#, id: m)
      return (r["voice"] != nil && r["played"] == .bool(true), r["reason"]?.stringValue)
    }
  }

  /// A request with an id; its reply.
  @discardableResult
  func ask(_ fields: String) -> JSONValue {
    let n = id()
    return reply(#"{"id":\#(n),\#(fields)}"#, id: n)
  }

  /// The left channel's peak over the last 48 written frames, after `cycles` more audio cycles.
  func peak(after cycles: Int = 10) -> Float {
    embedded.runCycles(cycles)
    let written = embedded.sink.written
    guard written.count >= 96 else { return 0 }
    return stride(from: written.count - 96, to: written.count, by: 2).map { abs(written[$0]) }.max() ?? 0
  }

  /// Events received since the last look.
  func events() -> [JSONValue] {
    defer { seen.removeAll() }
    return seen + client.received().filter { $0["event"] != nil }
  }
}

/// One voice path: every origin of a voice under every level, group change and volume change, on
/// the samples an in-process daemon writes (issue 22's matrix).
@Suite("Every origin through one gate and one gain chain, in process")
struct VoicePathTests {
  /// The peak of `tone` at unity gain through a centred mono voice.
  static let unity: Float = {
    let gain = StereoGain.voice(volume: 1, pan: 0, sourceIsMono: true)
    return 0.25 * (gain.ll + gain.rl)
  }()

  static func expectLevel(_ peak: Float, _ expected: Float, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(abs(peak - expected * unity) < 0.002, "\(what): peak \(peak), not \(expected) × \(unity)", sourceLocation: sourceLocation)
  }

  @Test(arguments: PlayOrigin.allCases)
  func aPlayAtUnitySoundsAtTheCuesLevel(origin: PlayOrigin) throws {
    let rig = try VoicePathRig()
    #expect(rig.play(origin) == (true, nil))
    Self.expectLevel(rig.peak(), 1, "\(origin)")
  }

  @Test(arguments: PlayOrigin.allCases, [SoundLevel.quiet, .silent])
  func theLevelHoldsEveryOriginAndSaysWhy(origin: PlayOrigin, level: SoundLevel) throws {
    let rig = try VoicePathRig()
    rig.ask(#""op":"level","level":"\#(level.rawValue)""#)
    let outcome = rig.play(origin)
    #expect(!outcome.played)
    #expect(outcome.reason == "level")
    #expect(rig.peak() == 0)
    #expect(rig.embedded.daemon.voices.soundingCount == 0)
    // Its completion or finished event says so too (paging reports in its reply and event only).
    if origin != .paging {
      let said = rig.events().contains { $0["reason"] == .string("level") && $0["played"] != .bool(true) }
      #expect(said, "\(origin): no finished or completion with reason level")
    }
    #expect(rig.embedded.daemon.rules.silenced[.level] == 1)
  }

  @Test(arguments: PlayOrigin.allCases)
  func aLevelDropFadesOutWhatEveryOriginPlays(origin: PlayOrigin) throws {
    let rig = try VoicePathRig()
    #expect(rig.play(origin).played)
    Self.expectLevel(rig.peak(), 1, "before")
    _ = rig.events()
    rig.ask(#""op":"level","level":"silent""#)
    #expect(rig.peak(after: 20) == 0, "\(origin) still sounds at silent")
    #expect(rig.embedded.daemon.voices.voices.isEmpty)
    if origin != .paging {
      #expect(rig.events().contains { $0["reason"] == .string("level") })
    }
    if origin == .player, let player = rig.object {
      // A sounding player stops as `stop` would: not playing, its position kept.
      let properties = rig.ask(#""op":"player.get","player":\#(player)"#)
      #expect(properties["isPlaying"] == .bool(false))
      #expect((properties["currentTime"]?.doubleValue ?? 0) > 0)
    }
  }

  @Test(arguments: PlayOrigin.allCases)
  func aGroupsVolumeAndMuteReachEveryOriginFromItsOwnGain(origin: PlayOrigin) throws {
    let rig = try VoicePathRig()
    #expect(rig.play(origin, volume: 1).played)
    Self.expectLevel(rig.peak(), 1, "unity")
    rig.ask(#""op":"group","group":"\#(origin.group)","volume":0.5"#)
    Self.expectLevel(rig.peak(), 0.5, "group at 0.5")
    rig.ask(#""op":"group","group":"\#(origin.group)","muted":true"#)
    Self.expectLevel(rig.peak(), 0, "group muted")
    // A new play in a muted group is silent, and says so.
    let silent = rig.play(origin)
    #expect(!silent.played)
    #expect(silent.reason == (origin.group == CueRule.systemGroup ? "muted" : "group-muted"))
    rig.ask(#""op":"group","group":"\#(origin.group)","muted":false"#)
    Self.expectLevel(rig.peak(), 0.5, "unmuted")
  }

  /// The issue's case: a player at volume 1, then 0.2, then a group change: the group scales the
  /// player's own volume (0.2 × 0.99), and ducking does the same and gives it back.
  /// The plays that take a `role`: a cue, a theme event, a file.
  static let rolePlays: [PlayOrigin] = [.oneShot, .themeEvent, .file]

  /// A role a group lists puts every kind of play without a group of its own in that group: its
  /// volume, its mute (`group-muted`); a role no group lists leaves the play in `default`.
  @Test(arguments: rolePlays)
  func aRolesGroupTakesEveryKindOfPlayWithoutAGroupOfItsOwn(origin: PlayOrigin) throws {
    let rig = try VoicePathRig("[groups.assistive]\nroles = [\"a11y\", \"test\"]\nvolume = 0.5\n")
    #expect(rig.play(origin, role: "a11y") == (true, nil))
    Self.expectLevel(rig.peak(), 0.5, "\(origin) in the role's group at 0.5")
    #expect(rig.embedded.daemon.voices.voices.values.map(\.group) == ["assistive"])
    rig.ask(#""op":"group","group":"assistive","muted":true"#)
    Self.expectLevel(rig.peak(), 0, "the role's group muted")
    #expect(rig.play(origin, role: "test") == (false, "group-muted"))
    #expect(rig.embedded.daemon.rules.silenced[.groupMuted] == 1)
    // A role no group lists, and no role: the default group, at full volume.
    rig.ask(#""op":"stop","all":true"#)
    for role in ["phone", nil] {
      #expect(rig.play(origin, role: role) == (true, nil))
      Self.expectLevel(rig.peak(after: 20), 1, "\(origin) with the role \(role ?? "none")")
      #expect(rig.embedded.daemon.voices.voices.values.filter { !$0.stopping }.map(\.group) == [CueRule.defaultGroup])
      rig.ask(#""op":"stop","all":true"#)
    }
  }

  /// A cue (or theme event) whose `[cues.NAME]` table names a group plays there whatever its role.
  @Test(arguments: [PlayOrigin.oneShot, .themeEvent])
  func aSoundWithItsOwnGroupIgnoresTheRole(origin: PlayOrigin) throws {
    let rig = try VoicePathRig("[groups.ui]\nvolume = 0.25\n[groups.assistive]\nroles = [\"a11y\"]\nmuted = true\n[cues.tone]\ngroup = \"ui\"\n")
    #expect(rig.play(origin, role: "a11y") == (true, nil))
    Self.expectLevel(rig.peak(), 0.25, "\(origin) in its own group")
    #expect(rig.embedded.daemon.voices.voices.values.map(\.group) == ["ui"])
  }

  /// A role's group's `at-quiet` lets its plays sound at `quiet`, as a cue's group's does.
  @Test func aRolesGroupsAtQuietApplies() throws {
    let rig = try VoicePathRig("[groups.assistive]\nroles = [\"a11y\"]\nat-quiet = true\n")
    rig.ask(#""op":"level","level":"quiet""#)
    #expect(rig.play(.oneShot) == (false, "level"))
    #expect(rig.play(.oneShot, role: "a11y") == (true, nil))
  }

  @Test func helloSaysPlayRole() throws {
    let rig = try VoicePathRig()
    let features = rig.ask(#""op":"hello""#)["capabilities"]?["features"]?.arrayValue ?? []
    #expect(features.contains(.string("play-role")))
  }

  @Test func aPlayersVolumeSurvivesGroupChangesAndDucking() throws {
    let rig = try VoicePathRig(
      """
      [groups.alerts]
      duck = { group = "default", by = -12, attack = 0.01, release = 0.01 }
      """)
    #expect(rig.play(.player).played)
    let player = try #require(rig.object)
    Self.expectLevel(rig.peak(), 1, "unity")
    rig.ask(#""op":"player.set","player":\#(player),"volume":0.2"#)
    Self.expectLevel(rig.peak(), 0.2, "player at 0.2")
    rig.ask(#""op":"group","group":"default","volume":0.99"#)
    Self.expectLevel(rig.peak(), 0.2 * 0.99, "group at 0.99")
    #expect(rig.ask(#""op":"player.get","player":\#(player)"#)["volume"] == .number(0.2))

    // A voice of the ducking group lowers the player by 12 dB, from its own volume, then lets go.
    let duck = Float(pow(10, -12.0 / 20))
    rig.embedded.daemon.groups.voiceStarted(VoiceID(999_999), group: "alerts")
    Self.expectLevel(rig.peak(), 0.2 * 0.99 * duck, "ducked")
    rig.embedded.daemon.groups.voiceEnded(VoiceID(999_999), group: "alerts")
    Self.expectLevel(rig.peak(), 0.2 * 0.99, "released")
  }

  /// `cuectl system` is the `system` group: one switch, and sounding system sounds follow it.
  @Test func theSystemSoundSwitchIsTheSystemGroup() throws {
    let rig = try VoicePathRig()
    #expect(rig.play(.systemSound).played)
    let reply = rig.ask(#""op":"system","volume":0.25"#)
    #expect(reply["volume"] == .number(0.25) && reply["muted"] == .bool(false))
    Self.expectLevel(rig.peak(), 0.25, "system at 0.25")
    let group = rig.ask(#""op":"group","group":"system""#)["groups"]?.arrayValue?.first
    #expect(group?["volume"] == .number(0.25))
    rig.ask(#""op":"group","group":"system","muted":true"#)
    #expect(rig.ask(#""op":"system""#)["muted"] == .bool(true))
    #expect(rig.play(.systemSound) == (false, "muted"))
    // One-shots are not system sounds: the switch leaves them alone.
    #expect(rig.play(.oneShot).played)
  }

  /// A client's ceiling holds every origin it starts, as the level does.
  @Test(arguments: PlayOrigin.allCases)
  func aClientsCeilingHoldsEveryOrigin(origin: PlayOrigin) throws {
    let rig = try VoicePathRig("[clients.kiosk]\nceiling = \"quiet\"\n")
    rig.ask(#""op":"hello","client":"kiosk""#)
    #expect(rig.play(origin) == (false, "level"))
    #expect(rig.peak() == 0)
  }

  /// The level's one rule (`Levels.silences`) holds a play as it starts and as it sounds:
  /// for every origin, with and without its group's `at-quiet` and a client ceiling, a level that
  /// refuses a new play (reason `level`) fades out the same play already sounding, and one that
  /// lets it start lets it sound on at its own gain.
  @Test(arguments: PlayOrigin.allCases)
  func aPlayStartingAndAPlaySoundingAreHeldToOneLevelRule(origin: PlayOrigin) throws {
    var checkedSounding = 0
    for atQuiet in [false, true] {
      for ceiling in [SoundLevel.full, .quiet] {
        for level in [SoundLevel.quiet, .silent] {
          var toml = atQuiet ? "[groups.\(origin.group)]\nat-quiet = true\n" : ""
          if ceiling != .full { toml += "[clients.kiosk]\nceiling = \"\(ceiling.rawValue)\"\n" }
          let rig = try VoicePathRig(toml)
          rig.ask(#""op":"hello","client":"kiosk""#)
          let lowest: SoundLevel = atQuiet ? .quiet : .full
          let what = "\(origin), at-quiet \(atQuiet), ceiling \(ceiling), level \(level)"
          let allowedAtFull = !Levels.silences(.full, lowest: lowest, ceiling: ceiling)
          let allowed = !Levels.silences(level, lowest: lowest, ceiling: ceiling)
          // Sounding: started at full (where the ceiling lets it), then the level drops.
          #expect(rig.play(origin).played == allowedAtFull, "\(what): the play at full")
          rig.ask(#""op":"level","level":"\#(level.rawValue)""#)
          if allowedAtFull {
            Self.expectLevel(rig.peak(after: 20), allowed ? 1 : 0, "\(what): the play sounding through the change")
            checkedSounding += 1
          }
          // Starting at that level.
          let started = rig.play(origin)
          #expect(started.played == allowed, "\(what): a play starting")
          #expect(started.reason == (allowed ? nil : "level"), "\(what): why")
        }
      }
    }
    #expect(checkedSounding == 6, "the sounding path ran where a play sounds at full")
    // The rule itself: the lower of the level and the ceiling, against the lowest level the play sounds at.
    #expect(!Levels.silences(.full, lowest: .full, ceiling: .full))
    #expect(Levels.silences(.quiet, lowest: .full, ceiling: .full))
    #expect(Levels.silences(.full, lowest: .full, ceiling: .quiet))
    #expect(!Levels.silences(.quiet, lowest: .quiet, ceiling: .full))
    #expect(Levels.silences(.silent, lowest: .quiet, ceiling: .full))
    #expect(!Levels.silences(.silent, lowest: .silent, ceiling: .quiet), "an important cue that breaks silence")
  }

  /// Turning loudness normalisation on at a reload reaches what already sounds, through the same
  /// chain: every origin's voice moves by the cue's normalisation gain, and back when it is off.
  @Test(arguments: [PlayOrigin.oneShot, .player, .systemSound])
  func normalisationOnOrOffReachesWhatSounds(origin: PlayOrigin) throws {
    let rig = try VoicePathRig()
    #expect(rig.play(origin).played)
    rig.ask(#""op":"list""#)  // measures each cue's loudness
    let cue = try #require(rig.embedded.daemon.voices.voices.values.first?.cue)
    let measured = try #require(cue.loudness?.normalizationGain(targetLUFS: -23))
    #expect(abs(measured.gain - 1) > 0.1, "the tone is not already at the target")
    Self.expectLevel(rig.peak(), 1, "before")
    for normalize in [true, false] {
      rig.embedded.daemon.configReader = { () throws(ConfigError) -> ConfigValues in
        var values = ConfigValues()
        values["loudness-normalize"] = .bool(normalize)
        return values
      }
      #expect(rig.ask(#""op":"reload""#)["ok"] == .bool(true))  // deferred: answered once the rescan is done
      Self.expectLevel(rig.peak(), normalize ? Float(measured.gain) : 1, "normalise \(normalize)")
    }
  }
}
