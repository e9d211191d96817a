import CueDecoding
import CueProtocol
import DaemonBehaviours
import DaemonTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("System sounds and events", .serialized)
struct SoundAndEventTests {
  @Test func disposingRightAfterPlayDoesNotCutTheSoundAndFreesItAfterwards() throws {
    let rig = try PacedCapture(cues: ["wrap": "tone-44100-vbr.mp3"])
    let client = try rig.client()
    let sound = try client.request("sound.create", [("cue", "wrap")])["sound"]!
    try client.request("sound.completion", [("sound", sound)])
    try client.request("sound.play", [("sound", sound)])
    let disposed = try client.request("sound.dispose", [("sound", sound)])
    #expect(disposed["playing"] == 1)
    // Held while it plays...
    #expect(try client.request("status")["sounds"] == 1)
    // ...a play after dispose is an error...
    let refused = try JSONParser.parse(
      (try rig.daemon.cuectl(["sound", "play", "\(sound.intValue!)", "--json"])).stdout.split(separator: "\n").last.map(String.init) ?? "{}")
    #expect(refused["error"]?["code"] == "unknown-sound")
    // ...the completion arrives for the play, played to the end...
    let completion = try client.waitForEvent("completion")
    #expect(completion["sound"] == sound)
    #expect(completion["played"] == true)
    // ...and then the sound is gone.
    #expect(try client.request("status")["sounds"] == 0)
    let capture = try rig.finish()
    let source = try decoded("tone-44100-vbr.mp3")
    try #require(capture.count >= source.count)
    #expect(Array(capture[0..<source.count]) == source)
  }

