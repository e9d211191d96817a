import CuePosix
import CueProtocol
import DaemonTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `make install`, `make uninstall` and `make deb` (packaging/), checked on the files they make.
///
/// Each runs a release build (with the Swift runtime linked in) and swift-argument-parser's manual
/// plugin, so the first run takes minutes. They build in their own SwiftPM folder, `.build/install-tests`:
/// `swift test` holds the lock on the folder it runs from (`.build` under `make test`) until it ends,
/// so a `swift build` there from inside a test would wait for ever.
@Suite("Installation and the Debian package", .serialized)
struct InstallTests {
  static let scratch = Harness.repositoryRoot + "/.build/install-tests"
  static let makeTimeout: Double = 1200
  static let sounds = ["page-next", "page-prev", "pico", "tick", "wrap"]

  /// Runs make in the repository on the test's build folder, niced: other suites run meanwhile.
  static func make(_ arguments: [String]) throws -> CommandResult {
    try run(
      "/usr/bin/nice", ["-n", "10", "/usr/bin/make", "-C", Harness.repositoryRoot, "SCRATCH_PATH=" + scratch] + arguments,
      // Nothing from an enclosing `make test` (its variables, its jobserver) leaks in.
      environment: ["MAKEFLAGS": "", "MFLAGS": "", "MAKELEVEL": ""],
      timeout: makeTimeout)
  }

  /// Every `.executable(name: "…")` product in Package.swift: all of them get installed.
  static func executables() throws -> [String] {
    let manifest = try String(contentsOfFile: Harness.repositoryRoot + "/Package.swift", encoding: .utf8)
    let pattern = try Regex(#"\.executable\(\s*name:\s*"([^"]+)""#)
    return manifest.matches(of: pattern).compactMap { $0.output[1].substring.map(String.init) }
  }

  /// The repository's units, each with the directory (under PREFIX/lib/systemd) it belongs in.
  static func units() throws -> [(source: String, scope: String)] {
    var found: [(String, String)] = []
    for (directory, scope) in [("systemd", "user"), ("systemd/user", "user"), ("systemd/system", "system")] {
      let path = Harness.repositoryRoot + "/" + directory
      guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else { continue }
      for name in names.sorted() where name.hasSuffix(".service") || name.hasSuffix(".socket") {
        found.append((path + "/" + name, scope))
      }
    }
    return found
  }

  /// What the unit must read once installed: every Exec*= line naming one of our programs names it
  /// in `bindir`, whatever path the repository's copy gave.
  static func expectedUnit(_ text: String, bindir: String, executables: [String]) -> String {
    text.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
      guard line.hasPrefix("Exec"), let equals = line.firstIndex(of: "=") else { return String(line) }
      let value = line[line.index(after: equals)...]
      let flags = value.prefix { "-@:+!|".contains($0) }
      let rest = value.dropFirst(flags.count)
      let program = rest.prefix { $0 != " " }
      let name = program.split(separator: "/").last.map(String.init) ?? ""
      guard executables.contains(name) else { return String(line) }
      return "\(line[...equals])\(flags)\(bindir)/\(name)\(rest.dropFirst(program.count))"
    }.joined(separator: "\n")
  }

  static func isExecutableFile(_ path: String) -> Bool {
    var isDirectory: ObjCBool = false
    return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && !isDirectory.boolValue
      && FileManager.default.isExecutableFile(atPath: path)
  }

  static func contents(_ path: String) -> String? { try? String(contentsOfFile: path, encoding: .utf8) }

  /// Regular files and symbolic links under `root` (relative paths).
  static func files(under root: String) -> [String] {
    guard let walker = FileManager.default.enumerator(atPath: root) else { return [] }
    var found: [String] = []
    while let relative = walker.nextObject() as? String {
      let attributes = try? FileManager.default.attributesOfItem(atPath: root + "/" + relative)
      if (attributes?[.type] as? FileAttributeType) != .typeDirectory { found.append(relative) }
    }
    return found.sorted()
  }

