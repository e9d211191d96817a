import CuePosix
import DaemonBehaviours
import DaemonTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The PulseAudio-protocol server the tests start: the pulseaudio server, or on a machine whose
/// sound stack is PipeWire (where scripts/install-deps.sh does not install pulseaudio) a private
/// pipewire-pulse. `CUED_TEST_PULSE_SERVER=pulseaudio|pipewire-pulse` chooses; `make test` runs the
/// PulseAudio suites under both where both can run.
enum PulseArrangement: String, Sendable {
  case pulseaudio
  case pipewirePulse = "pipewire-pulse"

  static let current: PulseArrangement = {
    if let chosen = ProcessInfo.processInfo.environment["CUED_TEST_PULSE_SERVER"], !chosen.isEmpty {
      guard let arrangement = PulseArrangement(rawValue: chosen) else {
        fatalError("CUED_TEST_PULSE_SERVER is '\(chosen)': give pulseaudio or pipewire-pulse")
      }
      return arrangement
    }
    return FileManager.default.isExecutableFile(atPath: "/usr/bin/pulseaudio") ? .pulseaudio : .pipewirePulse
  }()
}

/// A private PulseAudio-protocol server with a paced null sink (`sink`), its socket at
/// `directory/pulse/native`: the pulseaudio server with a null sink named `t`, or a pipewire-pulse in
/// front of the headless PipeWire of scripts/pipewire-env.sh (in `directory/pipewire`, its sink
/// `cued-test-sink`). `process` is the server that speaks the protocol: killing it is the server's death.
final class PulseServer {
  let directory: String
  let arrangement = PulseArrangement.current
  let process: ChildProcess
  /// The PipeWire that pipewire-pulse fronts.
  private let pipewire: PipeWireEnvironment?
  var sink: String { arrangement == .pulseaudio ? "t" : "cued-test-sink" }
  var serverAddress: String { "unix:\(directory)/pulse/native" }
  var environment: [String: String] { ["PULSE_SERVER": serverAddress, "XDG_RUNTIME_DIR": directory, "HOME": directory] }

  init(directory: String) throws {
    self.directory = directory
    let environment = ["PULSE_SERVER": "unix:\(directory)/pulse/native", "XDG_RUNTIME_DIR": directory, "HOME": directory]
    switch arrangement {
    case .pulseaudio:
      pipewire = nil
      process = try ChildProcess(
        "/usr/bin/pulseaudio",
        [
          "-n", "--daemonize=no", "--exit-idle-time=-1", "--use-pid-file=no", "--disable-shm=yes",
          "-L", "module-null-sink sink_name=t rate=48000 channels=2 format=float32le norewinds=1",
          "-L", "module-native-protocol-unix auth-anonymous=1",
        ], environment: environment,
        standardOutput: .null, standardError: .file(directory + "/pulseaudio.log", append: true))
    case .pipewirePulse:
      let core = try PipeWireEnvironment(directory: directory + "/pipewire")
      pipewire = core
      process = try ChildProcess(
        "/usr/bin/pipewire", ["-c", Harness.repositoryRoot + "/Tests/PipeWire/pipewire-pulse.conf"],
        environment: environment.merging(core.environment.filter { $0.key != "XDG_RUNTIME_DIR" }) { old, _ in old }
          .merging(["DISABLE_RTKIT": "1"]) { $1 },
        standardOutput: .null, standardError: .file(directory + "/pipewire-pulse.log", append: true))
    }
    let deadline = Date().addingTimeInterval(10)
    while Date() < deadline {
      if (try? run("/usr/bin/pactl", ["info"], environment: environment, timeout: 5).status) == 0 { return }
      usleep(50_000)
    }
    throw HarnessError("\(arrangement.rawValue) did not start within 10 s (scripts/install-deps.sh --test installs what it needs)")
  }

  func sinkInputs() throws -> [String] {
    try run("/usr/bin/pactl", ["list", "short", "sink-inputs"], environment: environment).stdout
      .split(separator: "\n").map(String.init)
  }