  @Test func disposeNowCutsWithAFadeAndStillSendsTheCompletion() throws {
    let (daemon, _) = try DaemonTests.start()
    defer { daemon.stop() }
    let client = try ProtocolClient(socket: daemon.socket)
    let sound = try client.request("sound.create", [("cue", "loop")])["sound"]!
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

  @Test func aCompletionFiresForEveryPlayAndMutedSoundsSaySo() throws {
    let (daemon, _) = try DaemonTests.start()
    defer { daemon.stop() }
    let client = try ProtocolClient(socket: daemon.socket)
    let sound = try client.request("sound.create", [("cue", "pico")])["sound"]!
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

  @Test func soundsAndPlayersComeFromPathsInsideTheSoundDirectoriesOnly() throws {
    let (daemon, dir) = try DaemonTests.start()
    defer { daemon.stop() }
    let client = try ProtocolClient(socket: daemon.socket)
    let inside = try client.request("sound.create", [("path", .string(dir + "/sounds/pico.mp3"))])
    #expect(inside["sound"] != nil)
    try FileManager.default.copyItem(atPath: Harness.fixture("tone-48000-mono.mp3"), toPath: dir + "/outside.mp3")
    for path in [dir + "/outside.mp3", dir + "/sounds/../outside.mp3", "/etc/passwd"] {
      #expect(throws: HarnessError.self) { try client.request("sound.create", [("path", .string(path))]) }
    }
    // A symlink inside that points outside does not escape either.
    try FileManager.default.createSymbolicLink(atPath: dir + "/sounds/escape.mp3", withDestinationPath: dir + "/outside.mp3")
    #expect(throws: HarnessError.self) { try client.request("player.create", [("path", .string(dir + "/sounds/escape.mp3"))]) }
  }

  @Test func soundsAndPlayersFromOggWaveAndFLACFilesPlayTheirSamples() throws {
    // A desktop theme's formats through the real daemon and its ALSA output into a file: a WAV
    // system sound is heard sample for sample; Ogg and FLAC players load and are named by their files.
    let rig = try PacedCapture(cues: ["pico": "tone-48000-mono.mp3"])
    let sounds = rig.directory + "/sounds"
    for file in ["tone-48000-mono.wav", "tone-48000-stereo.ogg", "tone-44100-stereo.flac"] {
      try FileManager.default.copyItem(atPath: Harness.fixture(file), toPath: sounds + "/" + file)
    }
    let client = try rig.client()
    let sound = try #require(try client.request("sound.create", [("path", .string(sounds + "/tone-48000-mono.wav"))])["sound"])
    #expect(try client.request("sound.play", [("sound", sound)])["voice"] != nil)
    for (file, name) in [("tone-48000-stereo.ogg", "tone-48000-stereo"), ("tone-44100-stereo.flac", "tone-44100-stereo")] {
      let player = try #require(try client.request("player.create", [("path", .string(sounds + "/" + file))])["player"])
      // Decoded by player.prepare (its reply waits for it), and named after the file.
      let properties = try client.request("player.prepare", [("player", player)])
      #expect(properties["numberOfChannels"] == 2)
      #expect(properties["cue"] == .string(name), "\(JSONWriter.write(properties))")
    }
    usleep(400_000)
    let capture = try rig.finish()
    let wave = try Array(Data(contentsOf: URL(fileURLWithPath: Harness.fixture("tone-48000-mono.wav"))))
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
  /// it plays its samples through the real daemon and its ALSA output.
  @Test func a32BitFLACCueIsListedWithItsFormatAndPlaysItsSamples() throws {
    let rig = try PacedCapture(cues: ["pico": "tone-48000-mono.mp3"]) { sounds in
      try FileManager.default.copyItem(atPath: Harness.fixture("tone-44100-32bit.flac"), toPath: sounds + "/deep.flac")
    }
    let listed = try rig.daemon.cuectl(["list", "--json"])
    let cues = try #require(try JSONParser.parse(listed.stdout.trimmingCharacters(in: .whitespacesAndNewlines))["cues"]?.arrayValue)
    let deep = try #require(cues.first { $0["name"] == "deep" }, "\(listed.stdout)")
    #expect(deep["format"] == "FLAC (32-bit)" && deep["sourceRate"]?.intValue == 44100 && deep["channels"]?.intValue == 2)
    #expect(deep["frames"]?.intValue == 5760 && deep["gapless"] == true, "\(JSONWriter.write(deep))")
    #expect(try rig.daemon.cuectl(["list"]).stdout.contains("FLAC (32-bit)"))
    #expect(try rig.daemon.cuectl(["play", "deep", "--wait"]).status == 0)
    let capture = try rig.finish()
    let expected = try AudioFileDecoder.decode(path: Harness.fixture("tone-44100-32bit.flac")).buffer.toArray()
    #expect(Self.frame(of: expected, in: capture, from: 0) != nil, "the capture does not hold the FLAC's samples")
  }

  @Test(.enabled(if: FileManager.default.fileExists(atPath: "/usr/share/sounds/freedesktop/index.theme"), "needs sound-theme-freedesktop"))
  func soundThemeEventsPlayTheThemesFileSampleForSample() throws {
    // The real freedesktop theme under /usr/share, and a data home of the user's own that
    // silences `bell`, as a desktop user would with a .disabled file.
    let home = Harness.temporaryDirectory() + "/data"
    try FileManager.default.createDirectory(atPath: home + "/sounds/freedesktop/stereo", withIntermediateDirectories: true)
    try "".write(toFile: home + "/sounds/freedesktop/stereo/bell.disabled", atomically: true, encoding: .utf8)
    let rig = try PacedCapture(
      cues: ["pico": "tone-48000-mono.mp3"], extra: ["--sound-theme", "not-installed"],
      environment: ["XDG_DATA_HOME": home, "XDG_DATA_DIRS": "/usr/share", "LC_ALL": "de_DE.UTF-8"])
    let client = try rig.client()
    // A theme that is not installed falls back to freedesktop; message-new-email is message.oga
    // there (the name loses its last part until a file answers).
    let stereo = "/usr/share/sounds/freedesktop/stereo/"
    let first = try client.request("play", [("event", "message-new-email")])
    #expect(first["file"] == .string(stereo + "message.oga") && first["voice"] != nil)
    let disabled = try client.requestError("play", [("event", "bell")])
    #expect(disabled["code"] == "event-disabled")
    #expect(disabled["message"]?.stringValue?.contains(home + "/sounds/freedesktop/stereo/bell.disabled") == true)
    #expect(try client.requestError("play", [("event", "no-such-sound")])["code"] == "unknown-event")
    usleep(1_500_000)
    let capture = try rig.finish()
    // What was heard is the theme's file, decoded, sample for sample (volume 1, centred).
    let expected = try AudioFileDecoder.decode(path: stereo + "message.oga").buffer.toArray()
    let start = try #require((0..<(capture.count / 2)).first { capture[2 * $0] != 0 || capture[2 * $0 + 1] != 0 })
    let lead = (0..<(expected.count / 2)).first { expected[2 * $0] != 0 || expected[2 * $0 + 1] != 0 } ?? 0
    try #require(capture.count >= 2 * (start - lead) + expected.count)
    let same = Array(capture[(2 * (start - lead))..<(2 * (start - lead) + expected.count)]) == expected
    #expect(same, "the capture is not message.oga's samples")
  }

  @Test(.enabled(if: FileManager.default.fileExists(atPath: "/usr/share/sounds/freedesktop/index.theme"), "needs sound-theme-freedesktop"))
  func aReloadSwitchesTheSoundThemeAndForgetsWhatItDecoded() throws {
    // A theme of the user's own, "mine", with a WAV bell; freedesktop comes after it.
    let dir = Harness.temporaryDirectory()
    let mine = dir + "/data/sounds/mine"
    try FileManager.default.createDirectory(atPath: mine + "/stereo", withIntermediateDirectories: true)
    try "[Sound Theme]\nName=Mine\nDirectories=stereo\n[stereo]\nOutputProfile=stereo\n".write(
      toFile: mine + "/index.theme", atomically: true, encoding: .utf8)
    try FileManager.default.copyItem(atPath: Harness.fixture("tone-48000-mono.wav"), toPath: mine + "/stereo/bell.wav")
    let config = dir + "/cued.toml"
    try "sound-theme = \"freedesktop\"\n".write(toFile: config, atomically: true, encoding: .utf8)
    let sounds = try Harness.soundDirectory(in: dir, ["pico": "tone-48000-mono.mp3"])
    let daemon = try DaemonProcess(
      socket: dir + "/cued.sock", arguments: ["--sounds", sounds, "--device", "null", "--config", config],
      environment: ["XDG_DATA_HOME": dir + "/data", "XDG_DATA_DIRS": "/usr/share"], logPath: dir + "/cued.log")
    defer { daemon.stop() }
    let client = try ProtocolClient(socket: daemon.socket)
    let stereo = "/usr/share/sounds/freedesktop/stereo/"
    #expect(try client.request("play", [("event", "bell")])["file"] == .string(stereo + "bell.oga"))
    try "sound-theme = \"mine\"\n".write(toFile: config, atomically: true, encoding: .utf8)
    try client.request("reload")
    // The same name now comes from the new theme, and what it lacks from freedesktop after it.
    #expect(try client.request("play", [("event", "bell")])["file"] == .string(mine + "/stereo/bell.wav"))
    #expect(try client.request("play", [("event", "complete")])["file"] == .string(stereo + "complete.oga"))
  }

  /// The frame (of interleaved stereo `capture`) at or after `from` where `expected` is heard
  /// whole, sample for sample; nil if it is not.
  static func frame(of expected: [Float], in capture: [Float], from: Int) -> Int? {
    frameHolding(expected, in: capture, from: from)
  }

  @Test(arguments: [false, true])
  func aReplacedRewrittenOrRelinkedThemeFilePlaysItsNewSound(withConfigFile: Bool) throws {
    // A theme of the user's own in the data home; no other theme (the real one may be installed or not).
    let data = Harness.temporaryDirectory() + "/data"
    let stereo = data + "/sounds/freedesktop/stereo"
    try FileManager.default.createDirectory(atPath: stereo, withIntermediateDirectories: true)
    try "[Sound Theme]\nName=Freedesktop\nDirectories=stereo\n".write(
      toFile: data + "/sounds/freedesktop/index.theme", atomically: true, encoding: .utf8)
    let bell = stereo + "/bell.wav"
    let a = "tone-48000-mono.wav", b = "tone-44100-stereo.mp3", c = "tone-8000-mono.mp3"
    func bytes(_ file: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: Harness.fixture(file))) }
    try bytes(a).write(to: URL(fileURLWithPath: bell))
    let rig = try PacedCapture(
      cues: ["pico": "tone-48000-mono.mp3"], config: withConfigFile ? "sound-theme = \"freedesktop\"\n" : nil,
      environment: ["XDG_DATA_HOME": data, "XDG_DATA_DIRS": data + "/none"])
    let client = try rig.client()
    func playBell() throws {
      #expect(try client.request("play", [("event", "bell")])["file"] == .string(bell))
      usleep(350_000)
    }
    func reload() throws {
      let reloaded = try rig.daemon.cuectl(["reload"])
      #expect(reloaded.status == 0, "\(reloaded)")
    }
    try playBell()
    // Rewritten in place: the same inode, other bytes.
    let handle = try #require(FileHandle(forWritingAtPath: bell))
    try handle.truncate(atOffset: 0)
    try handle.write(contentsOf: bytes(b))
    try handle.close()
    try reload()
    try playBell()
    // Replaced: other bytes renamed over it (a new inode).
    try bytes(c).write(to: URL(fileURLWithPath: bell + ".new"))
    #expect(rename(bell + ".new", bell) == 0)
    try reload()
    try playBell()
    // A symlink, then the symlink re-pointed (GNOME's custom theme); this time without a reload.
    let home = data + "/picked"
    try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
    try bytes(a).write(to: URL(fileURLWithPath: home + "/a.wav"))
    try bytes(b).write(to: URL(fileURLWithPath: home + "/b.mp3"))
    #expect(unlink(bell) == 0 && symlink(home + "/a.wav", bell) == 0)
    try reload()
    try playBell()
    #expect(symlink(home + "/b.mp3", bell + ".new") == 0 && rename(bell + ".new", bell) == 0)
    try playBell()
    let capture = try rig.finish()
    // Heard in order, each sample for sample: the file as it was at each play.
    var from = 0
    for (step, file) in [a, b, c, a, b].enumerated() {
      let expected = try AudioFileDecoder.decode(path: Harness.fixture(file)).buffer.toArray()
      let at = Self.frame(of: expected, in: capture, from: from)
      #expect(at != nil, "play \(step + 1) is not \(file)'s samples")
      from = (at ?? from) + expected.count / 2
    }
  }

  @Test(.enabled(if: FileManager.default.fileExists(atPath: "/usr/share/sounds/freedesktop/index.theme"), "needs sound-theme-freedesktop"))
  func cuectlPlaysSoundThemeEvents() throws {
    // Pinned: the machine's desktop settings (a distribution's default theme) may name another.
    let (daemon, _) = try DaemonTests.start(["--sound-theme", "freedesktop"])
    defer { daemon.stop() }
    let played = try daemon.cuectl(["play", "--event", "complete"])
    #expect(played.status == 0 && UInt64(played.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) != nil, "\(played)")
    let json = try daemon.cuectl(["play", "--json", "--event", "complete"])
    #expect(json.stdout.contains("\"file\":\"/usr/share/sounds/freedesktop/stereo/complete.oga\""), "\(json.stdout)")
    let unknown = try daemon.cuectl(["play", "--event", "no-such-sound"])
    #expect(unknown.status == 1 && unknown.stderr.contains("no sound for the event 'no-such-sound'"), "\(unknown)")
    #expect(try daemon.cuectl(["play", "pico", "--event", "bell"]).status == 2)
    #expect(try daemon.cuectl(["play", "--event", "../bell"]).status == 2)
  }

  @Test func everyDecoderFuzzInputIsDecodedOrRefusedWithAReason() throws {
    // The decoder fuzzer's corpus (Fuzz/decode-corpus: the fixtures, a float WAV of NaN and
    // infinity, and what the fuzzer kept), replayed by its normal build through the same check.
    let result = try DaemonTestSupport.run(
      Harness.productsDirectory + "/cued-fuzz-decode", [Harness.repositoryRoot + "/Fuzz/decode-corpus"], timeout: 60)
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout.contains("every invariant held") && result.stdout.contains("refused with a reason"), "\(result.stdout)")
  }

