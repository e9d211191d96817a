import CuePosix
import CueProtocol
import DaemonTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Bad input on the socket, where the process is the point: silent connections cost no CPU. The bad
/// lines' errors, and the connection and the audio going on, are the bodies of
/// DaemonBehaviours/Connections.swift (in process in make test, live in make test-live).
@Suite("Hostile protocol input", .serialized)
struct HostileProtocolTests {
  @Test func aClientThatConnectsAndStaysSilentCostsNothing() throws {
    let (daemon, _) = try DaemonTests.start()
    defer { daemon.stop() }
    let silent = try (0..<50).map { _ in try RawClient(socket: daemon.socket) }
    #expect(try daemon.cuectl(["play", "pico", "--wait"]).status == 0)
    usleep(600_000)  // past the idle timeout (0.3 s): the device closes
    try Harness.expectIdle(daemon.pid, for: 1)
    #expect((try daemon.status()["clients"] as? Int) == 51)
    _ = silent
  }
}
