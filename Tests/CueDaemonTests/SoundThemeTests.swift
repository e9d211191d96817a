import CueDecoding
import CuePosix
import Glibc
import Testing

@testable import CueDaemon

/// A file tree in memory: paths that exist, some with text (index.theme files).
private struct TreeFiles: SoundThemeFiles {
  var texts: [String: String] = [:]
  var paths: Set<String> = []

  init(_ files: [String: String]) {
    texts = files
    paths = Set(files.keys)
  }

  func exists(_ path: String) -> Bool { paths.contains(path) }
  func text(_ path: String) -> String? { texts[path] }
}

/// The freedesktop sound-theme lookup, in libcanberra's order (docs/notes/THEME-LOOKUP.md).
@Suite("Sound themes: names to files as libcanberra finds them")
struct SoundThemeTests {
  static let freedesktopIndex = "[Sound Theme]\nName=Default\nDirectories=stereo\n\n[stereo]\nOutputProfile=stereo\n"
  static let bases = ["/home/u/.local/share", "/usr/local/share", "/usr/share"]

  static func resolver(_ files: [String: String], theme: String = "freedesktop", locale: String = "C", profile: String = "stereo")
    -> SoundThemeResolver
  {
    SoundThemeResolver(baseDirectories: bases, theme: theme, locale: locale, profile: profile, files: TreeFiles(files))
  }

  @Test func namesLoseTheirLastDashPartOneAtATime() {
    #expect(SoundThemeResolver.nameForms("message-new-instant") == ["message-new-instant", "message-new", "message"])
    #expect(SoundThemeResolver.nameForms("bell") == ["bell"])
    #expect(SoundThemeResolver.nameForms("-x-y") == ["-x-y", "-x"])
  }

  @Test func localesFallBackAsLibcanberraDoes() {
    #expect(SoundThemeResolver.localeForms("de_DE.UTF-8@euro") == ["de_DE.UTF-8@euro", "de_DE.UTF-8", "de", "C", nil])
    #expect(SoundThemeResolver.localeForms("C") == ["C", nil])
    #expect(SoundThemeResolver.localeForms("C.UTF-8") == ["C.UTF-8", "C", nil])
    #expect(SoundThemeResolver.localeForms("pt_BR") == ["pt_BR", "pt", "C", nil])
  }

