import CuePosix
import CueProtocol
import DaemonTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A desktop's sound settings of the test's own, read by the real GLib: the fixture schemas
/// (Tests/Fixtures/desktop-schemas, GNOME's and MATE's two keys) compiled into a private directory
/// that `GSETTINGS_SCHEMA_DIR` puts first, GLib's keyfile backend or dconf on a private session bus
/// under a private `XDG_CONFIG_HOME`, and sound themes under a private data home (and no system
/// data directory, so the machine's themes and schemas stay out). `gsettings` is the real one,
/// run in the same environment, as the user's settings panel writes the same keys.
final class PrivateDesktop {
  static let gsettings = "/usr/bin/gsettings"
  static let compiler = "/usr/bin/glib-compile-schemas"
  static let available = [gsettings, compiler].allSatisfy { FileManager.default.isExecutableFile(atPath: $0) }
  static let dconfAvailable =
    available && ["/usr/bin/dbus-daemon", "/usr/libexec/dconf-service"].allSatisfy { FileManager.default.isExecutableFile(atPath: $0) }
    && FileManager.default.fileExists(atPath: "/usr/share/dbus-1/services/ca.desrt.dconf.service")
    && ((try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib")) ?? []).contains {
      FileManager.default.fileExists(atPath: "/usr/lib/\($0)/gio/modules/libdconfsettings.so")
    }

  let directory: String
  private(set) var environment: [String: String]
  private var bus: ChildProcess? = nil

  enum Backend: String {
    case keyfile, dconf
  }

  /// `schemas`: a directory of `.gschema.xml` files to compile (the fixtures by default).
  /// `namesBackend`: `GSETTINGS_BACKEND` names the backend (which cued takes as asking for the
  /// desktop's settings, session or not); without it GLib picks dconf, and cued follows the desktop
  /// only in a session (a session bus and `XDG_CURRENT_DESKTOP`). `bus`: the dconf backend's
  /// session bus is started now (else `startSessionBus()` starts it later, at the same address).
  init(
    directory: String, backend: Backend = .keyfile, currentDesktop: String = "",
    schemas: String = TestPaths.repositoryRoot + "/Tests/Fixtures/desktop-schemas", namesBackend: Bool = true, bus: Bool = true
  ) throws {
    self.directory = directory
    for sub in ["schemas", "config", "data/sounds", "none", "run"] {
      try FileManager.default.createDirectory(atPath: directory + "/" + sub, withIntermediateDirectories: true)
    }
    chmod(directory + "/run", 0o700)
    let compiled = try run(Self.compiler, ["--strict", "--targetdir=" + directory + "/schemas", schemas])
    guard compiled.status == 0 else { throw HarnessError("glib-compile-schemas failed: \(compiled.stderr)") }
    environment = [
      "GSETTINGS_SCHEMA_DIR": directory + "/schemas", "XDG_CONFIG_HOME": directory + "/config", "XDG_RUNTIME_DIR": directory + "/run",
      "XDG_DATA_HOME": directory + "/data", "XDG_DATA_DIRS": directory + "/none", "XDG_CURRENT_DESKTOP": currentDesktop,
      "GSETTINGS_BACKEND": backend.rawValue, "DBUS_SESSION_BUS_ADDRESS": "unix:path=" + directory + "/no-bus",
    ]
    if backend == .dconf { environment["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=" + directory + "/bus" }
    if !namesBackend { environment["GSETTINGS_BACKEND"] = nil }
    if backend == .dconf && bus { try startSessionBus() }
  }

  /// A session bus of its own that activates the real dconf-service (it writes the private
  /// `XDG_CONFIG_HOME/dconf/user`, and tells cued's GLib of each change over the bus).
  func startSessionBus() throws {
    let address = "unix:path=" + directory + "/bus"
    try """
      <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
       "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
      <busconfig>
        <type>session</type>
        <listen>\(address)</listen>
        <auth>EXTERNAL</auth>
        <servicedir>/usr/share/dbus-1/services</servicedir>
        <policy context="default">
          <allow send_destination="*" eavesdrop="true"/>
          <allow eavesdrop="true"/>
          <allow own="*"/>
        </policy>
      </busconfig>
      """.write(toFile: directory + "/session.conf", atomically: true, encoding: .utf8)
    // dbus-daemon hands its environment to the services it starts: dconf-service's files are the test's.
    bus = try ChildProcess(
      "/usr/bin/dbus-daemon", ["--config-file=" + directory + "/session.conf", "--nofork", "--nopidfile"], environment: environment,
      standardOutput: .null, standardError: .file(directory + "/dbus-daemon.log", append: true))
    let deadline = Date().addingTimeInterval(10)
    while !FileManager.default.fileExists(atPath: directory + "/bus") {
      guard Date() < deadline else { throw HarnessError("the private session bus did not come up") }
      usleep(10_000)
    }
  }

  /// `gsettings set SCHEMA KEY VALUE` (a GVariant: `'Name'`, `false`), in this desktop.
  func set(_ key: String, _ value: String, schema: String = "org.gnome.desktop.sound") throws {
    let result = try run(Self.gsettings, ["set", schema, key, value], environment: environment)
    guard result.status == 0 else { throw HarnessError("gsettings set \(key) \(value) failed: \(result.stderr)") }
  }

  /// A sound theme `name` in the data home whose `bell` is a copy of `fixture`; the file's path.
  @discardableResult
  func theme(_ name: String, bell fixture: String) throws -> String {
    let root = directory + "/data/sounds/" + name
    try FileManager.default.createDirectory(atPath: root + "/stereo", withIntermediateDirectories: true)
    try "[Sound Theme]\nName=\(name)\nDirectories=stereo\n[stereo]\nOutputProfile=stereo\n".write(
      toFile: root + "/index.theme", atomically: true, encoding: .utf8)
    let file = root + "/stereo/bell." + (fixture as NSString).pathExtension
    try FileManager.default.copyItem(atPath: TestPaths.fixture(fixture), toPath: file)
    return file
  }

  func stop() {
    _ = bus?.terminate(grace: 2)
    bus = nil
  }

  deinit { stop() }
}

@Suite("The desktop's sound settings, through the real GLib", .serialized)
struct DesktopSettingsTests {
  static func start(_ desktop: PrivateDesktop, _ arguments: [String] = [], config: String? = nil) throws -> DaemonProcess {
    let sounds = try Harness.soundDirectory(in: desktop.directory, ["pico": "tone-48000-mono.mp3"])
    return try DaemonProcess(
      socket: desktop.directory + "/cued.sock",
      arguments: ["--sounds", sounds, "--device", "null"] + (config.map { ["--config", $0] } ?? ["--no-config"]) + arguments,
      environment: desktop.environment, logPath: desktop.directory + "/cued.log")
  }

  static func soundTheme(_ daemon: DaemonProcess) throws -> [String: Any] {
    try #require(try daemon.status()["soundTheme"] as? [String: Any])
  }

  /// Polls `status` until its `soundTheme` satisfies `done` (10 s at most): the change is heard
  /// on cued's desktop thread and applied by its control loop, not at once.
  static func waitForTheme(_ daemon: DaemonProcess, _ done: ([String: Any]) -> Bool) throws -> [String: Any] {
    let deadline = Date().addingTimeInterval(10)
    while true {
      let theme = try soundTheme(daemon)
      if done(theme) { return theme }
      guard Date() < deadline else { throw HarnessError("soundTheme is still \(theme)") }
      usleep(20_000)
    }
  }

  static func maps(_ pid: Int32, _ prefix: String) throws -> Bool {
    try BackendLoadingTests.mappedLibraries(pid).contains { $0.hasPrefix(prefix) }
  }

  /// GLib's keyfile backend: it watches `XDG_CONFIG_HOME/glib-2.0/settings/keyfile`.
  @Test(.enabled(if: PrivateDesktop.available, "needs gsettings and glib-compile-schemas (libglib2.0-bin)"))
  func theDesktopsThemeAndSwitchAreFollowedAsTheyChange() throws {
    try Self.follow(.keyfile)
  }

  /// dconf, as on a GNOME desktop: dconf-service on the session bus writes, cued's GLib hears.
  @Test(.enabled(if: PrivateDesktop.dconfAvailable, "needs dbus-daemon, dconf-service and dconf-gsettings-backend"))
  func theDesktopsThemeAndSwitchAreFollowedThroughDconf() throws {
    try Self.follow(.dconf)
  }

  static func follow(_ backend: PrivateDesktop.Backend) throws {
    let desktop = try PrivateDesktop(directory: Harness.temporaryDirectory(), backend: backend)
    defer { desktop.stop() }
    let freedesktopBell = try desktop.theme("freedesktop", bell: "tone-48000-mono.wav")
    let testBell = try desktop.theme("Test", bell: "tone-48000-stereo.ogg")
    let daemon = try start(desktop)
    defer { daemon.stop() }
    // The schema's defaults: freedesktop, event sounds on.
    let first = try Self.soundTheme(daemon)
    #expect(first["name"] as? String == "freedesktop" && first["source"] as? String == "desktop", "\(first)")
    #expect(first["eventSounds"] as? Bool == true && first["schema"] as? String == "org.gnome.desktop.sound", "\(first)")
    #expect(try Self.maps(daemon.pid, "libgio-2.0"))
    let client = try ProtocolClient(socket: daemon.socket)
    #expect(try client.request("play", [("event", "bell")])["file"] == .string(freedesktopBell))

    // The user picks another theme: the next play resolves in it, without a reload.
    try desktop.set("theme-name", "'Test'")
    _ = try Self.waitForTheme(daemon) { $0["name"] as? String == "Test" }
    let played = try client.request("play", [("event", "bell")])
    #expect(played["file"] == .string(testBell) && played["played"] == true, "\(played)")
    #expect(daemon.log.contains("sound theme: Test (the desktop's, org.gnome.desktop.sound), event sounds on"), "\(daemon.log)")

    // Event sounds off: events are silent (and say why), cues still sound.
    try desktop.set("event-sounds", "false")
    _ = try Self.waitForTheme(daemon) { $0["eventSounds"] as? Bool == false }
    let silent = try client.request("play", [("event", "bell"), ("notify", true)])
    #expect(silent["played"] == false && silent["reason"] == "event-sounds-off", "\(silent)")
    let finished = try client.waitForEvent("finished")
    #expect(finished["reason"] == "event-sounds-off" && finished["voice"] == silent["voice"], "\(finished)")
    #expect(try client.request("play", [("cue", "pico")])["played"] == true)
    let status = try daemon.status()
    #expect((status["silenced"] as? [String: Any])?["event-sounds-off"] as? Int == 1, "\(status)")
    #expect(try daemon.cuectl(["status"]).stdout.contains("theme:     Test, the desktop's (org.gnome.desktop.sound); event sounds off"))

    // And on again.
    try desktop.set("event-sounds", "true")
    _ = try Self.waitForTheme(daemon) { $0["eventSounds"] as? Bool == true }
    #expect(try client.request("play", [("event", "bell")])["played"] == true)
  }

  /// Without a schema for the desktop's sound settings cued plays from freedesktop, and never
  /// loads GLib: the compiled schemas are looked at before.
  @Test func withoutTheSchemaItIsFreedesktopAndGLibIsNotLoaded() throws {
    let dir = Harness.temporaryDirectory()
    try FileManager.default.createDirectory(atPath: dir + "/data", withIntermediateDirectories: true)
    let sounds = try Harness.soundDirectory(in: dir, ["pico": "tone-48000-mono.mp3"])
    let daemon = try DaemonProcess(
      socket: dir + "/cued.sock", arguments: ["--sounds", sounds, "--device", "null"],
      environment: ["GSETTINGS_SCHEMA_DIR": "", "XDG_DATA_HOME": dir + "/data", "XDG_DATA_DIRS": dir + "/none"],
      logPath: dir + "/cued.log")
    defer { daemon.stop() }
    let theme = try Self.soundTheme(daemon)
    #expect(theme["name"] as? String == "freedesktop" && theme["source"] as? String == "default", "\(theme)")
    #expect(theme["eventSounds"] as? Bool == true && theme["schema"] == nil, "\(theme)")
    #expect(daemon.log.contains("the desktop's sound settings are not followed: no GSettings schema for them is installed"), "\(daemon.log)")
    for library in ["libgio-2.0", "libgobject-2.0", "libglib-2.0"] {
      #expect(try !Self.maps(daemon.pid, library), "cued maps \(library)")
    }
  }

  /// A named theme is cued's whole choice: the desktop's theme and its switch are not read.
  @Test(.enabled(if: PrivateDesktop.available, "needs gsettings and glib-compile-schemas (libglib2.0-bin)"))
  func aNamedThemePinsItAndReadsNothingFromTheDesktop() throws {
    let desktop = try PrivateDesktop(directory: Harness.temporaryDirectory())
    defer { desktop.stop() }
    let freedesktopBell = try desktop.theme("freedesktop", bell: "tone-48000-mono.wav")
    try desktop.theme("Test", bell: "tone-48000-stereo.ogg")
    try desktop.set("theme-name", "'Test'")
    try desktop.set("event-sounds", "false")
    let daemon = try Self.start(desktop, ["--sound-theme", "freedesktop"])
    defer { daemon.stop() }
    let theme = try Self.soundTheme(daemon)
    #expect(theme["name"] as? String == "freedesktop" && theme["source"] as? String == "config", "\(theme)")
    #expect(theme["eventSounds"] as? Bool == true, "\(theme)")
    let client = try ProtocolClient(socket: daemon.socket)
    let played = try client.request("play", [("event", "bell")])
    #expect(played["file"] == .string(freedesktopBell) && played["played"] == true, "\(played)")
    #expect(try !Self.maps(daemon.pid, "libgio-2.0"))
  }

  /// Pinned in the config file, then `desktop` at a reload: the desktop is followed from then on.
  @Test(.enabled(if: PrivateDesktop.available, "needs gsettings and glib-compile-schemas (libglib2.0-bin)"))
  func aReloadToDesktopStartsFollowingIt() throws {
    let desktop = try PrivateDesktop(directory: Harness.temporaryDirectory())
    defer { desktop.stop() }
    let testBell = try desktop.theme("Test", bell: "tone-48000-stereo.ogg")
    try desktop.set("theme-name", "'Test'")
    let config = desktop.directory + "/cued.toml"
    try "sound-theme = \"freedesktop\"\n".write(toFile: config, atomically: true, encoding: .utf8)
    let daemon = try Self.start(desktop, config: config)
    defer { daemon.stop() }
    #expect(try Self.soundTheme(daemon)["source"] as? String == "config")
    try "sound-theme = \"desktop\"\n".write(toFile: config, atomically: true, encoding: .utf8)
    #expect(try daemon.cuectl(["reload"]).status == 0)
    let theme = try Self.soundTheme(daemon)
    #expect(theme["name"] as? String == "Test" && theme["source"] as? String == "desktop", "\(theme)")
    let client = try ProtocolClient(socket: daemon.socket)
    #expect(try client.request("play", [("event", "bell")])["file"] == .string(testBell))
  }

  /// On MATE its own schema is read (its event sounds are off until the user turns them on).
  @Test(.enabled(if: PrivateDesktop.available, "needs gsettings and glib-compile-schemas (libglib2.0-bin)"))
  func onMATEItsOwnSchemaIsRead() throws {
    let desktop = try PrivateDesktop(directory: Harness.temporaryDirectory(), currentDesktop: "MATE")
    defer { desktop.stop() }
    let daemon = try Self.start(desktop)
    defer { daemon.stop() }
    let theme = try Self.soundTheme(daemon)
    #expect(theme["schema"] as? String == "org.mate.sound" && theme["eventSounds"] as? Bool == false, "\(theme)")
    try desktop.set("event-sounds", "true", schema: "org.mate.sound")
    _ = try Self.waitForTheme(daemon) { $0["eventSounds"] as? Bool == true }
  }

  /// A schema of that name whose keys have other types is not read (GSettings would abort cued):
  /// cued says why and plays from freedesktop.
  @Test(.enabled(if: PrivateDesktop.available, "needs gsettings and glib-compile-schemas (libglib2.0-bin)"))
  func aSchemaWhoseKeysHaveOtherTypesIsNotRead() throws {
    let dir = Harness.temporaryDirectory()
    let schemas = dir + "/odd-schemas"
    try FileManager.default.createDirectory(atPath: schemas, withIntermediateDirectories: true)
    try """
      <schemalist>
        <schema id="org.gnome.desktop.sound" path="/org/gnome/desktop/sound/">
          <key name="event-sounds" type="b"><default>true</default></key>
          <key name="theme-name" type="i"><default>7</default></key>
        </schema>
      </schemalist>
      """.write(toFile: schemas + "/org.gnome.desktop.sound.gschema.xml", atomically: true, encoding: .utf8)
    let desktop = try PrivateDesktop(directory: dir, schemas: schemas)
    defer { desktop.stop() }
    let daemon = try Self.start(desktop)
    defer { daemon.stop() }
    let theme = try Self.soundTheme(daemon)
    #expect(theme["name"] as? String == "freedesktop" && theme["source"] as? String == "default", "\(theme)")
    #expect(daemon.log.contains("the schema org.gnome.desktop.sound has theme-name of type 'i', not 's'"), "\(daemon.log)")
  }

  // MARK: - Only where there is a desktop

  static func mapsGLib(_ daemon: DaemonProcess) throws -> [String] {
    try ["libgio-2.0", "libgobject-2.0", "libglib-2.0"].filter { try Self.maps(daemon.pid, $0) }
  }

  /// The schema installed, but no session bus (a server, a container, a CI runner): the desktop is
  /// not followed, GLib is never loaded, and status says why.
  @Test(.enabled(if: PrivateDesktop.available, "needs gsettings and glib-compile-schemas (libglib2.0-bin)"))
  func withoutADesktopSessionGLibIsNotLoaded() throws {
    let desktop = try PrivateDesktop(directory: Harness.temporaryDirectory(), currentDesktop: "GNOME", namesBackend: false)
    let daemon = try Self.start(desktop)
    defer { daemon.stop() }
    let theme = try Self.soundTheme(daemon)
    let why = "no desktop session: no session bus (no socket at DBUS_SESSION_BUS_ADDRESS=unix:path=\(desktop.directory)/no-bus)"
    #expect(theme["name"] as? String == "freedesktop" && theme["source"] as? String == "default", "\(theme)")
    #expect(theme["reason"] as? String == why, "\(theme)")
    #expect(daemon.log.contains("the desktop's sound settings are not followed: " + why), "\(daemon.log)")
    #expect(try daemon.cuectl(["status"]).stdout.contains("theme:     freedesktop (no desktop setting to follow: \(why))"))
    #expect(try Self.mapsGLib(daemon) == [])
  }

  /// The same box with `follow-desktop = "always"`: followed (and GLib loaded), because the config says so.
  @Test(.enabled(if: PrivateDesktop.available, "needs gsettings and glib-compile-schemas (libglib2.0-bin)"))
  func followDesktopAlwaysFollowsItWithoutASession() throws {
    let desktop = try PrivateDesktop(directory: Harness.temporaryDirectory(), namesBackend: false)
    let config = desktop.directory + "/cued.toml"
    try "follow-desktop = \"always\"\n".write(toFile: config, atomically: true, encoding: .utf8)
    let daemon = try Self.start(desktop, config: config)
    defer { daemon.stop() }
    let theme = try Self.soundTheme(daemon)
    #expect(theme["source"] as? String == "desktop" && theme["schema"] as? String == "org.gnome.desktop.sound", "\(theme)")
    #expect(theme["reason"] as? String == "follow-desktop = \"always\"", "\(theme)")
    #expect(try Self.maps(daemon.pid, "libgio-2.0"))
  }

  /// A user service started before the session bus: not followed at start; the bus comes up, and
  /// `cuectl reload` follows the desktop from then on, through dconf (GLib's own choice of backend).
  @Test(.enabled(if: PrivateDesktop.dconfAvailable, "needs dbus-daemon, dconf-service and dconf-gsettings-backend"))
  func aSessionThatComesLaterIsFollowedAtReload() throws {
    let desktop = try PrivateDesktop(
      directory: Harness.temporaryDirectory(), backend: .dconf, currentDesktop: "GNOME", namesBackend: false, bus: false)
    defer { desktop.stop() }
    try desktop.theme("Test", bell: "tone-48000-stereo.ogg")
    let daemon = try Self.start(desktop)
    defer { daemon.stop() }
    let before = try Self.soundTheme(daemon)
    #expect(before["source"] as? String == "default", "\(before)")
    #expect((before["reason"] as? String)?.hasPrefix("no desktop session: no session bus") == true, "\(before)")
    #expect(try Self.mapsGLib(daemon) == [])

    try desktop.startSessionBus()
    #expect(try daemon.cuectl(["reload"]).status == 0)
    let after = try Self.soundTheme(daemon)
    let bus = desktop.directory + "/bus"
    #expect(after["source"] as? String == "desktop" && after["name"] as? String == "freedesktop", "\(after)")
    #expect(after["reason"] as? String == "a desktop session: XDG_CURRENT_DESKTOP=GNOME, session bus \(bus)", "\(after)")
    #expect(try Self.maps(daemon.pid, "libdconfsettings"), "GLib chose dconf's backend")
    // Heard as it changes, as in any session.
    try desktop.set("theme-name", "'Test'")
    _ = try Self.waitForTheme(daemon) { $0["name"] as? String == "Test" }
  }
}