  /// parec of the sink's monitor into `path` (raw float32 stereo 48 kHz), started and settled: with a
  /// low-latency reader first, the idle null sink stops rendering 2 s ahead.
  func recordMonitor(to path: String) throws -> ChildProcess {
    let recorder = try ChildProcess(
      "/usr/bin/parec",
      ["-d", sink + ".monitor", "--latency-msec=5", "--format=float32le", "--rate=48000", "--channels=2", "--raw"],
      environment: environment, standardOutput: .file(path), standardError: .file(directory + "/parec.log", append: true))
    usleep(2_500_000)
    return recorder
  }

  deinit {
    process.terminate(grace: 2)
    _ = try? pipewire?.stop()
  }
}

/// The two ways cued reaches a PulseAudio server: its native stream (libpulse's mainloop thread pulls
/// what the server asks for) and ALSA's pulse plugin (cued's thread pushes).
enum PulsePath: String, CaseIterable, CustomTestStringConvertible, Sendable {
  case native
  case alsaPlugin

  var testDescription: String { self == .native ? "--device pulseaudio:SINK" : "--device pulse:SINK (ALSA's pulse plugin)" }
  func device(_ server: PulseServer) -> String { (self == .native ? "pulseaudio:" : "pulse:") + server.sink }
  var backend: String { self == .native ? "pulseaudio" : "alsa" }
}

@Suite("PulseAudio null sink, paced end to end", .serialized)
struct PulseAudioTests {
  @Test(arguments: PulsePath.allCases)
  func aCueIsCapturedFromTheMonitorAndWhenQuietTheStreamIsCorkedOrClosed(path: PulsePath) throws {
    let dir = Harness.temporaryDirectory()
    let pulse = try PulseServer(directory: dir)
    let recorder = try pulse.recordMonitor(to: dir + "/capture.f32")
    defer { recorder.terminate(grace: 1) }
    let sounds = try Harness.soundDirectory(in: dir, ["pico": "tone-44100-stereo.mp3"])
    let daemon = try DaemonProcess(
      socket: dir + "/cued.sock", arguments: ["--sounds", sounds, "--device", path.device(pulse), "--idle-timeout", "0.5"],
      environment: pulse.environment, logPath: dir + "/cued.log")
    defer { daemon.stop() }

    // The server is the arrangement this run chose (pipewire-pulse names itself "PulseAudio (on PipeWire …)").
    let info = try run("/usr/bin/pactl", ["info"], environment: pulse.environment).stdout
    #expect(info.contains("on PipeWire") == (pulse.arrangement == .pipewirePulse), "\(info)")
    let played = try daemon.cuectl(["play", "pico", "--wait"])
    #expect(played.status == 0, "\(played.stderr)")
    #expect(try daemon.deviceState() == "open")
    #expect(try pulse.sinkInputs().count == 1)
    let device = try #require(daemon.status()["device"] as? [String: Any])
    #expect(device["backend"] as? String == path.backend)
    #expect(device["name"] as? String == path.device(pulse))
    if path == .native {
      // It says what it is, so the server's policy (role ducking, per-role volumes) applies.
      let inputs = try run("/usr/bin/pactl", ["list", "sink-inputs"], environment: pulse.environment).stdout
      #expect(inputs.contains("media.role = \"event\""))
      #expect(inputs.contains("application.name = \"cued\""))
      #expect(inputs.contains("float32le 2ch 48000Hz"))
      #expect((device["quantumFrames"] as? Int ?? 0) > 0, "the server's minreq")
    }
    usleep(300_000)
    recorder.terminate(grace: 2)

    // The capture holds the cue, sample for sample (float32 end to end, unity volume).
    try expectCaptureHoldsTheCue(readFloats(dir + "/capture.f32"), fixture: "tone-44100-stereo.mp3")

    if path == .native {
      // Quiet past the idle window, the native stream stays on the server, corked: it costs nothing.
      let paused = try daemon.device(within: 3) { $0["paused"] as? Bool == true }
      usleep(700_000)  // past the 0.5 s idle window
      #expect(try daemon.deviceState() == "open" && paused["paused"] as? Bool == true, "\(paused)")
      #expect(try pulse.sinkInputs().count == 1)
      #expect(try run("/usr/bin/pactl", ["list", "sink-inputs"], environment: pulse.environment).stdout.contains("Corked: yes"))
    } else {
      // Once idle, cued closes the ALSA device: no stream left on the server.
      try daemon.waitForDevice("closed", timeout: 5)
      #expect(try pulse.sinkInputs().isEmpty)
    }
    // And cued uses no CPU: no stream, no wake-ups. On the native path libpulse's context stays
    // connected (the next cue needs no handshake) and its mainloop thread answers the server's
    // last messages about the deleted stream; Linux charges CPU time a whole tick at a time to
    // whatever runs when the tick lands, so those microseconds were charged one tick in two CI runs
    // of many. One tick in 2 s is tolerated there: a wake-up that repeats would cost many.
    usleep(500_000)
    try Harness.expectIdle(daemon.pid, for: 2, allowance: path == .native ? 1 : 0)
    #expect(daemon.stop() == 0)
  }

