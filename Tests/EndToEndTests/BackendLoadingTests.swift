import CuePosix
import DaemonTestSupport
import Foundation
import Testing

/// The sound-server client libraries are loaded when their backend is chosen, libsndfile at the
/// first Ogg or WAV file and libFLAC at the first FLAC file, not at start: what the running daemon
/// maps (/proc/PID/maps), and what it says when the library is missing.
@Suite("Output backends loaded when chosen", .serialized)
struct BackendLoadingTests {
  /// The file names of the shared objects `pid` maps.
  static func mappedLibraries(_ pid: Int32) throws -> Set<String> {
    // Read to the end: /proc files say size 0, and a read sized by stat stops after the first page.
    let file = try #require(FileHandle(forReadingAtPath: "/proc/\(pid)/maps"))
    defer { try? file.close() }
    let maps = String(decoding: try file.readToEnd() ?? Data(), as: UTF8.self)
    return Set(
      maps.split(separator: "\n").compactMap { line in
        guard let path = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst(5).first,
          path.contains(".so")
        else { return nil }
        return String(path.split(separator: "/").last ?? path)
      })
  }

  /// What a daemon on ALSA or the null device must not map: the sound-server clients and what
  /// libpulse pulls in.
  static let unwanted = ["libpulse", "libpipewire", "libX11", "libxcb", "libdbus"]

  static func expectNoSoundServerClient(_ pid: Int32, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let libraries = try mappedLibraries(pid)
    #expect(libraries.contains { $0.hasPrefix("libc.so") }, "read no libraries from /proc/\(pid)/maps", sourceLocation: sourceLocation)
    for library in libraries where unwanted.contains(where: { library.hasPrefix($0) }) {
      Issue.record("cued maps \(library)", sourceLocation: sourceLocation)
    }
  }

  @Test func theNullDeviceMapsNoSoundServerClient() throws {
    let dir = Harness.temporaryDirectory()
    let sounds = try Harness.soundDirectory(in: dir, ["pico": "tone-48000-mono.mp3"])
    let daemon = try DaemonProcess(
      socket: dir + "/cued.sock", arguments: ["--sounds", sounds, "--device", "null"], logPath: dir + "/cued.log")
    defer { daemon.stop() }
    #expect(try daemon.cuectl(["play", "pico", "--wait"]).status == 0)
    try Self.expectNoSoundServerClient(daemon.pid)
  }

  /// An ALSA `file` PCM, opened by a cue: libasound is there, the sound-server clients are not.
  /// The configuration is the PCM alone: the stock one reads /etc/alsa/conf.d, where the pulseaudio
  /// package's 99-pulse.conf hook makes libasound itself load libpulse (through
  /// libasound_module_conf_pulse.so), whichever program reads it.
  @Test func anAlsaDeviceMapsNoSoundServerClient() throws {
    let dir = Harness.temporaryDirectory()
    let sounds = try Harness.soundDirectory(in: dir, ["pico": "tone-48000-mono.mp3"])
    try """
      pcm.capture { type file slave.pcm { type null } file "\(dir)/out.raw" format "raw" perm 0644 }
      """.write(toFile: dir + "/asound.conf", atomically: true, encoding: .utf8)
    let daemon = try DaemonProcess(
      socket: dir + "/cued.sock", arguments: ["--sounds", sounds, "--device", "capture", "--idle-timeout", "5"],
      environment: ["ALSA_CONFIG_PATH": dir + "/asound.conf"], logPath: dir + "/cued.log")
    defer { daemon.stop() }
    let played = try daemon.cuectl(["play", "pico", "--wait"])
    #expect(played.status == 0, "\(played.stderr)")
    // The file PCM is unpaced: the idle window may have closed it again already; the file says it opened.
    #expect(((try? FileManager.default.attributesOfItem(atPath: dir + "/out.raw")[.size] as? Int) ?? 0) > 0, "\(daemon.log)")
    #expect(try Self.mappedLibraries(daemon.pid).contains { $0.hasPrefix("libasound") })
    try Self.expectNoSoundServerClient(daemon.pid)
  }