  @Test func aPlayerFromAFileThatDoesNotDecodeReportsADecodeError() throws {
    let (daemon, dir) = try DaemonTests.start()
    defer { daemon.stop() }
    try "not an mp3".write(toFile: dir + "/sounds/bad.mp3", atomically: true, encoding: .utf8)
    let client = try ProtocolClient(socket: daemon.socket)
    let player = try client.request("player.create", [("path", .string(dir + "/sounds/bad.mp3"))])["player"]!
    try client.request("player.play", [("player", player)])
    let error = try client.waitForEvent("decode-error")
    #expect(error["player"] == player)
    #expect(error["reason"]?.stringValue?.isEmpty == false)
    let finished = try client.waitForEvent("finished")
    #expect(finished["successfully"] == false)
  }

  @Test func aPlayerDiesWithItsConnectionUnlessDetached() throws {
    let (daemon, _) = try DaemonTests.start()
    defer { daemon.stop() }
    var kept: JSONValue = .null
    do {
      let owner = try ProtocolClient(socket: daemon.socket)
      let gone = try owner.request("player.create", [("cue", "loop"), ("numberOfLoops", -1)])["player"]!
      kept = try owner.request("player.create", [("cue", "loop"), ("detached", true)])["player"]!
      try owner.request("player.play", [("player", gone)])
      #expect(try owner.request("status")["players"] == 2)
    }
    let observer = try ProtocolClient(socket: daemon.socket)
    let deadline = Date().addingTimeInterval(3)
    while Date() < deadline, try observer.request("status")["players"] != 1 { usleep(10_000) }
    let status = try observer.request("status")
    #expect(status["players"] == 1)
    #expect(try observer.request("player.get", [("player", kept)])["detached"] == true)
    usleep(100_000)
    #expect(try observer.request("status")["voices"] == 0)
  }

