import CueDecoding
import CuePosix
import DaemonBehaviours
import DaemonTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// libcanberra-cued.so (Sources/Plugins/CanberraCued) as applications meet it: the real libcanberra,
/// driven by Tests/Canberra/canberra-play.c with `CANBERRA_DRIVER=cued`, playing through the real
/// cued into a captured sink, and through libcanberra's pulse driver into a private PulseAudio
/// server when cued is not there.
///
/// libcanberra loads a driver only from its own directory (an absolute path compiled in, opened with
/// lt_dlopenext: no search path or environment variable moves it), so the tests copy the driver
/// there and remove it afterwards (`InstalledDriver`); that needs root.
@Suite("libcanberra through the cued driver", .serialized)
struct CanberraDriverTests {
  /// A theme event whose file is `tone`: 0.12 s of a 48 kHz mono WAV (Tests/Fixtures).
  static let tone = "tone-48000-mono.wav"

  /// libcanberra.so.0 is NEEDED, as by libcanberra's own drivers, so that the driver loads in a host
  /// that loaded libcanberra with local binding (CanberraHostTests); nothing else but libc and libm.
  /// Only the eight prefixed entry points are exported: libcanberra looks each up in the driver and
  /// its dependencies, where libcanberra's own unprefixed dispatchers would answer for a missing one.
  @Test func theDriverLinksLibcanberraAndExportsOnlyItsEightEntryPoints() throws {
    let driver = try CanberraRig.build().driver
    let needed = try run("/usr/bin/readelf", ["-d", driver]).stdout.split(separator: "\n").filter { $0.contains("(NEEDED)") }
    let libraries = needed.compactMap { line in line.split(separator: "[").last?.split(separator: "]").first.map(String.init) }
    #expect(
      libraries.contains("libcanberra.so.0") && Set(libraries).isSubset(of: ["libc.so.6", "libm.so.6", "libcanberra.so.0"]),
      "NEEDED: \(libraries)")
    let exported = try run("/usr/bin/nm", ["-D", "--defined-only", driver]).stdout.split(separator: "\n")
      .compactMap { $0.split(separator: " ").last.map(String.init) }.filter { !$0.hasPrefix("_") }
    let entryPoints = ["open", "destroy", "change_device", "change_props", "play", "cancel", "cache", "playing"].map { "cued_driver_" + $0 }
    #expect(exported.sorted() == entryPoints.sorted(), "exported: \(exported)")
  }

  @Test(.enabled(if: CanberraRig.canInstall, "needs root (the driver goes in libcanberra's directory) and libcanberra-dev"))
  func eventSoundsPlayThroughCuedAtTheirVolumeWithCompletions() throws {
    let rig = try CanberraRig()
    try rig.theme(["cued-test-tone": Harness.fixture(Self.tone)])
    let capture = try PacedCapture(cues: ["pico": "tone-48000-mono.mp3"], environment: rig.themeEnvironment)
    let output = try rig.play(
      [
        "name", "canberra-test", "open",
        "play", "1", "event.id=cued-test-tone", "media.role=event", "wait", "1",
        // -6.0206 dB is 0.5 to six decimals: the samples come out halved exactly.
        "play", "2", "event.id=cued-test-tone", "canberra.volume=-6.0206", "wait", "2",
        "play", "3", "event.id=no-such-sound",
        "play", "4", "event.id=cued-test-tone", "canberra.enable=0",
        // A name cued refuses as one is not found, as libcanberra finds no file for it.
        "play", "5", "event.id=../cued-test-tone",
        "play", "6", "event.id=cued-test-tone", "canberra.volume=loud",
        "cache", "event.id=cued-test-tone",
        "playing", "1",
      ], socket: capture.daemon.socket)
    #expect(
      output == [
        "open: Success", "play 1: Success", "finished 1: Success", "play 2: Success", "finished 2: Success",
        "play 3: File or data not found", "play 4: Sound disabled", "play 5: File or data not found", "play 6: Invalid argument",
        "cache: Success", "playing 1: 0",
      ], "\(output)")
    let samples = try capture.finish()
    let once = try AudioFileDecoder.decode(path: Harness.fixture(Self.tone)).buffer.toArray()
    let found = heard(once, in: samples)
    let first = try #require(found, "the tone is not in the capture")
    let halved = heard(once.map { $0 * 0.5 }, in: samples, from: first + once.count / 2)
    #expect(halved != nil, "the tone at half volume is not in the capture")
    let again = heard(once, in: samples, from: first + once.count / 2)
    #expect(again == nil, "the tone played at full volume twice")
  }

  /// ca_context_cache asks cued to `prepare` the sound: cued answers once it has decoded and kept
  /// the theme's file (its reply names the file and the decode's size), and the play that follows
  /// finds it decoded. A name the theme has no sound for is not found, as libcanberra says.
  @Test(.enabled(if: CanberraRig.canInstall, "needs root (the driver goes in libcanberra's directory) and libcanberra-dev"))
  func cacheDecodesTheSoundInCuedAheadOfItsFirstPlay() throws {
    let rig = try CanberraRig()
    try rig.theme(["cued-test-tone": Harness.fixture(Self.tone)])
    let capture = try PacedCapture(cues: ["pico": "tone-48000-mono.mp3"], environment: rig.themeEnvironment)
    let output = try rig.play(
      ["cache", "event.id=cued-test-tone", "play", "1", "event.id=cued-test-tone", "wait", "1", "cache", "event.id=no-such-sound"],
      socket: capture.daemon.socket)
    #expect(output == ["cache: Success", "play 1: Success", "finished 1: Success", "cache: File or data not found"], "\(output)")
    let samples = try capture.finish()
    let once = try AudioFileDecoder.decode(path: Harness.fixture(Self.tone)).buffer.toArray()
    #expect(heard(once, in: samples) != nil, "the cached sound is not in the capture")
    // What cued sent (its protocol log's "CONNECTION < LINE" lines): the prepare reply, with the
    // file it decoded, before the play's reply.
    let log = try String(contentsOfFile: capture.daemon.logPath + ".protocol.jsonl", encoding: .utf8)
    let sent: [[String: Any]] = log.split(separator: "\n").compactMap { line in
      guard let arrow = line.range(of: " < ") else { return nil }
      return try? JSONSerialization.jsonObject(with: Data(line[arrow.upperBound...].utf8)) as? [String: Any]
    }
    let prepared = sent.firstIndex { $0["bytes"] != nil }
    let played = sent.firstIndex { $0["played"] as? Bool == true }
    let file = rig.directory + "/data/sounds/freedesktop/stereo/cued-test-tone.wav"
    #expect(prepared.map { sent[$0]["file"] as? String } == file, "\(sent)")
    // Decoded: 48 kHz stereo float frames of the 0.12 s tone.
    #expect(prepared.map { sent[$0]["bytes"] as? Int } == once.count * 4, "\(sent)")
    #expect(prepared != nil && played != nil && prepared! < played!, "\(sent)")
  }

  @Test(.enabled(if: CanberraRig.canInstall, "needs root (the driver goes in libcanberra's directory) and libcanberra-dev"))
  func filesPlayThroughCuedByTheirPath() throws {
    let rig = try CanberraRig()
    try rig.theme([:])
    let tone = rig.directory + "/ding.wav"
    try FileManager.default.copyItem(atPath: Harness.fixture(Self.tone), toPath: tone)
    let notSound = rig.directory + "/notes.wav"
    try "not a sound\n".write(toFile: notSound, atomically: true, encoding: .utf8)
    // The same file by a name relative to canberra-play's working directory (this process's).
    let up = FileManager.default.currentDirectoryPath.split(separator: "/").map { _ in ".." }.joined(separator: "/")
    let relative = up + tone
    let capture = try PacedCapture(cues: ["pico": "tone-48000-mono.mp3"], environment: rig.themeEnvironment)
    let output = try rig.play(
      [
        "play", "1", "media.filename=" + relative, "wait", "1",
        // A theme without the event: the file plays instead, as libcanberra does.
        "play", "2", "event.id=no-such-sound", "media.filename=" + tone, "wait", "2",
        "play", "3", "media.filename=" + rig.directory + "/missing.wav",
        "play", "4", "media.filename=" + notSound,
      ], socket: capture.daemon.socket)
    #expect(
      output == [
        "play 1: Success", "finished 1: Success", "play 2: Success", "finished 2: Success", "play 3: File or data not found",
        "play 4: File or data corrupt",
      ], "\(output)")
    let samples = try capture.finish()
    let once = try AudioFileDecoder.decode(path: tone).buffer.toArray()
    let found = heard(once, in: samples)
    let first = try #require(found, "the file is not in the capture")
    let again = heard(once, in: samples, from: first + once.count / 2)
    #expect(again != nil, "the file played once, not twice")
  }

  @Test(.enabled(if: CanberraRig.canInstall, "needs root (the driver goes in libcanberra's directory) and libcanberra-dev"))
  func cancelStopsEverySoundOfItsIdAndSaysCanceled() throws {
    let rig = try CanberraRig()
    let long = rig.directory + "/long.wav"
    try writeSine(to: long, seconds: 2)
    try rig.theme(["cued-test-long": long])
    let capture = try PacedCapture(cues: ["pico": "tone-48000-mono.mp3"], environment: rig.themeEnvironment)
    let output = try rig.play(
      [
        "play", "7", "event.id=cued-test-long", "play", "7", "event.id=cued-test-long", "sleep", "300",
        "playing", "7", "cancel", "7", "playing", "7", "sleep", "200",
      ], socket: capture.daemon.socket)
    // Both plays of id 7 end canceled, from inside ca_context_cancel (before it returns), as the pulse driver does.
    #expect(
      output == [
        "play 7: Success", "play 7: Success", "playing 7: 1", "finished 7: Canceled", "finished 7: Canceled", "cancel 7: Success",
        "playing 7: 0",
      ], "\(output)")
    let samples = try capture.finish()
    let frames = samples.count / 2
    let sounding = (0..<frames).filter { samples[2 * $0] != 0 }
    let span = (sounding.last ?? 0) - (sounding.first ?? 0)
    // Heard, and cut (after about 0.3 s, with the stop's 8 ms fade) rather than played out for 2 s.
    #expect(span > 4_800 && span < 76_800, "sounded for \(span) frames")
  }

  /// The application's name reaches its `[clients.NAME]` ceiling, and `media.role` the group whose
  /// `roles` list it (the theme event has no `[cues.NAME]` group of its own).
  @Test(.enabled(if: CanberraRig.canInstall, "needs root (the driver goes in libcanberra's directory) and libcanberra-dev"))
  func aClientCeilingSilencesThatApplicationByItsNameAndARolesGroupHalvesItsSounds() throws {
    let rig = try CanberraRig()
    try rig.theme(["cued-test-tone": Harness.fixture(Self.tone)])
    let capture = try PacedCapture(
      cues: ["pico": "tone-48000-mono.mp3"],
      config: "[clients.quiet-app]\nceiling = \"silent\"\n[groups.quietroles]\nroles = [\"test\"]\nvolume = 0.5\n",
      environment: rig.themeEnvironment)
    // The same context renamed: the driver says hello again with the new name.
    let output = try rig.play(
      [
        "name", "quiet-app", "play", "1", "event.id=cued-test-tone",
        "name", "loud-app", "play", "2", "event.id=cued-test-tone", "wait", "2",
        "play", "3", "event.id=cued-test-tone", "media.role=test", "wait", "3",
        // A role cued would refuse as one is left out: the sound plays in the default group.
        "play", "4", "event.id=cued-test-tone", "media.role=not a role", "wait", "4",
      ], socket: capture.daemon.socket)
    #expect(
      output == [
        "play 1: Sound disabled", "play 2: Success", "finished 2: Success", "play 3: Success", "finished 3: Success",
        "play 4: Success", "finished 4: Success",
      ], "\(output)")
    #expect((try capture.daemon.status()["silenced"] as? [String: Any])?["level"] as? Int == 1)
    let samples = try capture.finish()
    let once = try AudioFileDecoder.decode(path: Harness.fixture(Self.tone)).buffer.toArray()
    let found = heard(once, in: samples)
    let first = try #require(found, "loud-app's tone is not in the capture")
    let halved = heard(once.map { $0 * 0.5 }, in: samples, from: first + once.count / 2)
    let half = try #require(halved, "the tone with media.role=test is not in the capture at half volume (its group's)")
    let again = heard(once, in: samples, from: first + once.count / 2)
    #expect(again.map { $0 > half } == true, "the tone with a role no group takes is not heard at full volume after the halved one")
    let more = heard(once, in: samples, from: (again ?? first) + once.count / 2)
    #expect(more == nil, "quiet-app was heard too")
  }

  @Test(.enabled(if: CanberraRig.hasPulseDriver, "needs root (the driver goes in libcanberra's directory), libcanberra-dev and libcanberra-pulse"))
  func withoutCuedTheNextDriverPlaysAndWhenCuedStopsItTakesOver() throws {
    let rig = try CanberraRig()
    try rig.theme(["cued-test-tone": Harness.fixture(Self.tone)])
    let long = rig.directory + "/long.wav"
    try writeSine(to: long, seconds: 2)
    try rig.theme(["cued-test-long": long])
    try FileManager.default.createDirectory(atPath: rig.directory + "/p", withIntermediateDirectories: true)
    let pulse = try PulseServer(directory: rig.directory + "/p")
    let recorder = try pulse.recordMonitor(to: rig.directory + "/monitor.f32")
    defer { recorder.terminate(grace: 1) }
    let once = try AudioFileDecoder.decode(path: Harness.fixture(Self.tone)).buffer.toArray()

    // No cued at all: libcanberra's pulse driver plays, and the callback says so.
    let alone = try rig.play(["play", "1", "event.id=cued-test-tone", "wait", "1"], socket: rig.directory + "/none.sock", pulse: pulse)
    #expect(alone == ["play 1: Success", "finished 1: Success"], "\(alone)")
    // "cued:" names no next driver: without cued, nothing plays.
    let nothing = try rig.play(["play", "1", "event.id=cued-test-tone"], socket: rig.directory + "/none.sock", pulse: pulse, driver: "cued:")
    #expect(nothing == ["play 1: Not available"], "\(nothing)")

    // cued first (it plays on the null device, out of this capture); stopped while a sound plays,
    // the sound ends canceled and the next one goes to the pulse driver.
    let sounds = try Harness.soundDirectory(in: rig.directory, ["pico": "tone-48000-mono.mp3"])
    let daemon = try DaemonProcess(
      socket: rig.directory + "/cued.sock", arguments: ["--sounds", sounds, "--device", "null"], environment: rig.themeEnvironment,
      logPath: rig.directory + "/cued.log")
    defer { daemon.stop() }
    let stopped = rig.directory + "/cued-stopped"
    let session = try rig.start(
      ["play", "1", "event.id=cued-test-tone", "wait", "1", "play", "2", "event.id=cued-test-long", "until", stopped, "play", "3",
       "event.id=cued-test-tone", "wait", "3"], socket: daemon.socket, pulse: pulse)
    try session.waitFor("play 2: Success")
    #expect(try daemon.status()["plays"] as? Int == 2, "cued did not play the first two sounds")
    #expect(daemon.stop() == 0)
    try "".write(toFile: stopped, atomically: true, encoding: .utf8)
    let output = try session.finish()
    // (The reader thread may report play 2's end just after play 3 went to the pulse driver.)
    let expected = ["play 1: Success", "finished 1: Success", "play 2: Success", "finished 2: Canceled", "play 3: Success", "finished 3: Success"]
    #expect(output.sorted() == expected.sorted() && output.prefix(3) == expected.prefix(3) && output.last == expected.last, "\(output)")

    usleep(300_000)
    recorder.terminate(grace: 2)
    let samples = try readFloats(rig.directory + "/monitor.f32")
    // The monitor heard the tone twice (the pulse driver's plays: alone, then after cued stopped).
    let found = heard(once, in: samples)
    let first = try #require(found, "the pulse driver's tone is not on the monitor")
    let again = heard(once, in: samples, from: first + once.count / 2)
    #expect(again != nil, "the tone after cued stopped is not on the monitor")
  }
}

