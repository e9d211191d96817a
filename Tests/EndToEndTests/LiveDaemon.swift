import CueProtocol
import DaemonBehaviours
import DaemonTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The real cued as a `DaemonUnderTest`: playing through the ALSA tee into a paced PulseAudio null
/// sink (`PacedCapture`), on a socket, in real time; `advance` is a real wait.
final class LiveDaemon: DaemonUnderTest {
  let rig: PacedCapture

  init(_ setup: DaemonSetup) throws {
    var extra = setup.maxVoices.map { ["--max-voices", String($0)] } ?? []
    if let theme = setup.soundTheme { extra += ["--sound-theme", theme] }
    if let idle = setup.idleTimeout { extra += ["--idle-timeout", String(idle)] }
    if setup.watchSounds == false { extra += ["--no-watch-sounds"] }
    if setup.allowAnyPath { extra += ["--allow-any-path"] }
    soundDirectoryName = setup.soundDirectoryName ?? "sounds"
    rig = try PacedCapture(
      cues: setup.cues, extra: extra, config: setup.config, environment: setup.environment ?? [:], prepare: setup.prepare,
      soundDirectoryName: soundDirectoryName)
  }

  static func start(_ setup: DaemonSetup) throws -> DaemonUnderTest { try LiveDaemon(setup) }

  func connect() throws -> TestClient { TestClient(LiveChannel(try RawClient(socket: rig.daemon.socket), daemon: self)) }
  func advance(seconds: Double) { usleep(UInt32(seconds * 1_000_000)) }
  func finish() throws -> [Float] { try rig.finish() }

  /// A body that never called `finish` stops the daemon here, so that what it sent is checked against the schema too.
  deinit { if rig.daemon.isRunning { rig.daemon.stop() } }

  /// The rig's sound directory (`--sounds`).
  var soundDirectory: String { rig.directory + "/" + soundDirectoryName }
  /// Its own name (`DaemonSetup.soundDirectoryName`, or `sounds`).
  private let soundDirectoryName: String
}

/// A socket connection's lines. It keeps its daemon running: a body may hold only the client.
final class LiveChannel: LineChannel {
  let raw: RawClient
  private let daemon: LiveDaemon
  init(_ raw: RawClient, daemon: LiveDaemon) {
    self.raw = raw
    self.daemon = daemon
  }

  func send(_ line: String) throws { try raw.send(line + "\n") }
  func receive(within seconds: Double) throws -> JSONValue? { try raw.receive(within: seconds) }

  func send(bytes: [UInt8]) throws { try raw.send(bytes: bytes) }
  func finishSending() throws { try shut(Int32(SHUT_WR)) }
  /// Both ways shut: the daemon sees the hang-up as of a close (the descriptor closes with the client).
  func hangUp() throws { try shut(Int32(SHUT_RDWR)) }

  private func shut(_ how: Int32) throws {
    guard shutdown(raw.fd.rawValue, how) == 0 else { throw HarnessError("shutdown(\(how)) of the test's connection: errno \(errno)") }
  }
}

extension Trait where Self == ConditionTrait {
  /// A suite of the behaviour bodies that `make test` runs in process (Tests/DaemonBehaviours),
  /// here on the real cued: run by `make test-live` (CUED_TEST_LIVE=1), skipped (and said so) otherwise.
  static var liveBehaviours: Self {
    .enabled(if: ProcessInfo.processInfo.environment["CUED_TEST_LIVE"] == "1", "runs in process in make test; live with CUED_TEST_LIVE=1 (make test-live)")
  }
}
