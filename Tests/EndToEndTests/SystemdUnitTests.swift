import DaemonTestSupport
import Foundation
import Testing

/// The systemd units in systemd/: they verify, and their hardening scores stay low.
@Suite("systemd units")
struct SystemdUnitTests {
  /// Copies the units into a scratch directory with ExecStart pointing at the built binary
  /// (systemd-analyze verify insists the program exists).
  static func stage(_ files: [String]) throws -> String {
    let dir = Harness.temporaryDirectory()
    for file in files {
      let name = URL(fileURLWithPath: file).lastPathComponent
      var text = try String(contentsOfFile: Harness.repositoryRoot + "/systemd/" + file, encoding: .utf8)
      text = text.replacingOccurrences(of: "ExecStart=/usr/local/bin/cued", with: "ExecStart=" + Harness.cued)
      try text.write(toFile: dir + "/" + name, atomically: true, encoding: .utf8)
    }
    return dir
  }

  @Test func theUserUnitsVerify() throws {
    let dir = try Self.stage(["cued.service", "cued.socket"])
    let result = try run(
      "/usr/bin/systemd-analyze", ["verify", "--man=no", "--user", dir + "/cued.socket", dir + "/cued.service"],
      environment: ["XDG_RUNTIME_DIR": dir])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stderr.isEmpty, "\(result.stderr)")
  }

  @Test func theSystemWideUnitsVerify() throws {
    let dir = try Self.stage(["system/cued.service", "system/cued.socket"])
    let result = try run("/usr/bin/systemd-analyze", ["verify", "--man=no", dir + "/cued.socket", dir + "/cued.service"])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stderr.isEmpty, "\(result.stderr)")
  }

  @Test("the exposure stays as low as docs/SERVICE.md reports", arguments: ["cued.service", "system/cued.service"])
  func exposureStaysLow(_ unit: String) throws {
    let dir = try Self.stage([unit])
    let result = try run(
      "/usr/bin/systemd-analyze", ["security", "--offline=true", dir + "/cued.service"], environment: ["XDG_RUNTIME_DIR": dir])
    let line = try #require(result.stdout.split(separator: "\n").last { $0.contains("Overall exposure level") })
    let score = try #require(line.split(separator: " ").compactMap { Double($0) }.first)
    #expect(score <= 1.5, "\(line)")
  }

  @Test func theSocketIsPrivateToItsUser() throws {
    let socket = try String(contentsOfFile: Harness.repositoryRoot + "/systemd/cued.socket", encoding: .utf8)
    #expect(socket.contains("ListenStream=%t/cued/cued.sock"))
    #expect(socket.contains("SocketMode=0600"))
    #expect(socket.contains("DirectoryMode=0700"))
  }
}
