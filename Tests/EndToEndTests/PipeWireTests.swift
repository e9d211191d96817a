import DaemonTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The headless PipeWire of scripts/pipewire-env.sh (dbus, a timer-paced null sink, WirePlumber) in a
/// directory of the test's own; stopped, every process, when the test lets go of it.
final class PipeWireEnvironment {
  static var script: String { Harness.repositoryRoot + "/scripts/pipewire-env.sh" }
  let directory: String
  /// What a client needs (XDG_RUNTIME_DIR, PIPEWIRE_RUNTIME_DIR, DBUS_SESSION_BUS_ADDRESS, ...).
  let environment: [String: String]

  init(directory: String) throws {
    self.directory = directory
    let result = try run(Self.script, ["start", directory], timeout: 10)
    guard result.status == 0 else {
      throw HarnessError("pipewire-env.sh start failed (scripts/install-deps.sh installs PipeWire): \(result.stderr)")
    }
    environment = Self.parse(result.stdout)
  }

  /// `export NAME='value'` lines into a dictionary.
  static func parse(_ text: String) -> [String: String] {
    var environment: [String: String] = [:]
    for line in text.split(separator: "\n") where line.hasPrefix("export ") {
      let assignment = line.dropFirst("export ".count)
      guard let equals = assignment.firstIndex(of: "=") else { continue }
      environment[String(assignment[..<equals])] = String(assignment[assignment.index(after: equals)...])
        .trimmingCharacters(in: CharacterSet(charactersIn: "'"))
    }
    return environment
  }

  /// The pids the script recorded (dbus-daemon, pipewire, wireplumber).
  var pids: [pid_t] {
    ["dbus", "pipewire", "wireplumber"].compactMap {
      (try? String(contentsOfFile: "\(directory)/\($0).pid", encoding: .utf8)).flatMap {
        pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines))
      }
    }
  }

  func stop() throws -> CommandResult { try run(Self.script, ["stop", directory], timeout: 10) }

  deinit { _ = try? stop() }
}

/// What cued-pwprobe printed: every value of each `key=value` line, in order (one per round).
struct ProbeReport {
  let values: [String: [String]]
  let text: String

  init(_ text: String) {
    self.text = text
    var values: [String: [String]] = [:]
    for line in text.split(separator: "\n") {
      guard let equals = line.firstIndex(of: "=") else { continue }
      values[String(line[..<equals]), default: []].append(String(line[line.index(after: equals)...]))
    }
    self.values = values
  }

  subscript(key: String) -> [String] { values[key] ?? [] }
}

@Suite("Headless PipeWire and the PipeWire shim, end to end", .serialized)
struct PipeWireTests {
  static var probe: String { Harness.productsDirectory + "/cued-pwprobe" }

