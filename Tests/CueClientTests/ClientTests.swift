import CueClient
import Testing

@Suite("Client library")
struct ClientTests {
  @Test func unreachableDaemonIsReportedWithItsPath() {
    #expect(throws: ClientError.self) { _ = try CueConnection.connect(socketPath: "/tmp/cued-test-no-such.sock") }
  }
}
