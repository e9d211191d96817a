// The bodies need the testing library's expectations; a release build (make install) builds this
// target without it, and then it holds only the surface.
#if canImport(Testing)
import CueDecoding
import CueProtocol
import DaemonTestSupport
import Foundation
import Testing

/// The sound library and the counters as a client reads them: `list`'s fields, a broken file
/// skipped, `reload` picking up a new file without cutting what plays, `status`'s counters.
/// Written once against `DaemonUnderTest`: CueDaemonTests runs them in process, EndToEndTests
/// live (`CUED_TEST_LIVE=1`); what cuectl prints of them stays live only (DaemonTests).
public enum SoundLibrary {
  /// Every body, for the suites that run them.
  public static let all: [Behaviour] = [
    Behaviour("reloadPicksUpANewFileWithoutCuttingWhatPlays", reloadPicksUpANewFileWithoutCuttingWhatPlays),
    Behaviour("aBrokenFileIsSkippedAndTheOthersLoad", aBrokenFileIsSkippedAndTheOthersLoad),
    Behaviour("listShowsDurationRateChannelsAndMemory", listShowsDurationRateChannelsAndMemory),
    Behaviour("listShowsLoudnessAndPeakAsMeasuredAtLoad", listShowsLoudnessAndPeakAsMeasuredAtLoad),
    Behaviour("statusCountsPlaysPagingDecisionsAndSilentPlays", statusCountsPlaysPagingDecisionsAndSilentPlays),
  ]

  public static func reloadPicksUpANewFileWithoutCuttingWhatPlays(_ start: DaemonStarter) throws {
    // The watch off: it is the reload that finds the new files (live, a watch could rescan first).
    var setup = DaemonSetup(cues: Connections.cues)
    setup.watchSounds = false
    let daemon = try start(setup)
    let client = try daemon.connect()
    let loop = try client.request("play", [("cue", "loop"), ("loops", -1), ("notify", true)])["voice"]
    let sounds = daemon.soundDirectory
    try FilePlays.copy("tone-44100-stereo.mp3", to: sounds + "/fresh.mp3")
    try "not audio".write(toFile: sounds + "/broken.mp3", atomically: true, encoding: .utf8)
    let reload = try client.request("reload")
    #expect(reload["added"] == ["fresh"])
    #expect(reload["failed"]?.arrayValue?.contains { $0["path"]?.stringValue == sounds + "/broken.mp3" } == true, "\(reload)")
    try client.request("play", [("cue", "fresh")])
    #expect(try client.request("status")["voices"]?.intValue ?? 0 >= 1)
    // Gone from the directory, gone from the library at the next reload.
    try FileManager.default.removeItem(atPath: sounds + "/fresh.mp3")
    #expect(try client.request("reload")["removed"] == ["fresh"])
    #expect(try client.request("status")["cues"]?.intValue == 2)
    // The looping voice was never cut.
    #expect(try client.request("status")["voices"]?.intValue ?? 0 >= 1)
    #expect(try client.eventsSoFar().filter { $0["voice"] == loop && $0["event"] == "finished" }.isEmpty)
    try client.request("stop", [("all", true)])
  }

  /// What did not load is left out of the library; a reload names each file and why (the log
  /// does at start: DaemonTests).
  public static func aBrokenFileIsSkippedAndTheOthersLoad(_ start: DaemonStarter) throws {
    let daemon = try start(DaemonSetup(cues: ["pico": "tone-48000-mono.mp3", "junk": "random.mp3", "empty": "empty.mp3"]))
    let client = try daemon.connect()
    let names = try client.request("list")["cues"]?.arrayValue?.compactMap { $0["name"]?.stringValue }
    #expect(names == ["pico"])
    let failed = try client.request("reload")["failed"]?.arrayValue ?? []
    let reasons = Dictionary(failed.map { ($0["path"]?.stringValue ?? "?", $0["reason"]?.stringValue ?? "") }) { first, _ in first }
    #expect(reasons.keys.sorted() == [daemon.soundDirectory + "/empty.mp3", daemon.soundDirectory + "/junk.mp3"], "\(failed)")
    #expect(reasons[daemon.soundDirectory + "/empty.mp3"]?.contains("the file is empty") == true, "\(failed)")
  }

