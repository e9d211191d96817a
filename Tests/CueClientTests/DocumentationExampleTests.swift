import CueClient
import CueProtocol
import Foundation
import Testing

@Suite("The examples of docs/CLIENT.md", .timeLimit(.minutes(1)))
struct DocumentationExampleTests {
  @Test func everyExampleInTheGuideIsCompiledHere() throws {
    let guide = try String(contentsOfFile: Paths.repositoryRoot + "/docs/CLIENT.md", encoding: .utf8)
    let compiled = try String(
      contentsOfFile: Paths.repositoryRoot + "/Tests/CueClientTests/DocumentationExamples.swift", encoding: .utf8)
    var blocks: [String] = []
    var current: [Substring]? = nil
    for line in guide.split(separator: "\n", omittingEmptySubsequences: false) {
      if current == nil, line == "```swift" {
        current = []
      } else if current != nil, line == "```" {
        blocks.append(current!.joined(separator: "\n"))
        current = nil
      } else {
        current?.append(line)
      }
    }
    // The package manifest excerpt is the one block that is not client code.
    let examples = blocks.filter { !$0.contains(".package(") }
    #expect(examples.count >= 10)
    for block in examples {
      #expect(compiled.contains(block), "docs/CLIENT.md has an example not in DocumentationExamples.swift:\n\(block)")
    }
  }

  @Test func theExamplesRun() async throws {
    let daemon = try TestDaemon()
    let client = CueClient(socketPath: daemon.socket)
    try await fireAndForget(client: client)
    try await fadesPauseSeekAndLoops(client: client)
    let (p1, p2) = try await playTogether(client: client)
    // Both play to their ends (each 0.12 s), after the shared start time.
    #expect(await eventually {
      let done = try? await (p1.isPlaying, p2.isPlaying)
      return done.map { !$0.0 && !$0.1 } ?? false
    })
    #expect(try await within { try await playUntilDone(client: client) })
    #expect(try await within { try await playAndWait(client: client) })
    try await systemSound(client: client)
    #expect(await playOrExplain(client: client, cue: "pico") != nil)
    #expect(await playOrExplain(client: client, cue: "no-such-cue") == nil)
    #expect(try blocking(socketPath: daemon.socket) .hasSuffix("finished, end"))

    let watching = Task { try await monitor(client: client) }
    try await client.play(cue: "tick")
    try await Task.sleep(for: .milliseconds(100))
    watching.cancel()
    try await watching.value
  }
}
