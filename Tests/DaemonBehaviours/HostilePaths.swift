#if canImport(Testing)
import CuePosix
import CueProtocol
import DaemonTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Hostile paths and sound files as a client sees them: a path outside the sound directories is
/// refused with bad-path naming it (unless `--allow-any-path`), a directory only spelled alike is
/// outside, a hostile sound directory loads what it can, a file replaced on disk is picked up by
/// reload. Written once against `DaemonUnderTest`; cued's log lines, cuectl's output and another
/// user stay live (HostileInputTests).
public enum HostilePaths {
  /// Every body, for the suites that run them.
  public static let all: [Behaviour] = [
    Behaviour("pathsOutsideTheSoundDirectoriesAreRefusedWithBadPathNamingThePath", pathsOutsideTheSoundDirectoriesAreRefusedWithBadPathNamingThePath),
    Behaviour("withAllowAnyPathTheSamePathsLoadAndPlay", withAllowAnyPathTheSamePathsLoadAndPlay),
    Behaviour(
      "aDirectoryWhoseNameIsOnlyCanonicallyEquivalentToTheSoundDirectoryIsOutside",
      aDirectoryWhoseNameIsOnlyCanonicallyEquivalentToTheSoundDirectoryIsOutside),
    Behaviour("aHostileSoundDirectoryLoadsWhatItCanAndEachCuePlays", aHostileSoundDirectoryLoadsWhatItCanAndEachCuePlays),
    Behaviour("aFileReplacedOnDiskIsPickedUpByReload", aFileReplacedOnDiskIsPickedUpByReload),
  ]

  // MARK: - Paths

  /// The directory `path` is in.
  static func parent(of path: String) -> String { String(path[..<(path.lastIndex(of: "/") ?? path.endIndex)]) }

  /// Beside the sound directory `sounds` (which holds `pico`): `outside.mp3` next to (not in) it, a
  /// symlink inside pointing at it, and a subdirectory for `..` that stays inside. Returns the
  /// directory both are in.
  public static func placeAnOutsideFile(beside sounds: String) throws -> String {
    let dir = parent(of: sounds)
    try FilePlays.copy("tone-44100-stereo.mp3", to: dir + "/outside.mp3")
    try FileManager.default.createSymbolicLink(atPath: sounds + "/escape.mp3", withDestinationPath: dir + "/outside.mp3")
    try FileManager.default.createDirectory(atPath: sounds + "/sub", withIntermediateDirectories: false)
    return dir
  }

  /// The ways to `outside.mp3` from the directory `placeAnOutsideFile` returned.
  public static func escapingPaths(_ dir: String) -> [String] {
    [dir + "/outside.mp3", dir + "/sounds/../outside.mp3", dir + "/sounds/sub/../../outside.mp3", dir + "/sounds/escape.mp3"]
  }

  /// A daemon serving `pico` and `loop`, with the outside file beside its sound directory.
  static func startWithAnOutsideFile(_ start: DaemonStarter, allowAnyPath: Bool) throws -> (DaemonUnderTest, String) {
    var setup = DaemonSetup(cues: Connections.cues)
    setup.allowAnyPath = allowAnyPath
    let daemon = try start(setup)
    return (daemon, try placeAnOutsideFile(beside: daemon.soundDirectory))
  }

  public static func pathsOutsideTheSoundDirectoriesAreRefusedWithBadPathNamingThePath(_ start: DaemonStarter) throws {
    let (daemon, dir) = try startWithAnOutsideFile(start, allowAnyPath: false)
    let client = try daemon.connect()
    for path in escapingPaths(dir) + ["/etc/passwd"] {
      for op in ["sound.create", "player.create"] {
        let error = try client.requestError(op, [("path", .string(path))])
        #expect(error["code"] == "bad-path", "\(op) \(path): \(error)")
        let message = error["message"]?.stringValue ?? ""
        #expect(message.contains(path), "\(message)")
        #expect(message.contains("is not a file inside the sound directories (\(daemon.soundDirectory))"), "\(message)")
        #expect(message.contains("cued reads only files inside them. Move it into one of them, or start cued with --allow-any-path"), "\(message)")
      }
    }
    // A path that does not exist gets the same message as one outside: no probing which files exist.
    for absent in [dir + "/absent.mp3", dir + "/sounds/absent.mp3"] {
      let missing = try client.requestError("sound.create", [("path", .string(absent))])
      #expect(missing["code"] == "bad-path")
      #expect(missing["message"]?.stringValue?.contains(absent + " is not a file inside the sound directories") == true, "\(missing)")
    }
    // `..` that stays inside is fine, and so is a symlink inside pointing inside.
    try FileManager.default.createSymbolicLink(atPath: dir + "/sounds/alias.mp3", withDestinationPath: "pico.mp3")
    for path in [dir + "/sounds/sub/../pico.mp3", dir + "/sounds/alias.mp3"] {
      let reply = try client.request("sound.create", [("path", .string(path))])
      #expect(reply["sound"] != nil, "\(path): \(reply)")
    }
  }