  @Test func installPutsEverythingInPlaceAndUninstallRemovesExactlyThat() throws {
    let destdir = Harness.temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: destdir) }
    let root = destdir + "/usr/local"
    let executables = try Self.executables()
    #expect(executables.contains("cued") && executables.contains("cuectl"), "\(executables)")

    // Someone else's files in the shared directories: uninstall must leave them (and their directories).
    let foreign = ["/usr/local/bin/someone-elses-tool", "/usr/local/share/man/man1/someone-else.1"]
    for path in foreign {
      try FileManager.default.createDirectory(
        atPath: destdir + (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
      try "not cued's\n".write(toFile: destdir + path, atomically: true, encoding: .utf8)
    }

    let install = try Self.make(["install", "DESTDIR=" + destdir, "PREFIX=/usr/local"])
    try #require(install.status == 0, "make install failed:\n\(install.stdout.suffix(4000))\n\(install.stderr.suffix(4000))")

    // Every executable product, from the release build, runnable: cued, and every other name a
    // link to it (one multi-call executable, one Swift runtime), each name its own program.
    for tool in executables {
      #expect(Self.isExecutableFile(root + "/bin/" + tool), "bin/\(tool) missing or not executable")
    }
    #expect(executables.first == "cued")
    #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: root + "/bin/cued")) == nil, "bin/cued is a link")
    for tool in executables.dropFirst() {
      #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: root + "/bin/" + tool)) == "cued", "bin/\(tool) is not a link to cued")
    }
    try Self.expectEachNameIsItsProgram(bindir: root + "/bin", executables: executables)
    let version = try run(root + "/bin/cued", ["--version"])
    #expect(version.status == 0)
    #expect(version.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == cuedVersion)
    let ctlVersion = try run(root + "/bin/cuectl", ["--version"])
    #expect(ctlVersion.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == cuedVersion)

    // The five sounds, byte for byte, and their README.
    for sound in Self.sounds {
      let installed = FileManager.default.contents(atPath: root + "/share/cued/sounds/\(sound).mp3")
      #expect(installed != nil, "sound \(sound).mp3 missing")
      #expect(installed == FileManager.default.contents(atPath: Harness.repositoryRoot + "/sounds/\(sound).mp3"))
    }
    #expect(FileManager.default.fileExists(atPath: root + "/share/cued/sounds/README.md"))
    // The protocol document and its schema, for client authors.
    #expect(FileManager.default.fileExists(atPath: root + "/share/doc/cued/PROTOCOL.md"))
    #expect(
      FileManager.default.contents(atPath: root + "/share/doc/cued/protocol.schema.json")
        == FileManager.default.contents(atPath: Harness.repositoryRoot + "/docs/protocol.schema.json"))

    // The libcanberra driver, where libcanberra looks for drivers (outside PREFIX), as built: C, no Swift runtime.
    let driver = destdir + CanberraRig.pluginDirectory + "/libcanberra-cued.so"
    #expect(FileManager.default.fileExists(atPath: driver), "no \(driver)")
    let linked = try run("/usr/bin/readelf", ["-d", driver]).stdout
    #expect(linked.contains("libc.so.6") && !linked.contains("swift"), "\(linked)")

    // The units, user ones and system ones apart, running /usr/local/bin/cued.
    let units = try Self.units()
    #expect(units.contains { $0.source.hasSuffix("/cued.service") && $0.scope == "user" }, "no user cued.service in systemd/")
    for (source, scope) in units {
      let name = (source as NSString).lastPathComponent
      let installedPath = root + "/lib/systemd/\(scope)/" + name
      let installed = Self.contents(installedPath)
      #expect(installed != nil, "\(source) not installed as \(installedPath)")
      guard let installed, let original = Self.contents(source) else { continue }
      #expect(installed == Self.expectedUnit(original, bindir: "/usr/local/bin", executables: executables), "\(installedPath)")
      if name.hasSuffix(".service") {
        let programs = installed.split(separator: "\n").filter { $0.hasPrefix("ExecStart=") }.map {
          $0.dropFirst("ExecStart=".count).drop { "-@:+!|".contains($0) }.prefix { $0 != " " }
        }
        #expect(!programs.isEmpty && programs.allSatisfy { $0 == "/usr/local/bin/cued" }, "\(installedPath): \(programs)")
      }
    }

    // Man pages from the binaries' own help (cued, cuectl), and one for every other executable.
    for tool in ["cued", "cuectl"] {
      let page = Self.contents(root + "/share/man/man1/\(tool).1") ?? ""
      #expect(page.contains(".Nm \(tool)"), "man page \(tool).1 missing or not about \(tool)")
      #expect(page.contains(".Sh DESCRIPTION"), "\(tool).1")
    }
    for tool in executables {
      #expect(FileManager.default.fileExists(atPath: root + "/share/man/man1/\(tool).1"), "no man page for \(tool)")
    }
    #expect(Self.contents(root + "/share/man/man1/cuectl.1")?.contains("play") == true, "cuectl.1 lacks its subcommands")

    // Completions for bash, zsh and fish.
    for tool in ["cued", "cuectl"] {
      let bash = Self.contents(root + "/share/bash-completion/completions/" + tool) ?? ""
      let bashRegisters = bash.split(separator: "\n").contains { $0.hasPrefix("complete ") && $0.hasSuffix(" -F _\(tool) \(tool)") }
      #expect(bashRegisters, "no bash completion for \(tool) (complete … -F _\(tool) \(tool))")
      #expect(!bash.hasPrefix("#!"), "a bash completion is sourced: no #! line")
      let zsh = Self.contents(root + "/share/zsh/site-functions/_" + tool) ?? ""
      #expect(zsh.hasPrefix("#compdef \(tool)"), "no zsh completion for \(tool)")
      let fish = Self.contents(root + "/share/fish/vendor_completions.d/\(tool).fish") ?? ""
      let fishCompletes = fish.contains("complete -c '\(tool)' ") || fish.contains("complete -c \(tool) ")
      #expect(fishCompletes, "no fish completion for \(tool)")
    }

    // The manifest lists every file that is there now, but not the foreign ones.
    let manifestPath = root + "/share/cued/install-manifest.txt"
    let manifest = Set((Self.contents(manifestPath) ?? "").split(separator: "\n").map(String.init))
    let present = Self.files(under: destdir).map { "/" + $0 }
    for path in present where !foreign.contains(path) {
      #expect(manifest.contains(path), "\(path) is installed but not in the manifest")
    }
    for path in foreign { #expect(!manifest.contains(path)) }

    // Installing again over it changes nothing that uninstall relies on.
    let again = try Self.make(["install", "DESTDIR=" + destdir, "PREFIX=/usr/local"])
    try #require(again.status == 0, "second make install failed:\n\(again.stderr.suffix(4000))")
    #expect(Self.files(under: destdir).map { "/" + $0 } == present)

    let uninstall = try Self.make(["uninstall", "DESTDIR=" + destdir, "PREFIX=/usr/local"])
    try #require(uninstall.status == 0, "make uninstall failed:\n\(uninstall.stdout)\n\(uninstall.stderr)")
    // Only the foreign files are left, in the directories they need; the rest install made is gone.
    #expect(Self.files(under: destdir).map { "/" + $0 } == foreign.sorted())
    for gone in ["/usr/local/share/cued", "/usr/local/lib", "/usr/local/share/bash-completion", "/usr/local/share/doc"] {
      #expect(!FileManager.default.fileExists(atPath: destdir + gone), "\(gone) was left behind")
    }
  }

  /// Each installed name runs its own program: `--help` of each says its name, the installed cued
  /// serves, and the installed cuectl (the same file under another name) talks to it.
  static func expectEachNameIsItsProgram(bindir: String, executables: [String]) throws {
    for tool in executables {
      let help = try run(bindir + "/" + tool, ["--help"])
      #expect(help.status == 0 && help.stdout.contains("USAGE: \(tool) "), "\(tool) --help:\n\(help.stdout)\(help.stderr)")
    }
    let directory = Harness.temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let socket = directory + "/cued.sock"
    let daemon = try ChildProcess(
      bindir + "/cued", ["--socket", socket, "--device", "null", "--no-config", "--sounds", Harness.repositoryRoot + "/sounds"],
      environment: ["XDG_CONFIG_HOME": directory], standardOutput: .file(directory + "/cued.log"), standardError: .sameAsStandardOutput)
    defer { _ = daemon.terminate(grace: 2) }
    let deadline = Date().addingTimeInterval(15)
    var ping = try run(bindir + "/cuectl", ["ping", "--socket", socket])
    while ping.status != 0 && Date() < deadline && daemon.isRunning {
      usleep(20_000)
      ping = try run(bindir + "/cuectl", ["ping", "--socket", socket])
    }
    #expect(ping.status == 0, "installed cuectl ping: \(ping.stdout)\(ping.stderr)\n\(Self.contents(directory + "/cued.log") ?? "")")
    let list = try run(bindir + "/cuectl", ["list", "--socket", socket])
    #expect(list.status == 0 && Self.sounds.allSatisfy { list.stdout.contains($0) }, "installed cuectl list: \(list.stdout)")
  }

  /// Into an empty DESTDIR every directory is install's own: uninstall leaves nothing at all.
  @Test func uninstallFromAnEmptyRootLeavesNothing() throws {
    let destdir = Harness.temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: destdir) }
    let install = try Self.make(["install", "DESTDIR=" + destdir, "PREFIX=/usr/local"])
    try #require(install.status == 0, "make install failed:\n\(install.stderr.suffix(4000))")
    #expect(!Self.files(under: destdir).isEmpty)
    let uninstall = try Self.make(["uninstall", "DESTDIR=" + destdir, "PREFIX=/usr/local"])
    try #require(uninstall.status == 0, "make uninstall failed:\n\(uninstall.stderr)")
    let left = (try? FileManager.default.contentsOfDirectory(atPath: destdir)) ?? ["?"]
    #expect(left.isEmpty, "left behind: \(left) \(Self.files(under: destdir))")
  }

  /// `dpkg -i` and `dpkg --purge` change the machine (and need root, or sudo without a password), so
  /// this runs only with CUED_TEST_DEB=1; CI sets it. It refuses to touch a cued package that was
  /// installed before, and purges its own even when a check fails.
  @Test(.enabled(if: ProcessInfo.processInfo.environment["CUED_TEST_DEB"] == "1", "set CUED_TEST_DEB=1 to dpkg -i the package"))
  func theDebianPackageInstallsRunsAndPurges() throws {
    func privileged(_ executable: String, _ arguments: [String]) throws -> CommandResult {
      if getuid() == 0 { return try run(executable, arguments, timeout: 300) }
      return try run("/usr/bin/sudo", ["-n", executable] + arguments, timeout: 300)
    }
    func dpkgStatus() throws -> String {
      let status = try run("/usr/bin/dpkg-query", ["-W", "-f=${Status}", "cued"])
      return status.status == 0 ? status.stdout : "not-installed"
    }
    let before = try dpkgStatus()
    try #require(before.hasSuffix("not-installed"), "dpkg knows a cued package here (\(before)); this test would purge it")

    let build = try Self.make(["deb"])
    try #require(build.status == 0, "make deb failed:\n\(build.stdout.suffix(4000))\n\(build.stderr.suffix(4000))")
    let arch = try run("/usr/bin/dpkg", ["--print-architecture"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    let deb = Harness.repositoryRoot + "/dist/cued_\(cuedVersion)-1_\(arch).deb"
    try #require(FileManager.default.fileExists(atPath: deb), "no \(deb)")

    // What is inside, and what it asks for.
    let listing = try run("/usr/bin/dpkg-deb", ["-c", deb]).stdout
    for path in [
      "./usr/bin/cued", "./usr/bin/cuectl", "./usr/share/cued/sounds/pico.mp3", "./usr/lib/systemd/user/cued.service",
      "./usr/lib/systemd/user/cued.socket", "./usr/share/man/man1/cued.1.gz", "./usr/share/doc/cued/copyright",
      "./usr/share/doc/cued/changelog.Debian.gz", "./usr/share/bash-completion/completions/cuectl",
      "./usr/share/doc/cued/protocol.schema.json",
    ] {
      // (a link is listed as `./usr/bin/cuectl -> cued`)
      #expect(listing.contains(path + "\n") || listing.contains(path + " -> "), "\(path) not in the package")
    }
    #expect(!listing.contains("install-manifest"), "make install's manifest does not belong in the package")
    // Its size: one executable with the Swift runtime (cuectl and cued-carousel link to it) and
    // the libcanberra driver, at most 25 MB; all of it at most 30 MB installed.
    let executables = try Self.executables()
    var programBytes = 0
    for line in listing.split(separator: "\n") {
      let fields = line.split(separator: " ", omittingEmptySubsequences: true)
      guard fields.count >= 6, let bytes = Int(fields[2]) else { continue }
      let path = String(fields[5])
      if line.hasPrefix("l") {
        if path.hasPrefix("./usr/bin/") { #expect(fields.last == "cued", "\(line): a link, but not to cued") }
      } else if line.hasPrefix("-") && (path.hasPrefix("./usr/bin/") || path.hasPrefix("./usr/lib/") && (path.hasSuffix(".so") || path.contains(".so."))) {
        programBytes += bytes
      }
    }
    for tool in executables { #expect(listing.contains("./usr/bin/\(tool)"), "no /usr/bin/\(tool) in the package") }
    #expect(programBytes > 0 && programBytes <= 25_000_000, "executables and libraries: \(programBytes) bytes")
    let installedKiB = Int(try run("/usr/bin/dpkg-deb", ["-f", deb, "Installed-Size"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    #expect(installedKiB > 0 && installedKiB * 1024 <= 30_000_000, "Installed-Size: \(installedKiB) KiB")
    #expect(listing.contains("." + CanberraRig.pluginDirectory + "/libcanberra-cued.so\n"), "the libcanberra driver is not in the package")
    let depends = try run("/usr/bin/dpkg-deb", ["-f", deb, "Depends"]).stdout
    // libcanberra0: the driver links libcanberra.so.0 (dpkg-shlibdeps finds it).
    for library in ["libasound2", "libmpg123-0", "libebur128-1", "libsndfile1", "libflac12", "libc6", "libcanberra0"] {
      #expect(depends.contains(library), "Depends: \(depends)")
    }
    #expect(!depends.contains("swift"), "Depends: \(depends)")
    // Packed relative relocations (RELEASE_FLAGS) run only on glibc 2.36's loader.
    #expect(depends.contains("libc6 (>= 2.36)"), "Depends: \(depends)")
    // The sound-server clients are loaded when chosen: recommended, not depended on.
    #expect(!depends.contains("libpulse") && !depends.contains("libpipewire") && !depends.contains("libglib"), "Depends: \(depends)")
    let recommends = try run("/usr/bin/dpkg-deb", ["-f", deb, "Recommends"]).stdout
    for package in ["libpipewire-0.3-0", "libpulse0", "sound-theme-freedesktop", "libglib2.0-0"] {
      #expect(recommends.contains(package), "Recommends: \(recommends)")
    }
    if FileManager.default.fileExists(atPath: "/usr/bin/lintian") {
      let lintian = try run("/usr/bin/lintian", ["--tag-display-limit", "0", deb], timeout: 600)
      let errors = lintian.stdout.split(separator: "\n").filter { $0.hasPrefix("E:") }
      #expect(errors.isEmpty && lintian.status == 0, "lintian:\n\(lintian.stdout)\(lintian.stderr)")
    }

    defer {
      if (try? dpkgStatus().hasSuffix("not-installed")) != true {
        _ = try? privileged("/usr/bin/dpkg", ["--purge", "cued"])
      }
    }
    let install = try privileged("/usr/bin/dpkg", ["-i", deb])
    try #require(install.status == 0, "dpkg -i failed:\n\(install.stdout)\n\(install.stderr)")
    #expect(try dpkgStatus() == "install ok installed")
    let shown = try run("/usr/bin/dpkg", ["-s", "cued"])
    #expect(shown.stdout.contains("Status: install ok installed"), "\(shown.stdout)")

    let version = try run("/usr/bin/cued", ["--version"])
    #expect(version.status == 0 && version.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == cuedVersion)
    let libraries = try run("/usr/bin/ldd", ["/usr/bin/cued"]).stdout
    #expect(!libraries.contains("/opt/swift") && !libraries.contains("not found"), "ldd /usr/bin/cued:\n\(libraries)")
    // What cuectl starts with is what cued is linked to: none of the libraries cued loads when it
    // needs them (the sound servers' clients, GLib, sd-bus), nor libstdc++.so.
    let needed = try run("/usr/bin/readelf", ["-d", "/usr/bin/cued"]).stdout
    // libstdc++ is linked in: its shared library's symbol tables alone cost 1 MiB of RSS (the Makefile).
    for library in ["libpulse", "libpipewire", "libglib", "libgio", "libsystemd", "libsndfile", "libFLAC", "libswift", "libstdc++"] {
      #expect(!needed.contains(library), "/usr/bin/cued needs \(library):\n\(needed)")
    }
    try Self.expectEachNameIsItsProgram(bindir: "/usr/bin", executables: executables)
    #expect(FileManager.default.fileExists(atPath: "/usr/lib/systemd/system/cued.socket"))
    #expect(try run("/usr/bin/getent", ["group", "cued"]).status == 0, "postinst made no cued group")

    let purge = try privileged("/usr/bin/dpkg", ["--purge", "cued"])
    #expect(purge.status == 0, "dpkg --purge failed:\n\(purge.stderr)")
    #expect(!FileManager.default.fileExists(atPath: "/usr/bin/cued"))
    #expect(!FileManager.default.fileExists(atPath: "/usr/share/cued"))
    #expect(try dpkgStatus().hasSuffix("not-installed"))
  }
}