  @Test func theIndexIsReadAsLibcanberraReadsIt() throws {
    let index = try SoundThemeIndex(
      parsing: "# a theme\n[Sound Theme]\nName=Mine\nInherits=ubuntu,  freedesktop\nDirectories=stereo 5.1 # two\nDirectories=extra\n"
        + "[stereo]\nOutputProfile=stereo\r\n[5.1]\nOutputProfile=5.1\n[unlisted]\nOutputProfile=mono\n")
    #expect(index.inherits == ["ubuntu", "freedesktop"])
    #expect(index.directories.map(\.name) == ["stereo", "5.1", "extra"])
    #expect(index.directories.map(\.profile) == ["stereo", "5.1", nil])
    #expect(throws: SoundThemeIndex.Failure.self) { try SoundThemeIndex(parsing: "[Sound Theme]\nInherits=a\nInherits=b\n") }
    #expect(throws: SoundThemeIndex.Failure.self) {
      try SoundThemeIndex(parsing: "[Sound Theme]\nDirectories=s\n[s]\nOutputProfile=stereo\nOutputProfile=5.1\n")
    }
  }

  @Test func aShorterNameInTheThemeBeatsNothingAndADisabledFileSilences() {
    let resolver = Self.resolver([
      "/usr/share/sounds/freedesktop/index.theme": Self.freedesktopIndex,
      "/usr/share/sounds/freedesktop/stereo/message.oga": "",
      "/usr/share/sounds/freedesktop/stereo/message-new-instant.oga": "",
      "/usr/share/sounds/freedesktop/stereo/bell.oga": "",
      "/home/u/.local/share/sounds/freedesktop/stereo/bell.disabled": "",
    ])
    #expect(resolver.resolve("message-new-instant") == .file("/usr/share/sounds/freedesktop/stereo/message-new-instant.oga"))
    #expect(resolver.resolve("message-new-email") == .file("/usr/share/sounds/freedesktop/stereo/message.oga"))
    #expect(resolver.resolve("bell") == .disabled("/home/u/.local/share/sounds/freedesktop/stereo/bell.disabled"))
    #expect(resolver.resolve("nothing-like-it") == .notFound)
    #expect(resolver.resolve("../bell") == .notFound)
  }

  @Test func anEarlierBaseDirectoryWinsEvenWithAShorterName() {
    // libcanberra's base-directory loop is outside the name loop.
    let resolver = Self.resolver([
      "/usr/share/sounds/freedesktop/index.theme": Self.freedesktopIndex,
      "/usr/share/sounds/freedesktop/stereo/message-new-instant.oga": "",
      "/usr/local/share/sounds/freedesktop/stereo/message.wav": "",
    ])
    #expect(resolver.resolve("message-new-instant") == .file("/usr/local/share/sounds/freedesktop/stereo/message.wav"))
  }

  @Test func localeDirectoriesComeBeforeThePlainOneAndSuffixesInOrder() {
    let resolver = Self.resolver(
      [
        "/usr/share/sounds/freedesktop/index.theme": Self.freedesktopIndex,
        "/usr/share/sounds/freedesktop/stereo/bell.oga": "",
        "/usr/share/sounds/freedesktop/stereo/de/bell.wav": "",
        "/usr/share/sounds/freedesktop/stereo/de/bell.ogg": "",
        "/usr/share/sounds/freedesktop/stereo/C/complete.wav": "",
        "/usr/share/sounds/freedesktop/stereo/complete.oga": "",
      ], locale: "de_DE.UTF-8")
    #expect(resolver.resolve("bell") == .file("/usr/share/sounds/freedesktop/stereo/de/bell.ogg"))
    #expect(resolver.resolve("complete") == .file("/usr/share/sounds/freedesktop/stereo/C/complete.wav"))
  }

  @Test func aThemeInheritsDepthFirstAndFreedesktopComesLast() {
    let files = [
      "/usr/share/sounds/mine/index.theme": "[Sound Theme]\nInherits=parent\nDirectories=stereo\n[stereo]\nOutputProfile=stereo\n",
      "/usr/share/sounds/parent/index.theme": "[Sound Theme]\nDirectories=stereo\n[stereo]\nOutputProfile=stereo\n",
      "/usr/share/sounds/freedesktop/index.theme": Self.freedesktopIndex,
      "/usr/share/sounds/parent/stereo/bell.oga": "",
      "/usr/share/sounds/freedesktop/stereo/bell.oga": "",
      "/usr/share/sounds/freedesktop/stereo/complete.oga": "",
      "/usr/share/sounds/mine/camera.oga": "",
      "/usr/share/sounds/trash-empty.wav": "",
    ]
    let resolver = Self.resolver(files, theme: "mine")
    #expect(resolver.loadedTheme == "mine")
    #expect(resolver.entries.map(\.theme) == ["mine", "parent", "freedesktop"])
    #expect(resolver.resolve("bell") == .file("/usr/share/sounds/parent/stereo/bell.oga"))
    #expect(resolver.resolve("complete") == .file("/usr/share/sounds/freedesktop/stereo/complete.oga"))
    // The top theme's own directory, then the sound directories without a theme.
    #expect(resolver.resolve("camera-shutter") == .file("/usr/share/sounds/mine/camera.oga"))
    #expect(resolver.resolve("trash-empty") == .file("/usr/share/sounds/trash-empty.wav"))
  }

  @Test func aThemeWhoseParentIsMissingIsDroppedForFreedesktop() {
    let resolver = Self.resolver(
      [
        "/usr/share/sounds/mine/index.theme": "[Sound Theme]\nInherits=gone\nDirectories=stereo\n",
        "/usr/share/sounds/mine/stereo/bell.oga": "",
        "/usr/share/sounds/freedesktop/index.theme": Self.freedesktopIndex,
        "/usr/share/sounds/freedesktop/stereo/bell.oga": "",
      ], theme: "mine")
    #expect(resolver.loadedTheme == "freedesktop")
    #expect(resolver.resolve("bell") == .file("/usr/share/sounds/freedesktop/stereo/bell.oga"))
  }

  @Test func anInheritanceCycleLoadsEachThemeOnce() {
    // The sound-theme spec's inheritance, with each theme read once: libcanberra instead calls a
    // cycle corrupt and drops to the lookup without themes (its answer for both: not found).
    let resolver = Self.resolver(
      [
        "/usr/share/sounds/a/index.theme": "[Sound Theme]\nInherits=b\nDirectories=stereo\n",
        "/usr/share/sounds/b/index.theme": "[Sound Theme]\nInherits=a\nDirectories=stereo\n",
        "/usr/share/sounds/a/stereo/bell.oga": "",
        "/usr/share/sounds/b/stereo/complete.oga": "",
        "/usr/share/sounds/freedesktop/index.theme": Self.freedesktopIndex,
        "/usr/share/sounds/freedesktop/stereo/message.oga": "",
      ], theme: "a")
    #expect(resolver.problem == nil)
    #expect(resolver.entries.map(\.theme) == ["a", "b", "freedesktop"])
    #expect(resolver.resolve("bell") == .file("/usr/share/sounds/a/stereo/bell.oga"))
    #expect(resolver.resolve("complete") == .file("/usr/share/sounds/b/stereo/complete.oga"))
    #expect(resolver.resolve("message") == .file("/usr/share/sounds/freedesktop/stereo/message.oga"))
  }

  @Test func anotherProfileFallsBackToStereo() {
    let resolver = Self.resolver(
      [
        "/usr/share/sounds/freedesktop/index.theme":
          "[Sound Theme]\nDirectories=stereo,5.1\n[stereo]\nOutputProfile=stereo\n[5.1]\nOutputProfile=5.1\n",
        "/usr/share/sounds/freedesktop/stereo/bell.oga": "",
        "/usr/share/sounds/freedesktop/5.1/complete.oga": "",
        "/usr/share/sounds/freedesktop/stereo/complete.oga": "",
      ], profile: "5.1")
    #expect(resolver.resolve("complete") == .file("/usr/share/sounds/freedesktop/5.1/complete.oga"))
    #expect(resolver.resolve("bell") == .file("/usr/share/sounds/freedesktop/stereo/bell.oga"))
  }

  @Test func aCorruptThemeLeavesOnlyTheUnthemedLookup() {
    let resolver = Self.resolver(
      [
        "/usr/share/sounds/freedesktop/index.theme": "[Sound Theme]\nInherits=a\nInherits=b\nDirectories=stereo\n",
        "/usr/share/sounds/freedesktop/stereo/bell.oga": "",
        "/usr/share/sounds/bell.ogg": "",
      ])
    #expect(resolver.problem == .corrupt(theme: "freedesktop", reason: "a second Inherits="))
    #expect(resolver.resolve("bell") == .file("/usr/share/sounds/bell.ogg"))
  }

  @Test func theBaseDirectoriesComeFromTheXDGVariables() {
    func dirs(_ values: [String: String]) -> [String] { SoundThemeResolver.baseDirectories { values[$0] } }
    #expect(dirs(["HOME": "/home/u"]) == ["/home/u/.local/share", "/usr/local/share", "/usr/share"])
    #expect(dirs(["HOME": "/home/u", "XDG_DATA_HOME": "/d", "XDG_DATA_DIRS": "/a::relative:/b"]) == ["/d", "/a", "/b"])
    #expect(dirs(["XDG_DATA_HOME": "relative", "XDG_DATA_DIRS": ""]) == ["/usr/local/share", "/usr/share"])
    #expect(SoundThemeResolver.locale { ["LANG": "fr_FR.UTF-8", "LC_MESSAGES": ""][$0] } == "fr_FR.UTF-8")
    #expect(SoundThemeResolver.locale { _ in nil } == "C")
  }

  /// The real theme, from Debian's sound-theme-freedesktop (scripts/install-deps.sh installs it).
  @Test(.enabled(if: Files.kind(of: "/usr/share/sounds/freedesktop/index.theme") == .regular, "sound-theme-freedesktop is not installed"))
  func theRealFreedesktopThemeResolvesAsLibcanberraWould() throws {
    let scratch = try Files.makeTemporaryDirectory(prefix: "cued-theme")
    try Files.makeDirectories(scratch + "/sounds/freedesktop/stereo", mode: 0o755)
    try Files.write([], to: scratch + "/sounds/freedesktop/stereo/bell.disabled")
    let resolver = SoundThemeResolver(
      baseDirectories: [scratch, "/usr/share"], theme: "freedesktop", locale: "de_DE.UTF-8", files: PosixSoundThemeFiles())
    let stereo = "/usr/share/sounds/freedesktop/stereo/"
    #expect(resolver.resolve("message-new-instant") == .file(stereo + "message-new-instant.oga"))
    #expect(resolver.resolve("message-new-email") == .file(stereo + "message.oga"))
    #expect(resolver.resolve("dialog-error") == .file(stereo + "dialog-error.oga"))  // a symlink to dialog-warning.oga
    #expect(resolver.resolve("bell") == .disabled(scratch + "/sounds/freedesktop/stereo/bell.disabled"))
    #expect(resolver.resolve("no-such-sound") == .notFound)
    // A theme that is not installed falls back to freedesktop.
    let other = SoundThemeResolver(baseDirectories: ["/usr/share"], theme: "nonexistent", files: PosixSoundThemeFiles())
    #expect(other.loadedTheme == "freedesktop" && other.resolve("complete") == .file(stereo + "complete.oga"))
  }

  // MARK: - libcanberra itself as the oracle

  static let oracle = #filePath.split(separator: "/", omittingEmptySubsequences: false).dropLast(2).joined(separator: "/")
    + "/Fixtures/canberra-lookup.py"
  static let canOracle =
    Files.kind(of: "/usr/bin/strace") == .regular && Files.kind(of: "/usr/bin/python3") == .regular
    && ["/lib/x86_64-linux-gnu/libcanberra.so.0", "/usr/lib/x86_64-linux-gnu/libcanberra.so.0", "/lib/aarch64-linux-gnu/libcanberra.so.0"]
      .contains { Files.kind(of: $0) == .regular }
    && Files.kind(of: "/usr/share/sounds/freedesktop/index.theme") == .regular

  /// A tree that exercises every turn of the lookup, beside the real freedesktop theme: a user
  /// theme inheriting a parent, locale directories, a `.disabled` file, a shorter name in an
  /// earlier base directory, an unthemed sound, a theme whose parent is missing.
  static func makeTree() throws -> (home: String, local: String) {
    let root = try Files.makeTemporaryDirectory(prefix: "cued-theme-oracle")
    let home = root + "/home"
    let local = root + "/local"
    var files: [String: String] = [
      home + "/sounds/freedesktop/stereo/bell.disabled": "",
      home + "/sounds/mine/index.theme":
        "[Sound Theme]\nName=Mine\nInherits=parent\nDirectories=stereo 5.1\n[stereo]\nOutputProfile=stereo\n[5.1]\nOutputProfile=5.1\n",
      home + "/sounds/mine/stereo/de/complete.ogg": "x",
      home + "/sounds/mine/stereo/C/complete.wav": "x",
      home + "/sounds/mine/5.1/service-login.oga": "x",
      home + "/sounds/mine/dialog.wav": "x",
      home + "/sounds/broken/index.theme": "[Sound Theme]\nInherits=gone\nDirectories=stereo\n",
      home + "/sounds/broken/stereo/bell.oga": "x",
      local + "/sounds/parent/index.theme": "[Sound Theme]\nDirectories=stereo\n[stereo]\nOutputProfile=stereo\n",
      local + "/sounds/parent/stereo/camera-shutter.wav": "x",
      local + "/sounds/parent/stereo/fr/message.oga": "x",
      local + "/sounds/freedesktop/stereo/message.wav": "x",
      local + "/sounds/trash.wav": "x",
      // libcanberra's quirks, copied: `Inherits = X` (spaces) is not read; a `#` anywhere cuts the line.
      home + "/sounds/spaced/index.theme": "[Sound Theme]\nInherits = parent\nDirectories=stereo\n[stereo]\nOutputProfile=stereo\n",
      home + "/sounds/spaced/stereo/dialog-error.oga": "x",
      home + "/sounds/hashed/index.theme": "[Sound Theme]\nDirectories=ste#reo\n[ste]\nOutputProfile=stereo\n",
      home + "/sounds/hashed/ste/bell.oga": "x",
      home + "/sounds/hashed/stereo/complete.oga": "x",
    ]
    // Chains of eight and of nine themes: libcanberra reads at most eight index.theme files.
    for (prefix, length) in [("eight", 8), ("nine", 9)] {
      for i in 1...length {
        let inherits = i < length ? "Inherits=\(prefix)\(i + 1)\n" : ""
        files[home + "/sounds/\(prefix)\(i)/index.theme"] = "[Sound Theme]\n\(inherits)Directories=stereo\n[stereo]\nOutputProfile=stereo\n"
      }
      files[home + "/sounds/\(prefix)\(length)/stereo/bell.oga"] = "x"
    }
    for (path, text) in files {
      try Files.makeDirectories(String(path[..<path.lastIndex(of: "/")!]), mode: 0o755)
      try Files.write(Array(text.utf8), to: path)
    }
    return (home, local)
  }

  @Test(.enabled(if: canOracle, "needs strace, python3, libcanberra0 and sound-theme-freedesktop (scripts/install-deps.sh)"))
  func everyNameResolvesToTheFileLibcanberraPicks() throws {
    let (home, local) = try Self.makeTree()
    let names = [
      "message-new-instant", "message-new-email", "bell", "complete", "camera-shutter", "trash-empty", "dialog-error",
      "dialog-warning-urgent", "service-login", "nothing-here",
    ]
    let themes = ["freedesktop", "mine", "broken", "nonexistent", "spaced", "hashed", "eight1", "nine1"]
    let locales = ["C", "de_DE.UTF-8@euro", "fr_FR.UTF-8"]
    var queries: [(name: String, theme: String, locale: String)] = []
    for theme in themes {
      for locale in locales {
        for name in names { queries.append((name, theme, locale)) }
      }
    }
    let alsa = home + "/asound.conf"
    try Files.write(Array("pcm.!default { type null }\n".utf8), to: alsa)
    let result = try Spawn.run(
      "/usr/bin/python3", [Self.oracle] + queries.map { "\($0.name):\($0.theme):\($0.locale)" },
      environment: [
        "XDG_DATA_HOME": home, "XDG_DATA_DIRS": local + ":/usr/share", "XDG_CACHE_HOME": home + "/cache", "ALSA_CONFIG_PATH": alsa,
      ], timeout: 120)
    #expect(result.status == 0)
    let answers = String(decoding: result.output, as: UTF8.self).split(separator: "\n").map(String.init)
    try #require(answers.count == queries.count, "\(answers)")
    var resolvers: [String: SoundThemeResolver] = [:]
    var agreed = 0
    for (query, answer) in zip(queries, answers) {
      let key = query.theme + "/" + query.locale
      let resolver =
        resolvers[key]
        ?? SoundThemeResolver(
          baseDirectories: [home, local, "/usr/share"], theme: query.theme, locale: query.locale, files: PosixSoundThemeFiles())
      resolvers[key] = resolver
      let ours: String
      switch resolver.resolve(query.name) {
      case .file(let path): ours = "file " + path
      case .disabled(let path): ours = "disabled " + path
      case .notFound: ours = "notfound"
      }
      #expect(ours == answer, "\(query.name) in \(query.theme), \(query.locale)")
      if ours == answer { agreed += 1 }
    }
    // The tree is built so that the answers differ: not everything resolves to one file.
    #expect(Set(answers).count >= 12)
    #expect(agreed == queries.count)
  }
}

