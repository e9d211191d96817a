import CueProtocol
import DaemonTestSupport
import FoundationEssentials
import Testing

/// Clients written in another language from docs/PROTOCOL.md alone (Python, standard library only),
/// run against the real daemon: if the document and the daemon disagree, these fail.
@Suite("Clients written from the protocol document alone")
struct OutsideClientTests {
  /// A daemon on the shared test output whose sound directory holds pico, tick and wrap, and
  /// notes.txt (not an MP3), with a short idle window; returns it and its sound directory.
  static func start() throws -> (DaemonProcess, String) {
    let dir = Harness.temporaryDirectory()
    let sounds = try Harness.soundDirectory(
      in: dir, ["pico": "tone-48000-mono.mp3", "tick": "tone-44100-stereo.mp3", "wrap": "loop-48000-stereo.mp3"])
    try "not audio\n".write(toFile: sounds + "/notes.txt", atomically: true, encoding: .utf8)
    let output = Harness.sharedOutput
    let daemon = try DaemonProcess(
      socket: dir + "/cued.sock", arguments: ["--sounds", sounds, "--device", output.device, "--idle-timeout", "0.3"],
      environment: output.environment, logPath: dir + "/cued.log")
    return (daemon, sounds)
  }

  static func python(_ script: String, _ arguments: [String], timeout: Double = 60) throws -> CommandResult {
    try run("/usr/bin/env", ["python3", Harness.repositoryRoot + "/" + script] + arguments, timeout: timeout)
  }

  /// Tests/Protocol/transcripts.py with this build's daemon and the shipped sounds (which the
  /// document's transcripts play); it starts a daemon of its own for each transcript.
  static func transcripts(_ arguments: [String]) throws -> CommandResult {
    try python(
      "Tests/Protocol/transcripts.py", ["--cued", Harness.cued, "--sounds", Harness.repositoryRoot + "/sounds"] + arguments,
      timeout: 300)
  }

  /// A document of two transcripts, hello (whose reply names `version`) and ping; returns its path.
  static func smallDocument(version: String) throws -> String {
    let path = Harness.temporaryDirectory() + "/small.md"
    let hello = try #require(try Self.helloReply(), "docs/PROTOCOL.md has no hello reply")
    try """
      # A small document

      <!-- transcript: hello -->
      ```
      {"id":1,"op":"hello","client":"docs"}
      \(hello.replacingOccurrences(of: "\"version\":\"\(cuedVersion)\"", with: "\"version\":\"\(version)\""))
      ```

      <!-- transcript: ping -->
      ```
      {"id":2,"op":"ping"}
      {"id":2,"ok":true,"pong":true}
      ```

      """.write(toFile: path, atomically: true, encoding: .utf8)
    return path
  }

  /// The hello reply that docs/PROTOCOL.md shows first.
  static func helloReply() throws -> String? {
    let document = try String(contentsOfFile: Harness.repositoryRoot + "/docs/PROTOCOL.md", encoding: .utf8)
    return document.split(separator: "\n").first { $0.hasPrefix("{\"id\":1,\"ok\":true,\"server\":\"cued\"") }.map(String.init)
  }

  @Test func thePythonClientPlaysPausesResumesAndHandlesEvents() throws {
    let (daemon, _) = try Self.start()
    defer { daemon.stop() }
    let result = try Self.python("examples/cued_client.py", ["--socket", daemon.socket])
    #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    #expect(result.stdout.contains("player") && result.stdout.contains("paused at"))
    #expect(result.stdout.hasSuffix("ok\n"), "\(result.stdout)")
  }

  @Test func everyOrderingAndDeferralRuleHoldsForPipelinedRequests() throws {
    let (daemon, sounds) = try Self.start()
    defer { daemon.stop() }
    let result = try Self.python("Tests/Protocol/ordering.py", ["--socket", daemon.socket, "--sounds", sounds])
    #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    #expect(!result.stdout.contains("FAIL"), "\(result.stdout)")
    #expect(result.stdout.contains("all ordering rules hold"))
  }

  /// Every transcript of docs/PROTOCOL.md is what the daemon sends today: replayed against fresh
  /// daemons on the silent sink, as the document says, and compared line by line. The PipeWire pass
  /// of `make test` skips it: the document shows the silent sink, and this pass already ran it.
  @Test(.disabled(if: ProcessInfo.processInfo.environment["CUED_TEST_DEVICE"] == "pipewire", "the transcripts are of the silent sink"))
  func everyTranscriptInTheProtocolDocumentIsWhatTheDaemonSends() throws {
    let result = try Self.transcripts([])
    #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    let summary = result.stdout.split(separator: "\n").last.map(String.init) ?? ""
    #expect(summary.hasSuffix(", all match") && !summary.hasPrefix("0 transcripts"), "\(summary)")
  }

  /// The check is not a rubber stamp: a reply that drifted fails it, naming the block and the line
  /// and what differs; --update writes what the daemon said, after which the document passes.
  @Test func theTranscriptCheckFailsOnADriftedReplyAndUpdateRepairsIt() throws {
    let document = try Self.smallDocument(version: "0.0.9")
    let drifted = try Self.transcripts(["--doc", document])
    #expect(drifted.status == 1, "\(drifted.stdout)\(drifted.stderr)")
    #expect(drifted.stdout.contains("small.md:6 (transcript hello): hello/version: \"\(cuedVersion)\", not \"0.0.9\""), "\(drifted.stdout)")
    #expect(drifted.stdout.contains("2 transcripts, ") && drifted.stdout.contains(": 1 failed"), "\(drifted.stdout)")

    let update = try Self.transcripts(["--doc", document, "--update"])
    #expect(update.status == 0, "\(update.stdout)\(update.stderr)")
    let repaired = try String(contentsOfFile: document, encoding: .utf8)
    #expect(try repaired == String(contentsOfFile: try Self.smallDocument(version: cuedVersion), encoding: .utf8))
    let check = try Self.transcripts(["--doc", document])
    #expect(check.status == 0 && check.stdout.hasSuffix("all match\n"), "\(check.stdout)")
  }

