import CueClient
import CuePosix
import CueProtocol
import DaemonTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Every example of README.md, docs/CLIENT.md and clients/python/README.md (ExampleBlocks), taken
/// from the document at test time and run as written against a real cued that plays into a
/// captured, paced sink; then what was captured is held to the marker's `heard`: an example that
/// returns without an error but plays nothing (or cuts its sound short) fails.
///
/// The options of `<!-- example: run … -->`:
/// - `heard=SECONDS`: at least this much sound (frames above -80 dBFS) is captured; `heard=0`:
///   nothing is (an example of an error), and then `prints` says what it shows instead.
/// - `cues=A,B`: each of these cues starts (a `started` event) while the example runs.
/// - `prints=TEXT`: the example's output holds TEXT.
/// - `files=PATH,…`: stand-ins for the reader's own sound files, copies of an Ogg fixture at these
///   paths (relative to the example's working directory, or `~/…`) before it runs.
/// - `call=NAME` (Swift): the function of `swiftCalls` that runs the block. A Swift block is
///   compiled as part of this target: it must appear word for word in DocumentationExamples.swift.
/// - `canberra`: cued's libcanberra driver is in libcanberra's directory while the example runs
///   (CanberraRig; needs root, as CanberraDriverTests), and an X display (Xvfb) is there for GTK.
/// - `installed=LINE`: lines that start with LINE install the Python package; they are not run, the
///   package is imported from this checkout instead (clients/python/run-tests.sh installs it as
///   written, with pip into a fresh virtual environment, and runs its tests on it).
/// - `interrupt='PROGRAM [SUBCOMMAND]'`: that command runs in a terminal until the reader presses
///   Ctrl-C; the test runs it in a pseudo-terminal (`script`) and sends SIGINT after a second, and
///   an exit by that SIGINT counts as success.
///
/// Shell blocks run in bash with `-e` (every line must succeed), Python blocks with python3, C blocks
/// (whole programs) are compiled with cc against libcanberra and run; each in a fresh working
/// directory, with this build's programs first on PATH, and XDG_RUNTIME_DIR and HOME in the suite's
/// directory, where cued's socket is at its default path. One PulseAudio-protocol
/// server for the suite; a fresh cued for each example (the examples change levels and volumes),
/// with the shipped sounds and the watched `~/.local/share/cued/sounds`.
@Suite("Every documented example, run as written and heard", .serialized)
struct DocumentedExampleTests {
  static let runOptions: Set = ["heard", "cues", "prints", "files", "call", "canberra", "installed", "interrupt"]

  /// The Swift examples by the marker's `call`: each runs the compiled block against `client`
  /// (or, for the examples that make their own `CueClient()`, against the socket in CUED_SOCKET).
  static let swiftCalls: [String: @Sendable (CueClient, String) async throws -> Void] = [
    "hello": { _, _ in try await hello() },
    "readme": { _, _ in try await readmeExample() },
    "fireAndForget": { client, _ in try await fireAndForget(client: client) },
    "fadesPauseSeekAndLoops": { client, _ in try await fadesPauseSeekAndLoops(client: client) },
    "playTogether": { client, _ in
      let (p1, p2) = try await playTogether(client: client)
      _ = try await (p1.playToEnd(), p2.playToEnd())
    },
    "playUntilDone": { client, _ in
      let done = try await playUntilDone(client: client)
      #expect(done)
    },
    "playAndWait": { client, _ in
      let done = try await playAndWait(client: client)
      #expect(done)
    },
    "systemSound": { client, _ in try await systemSound(client: client) },
    "pagerSounds": { client, _ in
      // Its posts are fire-and-forget: the test waits for the page's cue to start.
      let started = try await client.events(EventFilter(kinds: [.started]))
      let pager = PagerSounds()
      pager.jump(to: 390)
      #expect(await firstEvent(of: started, within: 10) != nil, "the jump played nothing")
      withExtendedLifetime(pager) {}
    },
    "monitor": { client, _ in
      let watching = Task { try await monitor(client: client) }
      try await Task.sleep(for: .milliseconds(100))
      try await client.play(cue: "tick")
      try await Task.sleep(for: .milliseconds(200))
      watching.cancel()
      try await watching.value
    },
    "playOrExplain": { client, _ in
      #expect(await playOrExplain(client: client, cue: "pico") != nil)
      #expect(await playOrExplain(client: client, cue: "no-such-cue") == nil)
    },
    "blocking": { _, socket in
      let said = try blocking(socketPath: socket)
      #expect(said.hasSuffix("finished, end"), "\(said)")
    },
  ]

