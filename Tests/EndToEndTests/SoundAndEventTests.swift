import CueDecoding
import CueProtocol
import DaemonBehaviours
import DaemonTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

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
      let at = SoundsAndEvents.frame(of: expected, in: capture, from: from)
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