/// The frame of `capture` at or after `from` where `expected` is heard whole, sample for sample
/// (frameHolding), kept out of #expect so that a failure does not print the samples.
func heard(_ expected: [Float], in capture: [Float], from: Int = 0) -> Int? {
  frameHolding(expected, in: capture, from: from)
}

/// The driver and the test program, built by the Makefile (`make canberra canberra-play`), the
/// driver copied into libcanberra's directory for the test's life, and the test's sound theme.
final class CanberraRig {
  static let pluginDirectory = (try? run(Harness.repositoryRoot + "/packaging/install.sh", ["canberra-plugindir"]).stdout)?
    .trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
  static let canInstall = getuid() == 0 && FileManager.default.fileExists(atPath: "/usr/include/canberra.h")
  /// libcanberra's pulse driver, the one these tests fall over to.
  static let hasPulseDriver = canInstall && FileManager.default.fileExists(atPath: pluginDirectory + "/libcanberra-pulse.so")

  let directory = Harness.temporaryDirectory()
  let program: String
  private let installed: String
  private let saved: String

  /// `make canberra canberra-play`, once per test process.
  static func build() throws -> (driver: String, program: String) {
    let made = try run(
      "/usr/bin/make", ["-C", Harness.repositoryRoot, "-s", "canberra", "canberra-play"],
      environment: ["MAKEFLAGS": "", "MFLAGS": "", "MAKELEVEL": ""], timeout: 120)
    try #require(made.status == 0, "make canberra canberra-play failed:\n\(made.stdout)\(made.stderr)")
    let folder = Harness.repositoryRoot + "/.build/canberra"
    return (folder + "/libcanberra-cued.so", folder + "/canberra-play")
  }