  /// Chosen, the PulseAudio backend loads libpulse when it opens, and plays through it.
  @Test func thePulseAudioBackendLoadsLibpulse() throws {
    let dir = Harness.temporaryDirectory()
    let pulse = try PulseServer(directory: dir)
    let sounds = try Harness.soundDirectory(in: dir, ["pico": "tone-48000-mono.mp3"])
    let daemon = try DaemonProcess(
      socket: dir + "/cued.sock", arguments: ["--sounds", sounds, "--device", "pulseaudio:" + pulse.sink, "--idle-timeout", "5"],
      environment: pulse.environment, logPath: dir + "/cued.log")
    defer { daemon.stop() }
    let played = try daemon.cuectl(["play", "pico", "--wait"])
    #expect(played.status == 0, "\(played.stderr)")
    #expect(try daemon.deviceState() == "open")
    let libraries = try Self.mappedLibraries(daemon.pid)
    #expect(libraries.contains { $0.hasPrefix("libpulse.so") }, "\(libraries.sorted())")
    #expect(!libraries.contains { $0.hasPrefix("libpipewire") }, "\(libraries.sorted())")
  }

  /// A directory whose `libpulse.so.0`, `libpipewire-0.3.so.0`, `libsndfile.so.1` and `libFLAC.so.12`
  /// are empty files: with it first on LD_LIBRARY_PATH, dlopen finds them and fails ("file too
  /// short"), as for a library not installed.
  static func brokenLibraries(in dir: String) throws -> String {
    let broken = dir + "/broken-lib"
    try FileManager.default.createDirectory(atPath: broken, withIntermediateDirectories: true)
    for name in ["libpulse.so.0", "libpipewire-0.3.so.0", "libsndfile.so.1", "libFLAC.so.12"] {
      #expect(FileManager.default.createFile(atPath: broken + "/" + name, contents: Data()))
    }
    return broken
  }

  @Test(arguments: [
    ("pulseaudio", "libpulse.so.0", "libpulse0"), ("pipewire", "libpipewire-0.3.so.0", "libpipewire-0.3-0"),
  ])
  func aMissingClientLibraryStopsTheStartWithWhatToInstall(device: String, library: String, package: String) throws {
    let dir = Harness.temporaryDirectory()
    let result = try run(
      TestPaths.cued, ["--socket", dir + "/cued.sock", "--device", device, "--realtime-priority", "0"],
      environment: ["LD_LIBRARY_PATH": try Self.brokenLibraries(in: dir), "XDG_CONFIG_HOME": "/nonexistent/cued-tests"],
      timeout: 10)
    #expect(result.status == 1, "\(result.stderr)")
    #expect(result.stderr.contains("load \(library) failed"), "\(result.stderr)")
    #expect(result.stderr.contains("install the package \(package)"), "\(result.stderr)")
    #expect(result.stderr.contains("--device alsa or --device null"), "\(result.stderr)")
    #expect(!FileManager.default.fileExists(atPath: dir + "/cued.sock"), "it stopped before serving")
  }

  /// `auto` counts a server whose client library is missing as not there, and goes on to ALSA.
  @Test func autoGoesOnToAlsaWhenTheClientLibrariesAreMissing() throws {
    let dir = Harness.temporaryDirectory()
    try """
      </usr/share/alsa/alsa.conf>
      pcm.!default { type file slave.pcm "null" file "\(dir)/out.raw" format "raw" perm 0644 }
      """.write(toFile: dir + "/asound.conf", atomically: true, encoding: .utf8)
    let sounds = try Harness.soundDirectory(in: dir, ["pico": "tone-48000-mono.mp3"])
    let daemon = try DaemonProcess(
      socket: dir + "/cued.sock", arguments: ["--sounds", sounds, "--device", "auto"],
      environment: ["LD_LIBRARY_PATH": try Self.brokenLibraries(in: dir), "ALSA_CONFIG_PATH": dir + "/asound.conf"],
      logPath: dir + "/cued.log")
    defer { daemon.stop() }
    #expect(try daemon.cuectl(["play", "pico", "--wait"]).status == 0)
    let device = try #require(daemon.status()["device"] as? [String: Any])
    #expect(device["backend"] as? String == "alsa", "\(device)")
    #expect(device["name"] as? String == "default", "\(device)")
    try Self.expectNoSoundServerClient(daemon.pid)
  }