  /// After a quiet spell well past the idle window, the native stream is still on the server, corked:
  /// cued used no CPU meanwhile, and its first cue after the pause is captured sample for sample,
  /// on the stream that stayed (one open in all).
  @Test func theFirstCueAfterAQuietSpellPlaysOnTheStreamThatStayedCorked() throws {
    let dir = Harness.temporaryDirectory()
    let pulse = try PulseServer(directory: dir)
    let sounds = try Harness.soundDirectory(in: dir, ["pico": "tone-44100-stereo.mp3"])
    let daemon = try DaemonProcess(
      socket: dir + "/cued.sock", arguments: ["--sounds", sounds, "--device", "pulseaudio:" + pulse.sink, "--idle-timeout", "0.5"],
      environment: pulse.environment, logPath: dir + "/cued.log")
    defer { daemon.stop() }
    // A quiet spell, then the first cue after it, captured at the sink's monitor.
    func quietSpellThenACue(_ attempt: String) throws -> (capture: [Float], underran: Bool) {
      #expect(try daemon.cuectl(["play", "pico", "--volume", "0", "--wait"]).status == 0)
      _ = try daemon.device(within: 3) { $0["paused"] as? Bool == true }
      usleep(500_000)
      try Harness.expectIdle(daemon.pid, for: 2, allowance: 1)
      let device = try #require(daemon.status()["device"] as? [String: Any])
      #expect(device["state"] as? String == "open" && device["paused"] as? Bool == true, "\(attempt): \(device)")
      #expect(try pulse.sinkInputs().count == 1, "the corked stream keeps its sink input")
      let recorder = try pulse.recordMonitor(to: dir + "/capture-\(attempt).f32")
      defer { recorder.terminate(grace: 1) }
      let underrunsBefore = try daemon.status()["underruns"] as? Int ?? 0
      #expect(try daemon.cuectl(["play", "pico", "--wait"]).status == 0)
      usleep(300_000)
      recorder.terminate(grace: 2)
      return (try readFloats(dir + "/capture-\(attempt).f32"), (try daemon.status()["underruns"] as? Int ?? 0) > underrunsBefore)
    }
    // Sample for sample, unless the server underflowed while it played (a machine too loaded to
    // answer in time: cued counts it): then no capture can be exact. Under a private pipewire-pulse
    // a capture was once off with no underflow told to cued (once in many passes; the monitor
    // recorder's overrun or the graph's own skip, not told apart there): a capture that does not
    // hold the cue is an intermittent known issue only if a second quiet spell's capture is exact.
    var (capture, underran) = try quietSpellThenACue("first")
    if !underran, pulse.arrangement == .pipewirePulse, let mismatch = captureMismatch(capture, decoded: try decoded("tone-44100-stereo.mp3")) {
      withKnownIssue("pipewire-pulse lost part of the first capture with no underflow told (\(mismatch)); a second quiet spell must be exact", isIntermittent: true) {
        Issue.record("the first capture: \(mismatch)")
      }
      (capture, underran) = try quietSpellThenACue("second")
    }
    if underran {
      withKnownIssue("the server underflowed while the cue played", isIntermittent: true) {
        try expectCaptureHoldsTheCue(capture, fixture: "tone-44100-stereo.mp3")
      }
    } else {
      try expectCaptureHoldsTheCue(capture, fixture: "tone-44100-stereo.mp3")
    }
    let status = try daemon.status()
    let device = try #require(status["device"] as? [String: Any])
    #expect(device["opens"] as? Int == 1, "uncorked, not reconnected: \(device)")
    #expect((device["pauses"] as? Int ?? 0) >= 1)
    #expect(daemon.stop() == 0)
  }