  /// Whether `pid` runs: a process that exited may stay a zombie until init reaps it.
  static func isRunning(_ pid: pid_t) -> Bool {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
      let close = stat.lastIndex(of: ")")
    else { return false }
    return stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).first != "Z"
  }

  @Test func theEnvironmentIsReadyWithinTwoSecondsStartsOnceAndStopsEveryProcess() throws {
    let directory = Harness.temporaryDirectory()
    let started = Date()
    let pipewire = try PipeWireEnvironment(directory: directory)
    #expect(Date().timeIntervalSince(started) < 2)
    #expect(pipewire.environment["PIPEWIRE_RUNTIME_DIR"] == directory)
    #expect(pipewire.environment["XDG_RUNTIME_DIR"] == directory)
    #expect(pipewire.environment["DBUS_SESSION_BUS_ADDRESS"] == "unix:path=\(directory)/bus")
    let mode = try FileManager.default.attributesOfItem(atPath: directory)[.posixPermissions] as? Int
    #expect(mode == 0o700)
    let pids = pipewire.pids
    #expect(pids.count == 3)

    // A second start finds the running instance and starts nothing.
    let again = try run(PipeWireEnvironment.script, ["start", directory], timeout: 10)
    #expect(again.status == 0)
    #expect(PipeWireEnvironment.parse(again.stdout) == pipewire.environment)
    #expect(pipewire.pids == pids)

    // WirePlumber made the test sink the default, so streams without a target land there.
    let metadata = try run("/usr/bin/pw-metadata", ["-n", "default", "0", "default.audio.sink"], environment: pipewire.environment)
    #expect(metadata.stdout.contains("cued-test-sink"))

    #expect(try pipewire.stop().status == 0)
    for pid in pids { #expect(!Self.isRunning(pid), "process \(pid) survived stop") }
    #expect(!FileManager.default.fileExists(atPath: directory))
    #expect(try pipewire.stop().status == 0)  // stop is idempotent
  }

  @Test func aToneThroughTheShimReachesTheMonitorBitExactOneQuantumLaterAndDisconnectRemovesTheNode() throws {
    let pipewire = try PipeWireEnvironment(directory: Harness.temporaryDirectory())
    let result = try run(Self.probe, ["--quantum", "256", "--rounds", "3"], environment: pipewire.environment, timeout: 30)
    let report = ProbeReport(result.stdout)
    print(result.stdout)
    #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    #expect(report["server_answers"] == ["true"])
    #expect(report["server_answers_for_missing_remote"] == ["false"])
    // node.latency 256/48000 is the quantum the callback is asked for, every cycle.
    #expect(report["quantum_requested_min_max"] == Array(repeating: "256 256", count: 3))
    #expect(report["node_removed_on_disconnect"] == Array(repeating: "true", count: 3))
    // The tone arrives whole, unaltered, in the graph cycle after the one it was written in.
    #expect(report["tone_extent_frames"] == Array(repeating: "4800", count: 3))
    #expect(report["tone_max_sample_error"] == Array(repeating: "0.0", count: 3))
    #expect(report["tone_zero_crossings"] == Array(repeating: "200", count: 3))
    #expect(report["onset_frames_cycle_to_monitor"] == Array(repeating: "256", count: 3))
  }

  @Test func aPausedOutputIsNotScheduledAndResumesWithTheToneWholeAndNoXrun() throws {
    let pipewire = try PipeWireEnvironment(directory: Harness.temporaryDirectory())
    let result = try run(
      Self.probe, ["--quantum", "256", "--rounds", "2", "--pause-before-trigger", "300"], environment: pipewire.environment, timeout: 30)
    let report = ProbeReport(result.stdout)
    print(result.stdout)
    #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    #expect(report["cycles_while_paused"] == ["0", "0"])
    #expect(report["tone_extent_frames"] == ["4800", "4800"])
    #expect(report["tone_max_sample_error"] == ["0.0", "0.0"])
    #expect(report["xruns"] == ["0", "0"])
  }

  /// The shim's part of the adaptive node.latency on a real server: a late cycle (the probe's own
  /// callback sleeps once) is counted as an xrun; asking for twice the quantum makes the graph run
  /// at it, and asking for the first quantum brings it back (the rule is cued's: PipeWireOutputTests).
  @Test func anXrunIsCountedAndTheAskedQuantumIsTheGraphs() throws {
    let pipewire = try PipeWireEnvironment(directory: Harness.temporaryDirectory())
    let result = try run(
      Self.probe, ["adapt", "--quantum", "128", "--max", "512", "--decay-ms", "700", "--late-ms", "40"],
      environment: pipewire.environment, timeout: 30)
    let report = ProbeReport(result.stdout)
    print(result.stdout)
    #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    #expect(report["quantum_before"] == ["128"])
    #expect(report["latency_asked_after_xrun"] == ["256"] && report["quantum_after_xrun"] == ["256"])
    #expect((Int(report["xruns"].first ?? "") ?? 0) >= 1, "\(result.stdout)")
    #expect(report["latency_asked_after_decay"] == ["128"] && report["quantum_after_decay"] == ["128"])
  }

  @Test func anOutputReportsAServerRestartAndConnectsAgain() throws {
    let directory = Harness.temporaryDirectory()
    let pipewire = try PipeWireEnvironment(directory: directory)
    let script = PipeWireEnvironment.script
    let restart = "'\(script)' stop '\(directory)' && '\(script)' start '\(directory)'"
    let result = try run(
      Self.probe, ["--quantum", "256", "--rounds", "2", "--restart-command", restart], environment: pipewire.environment,
      timeout: 30)
    let report = ProbeReport(result.stdout)
    print(result.stdout)
    #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    #expect(report["state_after_restart"].first?.hasPrefix("error") == true)
    #expect(report["tone_max_sample_error"] == ["0.0", "0.0"])
  }
}