  /// libsndfile (and the codecs and encoders it links) is loaded at the first Ogg or WAV cue: a
  /// daemon of MP3 cues never maps it, nor libFLAC.
  @Test func libsndfileIsLoadedAtTheFirstFileThatIsNotAnMP3() throws {
    let dir = Harness.temporaryDirectory()
    let mp3Only = try Harness.soundDirectory(in: dir + "/mp3", ["pico": "tone-48000-mono.mp3"])
    let plain = try DaemonProcess(
      socket: dir + "/a.sock", arguments: ["--sounds", mp3Only, "--device", "null"], logPath: dir + "/a.log")
    #expect(try plain.cuectl(["play", "pico", "--wait"]).status == 0)
    let plainLibraries = try Self.mappedLibraries(plain.pid)
    plain.stop()
    #expect(!plainLibraries.contains { $0.hasPrefix("libsndfile") || $0.hasPrefix("libvorbisenc") || $0.hasPrefix("libFLAC") }, "\(plainLibraries)")

    let mixed = try Harness.soundDirectory(in: dir + "/mixed", ["pico": "tone-48000-mono.mp3", "bell": "tone-48000-stereo.ogg"])
    let daemon = try DaemonProcess(
      socket: dir + "/b.sock", arguments: ["--sounds", mixed, "--device", "null"], logPath: dir + "/b.log")
    defer { daemon.stop() }
    #expect(try daemon.cuectl(["play", "bell", "--wait"]).status == 0)
    #expect(try Self.mappedLibraries(daemon.pid).contains { $0.hasPrefix("libsndfile.so") })
  }

  /// libFLAC is loaded at the first FLAC file, and FLAC has one decoder: a daemon of MP3 and FLAC
  /// cues maps libFLAC and not libsndfile.
  @Test func libFLACIsLoadedAtTheFirstFLACFileAndLibsndfileIsNot() throws {
    let dir = Harness.temporaryDirectory()
    let sounds = try Harness.soundDirectory(in: dir, ["pico": "tone-48000-mono.mp3"])
    try FileManager.default.copyItem(atPath: Harness.fixture("tone-44100-32bit.flac"), toPath: sounds + "/deep.flac")
    let daemon = try DaemonProcess(
      socket: dir + "/cued.sock", arguments: ["--sounds", sounds, "--device", "null"], logPath: dir + "/cued.log")
    defer { daemon.stop() }
    #expect(try daemon.cuectl(["play", "deep", "--wait"]).status == 0)
    let libraries = try Self.mappedLibraries(daemon.pid)
    #expect(libraries.contains { $0.hasPrefix("libFLAC.so") }, "\(libraries.sorted())")
    #expect(!libraries.contains { $0.hasPrefix("libsndfile") }, "\(libraries.sorted())")
  }

  /// Without libsndfile an Ogg cue, and without libFLAC a FLAC cue, is skipped with what to
  /// install; the MP3 cues play.
  @Test func withoutLibsndfileOrLibFLACOggAndFLACCuesAreSkippedWithWhatToInstall() throws {
    let dir = Harness.temporaryDirectory()
    let sounds = try Harness.soundDirectory(
      in: dir, ["pico": "tone-48000-mono.mp3", "bell": "tone-48000-stereo.ogg", "deep": "tone-44100-32bit.flac"])
    let daemon = try DaemonProcess(
      socket: dir + "/cued.sock", arguments: ["--sounds", sounds, "--device", "null"],
      environment: ["LD_LIBRARY_PATH": try Self.brokenLibraries(in: dir)], logPath: dir + "/cued.log")
    defer { daemon.stop() }
    #expect(try daemon.cuectl(["play", "pico", "--wait"]).status == 0)
    #expect(try daemon.cuectl(["play", "bell"]).status != 0)
    #expect(try daemon.cuectl(["play", "deep"]).status != 0)
    #expect(daemon.log.contains("bell.mp3") && daemon.log.contains("deep.mp3"), "\(daemon.log)")
    #expect(daemon.log.contains("libsndfile cannot be loaded") && daemon.log.contains("install the package libsndfile1"), "\(daemon.log)")
    #expect(daemon.log.contains("libFLAC cannot be loaded") && daemon.log.contains("install the package libflac12"), "\(daemon.log)")
  }
}