  /// The blocks marked `run`, those that need libcanberra's directory apart.
  static let runnable = ((try? ExampleBlocks.all()) ?? []).filter { if case .run = $0.marker { true } else { false } }
  static let withoutCanberra = runnable.filter { $0.options["canberra"] == nil }
  static let withCanberra = runnable.filter { $0.options["canberra"] != nil }

  @Test func everyBlockSaysHowItRuns() throws {
    let examples = try ExampleBlocks.all()
    #expect(examples.count >= 30)
    let compiled = try String(
      contentsOfFile: Harness.repositoryRoot + "/Tests/EndToEndTests/DocumentationExamples.swift", encoding: .utf8)
    for block in examples {
      switch block.marker {
      case nil:
        Issue.record("\(block): a block with no `<!-- example: run … -->` or `<!-- example: not run: REASON -->` on the line before its fence")
      case .notRun:
        break
      case .run(let options):
        #expect(Set(options.keys).isSubset(of: Self.runOptions), "\(block): unknown options \(options.keys.sorted())")
        let heard = options["heard"].flatMap(Double.init)
        #expect(heard != nil, "\(block): no heard=SECONDS")
        if heard == 0 { #expect(options["prints"] != nil, "\(block): heard=0 needs prints=TEXT, what it shows instead") }
        #expect(["sh", "python", "swift", "c"].contains(block.language), "\(block): no way to run a ```\(block.language) block")
        guard block.language == "swift" else { continue }
        #expect(options["call"].map { Self.swiftCalls[$0] != nil } == true, "\(block): call= names no entry of swiftCalls")
        // Compiled here: the block is in DocumentationExamples.swift word for word (the imports at its top).
        let body = block.code.split(separator: "\n", omittingEmptySubsequences: false)
          .filter { !$0.hasPrefix("import ") }.joined(separator: "\n")
        #expect(compiled.contains(body), "\(block) is not in Tests/EndToEndTests/DocumentationExamples.swift word for word")
      }
    }
  }

  /// CLIENT.md's auto-scroll and edge example makes no sound (it returns what it would post): it
  /// is compiled here word for word and sends what the guide says it sends.
  @Test func theGuidesAutoScrollAndEdgeExampleSendsWhatItSays() throws {
    let block = try #require(try ExampleBlocks.all().first { $0.code.contains("func boundedPagerWithAutoScroll()") })
    let compiled = try String(
      contentsOfFile: Harness.repositoryRoot + "/Tests/EndToEndTests/DocumentationExamples.swift", encoding: .utf8)
    #expect(compiled.contains(block.code), "\(block) is not in Tests/EndToEndTests/DocumentationExamples.swift word for word")
    #expect(
      boundedPagerWithAutoScroll() == [
        .pageChanged(from: 0, to: 1, count: 3, reason: .auto, direction: .next), .scrollAnimationEnded, .dragBegan,
        .pageChanged(from: 1, to: 2, count: 3, reason: .drag, direction: .next), .edge(.end),
        .willEndDragging(velocity: 0, targetPage: 2), .dragEnded(decelerate: true), .decelerationEnded,
      ])
  }

  @Test(arguments: withoutCanberra)
  func runsAsWrittenAndIsHeard(_ block: ExampleBlock) async throws {
    try await Self.check(block)
  }

  @Test(
    .enabled(if: CanberraRig.canInstall, "needs root (the driver goes in libcanberra's directory) and libcanberra-dev"),
    arguments: withCanberra)
  func throughLibcanberraRunsAsWrittenAndIsHeard(_ block: ExampleBlock) async throws {
    try await Self.check(block)
  }

  static func check(_ block: ExampleBlock) async throws {
    let options = block.options
    let rig = try ExampleRig.shared()
    let canberra = options["canberra"] != nil ? try CanberraRig() : nil
    let session = try rig.start()
    let started = try StartedCues(socket: session.daemon.socket)
    let output = try await session.run(block, options: options)
    try session.waitUntilQuiet(block)
    let cues = started.drain()
    let samples = try session.finish()
    withExtendedLifetime(canberra) {}

    for cue in (options["cues"] ?? "").split(separator: ",") {
      #expect(cues.contains(String(cue)), "\(block): \(cue) never started (started: \(cues)); output: \(output)")
    }
    if let text = options["prints"] { #expect(output.contains(text), "\(block) did not print '\(text)': \(output)") }
    let heard = Double(samples.audibleFrames) / 48_000
    let expected = Double(options["heard"] ?? "") ?? 0
    if expected == 0 {
      #expect(heard == 0, "\(block): \(heard) s of sound from an example that should play nothing")
    } else {
      #expect(heard >= expected, "\(block): \(String(format: "%.3f", heard)) s heard, \(expected) s expected; output: \(output)")
    }
  }
}

/// The first event of `stream`, or nil when none comes within `seconds`.
func firstEvent(of stream: AsyncStream<CueEvent>, within seconds: Double) async -> CueEvent? {
  await withTaskGroup(of: CueEvent?.self) { group in
    group.addTask { await stream.first { _ in true } }
    group.addTask {
      try? await Task.sleep(for: .seconds(seconds))
      return nil
    }
    let first = await group.next() ?? nil
    group.cancelAll()
    return first
  }
}

/// The suite's PulseAudio-protocol server (a paced null sink) and its directory, which is the
/// examples' XDG_RUNTIME_DIR and HOME; made at the first example and stopped when the tests exit.
final class ExampleRig: @unchecked Sendable {
  let directory: String
  let pulse: PulseServer
  private var count = 0

