import DaemonTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("The config file", .serialized)
struct ConfigTests {
  @Test func settingsComeFromTheFileAndFlagsWin() throws {
    let dir = Harness.temporaryDirectory()
    let sounds = try Harness.soundDirectory(in: dir, ["pico": "tone-48000-mono.mp3"])
    try """
      # cued.toml
      sounds = ["\(sounds)"]
      device = "null"
      max-voices = 7
      idle-timeout = 0.3

      [system-sounds]
      volume = 0.25
      muted = true
      """.write(toFile: dir + "/cued.toml", atomically: true, encoding: .utf8)
    let daemon = try DaemonProcess(
      socket: dir + "/cued.sock", arguments: ["--config", dir + "/cued.toml", "--max-voices", "9"], logPath: dir + "/cued.log")
    defer { daemon.stop() }
    let status = try daemon.status()
    #expect(status["voiceLimit"] as? Int == 9)  // the flag wins
    #expect(status["systemVolume"] as? Double == 0.25)
    #expect(status["systemMuted"] as? Bool == true)
    #expect((status["device"] as? [String: Any])?["name"] as? String == "null")
    #expect(status["cues"] as? Int == 1)
  }

  @Test(
    "errors name the file, the line and what to fix",
    arguments: [
      ("device = \"null\"\nrate = \"fast\"\n", ":2:", "rate must be a whole number"),
      ("device = \"null\"\n\nbogus = 1\n", ":3:", "unknown key bogus"),
      ("[system-sounds]\nvolume = 2\n", ":2:", "volume must be a number from 0"),
      ("device = \n", ":1:", "TOML syntax"),
      ("sounds = \"/one/dir\"\n", ":1:", "sounds must be a list"),
      ("[cues.tick]\ncooldown = 0.1\npast-max = \"maybe\"\n", ":3:", "[cues.tick] past-max must be \"steal\""),
      ("[cues.tick]\npriority = 101\n", ":2:", "priority must be a whole number from 0 to 100"),
      ("[cues.set]\nvariations = [\"a\", { cue = \"b\", weight = 0 }]\n", ":2:", "weight must be a number above 0"),
      ("[cues.tick]\nvolume = 1\n", ":2:", "unknown key volume; a cue's table takes variations,"),
    ])
  func errorsNameTheFileLineAndFix(_ text: String, _ line: String, _ fix: String) throws {
    try Self.expectRejected(text, at: line, saying: fix)
  }

  /// `cued --check-config` on `text` fails, naming the file with `line` (":N:") and saying `fix`.
  static func expectRejected(_ text: String, at line: String, saying fix: String) throws {
    let dir = Harness.temporaryDirectory()
    try text.write(toFile: dir + "/cued.toml", atomically: true, encoding: .utf8)
    let result = try run(Harness.cued, ["--config", dir + "/cued.toml", "--check-config"])
    #expect(result.status == 1)
    #expect(result.stderr.contains(dir + "/cued.toml" + line), "\(result.stderr)")
    #expect(result.stderr.contains(fix), "\(result.stderr)")
  }

  @Test func theShippedExampleChecksOut() throws {
    let result = try run(Harness.cued, ["--config", Harness.repositoryRoot + "/systemd/cued.toml.example", "--check-config"])
    #expect(result.status == 0, "\(result.stderr)")
  }

  @Test func aGoodFileChecksOut() throws {
    let dir = Harness.temporaryDirectory()
    try "device = \"null\"\n".write(toFile: dir + "/cued.toml", atomically: true, encoding: .utf8)
    let result = try run(Harness.cued, ["--config", dir + "/cued.toml", "--check-config"])
    #expect(result.status == 0)
    #expect(result.stdout.contains("good"))
  }

  @Test func sighupReloadsTheConfigAndABadOneKeepsThePrevious() throws {
    let dir = Harness.temporaryDirectory()
    let sounds = try Harness.soundDirectory(in: dir, ["pico": "tone-48000-mono.mp3"])
    let config = dir + "/cued.toml"
    try "sounds = [\"\(sounds)\"]\ndevice = \"null\"\n[system-sounds]\nvolume = 0.5\n".write(toFile: config, atomically: true, encoding: .utf8)
    let daemon = try DaemonProcess(socket: dir + "/cued.sock", arguments: ["--config", config], logPath: dir + "/cued.log")
    defer { daemon.stop() }
    #expect(try daemon.status()["systemVolume"] as? Double == 0.5)
    try "sounds = [\"\(sounds)\"]\ndevice = \"null\"\n[system-sounds]\nvolume = 0.75\n".write(toFile: config, atomically: true, encoding: .utf8)
    daemon.signal(SIGHUP)
    let deadline = Date().addingTimeInterval(5)
    while Date() < deadline, try daemon.status()["systemVolume"] as? Double != 0.75 { usleep(20_000) }
    #expect(try daemon.status()["systemVolume"] as? Double == 0.75)
    // A broken file: the reload is refused with the file and line, and the previous settings stay.
    try "sounds = [\"\(sounds)\"]\ndevice = \"null\"\n[system-sounds]\nvolume = loud\n".write(toFile: config, atomically: true, encoding: .utf8)
    let refused = try daemon.cuectl(["reload"])
    #expect(refused.status == 1)
    #expect(refused.stderr.contains(config + ":4"))
    #expect(try daemon.status()["systemVolume"] as? Double == 0.75)
    #expect(try daemon.cuectl(["play", "pico", "--wait"]).status == 0)
  }

  @Test func everyConfigFuzzInputParsesOrIsRefusedWithALine() throws {
    // The config fuzzer's corpus (Fuzz/config-corpus: the shipped configs, every TOML block of the
    // docs, the TOML features and errors, and what the fuzzer kept), replayed by its normal build.
    let result = try DaemonTestSupport.run(
      Harness.productsDirectory + "/cued-fuzz-config", [Harness.repositoryRoot + "/Fuzz/config-corpus"], timeout: 60)
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout.contains("every invariant held") && result.stdout.contains("refused with a line"), "\(result.stdout)")
  }
}