  public static func withAllowAnyPathTheSamePathsLoadAndPlay(_ start: DaemonStarter) throws {
    let (daemon, dir) = try startWithAnOutsideFile(start, allowAnyPath: true)
    let client = try daemon.connect()
    for path in escapingPaths(dir) {
      let sound = try client.request("sound.create", [("path", .string(path))])
      let soundID = try #require(sound["sound"], "\(path): \(sound)")
      try client.request("sound.play", [("sound", soundID)])
      try client.request("player.create", [("path", .string(path))])
    }
    // Any path, but still only MP3 files: /etc/passwd is read and refused for what it is.
    let passwd = try client.requestError("sound.create", [("path", "/etc/passwd")])
    #expect(passwd["code"] == "bad-path")
    #expect(passwd["message"]?.stringValue?.contains("/etc/passwd: no MPEG audio frame found") == true, "\(passwd)")
  }

  /// The sound directory is ".../snd-café" spelled NFD (e + U+0301); ".../snd-café" spelled NFC
  /// (U+00E9) is another directory on disk, outside it.
  public static func aDirectoryWhoseNameIsOnlyCanonicallyEquivalentToTheSoundDirectoryIsOutside(_ start: DaemonStarter) throws {
    var setup = DaemonSetup(cues: ["x": "tone-48000-mono.mp3"])
    setup.soundDirectoryName = "snd-cafe\u{301}"
    let daemon = try start(setup)
    let sounds = daemon.soundDirectory
    let dir = parent(of: sounds)
    let lookalike = dir + "/snd-caf\u{E9}"
    try FileManager.default.createDirectory(atPath: lookalike, withIntermediateDirectories: false)
    try FilePlays.copy("tone-48000-mono.mp3", to: lookalike + "/x.mp3")
    // Two entries on disk (String's == would call them one name).
    #expect(try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasPrefix("snd-caf") }.count == 2)
    let client = try daemon.connect()
    #expect(try client.request("sound.create", [("path", .string(sounds + "/x.mp3"))])["sound"] != nil)
    let outside = try client.requestError("sound.create", [("path", .string(lookalike + "/x.mp3"))])
    #expect(outside["code"] == "bad-path", "\(outside)")
  }

  // MARK: - Sound files

  /// The cues a hostile sound directory (`fillHostileDirectory`) loads.
  public static let hostileLoads = ["good", "ding dong", "ピコ", "a\nb", "truncated"]

  /// The files of a hostile sound directory that do not load, and (part of) the reason given for each.
  public static let hostileSkips: [(file: String, reason: String)] = [
    ("empty.mp3", "the file is empty"),
    ("junk.mp3", "it is not an MP3, Ogg, WAV or FLAC file"),
    ("x\ncued: critical: forged.mp3", "it is not an MP3, Ogg, WAV or FLAC file"),
    ("tag-only.mp3", "no MPEG audio after it"),
    ("glued.mp3", "its sample rate changes mid-file (44100 Hz, then 48000 Hz); re-encode it at one rate"),
    ("folder.mp3", "it is a directory, not a file"),
    ("pipe.mp3", "it is a FIFO (named pipe), not a regular file"),
    ("loop-a.mp3", "it is a symlink loop"),
    ("loop-b.mp3", "it is a symlink loop"),
    ("dangling.mp3", "it is a dangling symlink: its target nowhere.mp3 does not exist"),
  ]