  nonisolated(unsafe) private static var made: ExampleRig? = nil

  static func shared() throws -> ExampleRig {
    if let made { return made }
    let rig = try ExampleRig()
    made = rig
    atexit { ExampleRig.made = nil }
    return rig
  }

  private init() throws {
    directory = Harness.temporaryDirectory()
    pulse = try PulseServer(directory: directory)
  }

  deinit { xvfb?.terminate(grace: 2) }

  private var xvfb: ChildProcess? = nil
  private var displayName: String? = nil

  /// An X display for the GTK programs of the examples (a desktop has one): Xvfb, started once,
  /// on the first free display number (it says which).
  func display() throws -> String {
    if let displayName { return displayName }
    let said = directory + "/xvfb.display"
    let server = try ChildProcess(
      "/usr/bin/Xvfb", ["-displayfd", "1", "-nolisten", "tcp", "-screen", "0", "640x480x24"],
      standardOutput: .file(said), standardError: .file(directory + "/xvfb.log"))
    xvfb = server
    let deadline = Date().addingTimeInterval(10)
    while Date() < deadline {
      if let number = (try? String(contentsOfFile: said, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines),
        !number.isEmpty
      {
        displayName = ":" + number
        return ":" + number
      }
      usleep(20_000)
    }
    throw HarnessError("Xvfb did not start within 10 s: \((try? String(contentsOfFile: directory + "/xvfb.log", encoding: .utf8)) ?? "")")
  }

  /// A fresh cued, its socket at the default path under XDG_RUNTIME_DIR, playing through an ALSA
  /// file PCM (the capture) in front of the server's null sink (the pacing), as PacedCapture does.
  func start() throws -> ExampleSession {
    count += 1
    return try ExampleSession(rig: self, number: count)
  }

  /// What the examples run with: the server's XDG_RUNTIME_DIR and HOME, this build's programs first.
  var environment: [String: String] {
    var environment = pulse.environment
    environment["PATH"] = Harness.productsDirectory + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
    environment["PYTHONPATH"] = Harness.repositoryRoot + "/clients/python/src"
    environment["XDG_DATA_HOME"] = directory + "/.local/share"
    environment["XDG_CONFIG_HOME"] = directory + "/.config"
    return environment
  }
}

/// One example's cued, its capture and its working directory.
final class ExampleSession {
  let rig: ExampleRig
  let daemon: DaemonProcess
  let capture: String
  let work: String

