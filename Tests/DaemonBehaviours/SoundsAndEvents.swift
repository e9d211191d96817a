#if canImport(Testing)
import CueDecoding
import CuePosix
import CueProtocol
import DaemonTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// System sounds (create, play, dispose, completions), players from files, sound-theme events and
/// subscriptions, as a client sees them, each body written once against `DaemonUnderTest`.
public enum SoundsAndEvents {
  public static let all: [Behaviour] = [
    Behaviour("disposingRightAfterPlayDoesNotCutTheSoundAndFreesItAfterwards", disposingRightAfterPlayDoesNotCutTheSoundAndFreesItAfterwards),
    Behaviour("disposeNowCutsWithAFadeAndStillSendsTheCompletion", disposeNowCutsWithAFadeAndStillSendsTheCompletion),
    Behaviour("aCompletionFiresForEveryPlayAndMutedSoundsSaySo", aCompletionFiresForEveryPlayAndMutedSoundsSaySo),
    Behaviour("soundsAndPlayersComeFromPathsInsideTheSoundDirectoriesOnly", soundsAndPlayersComeFromPathsInsideTheSoundDirectoriesOnly),
    Behaviour("soundsAndPlayersFromOggWaveAndFLACFilesPlayTheirSamples", soundsAndPlayersFromOggWaveAndFLACFilesPlayTheirSamples),
    Behaviour("a32BitFLACCueIsListedWithItsFormatAndPlaysItsSamples", a32BitFLACCueIsListedWithItsFormatAndPlaysItsSamples),
    Behaviour("aPlayerFromAFileThatDoesNotDecodeReportsADecodeError", aPlayerFromAFileThatDoesNotDecodeReportsADecodeError),
    Behaviour("aPlayerDiesWithItsConnectionUnlessDetached", aPlayerDiesWithItsConnectionUnlessDetached),
    Behaviour("subscriptionsFilterByKindAndById", subscriptionsFilterByKindAndById),
    Behaviour("deviceAndReloadEventsArrive", deviceAndReloadEventsArrive),
    Behaviour("aReplacedRewrittenOrRelinkedThemeFilePlaysItsNewSound", aReplacedRewrittenOrRelinkedThemeFilePlaysItsNewSound),
  ]

  /// The bodies that need the freedesktop sound theme installed (sound-theme-freedesktop).
  public static let withTheme: [Behaviour] = [
    Behaviour("soundThemeEventsPlayTheThemesFileSampleForSample", soundThemeEventsPlayTheThemesFileSampleForSample)
  ]

  /// Whether the freedesktop sound theme is installed (for `withTheme`).
  public static var themeInstalled: Bool { FileManager.default.fileExists(atPath: "/usr/share/sounds/freedesktop/index.theme") }

  /// A short mono cue and a looping stereo one (the connections' two).
  static var cues: [String: String] { Connections.cues }

  static func disposingRightAfterPlayDoesNotCutTheSoundAndFreesItAfterwards(_ start: DaemonStarter) throws {
    let daemon = try start(DaemonSetup(cues: ["wrap": "tone-44100-vbr.mp3"]))
    let client = try daemon.connect()
    let sound = try #require(try client.request("sound.create", [("cue", "wrap")])["sound"])
    try client.request("sound.completion", [("sound", sound)])
    try client.request("sound.play", [("sound", sound)])
    let disposed = try client.request("sound.dispose", [("sound", sound)])
    #expect(disposed["playing"] == 1)
    // Held while it plays...
    #expect(try client.request("status")["sounds"] == 1)
    // ...a play after dispose is an error (cuectl's report of it: SoundAndEventTests)...
    #expect(try client.requestError("sound.play", [("sound", sound)])["code"] == "unknown-sound")
    // ...the completion arrives for the play, played to the end...
    let completion = try client.waitForEvent("completion")
    #expect(completion["sound"] == sound)
    #expect(completion["played"] == true)
    // ...and then the sound is gone.
    #expect(try client.request("status")["sounds"] == 0)
    let capture = try daemon.finish()
    let source = try decoded("tone-44100-vbr.mp3")
    try #require(capture.count >= source.count)
    #expect(Array(capture[0..<source.count]) == source)
  }

