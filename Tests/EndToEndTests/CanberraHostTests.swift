import CueDecoding
import CuePosix
import DaemonTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// libcanberra-cued.so in the programs users have, each loading libcanberra its own way: a GTK 3
/// program with `canberra-gtk-module` (GTK loads its modules with local binding, as every GTK 3
/// program in a GNOME session does), a host that loads libcanberra RTLD_LOCAL (Python's ctypes), GSound
/// (GNOME's sound library, from Python) and `canberra-gtk-play`. Each plays the theme's sound through
/// the real cued into a captured sink; then, with cued stopped, through libcanberra's next driver
/// (pulse) into the same PulseAudio server, whose monitor is recorded. The programs are real:
/// Tests/Canberra/*.py and /usr/bin/canberra-gtk-play, the GTK ones on an Xvfb display of the test's own.
@Suite("libcanberra hosts: GTK 3 module, RTLD_LOCAL, GSound, canberra-gtk-play", .serialized)
struct CanberraHostTests {
  enum Host: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case gtkDialog, localBinding, gsound, canberraGtkPlay

    var testDescription: String {
      switch self {
      case .gtkDialog: "a GTK 3 dialog's response sound (GTK_MODULES=canberra-gtk-module)"
      case .localBinding: "a host that dlopens libcanberra RTLD_LOCAL (Python ctypes)"
      case .gsound: "GSound (gi.repository.GSound)"
      case .canberraGtkPlay: "canberra-gtk-play -i"
      }
    }

    /// The sound-theme event each plays: the dialog's OK button plays dialog-ok.
    static let event = "dialog-ok"

    var command: [String] {
      let scripts = Harness.repositoryRoot + "/Tests/Canberra/"
      switch self {
      case .gtkDialog: return [CanberraHostTests.python, scripts + "gtk-dialog.py", "ok"]
      case .localBinding: return [CanberraHostTests.python, scripts + "local-host.py", Self.event]
      case .gsound: return [CanberraHostTests.python, scripts + "gsound-play.py", Self.event]
      case .canberraGtkPlay: return ["/usr/bin/canberra-gtk-play", "-i", Self.event]
      }
    }

    /// What it prints when its sound played.
    var output: [String] {
      switch self {
      case .gtkDialog: ["response: ok"]
      case .localBinding: ["play: Success", "finished: Success"]
      case .gsound: ["finished: ok"]
      case .canberraGtkPlay: []
      }
    }

    var needsDisplay: Bool { self == .gtkDialog || self == .canberraGtkPlay }

    /// What the host needs beyond libcanberra and its pulse driver (scripts/install-deps.sh --test).
    var available: Bool {
      let library = (CanberraRig.pluginDirectory as NSString).deletingLastPathComponent
      let typelibs = library + "/girepository-1.0/"
      let needs: [String]
      switch self {
      case .gtkDialog:
        needs = [CanberraHostTests.python, typelibs + "Gtk-3.0.typelib", library + "/gtk-3.0/modules/libcanberra-gtk-module.so"]
      case .localBinding: needs = [CanberraHostTests.python]
      case .gsound: needs = [CanberraHostTests.python, typelibs + "GSound-1.0.typelib"]
      case .canberraGtkPlay: needs = ["/usr/bin/canberra-gtk-play"]
      }
      return CanberraRig.hasPulseDriver && (!needsDisplay || VirtualDisplay.available)
        && needs.allSatisfy { FileManager.default.fileExists(atPath: $0) }
    }

    static var allAvailable: Bool { allCases.allSatisfy(\.available) }
  }

  /// The system's Python, whose gi module (python3-gi) the scripts import.
  static let python = "/usr/bin/python3"

  @Test(.enabled(if: Host.allAvailable, "needs root, libcanberra-dev, libcanberra-pulse, xvfb, libcanberra-gtk3-module, gir1.2-gtk-3.0, gir1.2-gsound-1.0, gnome-session-canberra"), arguments: Host.allCases)
  func playsThroughCuedAndWithCuedStoppedThroughTheNextDriver(host: Host) throws {
    let rig = try CanberraRig()
    try rig.theme([Host.event: Harness.fixture(CanberraDriverTests.tone)])
    let once = try AudioFileDecoder.decode(path: Harness.fixture(CanberraDriverTests.tone)).buffer.toArray()
    let capture = try PacedCapture(cues: ["pico": "tone-48000-mono.mp3"], environment: rig.themeEnvironment)
    let display = host.needsDisplay ? try VirtualDisplay(directory: rig.directory) : nil
    defer { display?.stop() }
    // CANBERRA_DRIVER=cued, as README.md's session-wide advice sets it; the pulse driver's server
    // is the capture's, which only the fallback plays into directly.
    var environment = rig.environment(socket: capture.daemon.socket, pulse: capture.pulse)
    environment.merge(display?.environment ?? [:]) { $1 }
    environment.merge(["GTK_MODULES": "canberra-gtk-module", "GSETTINGS_BACKEND": "memory", "NO_AT_BRIDGE": "1"]) { $1 }

    let throughCued = try run(host.command[0], Array(host.command.dropFirst()), environment: environment, timeout: 30)
    #expect(throughCued.status == 0, "\(host.command) with cued: \(throughCued.stderr)")
    #expect(throughCued.stdout.split(separator: "\n").map(String.init) == host.output, "\(throughCued.stdout)")
    #expect(try capture.daemon.status()["plays"] as? Int == 1, "cued did not play the host's sound")
    let samples = try capture.finish()
    #expect(heard(once, in: samples) != nil, "the host's sound is not in cued's capture")

    // cued stopped: the driver opens libcanberra's next driver, pulse, which plays into the server.
    let monitor = capture.directory + "/monitor.f32"
    let recorder = try capture.pulse.recordMonitor(to: monitor)
    defer { recorder.terminate(grace: 1) }
    let throughPulse = try run(host.command[0], Array(host.command.dropFirst()), environment: environment, timeout: 30)
    #expect(throughPulse.status == 0, "\(host.command) without cued: \(throughPulse.stderr)")
    #expect(throughPulse.stdout.split(separator: "\n").map(String.init) == host.output, "\(throughPulse.stdout)")
    usleep(300_000)
    recorder.terminate(grace: 2)
    #expect(heard(once, in: try readFloats(monitor)) != nil, "the host's sound is not on the monitor without cued")
  }
}

/// An X server of the test's own (Xvfb) on a free display number, for the GTK programs.
final class VirtualDisplay {
  static let program = "/usr/bin/Xvfb"
  static var available: Bool { FileManager.default.isExecutableFile(atPath: program) }

  let number: Int
  private let server: ChildProcess
  var environment: [String: String] { ["DISPLAY": ":\(number)"] }

  init(directory: String) throws {
    var number = 90 + Int(getpid() % 400)
    while FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\(number)") || FileManager.default.fileExists(atPath: "/tmp/.X\(number)-lock") {
      number += 1
    }
    self.number = number
    server = try ChildProcess(
      Self.program, [":\(number)", "-nolisten", "tcp", "-screen", "0", "640x480x24"], standardOutput: .null,
      standardError: .file(directory + "/xvfb.log"))
    let deadline = Date().addingTimeInterval(10)
    while !FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\(number)") {
      guard Date() < deadline, server.isRunning else {
        server.terminate(grace: 1)
        throw HarnessError("Xvfb :\(number) did not start (\(directory)/xvfb.log)")
      }
      usleep(20_000)
    }
  }

  func stop() { server.terminate(grace: 2) }
  deinit { stop() }
}
