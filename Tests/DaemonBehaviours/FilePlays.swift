#if canImport(Testing)
import CueDecoding
import CuePosix
import CueProtocol
import DaemonTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `play` with a `file` (a sound file that is not a cue), heard in the daemon's output, each body
/// written once against `DaemonUnderTest`. What cuectl makes of a path stays live (FilePlayTests).
public enum FilePlays {
  public static let all: [Behaviour] = [
    Behaviour("aFileOutsideTheSoundDirectoriesIsHeardAndAReplacedOneItsNewSound", aFileOutsideTheSoundDirectoriesIsHeardAndAReplacedOneItsNewSound),
    Behaviour("aClientsCeilingHoldsAFilePlay", aClientsCeilingHoldsAFilePlay),
  ]

  /// Copies the fixture `name` to `path`.
  static func copy(_ fixture: String, to path: String) throws {
    try Files.write(try Files.read(path: TestPaths.fixture(fixture), limit: 64 << 20), to: path)
  }

  static func aFileOutsideTheSoundDirectoriesIsHeardAndAReplacedOneItsNewSound(_ start: DaemonStarter) throws {
    let daemon = try start(DaemonSetup(cues: ["pico": "tone-48000-mono.mp3"]))
    let ding = try Files.makeTemporaryDirectory(prefix: "cued-elsewhere") + "/ding.wav"
    let a = "tone-48000-mono.wav", b = "tone-44100-stereo.mp3"
    try copy(a, to: ding)
    let client = try daemon.connect()
    let first = try client.request("play", [("file", .string(ding)), ("notify", true)])
    #expect(first["played"] == .bool(true) && first["file"] == .string(ding), "\(JSONWriter.write(first))")
    try client.waitForEvent("finished") { $0["voice"] == first["voice"] }
    // Replaced by an editor's save (a new file renamed over it): the next play decodes it afresh.
    try copy(b, to: ding + ".new")
    #expect(rename(ding + ".new", ding) == 0)
    let reply = try client.request("play", [("file", .string(ding)), ("notify", true)])
    #expect(reply["played"] == .bool(true) && reply["file"] == .string(ding))
    let finished = try client.waitForEvent("finished") { $0["voice"] == reply["voice"] }
    #expect(finished["cue"] == "ding" && finished["reason"] == "end")
    let capture = try daemon.finish()
    // Heard in order, each sample for sample: the file as it was at each play.
    var from = 0
    for (step, file) in [a, b].enumerated() {
      let expected = try AudioFileDecoder.decode(path: TestPaths.fixture(file)).buffer.toArray()
      let at = frameHolding(expected, in: capture, from: from)
      #expect(at != nil, "play \(step + 1) is not \(file)'s samples")
      from = (at ?? from) + expected.count / 2
    }
  }

  static func aClientsCeilingHoldsAFilePlay(_ start: DaemonStarter) throws {
    let daemon = try start(DaemonSetup(cues: ["pico": "tone-48000-mono.mp3"], config: "[clients.kiosk]\nceiling = \"quiet\"\n"))
    let kiosk = try daemon.connect()
    try kiosk.request("hello", [("client", "kiosk")])
    let file = TestPaths.fixture("tone-48000-mono.wav")
    let held = try kiosk.request("play", [("file", .string(file)), ("notify", true)])
    #expect(held["played"] == .bool(false) && held["reason"] == "level", "\(JSONWriter.write(held))")
    let finished = try kiosk.waitForEvent("finished") { $0["voice"] == held["voice"] }
    #expect(finished["reason"] == "level")
    // Another client has no ceiling: the same file sounds.
    #expect(try daemon.connect().request("play", [("file", .string(file))])["played"] == .bool(true))
  }
}
#endif