  /// Copies the driver into libcanberra's directory for as long as this rig lives. A file a package
  /// owns there (a packaged cued's) is kept aside and put back; any other is a crashed run's copy.
  init() throws {
    let built = try Self.build()
    program = built.program
    installed = Self.pluginDirectory + "/libcanberra-cued.so"
    saved = installed + ".cued-test-saved"
    let packaged = (try? run("/usr/bin/dpkg-query", ["-S", installed]).status) == 0
    if packaged && !FileManager.default.fileExists(atPath: saved) { try FileManager.default.moveItem(atPath: installed, toPath: saved) }
    try? FileManager.default.removeItem(atPath: installed)
    try FileManager.default.copyItem(atPath: built.driver, toPath: installed)
  }

  deinit {
    try? FileManager.default.removeItem(atPath: installed)
    if FileManager.default.fileExists(atPath: saved) { try? FileManager.default.moveItem(atPath: saved, toPath: installed) }
  }

  /// A data home whose `freedesktop` theme has the given event names, each a copy of a file; the
  /// only theme cued and libcanberra find (no system data directories).
  var themeEnvironment: [String: String] { ["XDG_DATA_HOME": directory + "/data", "XDG_DATA_DIRS": directory + "/none"] }

  func theme(_ events: [String: String]) throws {
    let theme = directory + "/data/sounds/freedesktop"
    try FileManager.default.createDirectory(atPath: theme + "/stereo", withIntermediateDirectories: true)
    try "[Sound Theme]\nName=Freedesktop\nDirectories=stereo\n[stereo]\nOutputProfile=stereo\n".write(
      toFile: theme + "/index.theme", atomically: true, encoding: .utf8)
    for (name, file) in events {
      try FileManager.default.copyItem(atPath: file, toPath: theme + "/stereo/" + name + ".wav")
    }
  }

