import CueProtocol
import DaemonTestSupport
import Foundation
import Testing

/// The `meters` events of the real cued against what it wrote, through the real libasound into an
/// ALSA `file` PCM.
@Suite("Meters against the captured output", .serialized)
struct MeterCaptureTests {
  static func decibels(_ ratio: Double) -> Double { 20 * log10(ratio) }

  @Test func theMixMeterIsTheCapturedLevelWithinOneDecibel() throws {
    let dir = Harness.temporaryDirectory()
    let daemon = try AlsaCaptureTests.startDaemon(in: dir, cues: ["sine": "sine-1k-20dbfs-48000.mp3"])
    defer { daemon.stop() }
    let client = try RawClient(socket: daemon.socket)
    try client.send(#"{"id":1,"op":"meters","rate":30}"# + "\n")
    #expect(try client.receive()["rate"] == .number(30))
    try client.send(#"{"id":2,"op":"play","cue":"sine","loops":-1,"volume":0.7}"# + "\n")
    let voice = try #require(try client.receive()["voice"])
    var events: [Event.Meters] = []
    while events.count < 20 {
      let line = try client.receive()
      if case .meters(let meters) = try Event(json: line) { events.append(meters) }
    }
    try client.send(#"{"id":3,"op":"stop","all":true}"# + "\n")
    while try client.receive()["id"] != .number(3) {}
    try daemon.waitForDevice("closed")
    let captured = try readFloats(dir + "/out.raw").map(Double.init)
    let first = try #require(captured.firstIndex { abs($0) > 1e-4 })
    let last = try #require(captured.lastIndex { abs($0) > 1e-4 })
    let sounding = captured[first...last]
    let capturedPeak = sounding.map(abs).max()!
    let capturedRMS = (sounding.map { $0 * $0 }.reduce(0, +) / Double(sounding.count)).squareRoot()
    // The voice is in each event while it plays, and is the mix (one voice, under the limiter's knee).
    let playing = events.filter { !$0.voices.isEmpty }
    try #require(playing.count >= 10)
    #expect(playing.allSatisfy { $0.voices.count == 1 && .number(Double($0.voices[0].voice)) == voice })
    // Whole windows only: the first may hold the start, the last the stop.
    let steady = playing.dropFirst().dropLast()
    let meterPeak = playing.map(\.mix.peak).max()!
    let meterRMS = steady.map(\.mix.rms).sorted()[steady.count / 2]
    #expect(abs(Self.decibels(meterPeak / capturedPeak)) < 1, "meter peak \(meterPeak), captured \(capturedPeak)")
    #expect(abs(Self.decibels(meterRMS / capturedRMS)) < 1, "meter RMS \(meterRMS), captured \(capturedRMS)")
    #expect(abs(Self.decibels(steady.map(\.voices[0].level.rms).sorted()[steady.count / 2] / capturedRMS)) < 1)
    // A -20 dBFS sine at volume 0.7: about -23 dBFS peak, -26 dBFS RMS.
    #expect(abs(Self.decibels(capturedPeak) - (-20 + Self.decibels(0.7))) < 1)
  }
}