  static func disposeNowCutsWithAFadeAndStillSendsTheCompletion(_ start: DaemonStarter) throws {
    let daemon = try start(DaemonSetup(cues: cues))
    let client = try daemon.connect()
    let sound = try #require(try client.request("sound.create", [("cue", "loop")])["sound"])
    try client.request("sound.completion", [("sound", sound)])
    try client.request("sound.play", [("sound", sound)])
    try client.request("sound.play", [("sound", sound)])  // plays of one id overlap
    try client.request("sound.dispose", [("sound", sound), ("now", true)])
    let first = try client.waitForEvent("completion")
    let second = try client.waitForEvent("completion")
    #expect(first["played"] == false && second["played"] == false)
    #expect(first["reason"] == "disposed")
    #expect(first["voice"] != second["voice"])
    #expect(try client.request("status")["sounds"] == 0)
  }

  static func aCompletionFiresForEveryPlayAndMutedSoundsSaySo(_ start: DaemonStarter) throws {
    let daemon = try start(DaemonSetup(cues: cues))
    let client = try daemon.connect()
    let sound = try #require(try client.request("sound.create", [("cue", "pico")])["sound"])
    try client.request("sound.completion", [("sound", sound)])
    for _ in 0..<3 { try client.request("sound.play", [("sound", sound)]) }
    for _ in 0..<3 { #expect(try client.waitForEvent("completion")["played"] == true) }
    let settings = try client.request("system", [("muted", true), ("volume", 0.5)])
    #expect(settings["muted"] == true && settings["volume"] == 0.5)
    let muted = try client.request("sound.play", [("sound", sound)])
    #expect(muted["muted"] == true)
    let completion = try client.waitForEvent("completion")
    #expect(completion["played"] == false && completion["reason"] == "muted")
  }

  static func soundsAndPlayersComeFromPathsInsideTheSoundDirectoriesOnly(_ start: DaemonStarter) throws {
    let daemon = try start(DaemonSetup(cues: cues))
    let sounds = daemon.soundDirectory
    let dir = HostilePaths.parent(of: sounds)
    let client = try daemon.connect()
    let inside = try client.request("sound.create", [("path", .string(sounds + "/pico.mp3"))])
    #expect(inside["sound"] != nil)
    try FilePlays.copy("tone-48000-mono.mp3", to: dir + "/outside.mp3")
    for path in [dir + "/outside.mp3", sounds + "/../outside.mp3", "/etc/passwd"] {
      #expect(try client.requestError("sound.create", [("path", .string(path))])["code"] == "bad-path", "\(path)")
    }
    // A symlink inside that points outside does not escape either.
    try FileManager.default.createSymbolicLink(atPath: sounds + "/escape.mp3", withDestinationPath: dir + "/outside.mp3")
    #expect(try client.requestError("player.create", [("path", .string(sounds + "/escape.mp3"))])["code"] == "bad-path")
  }

  static func soundsAndPlayersFromOggWaveAndFLACFilesPlayTheirSamples(_ start: DaemonStarter) throws {
    // A desktop theme's formats: a WAV system sound is heard sample for sample; Ogg and FLAC
    // players load and are named by their files.
    let daemon = try start(DaemonSetup(cues: ["pico": "tone-48000-mono.mp3"]))
    let sounds = daemon.soundDirectory
    for file in ["tone-48000-mono.wav", "tone-48000-stereo.ogg", "tone-44100-stereo.flac"] {
      try FilePlays.copy(file, to: sounds + "/" + file)
    }
    let client = try daemon.connect()
    let sound = try #require(try client.request("sound.create", [("path", .string(sounds + "/tone-48000-mono.wav"))])["sound"])
    #expect(try client.request("sound.play", [("sound", sound)])["voice"] != nil)
    for (file, name) in [("tone-48000-stereo.ogg", "tone-48000-stereo"), ("tone-44100-stereo.flac", "tone-44100-stereo")] {
      let player = try #require(try client.request("player.create", [("path", .string(sounds + "/" + file))])["player"])
      // Decoded by player.prepare (its reply waits for it), and named after the file.
      let properties = try client.request("player.prepare", [("player", player)])
      #expect(properties["numberOfChannels"] == 2)
      #expect(properties["cue"] == .string(name), "\(JSONWriter.write(properties))")
    }
    daemon.advance(seconds: 0.4)
    let capture = try daemon.finish()
    let wave = try Array(Data(contentsOf: URL(fileURLWithPath: TestPaths.fixture("tone-48000-mono.wav"))))
    // The 16-bit samples after the 44-byte header sox writes, each to both channels.
    let samples = stride(from: 44, to: wave.count - 1, by: 2).map { Float(Int16(bitPattern: UInt16(wave[$0]) | UInt16(wave[$0 + 1]) << 8)) / 32768 }
    #expect(samples.count == 5760)
    let firstSound = try #require((0..<(capture.count / 2)).first { capture[2 * $0] != 0 })
    let start = firstSound - (samples.firstIndex { $0 != 0 } ?? 0)
    try #require(start >= 0 && capture.count >= 2 * (start + samples.count))
    let same = Array(capture[(2 * start)..<(2 * start + 2 * samples.count)]) == samples.flatMap { [$0, $0] }
    #expect(same, "the capture from frame \(start) is not the WAV's samples")
  }

  /// A 32-bit FLAC (which libsndfile refuses) is a cue like any other: `list` names its format, and
  /// it plays its samples (cuectl's list and play of it: SoundAndEventTests).
  static func a32BitFLACCueIsListedWithItsFormatAndPlaysItsSamples(_ start: DaemonStarter) throws {
    let daemon = try start(DaemonSetup(cues: ["pico": "tone-48000-mono.mp3"]) { try FilePlays.copy("tone-44100-32bit.flac", to: $0 + "/deep.flac") })
    let client = try daemon.connect()
    let listed = try client.request("list")
    let cues = try #require(listed["cues"]?.arrayValue)
    let deep = try #require(cues.first { $0["name"] == "deep" }, "\(JSONWriter.write(listed))")
    #expect(deep["format"] == "FLAC (32-bit)" && deep["sourceRate"]?.intValue == 44100 && deep["channels"]?.intValue == 2)
    #expect(deep["frames"]?.intValue == 5760 && deep["gapless"] == true, "\(JSONWriter.write(deep))")
    try client.request("subscribe", [("kinds", ["finished"])])
    let voice = try #require(try client.request("play", [("cue", "deep")])["voice"])
    try client.waitForEvent("finished") { $0["voice"] == voice }
    let capture = try daemon.finish()
    let expected = try AudioFileDecoder.decode(path: TestPaths.fixture("tone-44100-32bit.flac")).buffer.toArray()
    #expect(frameHolding(expected, in: capture, from: 0) != nil, "the capture does not hold the FLAC's samples")
  }

  static func soundThemeEventsPlayTheThemesFileSampleForSample(_ start: DaemonStarter) throws {
    // The real freedesktop theme under /usr/share, and a data home of the user's own that
    // silences `bell`, as a desktop user would with a .disabled file.
    let home = try Files.makeTemporaryDirectory(prefix: "cued-theme") + "/data"
    try FileManager.default.createDirectory(atPath: home + "/sounds/freedesktop/stereo", withIntermediateDirectories: true)
    try "".write(toFile: home + "/sounds/freedesktop/stereo/bell.disabled", atomically: true, encoding: .utf8)
    var setup = DaemonSetup(cues: ["pico": "tone-48000-mono.mp3"])
    setup.soundTheme = "not-installed"
    setup.environment = ["XDG_DATA_HOME": home, "XDG_DATA_DIRS": "/usr/share", "LC_ALL": "de_DE.UTF-8"]
    let daemon = try start(setup)
    let client = try daemon.connect()
    // A theme that is not installed falls back to freedesktop; message-new-email is message.oga
    // there (the name loses its last part until a file answers).
    let stereo = "/usr/share/sounds/freedesktop/stereo/"
    let first = try client.request("play", [("event", "message-new-email")])
    #expect(first["file"] == .string(stereo + "message.oga") && first["voice"] != nil)
    let disabled = try client.requestError("play", [("event", "bell")])
    #expect(disabled["code"] == "event-disabled")
    #expect(disabled["message"]?.stringValue?.contains(home + "/sounds/freedesktop/stereo/bell.disabled") == true)
    #expect(try client.requestError("play", [("event", "no-such-sound")])["code"] == "unknown-event")
    daemon.advance(seconds: 1.5)
    let capture = try daemon.finish()
    // What was heard is the theme's file, decoded, sample for sample (volume 1, centred).
    let expected = try AudioFileDecoder.decode(path: stereo + "message.oga").buffer.toArray()
    let start = try #require((0..<(capture.count / 2)).first { capture[2 * $0] != 0 || capture[2 * $0 + 1] != 0 })
    let lead = (0..<(expected.count / 2)).first { expected[2 * $0] != 0 || expected[2 * $0 + 1] != 0 } ?? 0
    try #require(capture.count >= 2 * (start - lead) + expected.count)
    let same = Array(capture[(2 * (start - lead))..<(2 * (start - lead) + expected.count)]) == expected
    #expect(same, "the capture is not message.oga's samples")
  }

  static func aPlayerFromAFileThatDoesNotDecodeReportsADecodeError(_ start: DaemonStarter) throws {
    let daemon = try start(DaemonSetup(cues: cues))
    let bad = daemon.soundDirectory + "/bad.mp3"
    try "not an mp3".write(toFile: bad, atomically: true, encoding: .utf8)
    let client = try daemon.connect()
    let player = try #require(try client.request("player.create", [("path", .string(bad))])["player"])
    try client.request("player.play", [("player", player)])
    let error = try client.waitForEvent("decode-error")
    #expect(error["player"] == player)
    #expect(error["reason"]?.stringValue?.isEmpty == false)
    let finished = try client.waitForEvent("finished")
    #expect(finished["successfully"] == false)
  }

  static func aPlayerDiesWithItsConnectionUnlessDetached(_ start: DaemonStarter) throws {
    let daemon = try start(DaemonSetup(cues: cues))
    let owner = try daemon.connect()
    let gone = try #require(try owner.request("player.create", [("cue", "loop"), ("numberOfLoops", -1)])["player"])
    let kept = try #require(try owner.request("player.create", [("cue", "loop"), ("detached", true)])["player"])
    try owner.request("player.play", [("player", gone)])
    #expect(try owner.request("status")["players"] == 2)
    try owner.hangUp()
    let observer = try daemon.connect()
    var waited = 0.0
    while waited < 3, try observer.request("status")["players"] != 1 {
      daemon.advance(seconds: 0.01)
      waited += 0.01
    }
    let status = try observer.request("status")
    #expect(status["players"] == 1)
    #expect(try observer.request("player.get", [("player", kept)])["detached"] == true)
    daemon.advance(seconds: 0.1)
    #expect(try observer.request("status")["voices"] == 0)
  }

  static func subscriptionsFilterByKindAndById(_ start: DaemonStarter) throws {
    let daemon = try start(DaemonSetup(cues: cues))
    let watcher = try daemon.connect()
    let player = try #require(try watcher.request("player.create", [("cue", "pico"), ("detached", true)])["player"])
    let idWatcher = try daemon.connect()
    try idWatcher.request("subscribe", [("ids", .array([player]))])
    try watcher.request("subscribe", [("kinds", ["finished"])])
    let actor = try daemon.connect()
    try actor.request("play", [("cue", "pico")])
    try actor.request("player.play", [("player", player)])
    daemon.advance(seconds: 0.6)
    let seen = try watcher.eventsSoFar()
    #expect(seen.count == 2)
    #expect(seen.allSatisfy { $0["event"] == "finished" })
    daemon.advance(seconds: 0.2)
    let byID = try idWatcher.eventsSoFar()
    #expect(byID.map { $0["event"]?.stringValue ?? "" }.sorted() == ["finished", "started"])
    #expect(byID.allSatisfy { $0["player"] == player })
    let started = try #require(byID.first { $0["event"] == "started" })
    #expect(started["deviceTime"]?.doubleValue != nil)
    #expect((started["heardIn"]?.doubleValue ?? -1) >= 0)
  }

  /// The device's opening and its closing once idle (`--idle-timeout 0.3`), and a reload's event.
  /// (On a PipeWire stream, which pauses instead of closing: SoundAndEventTests, live.)
  static func deviceAndReloadEventsArrive(_ start: DaemonStarter) throws {
    var setup = DaemonSetup(cues: cues)
    setup.idleTimeout = 0.3
    let daemon = try start(setup)
    let watcher = try daemon.connect()
    try watcher.request("subscribe", [("kinds", ["device", "reloaded"])])
    try watcher.request("play", [("cue", "pico")])
    #expect(try watcher.waitForEvent("device")["state"] == "opened")
    #expect(try watcher.waitForEvent("device")["state"] == "closed-idle")
    try watcher.request("reload")
    #expect(try watcher.waitForEvent("reloaded")["cues"] == 2)
  }

  static func aReplacedRewrittenOrRelinkedThemeFilePlaysItsNewSound(_ start: DaemonStarter) throws {
    try themeFileChanges(start, config: nil) { _, client in try client.request("reload") }
  }

  /// A theme file rewritten in place, replaced, made a symlink and the symlink re-pointed: each
  /// play of its event is heard as the file is then. `config` is the config file's text; `reload`
  /// reloads (the `reload` request; live, cuectl's too).
  public static func themeFileChanges(
    _ start: DaemonStarter, config: String?, reload: (DaemonUnderTest, TestClient) throws -> Void
  ) throws {
    // A theme of the user's own in the data home; no other theme (the real one may be installed or not).
    let data = try Files.makeTemporaryDirectory(prefix: "cued-theme") + "/data"
    let stereo = data + "/sounds/freedesktop/stereo"
    try FileManager.default.createDirectory(atPath: stereo, withIntermediateDirectories: true)
    try "[Sound Theme]\nName=Freedesktop\nDirectories=stereo\n".write(
      toFile: data + "/sounds/freedesktop/index.theme", atomically: true, encoding: .utf8)
    let bell = stereo + "/bell.wav"
    let a = "tone-48000-mono.wav", b = "tone-44100-stereo.mp3", c = "tone-8000-mono.mp3"
    try SoundWatching.bytes(a).write(to: URL(fileURLWithPath: bell))
    var setup = DaemonSetup(cues: ["pico": "tone-48000-mono.mp3"], config: config)
    setup.environment = ["XDG_DATA_HOME": data, "XDG_DATA_DIRS": data + "/none"]
    let daemon = try start(setup)
    let client = try daemon.connect()
    func playBell() throws {
      #expect(try client.request("play", [("event", "bell")])["file"] == .string(bell))
      daemon.advance(seconds: 0.35)
    }
    try playBell()
    // Rewritten in place: the same inode, other bytes.
    let handle = try #require(FileHandle(forWritingAtPath: bell))
    try handle.truncate(atOffset: 0)
    try handle.write(contentsOf: SoundWatching.bytes(b))
    try handle.close()
    try reload(daemon, client)
    try playBell()
    // Replaced: other bytes renamed over it (a new inode).
    try SoundWatching.bytes(c).write(to: URL(fileURLWithPath: bell + ".new"))
    #expect(rename(bell + ".new", bell) == 0)
    try reload(daemon, client)
    try playBell()
    // A symlink, then the symlink re-pointed (GNOME's custom theme); this time without a reload.
    let home = data + "/picked"
    try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
    try SoundWatching.bytes(a).write(to: URL(fileURLWithPath: home + "/a.wav"))
    try SoundWatching.bytes(b).write(to: URL(fileURLWithPath: home + "/b.mp3"))
    #expect(unlink(bell) == 0 && symlink(home + "/a.wav", bell) == 0)
    try reload(daemon, client)
    try playBell()
    #expect(symlink(home + "/b.mp3", bell + ".new") == 0 && rename(bell + ".new", bell) == 0)
    try playBell()
    let capture = try daemon.finish()
    // Heard in order, each sample for sample: the file as it was at each play.
    var from = 0
    for (step, file) in [a, b, c, a, b].enumerated() {
      let expected = try AudioFileDecoder.decode(path: TestPaths.fixture(file)).buffer.toArray()
      let at = frameHolding(expected, in: capture, from: from)
      #expect(at != nil, "play \(step + 1) is not \(file)'s samples")
      from = (at ?? from) + expected.count / 2
    }
  }
}
#endif