  @Test func subscriptionsFilterByKindAndById() throws {
    let (daemon, _) = try DaemonTests.start()
    defer { daemon.stop() }
    let watcher = try ProtocolClient(socket: daemon.socket)
    let player = try watcher.request("player.create", [("cue", "pico"), ("detached", true)])["player"]!
    let idWatcher = try ProtocolClient(socket: daemon.socket)
    try idWatcher.request("subscribe", [("ids", .array([player]))])
    try watcher.request("subscribe", [("kinds", ["finished"])])
    let actor = try ProtocolClient(socket: daemon.socket)
    try actor.request("play", [("cue", "pico")])
    try actor.request("player.play", [("player", player)])
    let seen = watcher.drainEvents(for: 0.6)
    #expect(seen.count == 2)
    #expect(seen.allSatisfy { $0["event"] == "finished" })
    let byID = idWatcher.drainEvents(for: 0.2)
    #expect(byID.map { $0["event"]?.stringValue ?? "" }.sorted() == ["finished", "started"])
    #expect(byID.allSatisfy { $0["player"] == player })
    let started = try #require(byID.first { $0["event"] == "started" })
    #expect(started["deviceTime"]?.doubleValue != nil)
    #expect((started["heardIn"]?.doubleValue ?? -1) >= 0)
  }