  @Test(arguments: PulsePath.allCases)
  func aDeadSoundServerIsReportedAndTheDeviceComesBackWhenItReturns(path: PulsePath) throws {
    let dir = Harness.temporaryDirectory()
    var pulse: PulseServer? = try PulseServer(directory: dir)
    let environment = pulse!.environment
    let sounds = try Harness.soundDirectory(in: dir, ["loop": "loop-48000-stereo.mp3", "pico": "tone-48000-mono.mp3"])
    let daemon = try DaemonProcess(
      socket: dir + "/cued.sock", arguments: ["--sounds", sounds, "--device", path.device(pulse!), "--idle-timeout", "0.5"],
      environment: environment, logPath: dir + "/cued.log")
    defer { daemon.stop() }
    #expect(try daemon.cuectl(["play", "loop", "--loops", "-1"]).status == 0)
    try daemon.waitForDevice("open")
    // A voice that ends by itself (not a forever loop), long enough to be cut off by the death.
    let watcher = try ProtocolClient(socket: daemon.socket)
    try watcher.request("subscribe", [("kinds", ["finished", "device"])])
    let oneShot = try #require(watcher.request("play", [("cue", "loop"), ("loops", 500), ("volume", 0.1)])["voice"]?.intValue)

    // The server dies mid-cue: cued says so and keeps answering.
    pulse!.process.signal(SIGKILL)
    pulse!.process.wait(timeout: 5)
    pulse = nil
    try daemon.waitForDevice("lost", timeout: 5)
    #expect(try daemon.cuectl(["ping"]).status == 0)
    let refused = try daemon.cuectl(["play", "pico"])
    #expect(refused.status == 1)
    #expect(refused.stderr.contains("unavailable"))
    let device = try #require(daemon.status()["device"] as? [String: Any])
    #expect((device["error"] as? String)?.isEmpty == false)

    _ = try watcher.waitForEvent("device", where: { $0["state"] == "lost" })
    usleep(700_000)  // longer than the late-voice limit (0.5 s), and the backoff has grown

    // It comes back: the waiting looping voice reopens the device, with backoff (at most 1 s),
    // and a new cue plays within 2 s of the server's return.
    try? FileManager.default.removeItem(atPath: dir + "/pulse")
    pulse = try PulseServer(directory: dir)
    let returned = Date()
    var played: CommandResult? = nil
    while Date().timeIntervalSince(returned) < 5 {
      let attempt = try daemon.cuectl(["play", "pico"])
      if attempt.status == 0 { played = attempt; break }
      usleep(50_000)
    }
    let waited = Date().timeIntervalSince(returned)
    #expect(played != nil)
    #expect(waited < 2, "a new cue played \(waited) s after the server returned")
    try daemon.waitForDevice("open", timeout: 5)
    // The one-shot that was cut off is dropped rather than played late; the loop carries on.
    let dropped = try watcher.waitForEvent("finished", where: { $0["voice"]?.intValue == oneShot })
    #expect(dropped["reason"] == "device-lost")
    #expect(dropped["successfully"] == false)
    #expect((try daemon.status())["voices"] as? Int ?? 0 >= 1)
    #expect(try daemon.cuectl(["play", "pico", "--wait"]).status == 0)
    #expect(daemon.log.contains("is back"))
  }

  /// With the stream open and playing silence, a cue is rendered over the queued silence the server
  /// has not yet handed to the sink (`Engine.rewriteQueuedSilence`): heard sooner than the queue, and
  /// still sample for sample (no frame lost at the seam).
  @Test func aCueStartedOnAnOpenStreamReplacesQueuedSilenceSampleForSample() throws {
    let dir = Harness.temporaryDirectory()
    let pulse = try PulseServer(directory: dir)
    let recorder = try pulse.recordMonitor(to: dir + "/capture.f32")
    defer { recorder.terminate(grace: 1) }
    let sounds = try Harness.soundDirectory(in: dir, ["pico": "tone-44100-stereo.mp3"])
    let daemon = try DaemonProcess(
      socket: dir + "/cued.sock", arguments: ["--sounds", sounds, "--device", "pulseaudio:" + pulse.sink, "--idle-timeout", "5"],
      environment: pulse.environment, logPath: dir + "/cued.log")
    defer { daemon.stop() }
    // Open the stream with a silent cue, and let it end: the queue then holds only silence.
    #expect(try daemon.cuectl(["play", "pico", "--volume", "0", "--wait"]).status == 0)
    usleep(200_000)
    let device = try #require(daemon.status()["device"] as? [String: Any])
    let queueFrames = try #require(device["bufferFrames"] as? Int)
    let client = try ProtocolClient(socket: daemon.socket)
    try client.request("subscribe", [("kinds", ["started"])])
    let voice = try #require(client.request("play", [("cue", "pico")])["voice"]?.intValue)
    let started = try client.waitForEvent("started", where: { $0["voice"]?.intValue == voice })
    let heardIn = try #require(started["heardIn"]?.doubleValue)
    #expect(heardIn < Double(queueFrames) / 48000, "heard in \(heardIn) s: not sooner than the queue (\(queueFrames) frames)")
    usleep(400_000)
    recorder.terminate(grace: 2)
    try expectCaptureHoldsTheCue(readFloats(dir + "/capture.f32"), fixture: "tone-44100-stereo.mp3")
  }

