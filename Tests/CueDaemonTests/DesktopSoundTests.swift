import CuePosix
import CueProtocol
import Synchronization
import Testing

@testable import CueDaemon

/// `sound-theme = "desktop"`: the policy that turns the setting and the desktop's sound settings
/// into the theme and the event-sounds switch, which schema is read, and how the daemon follows a
/// change (without GLib: EndToEndTests' DesktopSettingsTests run the real one).
@Suite("The desktop's sound settings")
struct DesktopSoundTests {
  static let yaru = DesktopSoundSettings(themeName: "Yaru", eventSounds: true, schema: DesktopSoundSchemas.gnome)

  @Test func followingTheDesktopTakesItsThemeAndSwitch() {
    let on = SoundThemeChoice(configured: "desktop", desktop: Self.yaru)
    #expect(on.name == "Yaru" && on.source == .desktop && on.eventSounds && on.schema == "org.gnome.desktop.sound")
    var off = Self.yaru
    off.eventSounds = false
    let silent = SoundThemeChoice(configured: "desktop", desktop: off)
    #expect(silent.name == "Yaru" && !silent.eventSounds)
    #expect(silent.status == StatusReply.SoundTheme(name: "Yaru", source: .desktop, eventSounds: false, schema: "org.gnome.desktop.sound"))
  }

  @Test func withoutADesktopSettingItIsFreedesktop() {
    let choice = SoundThemeChoice(configured: "desktop", desktop: nil)
    #expect(choice.status == StatusReply.SoundTheme(name: "freedesktop", source: .default, eventSounds: true))
  }

  /// A theme of cued's own reads nothing from the desktop: its event-sounds switch included.
  @Test func aNamedThemePinsItAndIgnoresTheDesktop() {
    let off = DesktopSoundSettings(themeName: "Yaru", eventSounds: false, schema: DesktopSoundSchemas.gnome)
    for desktop in [nil, off] {
      let choice = SoundThemeChoice(configured: "freedesktop", desktop: desktop)
      #expect(choice.status == StatusReply.SoundTheme(name: "freedesktop", source: .config, eventSounds: true))
    }
  }

  @Test(arguments: ["", "../x", "a/b", ".", ".."])
  func aDesktopNameThatIsNoThemeNameGivesFreedesktop(name: String) {
    let choice = SoundThemeChoice(configured: "desktop", desktop: DesktopSoundSettings(themeName: name, eventSounds: true, schema: "s"))
    #expect(choice.name == "freedesktop" && choice.source == .desktop && choice.refusedName == name)
  }