  @Test func deviceAndReloadEventsArrive() throws {
    let (daemon, _) = try DaemonTests.start()
    defer { daemon.stop() }
    let watcher = try ProtocolClient(socket: daemon.socket)
    try watcher.request("subscribe", [("kinds", ["device", "reloaded"])])
    try watcher.request("play", [("cue", "pico")])
    #expect(try watcher.waitForEvent("device")["state"] == "opened")
    if Harness.quietOutputStaysConnected {
      try Harness.waitUntilQuiet(daemon)  // paused, not closed: no event
    } else {
      #expect(try watcher.waitForEvent("device")["state"] == "closed-idle")
    }
    try watcher.request("reload")
    #expect(try watcher.waitForEvent("reloaded")["cues"] == 2)
  }

  @Test func aStalledSubscriberGetsEventsDroppedAndOthersAreUnaffected() throws {
    let (daemon, _) = try DaemonTests.start(["--max-voices", "4"])
    defer { daemon.stop() }
    let stalled = try ProtocolClient(socket: daemon.socket)
    try stalled.request("subscribe")
    let busy = try ProtocolClient(socket: daemon.socket)
    let (_, slowest) = try Self.playUntilEventsAreDropped(busy, batchSize: 400, maximumBatches: 200)
    #expect((try busy.request("status")["eventsDropped"]?.intValue ?? 0) > 0)
    // The busy client was never held up by the one that does not read (a liveness bound, not a speed target).
    #expect(slowest < 10, "a batch of 400 plays took \(slowest) s")
    #expect(try busy.request("ping")["pong"] == true)
    // ...and the stalled one, reading at last, is told how many events it missed.
    let count = try #require(Self.eventsDroppedNotice(stalled)?["count"]?.intValue)
    #expect(count > 0)
    #expect((try busy.request("status")["eventsDropped"]?.intValue ?? 0) >= count)
  }

  /// Sends silent plays from `busy` in batches, reading every reply, until `status` reports dropped
  /// events (or `maximumBatches` pass): the batches sent, and the slowest batch in seconds.
  static func playUntilEventsAreDropped(
    _ busy: ProtocolClient, batchSize: Int, maximumBatches: Int
  ) throws -> (batches: Int, slowest: Double) {
    var batch = ""
    for i in 0..<batchSize { batch += #"{"id":\#(i + 1000),"op":"play","cue":"pico","volume":0}"# + "\n" }
    var batches = 0
    var slowest = 0.0
    while batches < maximumBatches, (try busy.request("status")["eventsDropped"]?.intValue ?? 0) == 0 {
      let began = Date()
      try busy.raw.send(batch)
      for _ in 0..<batchSize { _ = try busy.raw.receive() }
      slowest = max(slowest, Date().timeIntervalSince(began))
      batches += 1
    }
    return (batches, slowest)
  }

  /// The `events-dropped` event a stalled subscriber reads once it reads again (within 10 s).
  static func eventsDroppedNotice(_ stalled: ProtocolClient) throws -> JSONValue? {
    let deadline = Date().addingTimeInterval(10)
    while Date() < deadline {
      let message = try stalled.raw.receive()
      if message["event"] == "events-dropped" { return message }
    }
    return nil
  }
}