  /// Fills `sounds` with files that load under odd names, files that are broken in every way a
  /// decoder meets, and entries that are no file at all (a directory, a FIFO, symlink loops, a
  /// dangling symlink). Starting at all shows the FIFO did not block the scan.
  public static func fillHostileDirectory(_ sounds: String) throws {
    let good = try Data(contentsOf: URL(fileURLWithPath: TestPaths.fixture("tone-48000-mono.mp3")))
    let random = try Data(contentsOf: URL(fileURLWithPath: TestPaths.fixture("random.mp3")))
    let tag = Data("ID3".utf8) + Data([3, 0, 0, 0, 0, 0, 16]) + Data("TIT2".utf8) + Data([0, 0, 0, 6, 0, 0, 0]) + Data("title".utf8)
    let glued = try Data(contentsOf: URL(fileURLWithPath: TestPaths.fixture("tone-44100-stereo.mp3")))
      + Data(contentsOf: URL(fileURLWithPath: TestPaths.fixture("loop-48000-stereo.mp3")))
    for name in hostileLoads where name != "truncated" { try good.write(to: URL(fileURLWithPath: sounds + "/" + name + ".mp3")) }
    try FilePlays.copy("truncated.mp3", to: sounds + "/truncated.mp3")
    try Data().write(to: URL(fileURLWithPath: sounds + "/empty.mp3"))
    try random.write(to: URL(fileURLWithPath: sounds + "/junk.mp3"))
    // A broken file whose name tries to forge a log line of its own.
    try random.write(to: URL(fileURLWithPath: sounds + "/x\ncued: critical: forged.mp3"))
    try tag.write(to: URL(fileURLWithPath: sounds + "/tag-only.mp3"))
    try glued.write(to: URL(fileURLWithPath: sounds + "/glued.mp3"))
    try FileManager.default.createDirectory(atPath: sounds + "/folder.mp3", withIntermediateDirectories: false)
    guard mkfifo(sounds + "/pipe.mp3", 0o644) == 0 else { throw HarnessError("mkfifo \(sounds)/pipe.mp3: errno \(errno)") }
    try FileManager.default.createSymbolicLink(atPath: sounds + "/loop-a.mp3", withDestinationPath: "loop-b.mp3")
    try FileManager.default.createSymbolicLink(atPath: sounds + "/loop-b.mp3", withDestinationPath: "loop-a.mp3")
    try FileManager.default.createSymbolicLink(atPath: sounds + "/dangling.mp3", withDestinationPath: "nowhere.mp3")
  }

  /// `list` names each cue exactly (a newline in a name too), each plays, and a reload names each
  /// file skipped and why; what the log says of them, and cuectl's plays, are live (HostileInputTests).
  public static func aHostileSoundDirectoryLoadsWhatItCanAndEachCuePlays(_ start: DaemonStarter) throws {
    let daemon = try start(DaemonSetup(prepare: fillHostileDirectory))
    let client = try daemon.connect()
    let names = try client.request("list")["cues"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? []
    #expect(Set(names) == Set(hostileLoads), "\(names)")
    #expect(names.count == hostileLoads.count, "\(names)")
    for name in ["ding dong", "ピコ", "good", "a\nb"] {
      let played = try client.request("play", [("cue", .string(name))])
      #expect(played["voice"] != nil, "play \(name): \(played)")
    }
    // A reload names each file skipped and why, as the log does at start (HostileInputTests).
    let failed = try client.request("reload")["failed"]?.arrayValue ?? []
    let reasons = Dictionary(failed.map { ($0["path"]?.stringValue ?? "?", $0["reason"]?.stringValue ?? "") }) { first, _ in first }
    #expect(reasons.count == hostileSkips.count, "\(failed)")
    for (file, reason) in hostileSkips {
      #expect(reasons[daemon.soundDirectory + "/" + file]?.contains(reason) == true, "\(file): \(failed)")
    }
  }

  /// A file renamed over a cue's (as an editor saves it) is that cue's new sound after `reload`. Not
  /// watched: the reload is what picks it up.
  public static func aFileReplacedOnDiskIsPickedUpByReload(_ start: DaemonStarter) throws {
    var setup = DaemonSetup(cues: ["swap": "tone-48000-mono.mp3", "steady": "loop-48000-stereo.mp3"])
    setup.watchSounds = false
    let daemon = try start(setup)
    let client = try daemon.connect()
    let sounds = daemon.soundDirectory
    let new = parent(of: sounds) + "/new.mp3"
    try FilePlays.copy("tone-44100-vbr.mp3", to: new)
    #expect(rename(new, sounds + "/swap.mp3") == 0)
    let reload = try client.request("reload")
    #expect(reload["changed"] == ["swap"], "\(reload)")
    let cues = try client.request("list")["cues"]?.arrayValue ?? []
    #expect(cues.first { $0["name"] == "swap" }?["sourceRate"]?.intValue == 44100)
  }
}
#endif
