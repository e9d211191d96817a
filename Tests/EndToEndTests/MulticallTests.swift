import CuedMulticall
import DaemonTestSupport
import Foundation
import Testing

/// The installed `cuectl` and `cued-carousel` are links to `cued`, which runs the program its name
/// says (Sources/Programs/cued/main.swift); InstallTests check the installed links, these the
/// build's own `cued` under each name.
@Suite("One executable, three programs")
struct MulticallTests {
  @Test func theNameChoosesTheProgram() {
    #expect(Program(invokedAs: "cuectl") == .cuectl)
    #expect(Program(invokedAs: "/usr/bin/cuectl") == .cuectl)
    #expect(Program(invokedAs: "./cued-carousel") == .carousel)
    #expect(Program(invokedAs: "/usr/bin/cued") == .daemon)
    // Any other name is the daemon: a copy renamed, or a name that only starts like another's.
    for name in ["cued-1", "cuectl2", "/opt/cuectl/cued", "", "/"] { #expect(Program(invokedAs: name) == .daemon, "\(name)") }
  }

  /// The build's cued, linked under each name, serves and is each program.
  @Test func cuedUnderEachNameIsThatProgram() throws {
    let directory = Harness.temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    for name in ["cuectl", "cued-carousel"] {
      try FileManager.default.createSymbolicLink(atPath: directory + "/" + name, withDestinationPath: Harness.cued)
      let help = try run(directory + "/" + name, ["--help"])
      #expect(help.status == 0 && help.stdout.contains("USAGE: \(name) "), "\(name) --help: \(help.stdout)\(help.stderr)")
    }
    let daemon = try DaemonProcess(
      socket: directory + "/cued.sock", arguments: ["--sounds", Harness.repositoryRoot + "/sounds", "--device", "null", "--no-config"],
      logPath: directory + "/cued.log")
    defer { daemon.stop() }
    let ping = try run(directory + "/cuectl", ["ping", "--socket", daemon.socket])
    #expect(ping.status == 0, "cued as cuectl: \(ping.stdout)\(ping.stderr)")
    let list = try run(directory + "/cuectl", ["list", "--json", "--socket", daemon.socket])
    #expect(list.status == 0 && list.stdout.contains("\"pico\""), "\(list.stdout)")
  }
}