  /// A block that shows daemon lines must say what it is (transcript, excerpt or example), so that
  /// no transcript escapes the check.
  @Test func aBlockOfDaemonLinesWithoutAnAnnotationFailsTheCheck() throws {
    let document = try Self.smallDocument(version: cuedVersion)
    let text = try String(contentsOfFile: document, encoding: .utf8) + "```\n{\"id\":3,\"ok\":true,\"pong\":true}\n```\n"
    try text.write(toFile: document, atomically: true, encoding: .utf8)
    let result = try Self.transcripts(["--doc", document])
    #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
    #expect(result.stdout.contains("small.md:14 (block): it holds daemon lines but has no"), "\(result.stdout)")
  }

  /// docs/protocol.schema.json describes what clients may send: every line of the fuzzer's corpus
  /// that the daemon's decoder accepts (a request or a carousel line) fits it. (What the daemon sends
  /// is checked for every daemon of this suite by `DaemonProcess.stop`.)
  @Test func everyLineOfTheFuzzCorpusThatTheDaemonAcceptsFitsTheSchema() throws {
    let corpus = Harness.repositoryRoot + "/Fuzz/corpus"
    var accepted: [String] = []
    for name in try FileManager.default.contentsOfDirectory(atPath: corpus) where !name.hasPrefix(".") {
      let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: corpus + "/" + name)))
      for line in bytes.split(separator: UInt8(ascii: "\n")) where line.count <= LineFramer.protocolLineLimit {
        guard case .success = RequestDecoder.decodeLine(line), let text = String(validating: line, as: UTF8.self) else { continue }
        accepted.append(text)
      }
    }
    #expect(accepted.count > 50, "only \(accepted.count) accepted lines in Fuzz/corpus")
    let file = Harness.temporaryDirectory() + "/accepted.jsonl"
    try accepted.joined(separator: "\n").write(toFile: file, atomically: true, encoding: .utf8)
    let result = try Self.python("Tests/Protocol/schema_check.py", ["client", file])
    #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
  }

  /// A reply is held to its own op's reply schema. In the daemon's protocol trace
  /// (`CUED_PROTOCOL_LOG`, which `DaemonProcess.stop` checks) each reply follows the request with
  /// its id on its connection: a `sound.play` reply with `play`'s `variation` fits a reply, but not
  /// a `sound.play` reply; the same field answering a `play` is fine.
  @Test func aReplyWithAFieldItsOpDoesNotDeclareIsRefused() throws {
    let trace = """
      1 > {"id":1,"op":"sound.play","sound":1}
      2 > {"id":1,"op":"play","cue":"pico"}
      2 < {"id":1,"ok":true,"voice":3,"played":true,"variation":"pico-2"}
      1 < {"id":1,"ok":true,"voice":2,"played":true,"variation":"pico-2"}
      """
    let file = Harness.temporaryDirectory() + "/trace.jsonl"
    try trace.write(toFile: file, atomically: true, encoding: .utf8)
    let traced = try Self.python("Tests/Protocol/schema_check.py", ["daemon", file])
    #expect(traced.status == 1 && traced.stdout.contains("2 lines, 1 invalid"), "\(traced.stdout)")
    #expect(traced.stdout.contains("INVALID 1 sound.play reply: {\"id\":1,") && traced.stdout.contains("unknown field 'variation'"), "\(traced.stdout)")
    // Without the requests, the line fits `play`'s reply: what the check alone could tell before.
    let replies = trace.split(separator: "\n").filter { $0.contains(" < ") }.map { $0.split(separator: "<", maxSplits: 1)[1].dropFirst() }
    try replies.joined(separator: "\n").write(toFile: file, atomically: true, encoding: .utf8)
    let untraced = try Self.python("Tests/Protocol/schema_check.py", ["daemon", file])
    #expect(untraced.status == 0 && untraced.stdout.contains("2 lines, 0 invalid"), "\(untraced.stdout)")
  }

  /// The schema is not a rubber stamp: lines that break it are refused, each with the reason.
  @Test func theSchemaRefusesWhatTheDocumentForbids() throws {
    let file = Harness.temporaryDirectory() + "/bad.jsonl"
    try """
      {"id":1,"ok":true,"voice":3,"bogus":1}
      {"event":"finished","voice":1,"reason":"end"}
      {"event":"device","state":"opened","device":"null","extra":true}
      {"id":2,"ok":false,"error":{"code":"no-such-code","message":"x"}}
      """.write(toFile: file, atomically: true, encoding: .utf8)
    let daemon = try Self.python("Tests/Protocol/schema_check.py", ["daemon", file])
    #expect(daemon.status == 1 && daemon.stdout.contains("4 lines, 4 invalid"), "\(daemon.stdout)")
    #expect(daemon.stdout.contains("unknown field 'bogus'") && daemon.stdout.contains("no 'successfully'"))
    try """
      {"id":1,"op":"play","cue":"pico","volume":2}
      {"id":2,"op":"stop","fade":"soon"}
      {"op":"player.play"}
      {"carousel":"default","event":"spun"}
      """.write(toFile: file, atomically: true, encoding: .utf8)
    let client = try Self.python("Tests/Protocol/schema_check.py", ["client", file])
    #expect(client.status == 1 && client.stdout.contains("4 lines, 4 invalid"), "\(client.stdout)")
  }
}