  func environment(socket: String, pulse: PulseServer?, driver: String = "cued") -> [String: String] {
    var environment = themeEnvironment
    environment["CANBERRA_DRIVER"] = driver
    environment["CUED_SOCKET"] = socket
    // The pulse driver's server (none: nothing answers there), and a home of the test's own for
    // libcanberra's lookup cache.
    environment.merge(pulse?.environment ?? ["PULSE_SERVER": "unix:" + directory + "/no-pulse", "HOME": directory]) { $1 }
    environment["XDG_CACHE_HOME"] = directory + "/cache"
    return environment
  }

  /// Runs canberra-play to its end; its output lines.
  func play(_ commands: [String], socket: String, pulse: PulseServer? = nil, driver: String = "cued") throws -> [String] {
    let result = try run(program, commands, environment: environment(socket: socket, pulse: pulse, driver: driver), timeout: 30)
    #expect(result.status == 0, "canberra-play: \(result.stderr)")
    return result.stdout.split(separator: "\n").map(String.init)
  }

  /// Starts canberra-play; the test acts while it runs.
  func start(_ commands: [String], socket: String, pulse: PulseServer? = nil) throws -> Session {
    try Session(program: program, commands: commands, environment: environment(socket: socket, pulse: pulse), directory: directory)
  }