/// The decoded theme files kept, in process: the least recently played goes past the limit.
@Suite("Sound-theme cache")
struct ThemeCacheTests {
  /// Plays `event`; true when the reply came at once (its file was kept), false when it waited for a decode.
  static func play(_ event: String, _ client: EmbeddedClient, _ embedded: EmbeddedDaemon) -> Bool {
    let lines = client.request(#"{"id":1,"op":"play","event":"\#(event)"}"#)
    if lines.contains(where: { $0["ok"] == .bool(true) }) { return true }
    embedded.finishBackgroundWork()
    #expect(client.received().contains { $0["ok"] == .bool(true) }, "\(event) was not answered after its decode")
    return false
  }

  @Test(.enabled(if: Files.kind(of: "/usr/share/sounds/freedesktop/index.theme") == .regular, "sound-theme-freedesktop is installed"))
  func pastTheLimitTheLeastRecentlyPlayedFileIsLetGo() throws {
    let embedded = try EmbeddedDaemon()
    embedded.daemon.fileSounds.cacheLimit = 2
    let client = embedded.connect()
    #expect(!Self.play("bell", client, embedded))
    #expect(!Self.play("complete", client, embedded))
    #expect(Self.play("bell", client, embedded))  // kept, and now the most recent
    #expect(!Self.play("message", client, embedded))  // a third: `complete`, played least recently, goes
    #expect(embedded.daemon.fileSounds.count == 2)
    #expect(Self.play("bell", client, embedded))
    #expect(Self.play("message", client, embedded))
    #expect(!Self.play("complete", client, embedded))
    #expect(embedded.daemon.fileSounds.count == 2)
  }
}

/// A theme file is known by its identity (device, inode, size, modification time), not its path:
/// replaced, rewritten in place or re-linked, it is decoded afresh; unchanged, never twice.
@Suite("Sound-theme files by identity")
struct ThemeFileIdentityTests {
  @Test func aReplacedRewrittenOrRelinkedFileIsDecodedAfreshAndAnUnchangedOneIsKept() throws {
    let root = try Files.makeTemporaryDirectory(prefix: "cued-theme-identity")
    let stereo = root + "/data/sounds/freedesktop/stereo"
    try Files.makeDirectories(stereo, mode: 0o755)
    try Files.write(Array("[Sound Theme]\nName=Freedesktop\nDirectories=stereo\n".utf8), to: root + "/data/sounds/freedesktop/index.theme")
    let bell = stereo + "/bell.wav"
    let wav = try Files.read(path: fixture("tone-48000-mono.wav"), limit: 1 << 20)
    let mp3 = try Files.read(path: fixture("sine-1k-20dbfs-48000.mp3"), limit: 1 << 20)
    try Files.write(wav, to: bell)
    // No config file (the default): the lookup sees only this data home.
    let embedded = try EmbeddedDaemon(environment: ["XDG_DATA_HOME": root + "/data", "XDG_DATA_DIRS": root + "/none"])
    let themes = embedded.daemon.fileSounds
    let options = embedded.daemon.files.options
    func frames(_ file: String) throws -> Int { try AudioFileDecoder.decode(path: fixture(file), options: options).buffer.frameCount }
    let wavFrames = try frames("tone-48000-mono.wav")
    let mp3Frames = try frames("sine-1k-20dbfs-48000.mp3")
    try #require(wavFrames != mp3Frames)
    let client = embedded.connect()
    func reload() {
      _ = client.request(#"{"id":2,"op":"reload"}"#)
      embedded.finishBackgroundWork()
      _ = client.received()
    }
    func keptFrames() -> [Int] { themes.kept(bell).map(\.frameCount) }

    #expect(!ThemeCacheTests.play("bell", client, embedded))
    #expect(keptFrames() == [wavFrames])
    #expect(ThemeCacheTests.play("bell", client, embedded), "an unchanged file is decoded again")
    reload()
    #expect(ThemeCacheTests.play("bell", client, embedded), "an unchanged file is decoded again after a reload")

    // Replaced: new content renamed over it (a new inode), as an editor or a package update does.
    try Files.write(mp3, to: bell + ".new")
    #expect(rename(bell + ".new", bell) == 0)
    reload()
    #expect(!ThemeCacheTests.play("bell", client, embedded))
    #expect(keptFrames() == [mp3Frames])

    // Rewritten in place: the same inode, other bytes; no reload needed, the next play looks.
    let inode = Files.status(bell)?.inode
    let fd = open(bell, O_WRONLY | O_TRUNC)
    #expect(fd >= 0)
    #expect(wav.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } == wav.count)
    close(fd)
    #expect(Files.status(bell)?.inode == inode)
    #expect(!ThemeCacheTests.play("bell", client, embedded))
    #expect(keptFrames() == [wavFrames])

    // A symlink re-pointed (GNOME's custom theme links to the files it picks).
    let a = root + "/a.wav"
    let b = root + "/b.wav"
    try Files.write(wav, to: a)
    try Files.write(mp3, to: b)
    #expect(unlink(bell) == 0 && symlink(a, bell) == 0)
    #expect(!ThemeCacheTests.play("bell", client, embedded))
    #expect(keptFrames() == [wavFrames])
    #expect(symlink(b, bell + ".new") == 0 && rename(bell + ".new", bell) == 0)
    reload()
    #expect(!ThemeCacheTests.play("bell", client, embedded))
    #expect(keptFrames() == [mp3Frames])
    #expect(ThemeCacheTests.play("bell", client, embedded))
    #expect(themes.count == 1)
  }
}