  @Test func theDesktopPicksItsSchemaAndGNOMEsComesLast() {
    #expect(DesktopSoundSchemas.candidates(currentDesktop: nil) == ["org.gnome.desktop.sound"])
    #expect(DesktopSoundSchemas.candidates(currentDesktop: "ubuntu:GNOME") == ["org.gnome.desktop.sound"])
    #expect(DesktopSoundSchemas.candidates(currentDesktop: "X-Cinnamon") == ["org.cinnamon.desktop.sound", "org.gnome.desktop.sound"])
    #expect(DesktopSoundSchemas.candidates(currentDesktop: "MATE") == ["org.mate.sound", "org.gnome.desktop.sound"])
    #expect(
      DesktopSoundSchemas.candidates(currentDesktop: "mate:cinnamon:MATE")
        == ["org.mate.sound", "org.cinnamon.desktop.sound", "org.gnome.desktop.sound"])
  }

  /// GLib's order: $GSETTINGS_SCHEMA_DIR's entries, the user's data directory, then the system's.
  @Test func theSchemaDirectoriesAreGLibs() {
    let environment = ["GSETTINGS_SCHEMA_DIR": "/a:/b", "XDG_DATA_HOME": "/home/u/data", "XDG_DATA_DIRS": "/x:/y"]
    #expect(
      DesktopSoundSchemas.directories { environment[$0] }
        == ["/a", "/b", "/home/u/data/glib-2.0/schemas", "/x/glib-2.0/schemas", "/y/glib-2.0/schemas"])
    #expect(
      DesktopSoundSchemas.directories { ["HOME": "/home/u"][$0] }
        == ["/home/u/.local/share/glib-2.0/schemas", "/usr/local/share/glib-2.0/schemas", "/usr/share/glib-2.0/schemas"])
  }

  @Test func aCompiledSchemaFileNamesTheSchemaOrNot() {
    let files: [String: [UInt8]] = [
      "/one/gschemas.compiled": Array("GVariant\0org.mate.sound\0junk".utf8),
      "/two/gschemas.compiled": Array("xxorg.gnome.desktop.soundyy".utf8),
    ]
    let read: (String) -> [UInt8]? = { files[$0] }
    let schemas = DesktopSoundSchemas.candidates(currentDesktop: "MATE")
    #expect(DesktopSoundSchemas.firstNamed(schemas, in: ["/one", "/two"], read: read) == "org.mate.sound")
    #expect(DesktopSoundSchemas.firstNamed(["org.gnome.desktop.sound"], in: ["/one", "/two"], read: read) == "org.gnome.desktop.sound")
    #expect(DesktopSoundSchemas.firstNamed(["org.gnome.desktop.sound"], in: ["/one", "/missing"], read: read) == nil)
    #expect(!DesktopSoundSchemas.contains(Array("org.gnome.desktop.soun".utf8), Array("org.gnome.desktop.sound".utf8)))
    #expect(DesktopSoundSchemas.contains(Array("org.gnome.desktop.sound".utf8), Array("org.gnome.desktop.sound".utf8)))
  }

  /// The file gsettings-desktop-schemas installs names GNOME's schema whole.
  @Test(.enabled(if: Files.kind(of: "/usr/share/glib-2.0/schemas/org.gnome.desktop.sound.gschema.xml") == .regular))
  func theInstalledCompiledSchemasNameGNOMEs() {
    let found = DesktopSoundSchemas.firstNamed(
      [DesktopSoundSchemas.gnome], in: ["/usr/share/glib-2.0/schemas"], read: DesktopSoundSchemas.readCompiled)
    #expect(found == DesktopSoundSchemas.gnome)
  }

  // MARK: - Is there a desktop session?

  /// An environment and a file system of the test's own: `sockets` and `files` exist.
  static func session(_ environment: [String: String], sockets: Set<String> = [], files: Set<String> = []) -> DesktopSession.Verdict {
    DesktopSession.verdict(
      environment: { environment[$0] }, probe: DesktopSession.Probe(isSocket: sockets.contains, isFile: files.contains))
  }

  @Test func aServerHasNoDesktopSession() {
    #expect(
      Self.session(["HOME": "/root"])
        == .absent("no desktop session: no session bus (DBUS_SESSION_BUS_ADDRESS is unset and XDG_RUNTIME_DIR is unset)"))
    // XDG_CURRENT_DESKTOP inherited (ssh, sudo) with no bus to go with it.
    #expect(
      Self.session(["XDG_RUNTIME_DIR": "/run/user/1000", "XDG_CURRENT_DESKTOP": "GNOME"])
        == .absent("no desktop session: no session bus (DBUS_SESSION_BUS_ADDRESS is unset and there is no socket /run/user/1000/bus)"))
    #expect(
      Self.session(["DBUS_SESSION_BUS_ADDRESS": "unix:path=/tmp/gone", "XDG_CURRENT_DESKTOP": "GNOME"])
        == .absent("no desktop session: no session bus (no socket at DBUS_SESSION_BUS_ADDRESS=unix:path=/tmp/gone)"))
    // A lingering user manager (dbus-user-session): a bus, but no desktop's settings.
    #expect(
      Self.session(["XDG_RUNTIME_DIR": "/run/user/1000", "HOME": "/home/u"], sockets: ["/run/user/1000/bus"])
        == .absent(
          "no desktop session: a session bus (/run/user/1000/bus) but no desktop's settings (XDG_CURRENT_DESKTOP is unset and there is no /home/u/.config/dconf/user); follow-desktop = \"always\" follows them anyway"
        ))
  }

  @Test func aDesktopSessionHasABusAndADesktopsSettings() {
    let bus = "/run/user/1000/bus"
    #expect(
      Self.session(["XDG_RUNTIME_DIR": "/run/user/1000", "XDG_CURRENT_DESKTOP": "ubuntu:GNOME"], sockets: [bus])
        == .present("a desktop session: XDG_CURRENT_DESKTOP=ubuntu:GNOME, session bus /run/user/1000/bus"))
    // A user service started before the session imported XDG_CURRENT_DESKTOP: dconf's database says it.
    #expect(
      Self.session(["XDG_RUNTIME_DIR": "/run/user/1000", "XDG_CONFIG_HOME": "/home/u/.cfg"], sockets: [bus], files: ["/home/u/.cfg/dconf/user"])
        == .present("a desktop session: dconf's user database /home/u/.cfg/dconf/user, session bus /run/user/1000/bus"))
    // The address wins over the runtime directory; its escapes are decoded; the first that is there counts.
    #expect(
      Self.session(
        ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/gone;unix:path=/tmp/my%20bus,guid=1", "XDG_CURRENT_DESKTOP": "KDE"], sockets: ["/tmp/my bus"])
        == .present("a desktop session: XDG_CURRENT_DESKTOP=KDE, session bus /tmp/my bus"))
    // An abstract socket cannot be looked at without connecting: taken as given.
    #expect(
      Self.session(["DBUS_SESSION_BUS_ADDRESS": "unix:abstract=/tmp/dbus-x", "XDG_CURRENT_DESKTOP": "XFCE"])
        == .present("a desktop session: XDG_CURRENT_DESKTOP=XFCE, session bus unix:abstract=/tmp/dbus-x"))
    // GSETTINGS_BACKEND asks for GSettings outright.
    #expect(Self.session(["GSETTINGS_BACKEND": "keyfile"]) == .present("GSETTINGS_BACKEND=keyfile names GLib's settings backend"))
  }

  /// No session: the watch is not started (GLib stays unloaded), status says why, and a reload
  /// once the session is there starts it.
  @Test func withoutASessionTheWatchWaitsForAReload() throws {
    let (embedded, desktop) = try Self.daemon(first: Self.yaru, session: .absent("no desktop session: no session bus"))
    #expect(desktop.starts.load(ordering: .relaxed) == 0)
    #expect(
      embedded.daemon.themeSounds.choice.status
        == StatusReply.SoundTheme(name: "freedesktop", source: .default, reason: "no desktop session: no session bus"))
    #expect(embedded.connect().reply(#"{"op":"status"}"#)["soundTheme"]?["reason"] == .string("no desktop session: no session bus"))
    embedded.daemon.desktop.session = { _ in .present("a desktop session") }
    embedded.daemon.followSoundTheme()
    #expect(desktop.starts.load(ordering: .relaxed) == 1)
    #expect(
      embedded.daemon.themeSounds.choice.status
        == StatusReply.SoundTheme(name: "Yaru", source: .desktop, schema: DesktopSoundSchemas.gnome, reason: "a desktop session"))
  }

  /// follow-desktop reaches the session test as written.
  @Test func followDesktopIsHandedToTheSessionTest() throws {
    let asked = Mutex<[String]>([])
    let embedded = try EmbeddedDaemon { $0.followDesktop = "always" }
    embedded.daemon.desktop.watch = { _ in .success(Self.yaru) }
    embedded.daemon.desktop.session = { when in
      asked.withLock { $0.append(when) }
      return .present("follow-desktop = \"always\"")
    }
    embedded.daemon.followSoundTheme()
    #expect(asked.withLock { $0 } == ["always"])
    #expect(embedded.daemon.themeSounds.choice.source == .desktop)
  }

  // MARK: - The daemon follows

  /// A daemon whose desktop watch is a hand-driven stand-in for GSettings: the first reading, and
  /// the function that posts a change as the watch's thread does.
  final class Desktop: Sendable {
    let post = Mutex<(@Sendable (DesktopSoundSettings) -> Void)?>(nil)
    let starts = Atomic<Int>(0)
  }

  static func daemon(
    theme: String = "desktop", first: DesktopSoundSettings?, session: DesktopSession.Verdict? = nil
  ) throws -> (EmbeddedDaemon, Desktop) {
    let embedded = try EmbeddedDaemon { $0.soundTheme = theme }
    let desktop = Desktop()
    if let session { embedded.daemon.desktop.session = { _ in session } }
    embedded.daemon.desktop.watch = { post in
      desktop.starts.add(1, ordering: .relaxed)
      desktop.post.withLock { $0 = post }
      return first.map { .success($0) } ?? .failure(DesktopSettingsWatch.Unavailable(reason: "no schema"))
    }
    embedded.daemon.followSoundTheme()
    return (embedded, desktop)
  }

  @Test func statusShowsTheThemeInForceAndItFollowsAChange() throws {
    let (embedded, desktop) = try Self.daemon(first: Self.yaru)
    let client = embedded.connect()
    #expect(
      client.reply(#"{"op":"status"}"#)["soundTheme"]
        == .object([
          ("name", .string("Yaru")), ("source", .string("desktop")), ("eventSounds", .bool(true)),
          ("schema", .string("org.gnome.desktop.sound")),
        ]))
    desktop.post.withLock { $0 }?(DesktopSoundSettings(themeName: "Other", eventSounds: false, schema: DesktopSoundSchemas.gnome))
    embedded.finishBackgroundWork()
    let theme = client.reply(#"{"op":"status"}"#)["soundTheme"]
    #expect(theme?["name"] == .string("Other") && theme?["eventSounds"] == .bool(false))
    #expect(embedded.daemon.themeSounds.theme == "Other")
  }

  /// Event sounds off: a theme event is silent (no lookup: even a name no theme has), a cue sounds.
  @Test func eventSoundsOffSilencesEventsNotCues() throws {
    var off = Self.yaru
    off.eventSounds = false
    let (embedded, _) = try Self.daemon(first: off)
    let client = embedded.connect()
    let lines = client.request(#"{"op":"play","event":"no-such-sound","notify":true}"#)
    #expect(lines.first?["played"] == .bool(false) && lines.first?["reason"] == .string("event-sounds-off"))
    #expect(lines.first?["file"] == nil)
    let finished = lines.first { $0["event"] == .string("finished") }
    #expect(finished?["reason"] == .string("event-sounds-off") && finished?["cue"] == .string("no-such-sound"))
    #expect(finished?["voice"] == lines.first?["voice"])
    #expect(client.reply(#"{"op":"play","cue":"pico"}"#)["played"] == .bool(true))
    #expect(client.reply(#"{"op":"status"}"#)["silenced"]?["event-sounds-off"] == .number(1))
  }

  /// A named theme never starts the watch; one that could not start is not tried again at a reload.
  @Test func theWatchStartsOnlyWhileTheDesktopIsFollowed() throws {
    let (pinned, desktop) = try Self.daemon(theme: "freedesktop", first: Self.yaru)
    #expect(desktop.starts.load(ordering: .relaxed) == 0)
    #expect(pinned.daemon.themeSounds.choice.source == .config)
    let (unavailable, tried) = try Self.daemon(first: nil)
    #expect(tried.starts.load(ordering: .relaxed) == 1)
    #expect(unavailable.daemon.themeSounds.choice.status == StatusReply.SoundTheme(name: "freedesktop", source: .default, reason: "no schema"))
    unavailable.daemon.followSoundTheme()
    #expect(tried.starts.load(ordering: .relaxed) == 1, "a watch that could not start is not tried at every reload")
  }
}