  final class Session {
    let child: ChildProcess
    let outputPath: String

    init(program: String, commands: [String], environment: [String: String], directory: String) throws {
      outputPath = directory + "/canberra-play.out"
      child = try ChildProcess(
        program, commands, environment: environment, standardOutput: .file(outputPath), standardError: .file(directory + "/canberra-play.err"))
    }

    var lines: [String] { ((try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init) }

    func waitFor(_ line: String, timeout: Double = 10) throws {
      let deadline = Date().addingTimeInterval(timeout)
      while !lines.contains(line) {
        guard Date() < deadline else { throw HarnessError("canberra-play never printed '\(line)': \(lines)") }
        usleep(10_000)
      }
    }

    func finish(timeout: Double = 30) throws -> [String] {
      guard let status = child.wait(timeout: timeout) else {
        child.terminate(grace: 1)
        throw HarnessError("canberra-play did not finish: \(lines)")
      }
      #expect(status == 0)
      return lines
    }
  }
}

/// A 16-bit stereo WAV of a 440 Hz sine at a quarter of full scale, `seconds` long, at 48 kHz.
func writeSine(to path: String, seconds: Double) throws {
  let frames = Int(seconds * 48_000)
  var data = Data()
  func le<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) } }
  data.append(contentsOf: Array("RIFF".utf8))
  le(UInt32(36 + frames * 4))
  data.append(contentsOf: Array("WAVEfmt ".utf8))
  le(UInt32(16)); le(UInt16(1)); le(UInt16(2)); le(UInt32(48_000)); le(UInt32(48_000 * 4)); le(UInt16(4)); le(UInt16(16))
  data.append(contentsOf: Array("data".utf8))
  le(UInt32(frames * 4))
  for frame in 0..<frames {
    let sample = Int16(8192 * sin(2 * Double.pi * 440 * Double(frame) / 48_000))
    le(sample)
    le(sample)
  }
  try data.write(to: URL(fileURLWithPath: path))
}
