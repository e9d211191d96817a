import DaemonTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The soak test (docs/RELIABILITY.md): the real `cued-soak` against the real `cued` on the silent sink.
///
/// By default the short mode (`cued-soak --quick`: 5,000 plays, 500 connect/disconnect cycles, 50
/// player and 50 system-sound sessions), about 10 s in a debug build. `CUED_SOAK=long` runs the full
/// size (100,000 plays, 10,000 cycles); `make soak` does the same against a release build.
@Suite("Soak", .serialized)
struct SoakTests {
  static var long: Bool { ProcessInfo.processInfo.environment["CUED_SOAK"] == "long" }

  @Test func playsCyclesPlayersAndSoundsLeaveNoLeaks() throws {
    let soak = Harness.productsDirectory + "/cued-soak"
    try #require(
      FileManager.default.isExecutableFile(atPath: soak),
      "no \(soak): build it with `swift build --product cued-soak` (swift build --build-tests builds it too)")
    let dir = Harness.temporaryDirectory()
    // More voices than the default 32, so the soak is not paced by the voice limit alone: it keeps
    // three quarters of them sounding, well short of stealing.
    let daemon = try DaemonProcess(
      socket: dir + "/cued.sock",
      arguments: ["--sounds", Harness.repositoryRoot + "/sounds", "--device", "null", "--max-voices", Self.long ? "256" : "128"],
      logPath: dir + "/cued.log")
    defer { daemon.stop() }

    // Under ThreadSanitizer (scripts/sanitize.sh sets CUED_SANITIZER) the daemon's RSS carries the
    // sanitizer's shadow memory, which grows as new addresses are touched (seen: +1.3 MiB over a
    // quick soak that grows by < 1 MiB without it): the leak check is then a looser bound; races
    // are what that run is for.
    let rssLimitKiB = ProcessInfo.processInfo.environment["CUED_SANITIZER"] == nil ? 1024 : 8192
    let arguments = [
      "--socket", daemon.socket, "--pid", "\(daemon.pid)", "--json", "--progress", Self.long ? "30" : "0",
      "--rss-limit", "\(rssLimitKiB)",
    ]
    let result = try run(soak, arguments + (Self.long ? [] : ["--quick"]), timeout: Self.long ? 3600 : 180)
    let summary = try #require(
      try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any],
      "cued-soak printed no JSON; stderr: \(result.stderr)")
    // The human summary (and any failure) is on stderr: show it with any failed expectation.
    let report = result.stderr
    #expect(result.status == 0, "\(report)")
    #expect(summary["pass"] as? Bool == true, "\(report)")
    #expect((summary["failures"] as? [String])?.isEmpty == true, "\(report)")
    #expect(summary["daemonAlive"] as? Bool == true)

    let work = try #require(summary["work"] as? [String: Any])
    let planned = Self.long ? (plays: 100_000, cycles: 10_000) : (plays: 5_000, cycles: 500)
    #expect((work["plays"] as? Int ?? 0) >= planned.plays, "\(report)")
    #expect(work["cycles"] as? Int == planned.cycles, "\(report)")
    #expect((work["playersCreated"] as? Int ?? 0) > 0)
    #expect((work["soundsCreated"] as? Int ?? 0) > 0)
    #expect((work["leftToClose"] as? Int ?? 0) > 0)

    let rss = try #require(summary["rss"] as? [String: Any])
    #expect((rss["growthKiB"] as? Int ?? .max) < rssLimitKiB, "RSS after warm-up: \(rss)")
    let fds = try #require(summary["fds"] as? [String: Any])
    #expect(fds["final"] as? Int == fds["baseline"] as? Int, "open descriptors: \(fds)")

    let leaks = try #require(summary["leaks"] as? [String: Any])
    for key in ["voices", "players", "sounds", "clients", "unfinishedVoices", "fds"] {
      #expect(leaks[key] as? Int == 0, "leaked \(key): \(leaks)")
    }
    let requests = try #require(summary["requests"] as? [String: Any])
    #expect(requests["sent"] as? Int == requests["answered"] as? Int)
    #expect(requests["unexpectedErrors"] as? Int == 0, "\(requests)")
    #expect(requests["transportFailures"] as? Int == 0, "\(requests)")

    // And the daemon, after all that, still stops cleanly.
    #expect(daemon.stop() == 0, "\(daemon.log)")
  }
}
