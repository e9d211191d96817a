import CueDecoding
import CuePosix
import CueProtocol
import DaemonBehaviours
import Testing

#if canImport(Glibc)
import Glibc
#endif

@testable import CueDaemon

/// `play` with a `file`: a sound file that is not a cue, decoded once and kept by path and
/// identity (the cache theme events use), under every rule a play is under.
@Suite("play with a file, in process")
struct FilePlayTests {
  @Test func theFirstPlayWaitsForTheDecodeAndTheNextStartsAtOnceWithTheFilesSamples() throws {
    let rig = try VoicePathRig()
    let line = #"{"id":1,"op":"play","file":"\#(rig.file)","loops":-1,"notify":true}"#
    #expect(!rig.client.request(line).contains { $0["id"] != nil }, "answered before the file was decoded")
    rig.embedded.finishBackgroundWork()
    let first = try #require(rig.client.received().first { $0["id"] == .number(1) })
    #expect(first["played"] == .bool(true))
    #expect(first["file"] == .string(rig.file))
    VoicePathTests.expectLevel(rig.peak(), 1, "the file's sine")
    // Kept: the second play is answered at once, and nothing more was decoded.
    let second = rig.client.request(#"{"id":2,"op":"play","file":"\#(rig.file)"}"#)
    #expect(second.first { $0["id"] == .number(2) }?["played"] == .bool(true))
    #expect(rig.embedded.daemon.fileSounds.kept(rig.file).count == 1)
    // Its events name the file's sound (its name without the extension), as a theme event's do.
    let voice = try #require(first["voice"]?.intValue)
    rig.ask(#""op":"stop","voice":\#(voice)"#)
    rig.embedded.runCycles(10)
    let finished = rig.events().first { $0["event"] == .string("finished") && $0["voice"]?.intValue == voice }
    #expect(finished?["cue"] == .string("tone"))
    #expect(finished?["reason"] == .string("stopped"))
  }

  @Test func aReplacedFileIsDecodedAfreshAndPlaysItsNewSound() throws {
    let rig = try VoicePathRig()
    #expect(rig.play(.file).played)
    VoicePathTests.expectLevel(rig.peak(), 1, "the first version")
    rig.ask(#""op":"stop","all":true"#)
    rig.embedded.runCycles(20)
    // An editor's save: a new file renamed over the old one.
    try Files.write(VoicePathRig.sineWAV(amplitude: 0.125), to: rig.file + ".new")
    #expect(rename(rig.file + ".new", rig.file) == 0)
    let reply = rig.ask(#""op":"play","file":"\#(rig.file)","loops":-1"#)
    #expect(reply["played"] == .bool(true))
    VoicePathTests.expectLevel(rig.peak(), 0.5, "the new version")
    #expect(rig.embedded.daemon.fileSounds.kept(rig.file).count == 1, "the old version is still kept")
  }

  /// Any client may name any file: what is kept is bounded in bytes as well as in files.
  @Test func pastTheByteLimitTheLeastRecentlyPlayedFileIsLetGo() throws {
    let rig = try VoicePathRig()
    let files = rig.embedded.daemon.fileSounds
    let other = rig.file + ".copy.wav"
    try Files.write(VoicePathRig.toneWAV(), to: other)
    #expect(rig.play(.file).played)
    let one = try #require(files.kept(rig.file).first?.byteCount)
    files.byteLimit = one * 3 / 2
    #expect(rig.ask(#""op":"play","file":"\#(other)""#)["played"] == .bool(true))
    #expect(files.count == 1 && files.kept(rig.file).isEmpty && files.kept(other).count == 1)
    // What played keeps its audio: the first voice still sounds.
    #expect(rig.embedded.daemon.voices.soundingCount == 2)
  }

  @Test func pathsThatAreNotPlayableSoundFilesAreRefusedWithThePathAndTheReason() throws {
    let rig = try VoicePathRig()
    let directory = String(rig.file.dropLast("/tone.wav".count))
    try Files.write(Array("this is not a sound file, only text that goes on for a while".utf8), to: directory + "/notes.wav")
    let cases: [(String, String, String)] = [
      ("tone.wav", "invalid-request", "absolute path"),
      ("", "invalid-request", "absolute path"),
      (directory + "/missing.wav", "bad-path", directory + "/missing.wav does not exist"),
      (directory, "bad-path", directory + " is a directory"),
      ("/dev/null", "bad-path", "/dev/null is not a regular file"),
      (directory + "/notes.wav", "bad-path", directory + "/notes.wav: "),
    ]
    for (file, code, says) in cases {
      let reply = rig.ask(#""op":"play","file":"\#(file)""#)
      #expect(reply["error"]?["code"] == .string(code), "\(file): \(reply)")
      let message = reply["error"]?["message"]?.stringValue ?? ""
      #expect(message.contains(says), "\(file): \(message)")
    }
    let both = rig.ask(#""op":"play","cue":"tone","file":"\#(rig.file)""#)
    #expect(both["error"]?["code"] == .string("invalid-request"))
    #expect(rig.embedded.daemon.voices.soundingCount == 0)
    // The daemon serves on, and a good file still plays.
    #expect(rig.play(.file).played)
  }

  /// A client of another user (let in by --allow-group) could not read the file itself: it may
  /// name only files inside the sound directories, as with player.create's path.
  @Test func anotherUsersClientIsHeldToTheSoundDirectories() throws {
    let rig = try VoicePathRig()
    rig.client.connection.isOwnUser = false
    let outside = rig.ask(#""op":"play","file":"\#(rig.file)""#)
    #expect(outside["error"]?["code"] == .string("bad-path"))
    #expect(outside["error"]?["message"]?.stringValue?.contains("not a file inside the sound directories") == true)
    let inside = String(rig.file.dropLast("/elsewhere/tone.wav".count)) + "/sounds/tone.wav"
    #expect(rig.ask(#""op":"play","file":"\#(inside)""#)["played"] == .bool(true))
  }

  /// `prepare` (libcanberra's ca_context_cache through the driver): the file is decoded and kept,
  /// answered once it is, and nothing plays; the first play then starts at once, as a second would.
  @Test func prepareDecodesAndKeepsTheFileSoItsFirstPlayIsAnsweredAtOnce() throws {
    let rig = try VoicePathRig()
    let line = #"{"id":1,"op":"prepare","file":"\#(rig.file)"}"#
    #expect(!rig.client.request(line).contains { $0["id"] != nil }, "answered before the file was decoded")
    #expect(rig.embedded.daemon.fileSounds.kept(rig.file).isEmpty)
    rig.embedded.finishBackgroundWork()
    let prepared = try #require(rig.client.received().first { $0["id"] == .number(1) })
    let kept = try #require(rig.embedded.daemon.fileSounds.kept(rig.file).first)
    #expect(prepared["ok"] == .bool(true) && prepared["file"] == .string(rig.file), "\(prepared)")
    #expect(prepared["bytes"]?.intValue == kept.byteCount)
    #expect(rig.embedded.daemon.voices.soundingCount == 0, "prepare played something")
    // The first play is answered within its request (no decode to wait for), and plays the file.
    let first = rig.client.request(#"{"id":2,"op":"play","file":"\#(rig.file)","loops":-1}"#)
    #expect(first.first { $0["id"] == .number(2) }?["played"] == .bool(true), "\(first)")
    VoicePathTests.expectLevel(rig.peak(), 1, "the prepared file's sine")
    // Prepared again: answered at once from what is kept.
    #expect(rig.client.request(#"{"id":3,"op":"prepare","file":"\#(rig.file)"}"#).first { $0["id"] == .number(3) }?["bytes"]?.intValue == kept.byteCount)
    #expect(rig.embedded.daemon.fileSounds.count == 1)
  }

  @Test func prepareOfAThemeEventKeepsItsFileAndRefusesWhatPlayRefuses() throws {
    let rig = try VoicePathRig()
    let prepared = rig.ask(#""op":"prepare","event":"tone""#)
    let file = try #require(prepared["file"]?.stringValue, "\(prepared)")
    #expect(file.hasSuffix("/data/sounds/tone.wav"))
    #expect(rig.embedded.daemon.fileSounds.kept(file).count == 1)
    #expect(rig.ask(#""op":"prepare","event":"no-such-sound""#)["error"]?["code"] == .string("unknown-event"))
    #expect(rig.ask(#""op":"prepare","file":"tone.wav""#)["error"]?["code"] == .string("invalid-request"))
    #expect(rig.ask(#""op":"prepare","event":"tone","file":"\#(rig.file)""#)["error"]?["code"] == .string("invalid-request"))
    #expect(rig.ask(#""op":"prepare","file":"/nonexistent/tone.wav""#)["error"]?["code"] == .string("bad-path"))
    // Another user's client is held to the sound directories, as for play.
    rig.client.connection.isOwnUser = false
    #expect(rig.ask(#""op":"prepare","file":"\#(rig.file)""#)["error"]?["code"] == .string("bad-path"))
  }

  @Test func helloSaysFilePlay() throws {
    let rig = try VoicePathRig()
    let features = rig.ask(#""op":"hello""#)["capabilities"]?["features"]?.arrayValue ?? []
    #expect(features.contains(.string("file-play")))
  }

  /// The file-play bodies (DaemonBehaviours/FilePlays.swift): what is heard, on the daemon in
  /// process; EndToEndTests runs the same bodies on the real cued (`make test-live`).
  @Test(arguments: FilePlays.all) func heard(_ behaviour: Behaviour) throws {
    try behaviour.body(InProcessDaemon.start)
  }
}
