import CueProtocol
import DaemonBehaviours
import DaemonTestSupport
import Foundation
import Testing

/// System sounds and events where the real process is the point: cuectl, the config file and
/// its reloads, the process's environment, the shared output (PipeWire in make test's
/// second pass), a socket reader that stalls, the fuzzer's binary. What a client sees of the same
/// (sounds, players, completions, subscriptions) is SoundsAndEvents' bodies: in process in
/// CueDaemonTests, live in LiveSoundsAndEventsTests.
@Suite("System sounds and events", .serialized)
struct SoundAndEventTests {
  /// cuectl's report of a play of a disposed sound (the sound's life itself: SoundsAndEvents).
  @Test func cuectlSaysAPlayAfterDisposeIsAnUnknownSound() throws {
    let (daemon, _) = try DaemonTests.start()
    defer { daemon.stop() }
    let client = try ProtocolClient(socket: daemon.socket)
    let sound = try #require(try client.request("sound.create", [("cue", "loop")])["sound"])
    try client.request("sound.play", [("sound", sound)])
    try client.request("sound.dispose", [("sound", sound)])
    let refused = try JSONParser.parse(
      (try daemon.cuectl(["sound", "play", "\(sound.intValue!)", "--json"])).stdout.split(separator: "\n").last.map(String.init) ?? "{}")
    #expect(refused["error"]?["code"] == "unknown-sound")
  }

  /// cuectl lists a 32-bit FLAC cue with its format and plays it to the end (its samples: SoundsAndEvents).
  @Test func cuectlListsA32BitFLACCueWithItsFormatAndPlaysIt() throws {
    let (daemon, dir) = try DaemonTests.start(["--no-watch-sounds"])
    defer { daemon.stop() }
    try FileManager.default.copyItem(atPath: Harness.fixture("tone-44100-32bit.flac"), toPath: dir + "/sounds/deep.flac")
    #expect(try daemon.cuectl(["reload"]).status == 0)
    #expect(try daemon.cuectl(["list"]).stdout.contains("FLAC (32-bit)"))
    #expect(try daemon.cuectl(["play", "deep", "--wait"]).status == 0)
  }
  @Test(.enabled(if: SoundsAndEvents.themeInstalled, "needs sound-theme-freedesktop"))
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

  /// A theme file's changes with a config file, reloaded by cuectl (without a config file, by the
  /// `reload` request: SoundsAndEvents' body, in process and live).
  @Test func aReplacedRewrittenOrRelinkedThemeFilePlaysItsNewSoundWithAConfigFile() throws {
    try SoundsAndEvents.themeFileChanges(LiveDaemon.start, config: "sound-theme = \"freedesktop\"\n") { daemon, _ in
      let reloaded = try #require(daemon as? LiveDaemon).rig.daemon.cuectl(["reload"])
      #expect(reloaded.status == 0, "\(reloaded)")
    }
  }

  @Test(.enabled(if: SoundsAndEvents.themeInstalled, "needs sound-theme-freedesktop"))
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
