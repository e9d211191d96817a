import CueDecoding
import DaemonTestSupport
import Foundation
import Testing

/// The real cued, through the real libasound, into an ALSA `file` PCM: exact samples, no sound card.
@Suite("ALSA file-PCM capture", .serialized)
struct AlsaCaptureTests {
  /// Starts cued (with `extra` arguments) playing into `<dir>/out.raw` through a `file` PCM named `capture`.
  static func startDaemon(in dir: String, cues: [String: String], extra: [String] = []) throws -> DaemonProcess {
    let sounds = try Harness.soundDirectory(in: dir, cues)
    let config = """
      </usr/share/alsa/alsa.conf>
      pcm.capture { type file slave.pcm "null" file "\(dir)/out.raw" format "raw" perm 0644 }
      """
    try config.write(toFile: dir + "/asound.conf", atomically: true, encoding: .utf8)
    return try DaemonProcess(
      socket: dir + "/cued.sock",
      arguments: ["--sounds", sounds, "--device", "capture", "--idle-timeout", "0.2"] + extra,
      environment: ["ALSA_CONFIG_PATH": dir + "/asound.conf"], logPath: dir + "/cued.log")
  }

  /// Plays one cue with `arguments`, waits for the device to close, returns the capture.
  static func capture(cue file: String, _ arguments: [String]) throws -> (captured: [Float], decoded: [Float]) {
    let dir = Harness.temporaryDirectory()
    let daemon = try startDaemon(in: dir, cues: ["tone": file])
    defer { daemon.stop() }
    let result = try daemon.cuectl(["play", "tone", "--wait"] + arguments)
    #expect(result.status == 0, "\(result.stderr)")
    try daemon.waitForDevice("closed")
    let captured = try readFloats(dir + "/out.raw")
    let decoded = try MP3Decoder.decode(path: Harness.fixture(file)).buffer.toArray()
    return (captured, decoded)
  }

  @Test("volume 1, pan 0: the capture equals the decode", arguments: ["tone-44100-stereo.mp3", "tone-48000-mono.mp3"])
  func unityCaptureEqualsTheDecode(_ file: String) throws {
    let (captured, decoded) = try Self.capture(cue: file, [])
    try #require(captured.count >= decoded.count)
    var worst: Float = 0
    for i in 0..<decoded.count { worst = max(worst, abs(captured[i] - decoded[i])) }
    #expect(worst <= 1e-6)
    #expect(captured[decoded.count...].allSatisfy { $0 == 0 })
  }

  @Test func volumeHalfHalvesTheSamples() throws {
    let (captured, decoded) = try Self.capture(cue: "tone-44100-stereo.mp3", ["--volume", "0.5"])
    try #require(captured.count >= decoded.count)
    var worst: Float = 0
    for i in 0..<decoded.count { worst = max(worst, abs(captured[i] - decoded[i] * 0.5)) }
    #expect(worst <= 1e-6)
  }

  @Test func twoLoopsCaptureThreeCopiesBackToBack() throws {
    let (captured, decoded) = try Self.capture(cue: "loop-48000-stereo.mp3", ["--loops", "2"])
    try #require(captured.count >= decoded.count * 3)
    var worst: Float = 0
    for copy in 0..<3 {
      for i in 0..<decoded.count { worst = max(worst, abs(captured[copy * decoded.count + i] - decoded[i])) }
    }
    #expect(worst <= 1e-6)
    #expect(captured[(decoded.count * 3)...].allSatisfy { $0 == 0 })
  }

  @Test func panHardLeftSilencesTheRightChannel() throws {
    let (captured, decoded) = try Self.capture(cue: "tone-48000-mono.mp3", ["--pan", "-1"])
    var right: Float = 0
    var leftError: Float = 0
    for f in 0..<(decoded.count / 2) {
      right = max(right, abs(captured[2 * f + 1]))
      // Constant power: a mono source hard left is √2 × the centre level on the left.
      leftError = max(leftError, abs(captured[2 * f] - SoftLimiterReference.limit(decoded[2 * f] * Float(2).squareRoot())))
    }
    #expect(right < 1e-6)
    #expect(leftError <= 1e-5)
  }
}

extension AlsaCaptureTests {
  /// A device that refuses float (ALSA's `linear` plugin takes integer formats only) gets S16.
  @Test func aDeviceWithoutFloatGetsS16() throws {
    let dir = Harness.temporaryDirectory()
    let sounds = try Harness.soundDirectory(in: dir, ["tone": "tone-44100-stereo.mp3"])
    let config = """
      </usr/share/alsa/alsa.conf>
      pcm.s16file { type file slave.pcm "null" file "\(dir)/out.raw" format "raw" perm 0644 }
      pcm.s16only { type linear slave { pcm "s16file" format S16_LE } }
      """
    try config.write(toFile: dir + "/asound.conf", atomically: true, encoding: .utf8)
    let daemon = try DaemonProcess(
      socket: dir + "/cued.sock", arguments: ["--sounds", sounds, "--device", "s16only", "--idle-timeout", "0.2"],
      environment: ["ALSA_CONFIG_PATH": dir + "/asound.conf"], logPath: dir + "/cued.log")
    defer { daemon.stop() }
    #expect(try daemon.cuectl(["play", "tone", "--wait"]).status == 0)
    try daemon.waitForDevice("closed")
    let device = try #require(daemon.status()["device"] as? [String: Any])
    #expect(device["format"] as? String == "S16_LE")
    let data = try Data(contentsOf: URL(fileURLWithPath: dir + "/out.raw"))
    let captured: [Int16] = data.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
    let decoded = try MP3Decoder.decode(path: Harness.fixture("tone-44100-stereo.mp3")).buffer.toArray()
    try #require(captured.count >= decoded.count)
    var worst = 0
    for i in 0..<decoded.count {
      let expected = Int((max(-1, min(1, decoded[i])) * 32767).rounded())
      worst = max(worst, abs(Int(captured[i]) - expected))
    }
    #expect(worst <= 1)
    #expect(captured[decoded.count...].allSatisfy { $0 == 0 })
  }
}

/// The mixer's limiter, restated for the test (knee 0.9): the pan test's peaks stay under it.
enum SoftLimiterReference {
  static func limit(_ x: Float) -> Float {
    let knee: Float = 0.9
    if abs(x) <= knee { return x }
    let u = (abs(x) - knee) / (1 - knee)
    let y = knee + (1 - knee) * u / (1 + u)
    return x < 0 ? -y : y
  }
}
