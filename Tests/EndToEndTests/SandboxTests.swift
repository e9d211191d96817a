import CuePosix
import DaemonTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// cued inside the sandbox that systemd/cued.service describes, built with bubblewrap (there is no
/// systemd manager here): the whole file system read-only (ProtectSystem=strict, ProtectHome=read-only),
/// only the runtime directory writable (ReadWritePaths=%t), a private /tmp (PrivateTmp) and no network
/// (PrivateNetwork, RestrictAddressFamilies=AF_UNIX). The sound servers are reached through their
/// Unix sockets in the runtime directory, through ALSA's pulse plugin and PipeWire's.
enum Sandbox {
  /// The bwrap arguments for a runtime directory `runtime`.
  static func arguments(runtime: String) -> [String] {
    [
      "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--bind", runtime, runtime,
      // The checkout (the binary, the unpacked PipeWire plugin) may itself live under /tmp.
      "--ro-bind", Harness.repositoryRoot, Harness.repositoryRoot,
      "--unshare-net", "--unshare-ipc", "--unshare-uts", "--new-session", "--die-with-parent",
    ]
  }

  /// Runs cued in the sandbox and plays a cue through `device` with cuectl (outside).
  static func playThrough(device: String, runtime: String, environment: [String: String]) throws -> CommandResult {
    let sounds = try Harness.soundDirectory(in: runtime, ["pico": "tone-48000-mono.mp3"])
    var env = environment
    env["XDG_RUNTIME_DIR"] = runtime
    env["XDG_CONFIG_HOME"] = "/nonexistent/cued-tests"
    let daemon = try ChildProcess(
      "/usr/bin/bwrap",
      arguments(runtime: runtime) + [
        Harness.cued, "--socket", runtime + "/cued/cued.sock", "--sounds", sounds, "--device", device,
        "--realtime-priority", "0", "--idle-timeout", "0.5",
      ], environment: env, standardOutput: .file(runtime + "/cued.log"),
      standardError: .sameAsStandardOutput)
    defer { daemon.terminate(grace: 2) }
    let deadline = Date().addingTimeInterval(10)
    while Date() < deadline && !FileManager.default.fileExists(atPath: runtime + "/cued/cued.sock") { usleep(20_000) }
    return try run(Harness.cuectl, ["play", "pico", "--wait", "--socket", runtime + "/cued/cued.sock"], timeout: 15)
  }
}

@Suite("Sound servers under the service's sandbox", .serialized)
struct SandboxTests {
  @Test func thePulsePluginWorksInTheSandbox() throws {
    let dir = Harness.temporaryDirectory()
    let pulse = try PulseServer(directory: dir)
    let played = try Sandbox.playThrough(device: "pulse:" + pulse.sink, runtime: dir, environment: pulse.environment)
    #expect(played.status == 0, "\(played.stderr)\n\((try? String(contentsOfFile: dir + "/cued.log", encoding: .utf8)) ?? "")")
  }

  @Test func theNativePipeWireOutputWorksInTheSandbox() throws {
    // The runtime directory the unit gives cued holds the server's socket (pipewire-0), as on a desktop.
    let dir = Harness.temporaryDirectory()
    let pipewire = try PipeWireEnvironment(directory: dir)
    let played = try Sandbox.playThrough(device: "pipewire", runtime: dir, environment: pipewire.environment)
    #expect(played.status == 0, "\(played.stderr)\n\((try? String(contentsOfFile: dir + "/cued.log", encoding: .utf8)) ?? "")")
  }

  @Test func thePipeWirePluginWorksInTheSandbox() throws {
    let dir = Harness.temporaryDirectory()
    // PipeWire needs a session manager (WirePlumber) to link streams, and WirePlumber a D-Bus session.
    let bus = try run("/usr/bin/dbus-daemon", ["--session", "--fork", "--print-address=1", "--print-pid=1"])
    let lines = bus.stdout.split(separator: "\n")
    let address = try #require(lines.first.map(String.init))
    let busPID = Int32(lines.dropFirst().first.map(String.init) ?? "") ?? 0
    defer { if busPID > 0 { kill(busPID, SIGTERM) } }
    let environment = ["XDG_RUNTIME_DIR": dir, "HOME": dir, "DBUS_SESSION_BUS_ADDRESS": address, "PIPEWIRE_RUNTIME_DIR": dir]
    let pipewire = try ChildProcess(
      "/usr/bin/pipewire", [], environment: environment, standardOutput: .null,
      standardError: .file(dir + "/pipewire.log", append: true))
    defer { pipewire.terminate(grace: 2) }
    var deadline = Date().addingTimeInterval(10)
    while Date() < deadline && !FileManager.default.fileExists(atPath: dir + "/pipewire-0") { usleep(20_000) }
    let session = try ChildProcess(
      "/usr/bin/wireplumber", [], environment: environment, standardOutput: .null,
      standardError: .file(dir + "/wireplumber.log", append: true))
    defer { session.terminate(grace: 2) }
    let sink = try run(
      "/usr/bin/pw-cli",
      ["create-node", "adapter", "{ factory.name=support.null-audio-sink node.name=t media.class=Audio/Sink object.linger=1 audio.position=[FL FR] }"],
      environment: environment, timeout: 10)
    #expect(sink.status == 0, "\(sink.stderr)")
    // Wait until WirePlumber has taken the new sink as the default.
    deadline = Date().addingTimeInterval(10)
    while Date() < deadline {
      let nodes = try run("/usr/bin/pw-cli", ["ls", "Node"], environment: environment, timeout: 5)
      if nodes.stdout.contains("node.name = \"t\"") { break }
      usleep(50_000)
    }
    usleep(500_000)
    var withConfig = environment
    withConfig["ALSA_CONFIG_PATH"] = try pipeWireALSAConfig(in: dir)
    let played = try Sandbox.playThrough(device: "pw", runtime: dir, environment: withConfig)
    #expect(played.status == 0, "\(played.stderr)\n\((try? String(contentsOfFile: dir + "/cued.log", encoding: .utf8)) ?? "")")
  }
}