  /// A machine that does not answer the server in time (here: cued stopped for 150 ms, longer than
  /// its 10 ms queue) underflows the stream; cued then asks for twice the queue, the server grants
  /// it, and after the decay window without another underflow the queue is back where it started.
  @Test func anUnderflowDoublesTheQueueAndItDecaysBack() throws {
    let dir = Harness.temporaryDirectory()
    let pulse = try PulseServer(directory: dir)
    let recorder = try pulse.recordMonitor(to: dir + "/capture.f32")
    defer { recorder.terminate(grace: 1) }
    let sounds = try Harness.soundDirectory(in: dir, ["wrap": "loop-48000-stereo.mp3"])
    let daemon = try DaemonProcess(
      socket: dir + "/cued.sock",
      arguments: ["--sounds", sounds, "--device", "pulseaudio:" + pulse.sink, "--idle-timeout", "30", "--pulseaudio-latency-max", "1920", "--latency-decay", "1.5"],
      environment: pulse.environment, logPath: dir + "/cued.log")
    defer { daemon.stop() }
    #expect(try daemon.cuectl(["play", "wrap", "--loops", "-1", "--volume", "0"]).status == 0)
    var state = try daemon.device(within: 0)
    #expect(state["latencyFrames"] as? Int == 480, "\(state)")
    let raisesBefore = state["latencyRaises"] as? Int ?? 0

    kill(daemon.pid, SIGSTOP)
    usleep(150_000)
    kill(daemon.pid, SIGCONT)
    state = try daemon.device(within: 2) { ($0["latencyRaises"] as? Int ?? 0) > raisesBefore }
    let raises = (state["latencyRaises"] as? Int ?? 0) - raisesBefore
    #expect(raises >= 1, "\(state)")
    #expect(state["latencyFrames"] as? Int == min(1920, 480 << raises), "\(state)")
    #expect(try daemon.status()["underruns"] as? Int ?? 0 >= 1)

    state = try daemon.device(within: 8) { $0["latencyFrames"] as? Int == 480 }
    #expect(state["latencyFrames"] as? Int == 480, "no decay: \(state)")
    // The stream played on through both changes of its queue.
    #expect(state["state"] as? String == "open" && (state["losses"] as? Int ?? 0) == 0, "\(state)")
  }

  @Test func deviceAutoPlaysThroughANativePulseAudioStreamWhenOnlyAPulseAudioServerAnswers() throws {
    let dir = Harness.temporaryDirectory()
    let pulse = try PulseServer(directory: dir)
    let sounds = try Harness.soundDirectory(in: dir, ["pico": "tone-48000-mono.mp3"])
    // No PipeWire socket in this runtime directory; the PulseAudio server is there.
    let daemon = try DaemonProcess(
      socket: dir + "/cued.sock", arguments: ["--sounds", sounds, "--idle-timeout", "0.5"],
      environment: pulse.environment.merging(["PIPEWIRE_RUNTIME_DIR": dir]) { $1 }, logPath: dir + "/cued.log")
    defer { daemon.stop() }
    #expect(try daemon.cuectl(["play", "pico", "--wait"]).status == 0)
    let device = try #require(daemon.status()["device"] as? [String: Any])
    #expect(device["backend"] as? String == "pulseaudio")
    #expect(device["name"] as? String == "pulseaudio")
    #expect(daemon.log.contains("a PulseAudio server does"))
  }
}