  public static func listShowsDurationRateChannelsAndMemory(_ start: DaemonStarter) throws {
    let client = try start(DaemonSetup(cues: ["tone": "tone-44100-stereo.mp3"])).connect()
    let cue = try #require(try client.request("list")["cues"]?.arrayValue?.first)
    #expect(cue["name"] == "tone")
    #expect(cue["sourceRate"]?.intValue == 44100)
    #expect(cue["channels"]?.intValue == 2)
    #expect(cue["frames"]?.intValue == 5760)
    #expect(cue["bytes"]?.intValue == 5760 * 8)
  }

  /// Loudness and peak as measured at load (the sine: 1 kHz at -20 dBFS, about -20 LUFS); silence has neither.
  public static func listShowsLoudnessAndPeakAsMeasuredAtLoad(_ start: DaemonStarter) throws {
    let sineFixture = "sine-1k-20dbfs-48000.mp3"
    let client = try start(DaemonSetup(cues: ["sine": sineFixture, "silence": "silence-8000-mono.wav"])).connect()
    let cues = try #require(try client.request("list")["cues"]?.arrayValue)
    let sine = try #require(cues.first { $0["name"] == "sine" })
    let silence = try #require(cues.first { $0["name"] == "silence" })
    let decoded = try MP3Decoder.decode(path: TestPaths.fixture(sineFixture)).buffer
    let expected = try #require(Loudness.measure(decoded, sampleRate: 48000))
    let loudness = try #require(sine["loudness"]?.doubleValue)
    let peak = try #require(sine["peak"]?.doubleValue)
    #expect(abs(loudness - (expected.integratedLUFS ?? 0)) <= 0.005)
    #expect(abs(peak - (expected.samplePeakDBFS ?? 0)) <= 0.005)
    #expect(abs(peak - -20) < 0.5 && abs(loudness - -20) < 0.5, "\(loudness) LUFS, \(peak) dBFS")
    // Silence has neither: the fields are absent.
    #expect(silence["loudness"] == nil && silence["peak"] == nil)
  }

  /// A play, a page no cue is bound to and a play of an unknown cue, each counted where `status` says.
  public static func statusCountsPlaysPagingDecisionsAndSilentPlays(_ start: DaemonStarter) throws {
    let client = try start(DaemonSetup(cues: Connections.cues)).connect()
    let voice = try client.request("play", [("cue", "pico"), ("notify", true)])["voice"]
    try client.waitForEvent("finished") { $0["voice"] == voice }
    // Built-in bindings, but this directory has no page-next: the decision is unbound.
    #expect(try client.page(0, 1, of: 3)["decision"] == "unbound")
    #expect(try client.requestError("play", [("cue", "nosuch")])["code"] == "unknown-cue")
    let status = try client.request("status")
    #expect(status["plays"]?.intValue == 1)
    #expect(status["silenced"]?["unknown"]?.intValue == 1)
    let silenced = status["silenced"]?.objectValue ?? []
    #expect(Set(silenced.map(\.0)) == Set(SilenceReason.allCases.map(\.rawValue)), "\(status)")
    #expect(silenced.filter { $0.0 != "unknown" }.allSatisfy { $0.1 == 0 }, "\(status)")
    #expect(status["paging"]?["unbound"]?.intValue == 1)
    #expect(status["paging"]?["played"]?.intValue == 0)
    #expect(status["players"]?.intValue == 0 && status["sounds"]?.intValue == 0 && status["systemVolume"]?.doubleValue == 1)
    #expect(status["refusedConnections"]?.intValue == 0 && status["eventsDropped"]?.intValue == 0)
    #expect(status["device"]?["opens"]?.intValue == 1)
  }
}
#endif
