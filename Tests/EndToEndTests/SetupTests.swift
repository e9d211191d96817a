import DaemonTestSupport
import Foundation
import Testing

/// A simulated machine for scripts/install-deps.sh: a dpkg database holding only some packages and
/// what they depend on (Tests/Setup/dpkg-status.py), built from apt's lists.
enum SimulatedMachine: String, CaseIterable, CustomTestStringConvertible, Sendable {
  /// The essential packages only.
  case bareDebian
  /// Debian 12's GNOME desktop with its default sound stack, PipeWire (pipewire-audio pulls
  /// pipewire-pulse and pipewire-alsa).
  case pipeWireDesktop

  var testDescription: String { self == .bareDebian ? "a bare Debian" : "a GNOME desktop on PipeWire" }
  var packages: [String] { self == .bareDebian ? [] : ["gnome-core", "pipewire-audio"] }

  /// The admindir, made once per test process.
  var admindir: String {
    get throws {
      let made = self == .bareDebian ? Self.bare : Self.desktop
      return try made.get()
    }
  }

  private static let bare = Result { try make(.bareDebian) }
  private static let desktop = Result { try make(.pipeWireDesktop) }

  private static func make(_ machine: SimulatedMachine) throws -> String {
    let directory = Harness.temporaryDirectory() + "/dpkg"
    let made = try run("/usr/bin/python3", [Harness.repositoryRoot + "/Tests/Setup/dpkg-status.py", directory] + machine.packages, timeout: 60)
    guard made.status == 0 else { throw HarnessError("dpkg-status.py: \(made.stderr) (apt's lists are needed: apt-get update)") }
    return directory
  }
}

/// What `install-deps.sh --dry-run` printed: `key: value` lines.
struct SetupPlan {
  let result: CommandResult
  let fields: [String: String]

  init(_ result: CommandResult) {
    self.result = result
    var fields: [String: String] = [:]
    for line in result.stdout.split(separator: "\n") {
      guard let colon = line.firstIndex(of: ":") else { continue }
      fields[String(line[..<colon])] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
    }
    self.fields = fields
  }

  var missing: Set<String> { Set((fields["missing"] ?? "").split(separator: " ").map(String.init)) }
}

@Suite("Set-up: what make run and make test install, on machines people have", .serialized)
struct SetupTests {
  static var script: String { Harness.repositoryRoot + "/scripts/install-deps.sh" }
  static let buildPackages: Set<String> = [
    "pkgconf", "libasound2-dev", "libmpg123-dev", "libpipewire-0.3-dev", "libspa-0.2-dev", "libpulse-dev", "libsndfile1-dev",
    "libebur128-dev", "libcanberra-dev",
  ]
  static let soundServersAndTestTools: Set<String> = [
    "pulseaudio", "pipewire", "pipewire-pulse", "pipewire-bin", "wireplumber", "libasound2-plugins", "lintian", "strace", "tmux",
    "socat", "bubblewrap", "sox", "stress-ng",
  ]

  static func plan(_ profile: String, on machine: SimulatedMachine, environment: [String: String] = [:]) throws -> SetupPlan {
    var environment = environment
    environment["CUED_DPKG_ADMINDIR"] = try machine.admindir
    environment["CUED_TEST_PULSE_SERVER"] = environment["CUED_TEST_PULSE_SERVER"] ?? ""
    return SetupPlan(try run(script, ["--" + profile, "--dry-run"], environment: environment, timeout: 60))
  }

  @Test(arguments: SimulatedMachine.allCases)
  func makeRunInstallsOnlyWhatBuildingNeedsAndRemovesNothing(machine: SimulatedMachine) throws {
    let plan = try Self.plan("run", on: machine)
    #expect(plan.result.status == 0, "\(plan.result.stderr)")
    #expect(plan.fields["apt-removes"] == "none")
    // A fresh machine misses every header package; a desktop may have none of them either.
    #expect(plan.missing == Self.buildPackages, "\(plan.result.stdout)")
    #expect(plan.missing.isDisjoint(with: Self.soundServersAndTestTools))
    #expect(plan.fields["pulse-server"] == nil)
  }

  @Test(arguments: SimulatedMachine.allCases)
  func makeTestKeepsTheMachinesSoundStackAndRemovesNothing(machine: SimulatedMachine) throws {
    for profile in ["test", "tools"] {
      let plan = try Self.plan(profile, on: machine)
      #expect(plan.result.status == 0, "\(profile): \(plan.result.stderr)")
      #expect(plan.fields["apt-removes"] == "none")
      #expect(plan.missing.isSuperset(of: Self.buildPackages))
      switch machine {
      case .bareDebian:
        // No sound stack to keep: the pulseaudio server is the tests' PulseAudio-protocol server.
        #expect(plan.fields["pulse-server"] == "pulseaudio")
        #expect(plan.missing.contains("pulseaudio"))
        // libcanberra's pulse driver, which cued's libcanberra driver falls over to in its tests.
        #expect(
          plan.missing.isSuperset(of: ["libcanberra-pulse", "xvfb", "libcanberra-gtk3-module", "golang-github-burntsushi-toml-dev"]),
          "\(plan.result.stdout)")
      case .pipeWireDesktop:
        // The desktop's pipewire-pulse stays; the tests run a private one.
        #expect(plan.fields["pulse-server"] == "pipewire-pulse")
        #expect(!plan.missing.contains("pulseaudio"), "\(plan.result.stdout)")
      }
    }
  }

  @Test func askingForThePulseAudioServerOnAPipeWireDesktopStopsAndNamesWhatItWouldRemove() throws {
    let plan = try Self.plan("test", on: .pipeWireDesktop, environment: ["CUED_TEST_PULSE_SERVER": "pulseaudio"])
    #expect(plan.result.status == 1)
    #expect(plan.fields["missing"] == nil, "no plan is printed")
    let message = plan.result.stderr
    for removed in ["pipewire-audio", "pipewire-alsa", "gnome-core"] { #expect(message.contains(removed), "\(message)") }
    #expect(message.contains("Nothing was installed"))
    #expect(message.contains("pipewire-pulse"), "what to do instead")
  }

  @Test func swiftIsCheckedBeforeAnythingIsInstalled() throws {
    let missing = try run(Self.script, ["--run", "--dry-run"], environment: ["SWIFT": "/nonexistent/swift"])
    #expect(missing.status == 1)
    #expect(missing.stderr.contains("Swift ('/nonexistent/swift') was not found"), "\(missing.stderr)")
    #expect(missing.stderr.contains("swift.org") && missing.stderr.contains("Nothing was installed"))
    #expect(missing.stdout.isEmpty)

    let directory = Harness.temporaryDirectory()
    let old = directory + "/swift"
    try "#!/bin/sh\necho 'Swift version 5.10.1 (swift-5.10.1-RELEASE)'\n".write(toFile: old, atomically: true, encoding: .utf8)
    try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: old)
    let tooOld = try run(Self.script, ["--test", "--dry-run"], environment: ["SWIFT": old])
    #expect(tooOld.status == 1)
    #expect(tooOld.stderr.contains("needs Swift 6 or later") && tooOld.stderr.contains("5.10.1"), "\(tooOld.stderr)")
  }
}