  init(rig: ExampleRig, number: Int) throws {
    self.rig = rig
    let files = FileManager.default
    let userSounds = rig.directory + "/.local/share/cued/sounds"
    try? files.removeItem(atPath: userSounds)
    try files.createDirectory(atPath: userSounds, withIntermediateDirectories: true)
    try files.createDirectory(atPath: rig.directory + "/cued", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    work = rig.directory + "/example-\(number)"
    try files.createDirectory(atPath: work, withIntermediateDirectories: true)
    capture = work + ".raw"
    var environment = rig.environment
    environment["ALSA_CONFIG_PATH"] = try PacedCapture.teeConfiguration(pulse: rig.pulse, capture: capture, at: work + ".asound.conf")
    environment["XDG_CONFIG_HOME"] = nil
    daemon = try DaemonProcess(
      socket: rig.directory + "/cued/cued.sock",
      arguments: ["--sounds", Harness.repositoryRoot + "/sounds", "--sounds", userSounds, "--device", "tee", "--idle-timeout", "60"],
      environment: environment, logPath: work + ".cued.log")
  }

  /// Runs the block as its marker says; what it printed (standard output and error).
  func run(_ block: ExampleBlock, options: [String: String]) async throws -> String {
    for path in (options["files"] ?? "").split(separator: ",").map(String.init) {
      let target = path.hasPrefix("~/") ? rig.directory + path.dropFirst() : work + "/" + path
      try FileManager.default.createDirectory(
        atPath: (target as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
      try FileManager.default.copyItem(atPath: Harness.fixture("tone-48000-stereo.ogg"), toPath: target)
    }
    var environment = rig.environment
    switch block.language {
    case "swift":
      let name = try #require(options["call"])
      let call = try #require(DocumentedExampleTests.swiftCalls[name])
      setenv("CUED_SOCKET", daemon.socket, 1)
      defer { unsetenv("CUED_SOCKET") }
      let client = CueClient(socketPath: daemon.socket)
      try await call(client, daemon.socket)
      await client.close()
      return ""
    case "python":
      try block.code.write(toFile: work + "/example.py", atomically: true, encoding: .utf8)
      return try finished(block, "/usr/bin/env", ["python3", "example.py"], environment)
    case "c":
      try block.code.write(toFile: work + "/example.c", atomically: true, encoding: .utf8)
      let build = "cc -std=c11 -Wall -o example example.c $(pkg-config --cflags --libs libcanberra) && ./example"
      return try finished(block, "/bin/sh", ["-c", build], environment)
    default:
      var code = block.code
      if let installing = options["installed"] {
        code = code.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.hasPrefix(installing) }.joined(separator: "\n")
      }
      try code.write(toFile: work + "/example.sh", atomically: true, encoding: .utf8)
      if let interrupted = options["interrupt"] {
        // In a pseudo-terminal (script), as in the reader's terminal, and SIGINT after a second.
        // Its input stays open for a while, as a terminal's does: at the end of its input script
        // types ^D, which quits `cuectl top` (as Ctrl-D does) if it is still running then; from
        // /dev/null that came at once, before the program had run.
        let words = interrupted.split(separator: " ").map(String.init)
        let condition = words.count > 1 ? "[ \"$1\" = \(words[1]) ]" : "true"
        try """
          \(words[0])() {
            if \(condition); then
              local status=0
              timeout --preserve-status -s INT 1 script -qec "$(printf '%q ' "$(type -P \(words[0]))" "$@")" /dev/null < <(sleep 1.5) || status=$?
              [ $status = 0 ] || [ $status = 130 ]
            else
              command \(words[0]) "$@"
            fi
          }
          """.write(toFile: work + "/interrupt.bash", atomically: true, encoding: .utf8)
        environment["BASH_ENV"] = work + "/interrupt.bash"
      }
      if options["canberra"] != nil { environment["DISPLAY"] = try rig.display() }
      return try finished(block, "/bin/bash", ["-e", "example.sh"], environment)
    }
  }

  /// Runs a program in the working directory to its end and expects it to succeed.
  private func finished(_ block: ExampleBlock, _ program: String, _ arguments: [String], _ environment: [String: String]) throws -> String {
    let result = try DaemonTestSupport.run(
      "/bin/sh", ["-c", "cd \"$0\" && exec \"$@\"", work, program] + arguments, environment: environment, timeout: 60)
    let output = result.stdout + result.stderr
    #expect(result.status == 0, "\(block) exited with \(result.status): \(output)")
    return output
  }

  /// Waits until no voice plays; an example that leaves one playing (a loop it never stops) fails
  /// after 15 s.
  func waitUntilQuiet(_ block: ExampleBlock) throws {
    let deadline = Date().addingTimeInterval(15)
    var voices = try daemon.status()["voices"] as? Int ?? 0
    while voices > 0, Date() < deadline {
      usleep(20_000)
      voices = try daemon.status()["voices"] as? Int ?? 0
    }
    #expect(voices == 0, "\(block) left \(voices) voice(s) playing")
  }

  /// Stops cued (so that everything it played is in the file) and returns the capture (the file,
  /// a few MB, is removed; cued's log stays).
  func finish() throws -> [Float] {
    daemon.stop()
    guard FileManager.default.fileExists(atPath: capture) else { return [] }  // the device never opened
    defer { try? FileManager.default.removeItem(atPath: capture) }
    return try readFloats(capture)
  }
}

/// The cues that start while an example runs, from a connection subscribed to `started`.
final class StartedCues {
  let client: RawClient

  init(socket: String) throws {
    client = try RawClient(socket: socket)
    try client.send("{\"id\":1,\"op\":\"subscribe\",\"kinds\":[\"started\"]}\n")
    _ = try client.receive()
  }

  /// The cue of every `started` event received so far.
  func drain() -> [String] {
    var cues: [String] = []
    while let line = try? client.receive(timeout: 0.1) {
      if case .string(let cue)? = line["cue"] { cues.append(cue) }
    }
    return cues
  }
}

extension Array where Element == Float {
  /// The frames of a stereo capture in which either channel is above -80 dBFS.
  var audibleFrames: Int {
    stride(from: 0, to: count - 1, by: 2).reduce(0) { $0 + (Swift.max(abs(self[$1]), abs(self[$1 + 1])) > 1e-4 ? 1 : 0) }
  }
}
