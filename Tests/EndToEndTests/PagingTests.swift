import CueProtocol
import DaemonBehaviours
import DaemonTestSupport
import Foundation
import Testing

/// The paging bodies (DaemonBehaviours/Paging.swift), which CueDaemonTests runs in process, on the real cued.
@Suite("Audible paging, live: the in-process bodies on the real cued", .serialized, .liveBehaviours)
struct LivePagingTests {
  @Test(arguments: Paging.all) func paging(_ behaviour: Behaviour) throws {
    try behaviour.body(LiveDaemon.start)
  }
}

/// Audible paging where the real process is the point: real time, cuectl, the config file.
@Suite("Audible paging: real time, cuectl and the config file", .serialized)
struct PagingTests {
  @Test func latestWinsDropsLateEvents() throws {
    // A 1 ms deadline cannot be met while the device opens (connecting to the sound server takes
    // longer): that event is dropped, never played late.
    let daemon = try LiveDaemon(DaemonSetup(cues: Paging.cues, config: "[carousel.default]\npage-next = { cue = \"page-next\", deadline = 0.001 }\n"))
    let client = try daemon.connect()
    #expect(try client.page(0, 1, of: 5)["decision"] == "late")
    let paging = try #require(client.request("status")["paging"])
    #expect(paging["late"] == 1 && paging["played"] == 0)
    daemon.advance(seconds: 0.2)
    let capture = try daemon.finish()
    #expect(capture.allSatisfy { $0 == 0 })
  }

  @Test func cuectlPageAndCarouselSpeakForShellScripts() throws {
    let (daemon, _) = try DaemonTests.start(sounds: Paging.cues)
    defer { daemon.stop() }
    let page = try daemon.cuectl(["page", "--from", "2", "--to", "3", "--count", "7"])
    #expect(page.status == 0 && page.stdout.hasPrefix("played page-next"))
    let drag = try daemon.cuectl(["carousel", "drag-began"])
    #expect(drag.stdout.hasPrefix("played tick"))
    #expect(try daemon.cuectl(["page", "--from", "9", "--to", "3", "--count", "7"]).status == 2)
    // A direction the carousel knows: next from the last of two pages is a wrap.
    #expect(try daemon.cuectl(["page", "--from", "1", "--to", "0", "--count", "2", "--direction", "next"]).stdout.hasPrefix("played wrap"))
    #expect(try daemon.cuectl(["page", "--from", "1", "--to", "0", "--count", "2", "--direction", "up"]).status == 2)
    // The rest of the lifecycle, and a bounded pager's edge (bound to nothing by default).
    #expect(try daemon.cuectl(["carousel", "will-end-dragging", "--velocity", "3.5", "--target-page", "2"]).stdout.hasPrefix("unbound"))
    #expect(try daemon.cuectl(["carousel", "will-end-dragging"]).status == 2)
    #expect(try daemon.cuectl(["carousel", "edge", "--edge", "end"]).stdout.hasPrefix("unbound"))
    #expect(try daemon.cuectl(["carousel", "edge"]).status == 2)
  }

  @Test(
    "binding errors name the file, the line and the fix",
    arguments: [
      ("[carousel.default]\npage-next = { cue = \"page-next\", retrigger = \"loud\" }\n", ":2:", "retrigger must be"),
      ("[carousel.default]\n\nflip = \"tick\"\n", ":3:", "unknown key flip"),
      ("[carousel.default]\npage-next = { volume = 0.5 }\n", ":2:", "needs cue"),
    ])
  func bindingErrors(_ text: String, _ line: String, _ fix: String) throws {
    try ConfigTests.expectRejected(text, at: line, saying: fix)
  }

  @Test func aReloadBindingAnUnknownCueIsRefusedAndThePreviousBindingsStay() throws {
    let dir = Harness.temporaryDirectory()
    let sounds = try Harness.soundDirectory(in: dir, Paging.cues)
    let config = dir + "/cued.toml"
    try "[carousel.default]\npage-next = \"tick\"\n".write(toFile: config, atomically: true, encoding: .utf8)
    let daemon = try DaemonProcess(
      socket: dir + "/cued.sock", arguments: ["--sounds", sounds, "--device", "null", "--config", config], logPath: dir + "/cued.log")
    defer { daemon.stop() }
    try "[carousel.default]\n\npage-next = \"no-such-cue\"\n".write(toFile: config, atomically: true, encoding: .utf8)
    let refused = try daemon.cuectl(["reload"])
    #expect(refused.status == 1)
    #expect(refused.stderr.contains(config + ":3"))
    #expect(refused.stderr.contains("no-such-cue"))
    #expect(try daemon.cuectl(["page", "--from", "0", "--to", "1", "--count", "3"]).stdout.hasPrefix("played tick"))
  }
}
