import CueDecoding
import CueCore
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Hostile MP3 data and hostile things named `*.mp3`: each either decodes to the right samples or
/// is refused with a `DecodeError` naming the file and the reason. Fixtures that would be large
/// (an 8 MiB tag) are made here, in memory or in a temporary directory.
@Suite("Hostile sound files: decoding")
struct HostileDecodeTests {
  static func contents(_ file: String) -> [UInt8] {
    Array(FileManager.default.contents(atPath: fixture(file)) ?? Data())
  }

  /// An ID3v2.3 tag holding one frame `id` whose body is `body`.
  static func id3Tag(frame id: String = "PRIV", body: [UInt8]) -> [UInt8] {
    let size = body.count
    let frame = Array(id.utf8) + [UInt8(size >> 24 & 0xFF), UInt8(size >> 16 & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size & 0xFF), 0, 0] + body
    let n = frame.count
    let syncsafe: [UInt8] = [UInt8(n >> 21 & 0x7F), UInt8(n >> 14 & 0x7F), UInt8(n >> 7 & 0x7F), UInt8(n & 0x7F)]
    return Array("ID3".utf8) + [3, 0, 0] + syncsafe + frame
  }

  /// Expects `bytes` to be refused with a reason containing every fragment.
  func expectRejected(_ bytes: [UInt8], name: String, _ fragments: [String], sourceLocation: SourceLocation = #_sourceLocation) {
    do {
      let cue = try MP3Decoder.decode(bytes: bytes, name: name)
      Issue.record("\(name) loaded (\(cue.sourceFrameCount) frames); expected a refusal", sourceLocation: sourceLocation)
    } catch {
      #expect(error.path == name, sourceLocation: sourceLocation)
      for fragment in fragments {
        #expect(error.reason.contains(fragment), "\(error.reason)", sourceLocation: sourceLocation)
      }
    }
  }

  // MARK: - Truncated and corrupt data

  @Test func aFileCutAnywhereLoadsItsWholeFramesExactlyOrIsRefused() throws {
    // 48 kHz: no rate conversion, so what decodes must be an exact prefix of the whole file's samples.
    let whole = Self.contents("loop-48000-stereo.mp3")
    let full = try MP3Decoder.decode(bytes: whole, name: "whole").buffer.toArray()
    var loaded = 0
    for cut in stride(from: 0, to: whole.count, by: 7) {
      do {
        let cue = try MP3Decoder.decode(bytes: Array(whole[0..<cut]), name: "cut-\(cut).mp3")
        loaded += 1
        let samples = cue.buffer.toArray()
        #expect(samples.count < full.count)
        #expect(samples == Array(full.prefix(samples.count)), "cut at \(cut): not a prefix of the whole decode")
        #expect(cue.warnings.contains { $0.contains("truncated") }, "cut at \(cut): \(cue.warnings)")
      } catch {
        #expect(error.path == "cut-\(cut).mp3")
        #expect(!error.reason.isEmpty)
      }
    }
    #expect(loaded > whole.count / 7 / 2)  // most cuts keep some whole frames
  }

  @Test func corruptBytesNeverCrashAndNeverYieldNonFiniteSamples() {
    let whole = Self.contents("tone-44100-stereo.mp3")
    var generator = SystemRandomNumberGenerator()
    for round in 0..<300 {
      var bytes = whole
      for _ in 0..<(1 + round % 16) {
        bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
      }
      guard let cue = try? MP3Decoder.decode(bytes: bytes, name: "corrupt.mp3") else { continue }
      #expect(cue.buffer.toArray().allSatisfy { $0.isFinite })
    }
  }

  // MARK: - ID3 tags

  @Test func anID3TagWithNoAudioAfterItIsRefused() {
    let tag = Self.id3Tag(frame: "TIT2", body: [0] + Array("only a title".utf8))
    expectRejected(tag, name: "tag-only.mp3", ["ID3", "no MPEG audio"])
  }

  @Test func anID3TagFollowedByJunkIsRefusedAndSaysSo() {
    let tag = Self.id3Tag(frame: "TIT2", body: [0] + Array("title".utf8))
    expectRejected(tag + Array(repeating: 0x41, count: 5000), name: "tag-junk.mp3", ["after its ID3 tag", "not an MP3"])
  }

  @Test func anID3TagLongerThanTheFileIsRefusedAsTruncated() {
    let tag = Self.id3Tag(body: Array(repeating: 0x55, count: 100_000))
    expectRejected(Array(tag.prefix(40_000)), name: "cut-tag.mp3", ["ID3", "truncated"])
  }

  @Test func aMalformedID3SizeIsRefused() {
    var tag = Self.id3Tag(body: Array(repeating: 0, count: 100))
    tag[6] = 0x80  // not syncsafe
    expectRejected(tag + Self.contents("tone-48000-mono.mp3"), name: "bad-tag.mp3", ["ID3"])
  }

  @Test("a huge ID3 tag (cover art, or audio-like bytes) is skipped by its size and the audio after it loads", arguments: [0, 1])
  func aHugeID3TagIsSkipped(_ variant: Int) throws {
    let audio = Self.contents("loop-48000-stereo.mp3")
    let body: [UInt8]
    if variant == 0 {
      // An 8 MiB APIC frame: encoding, MIME type, picture type, description, "image" data.
      body = [0] + Array("image/jpeg".utf8) + [0, 3, 0] + [UInt8](repeating: 0xFF, count: 8 << 20)
    } else {
      // An 8 MiB PRIV frame full of another MP3 (a different rate): it must not be decoded.
      let other = Self.contents("tone-44100-stereo.mp3")
      var filler: [UInt8] = Array("cued-test\0".utf8)
      while filler.count < 8 << 20 { filler += other }
      body = filler
    }
    let tagged = Self.id3Tag(frame: variant == 0 ? "APIC" : "PRIV", body: body) + audio
    #expect(tagged.count > 8 << 20)
    guard case .layer3(let offset, _) = MPEGSniffer.sniff(tagged) else {
      Issue.record("the sniffer gave up inside the tag")
      return
    }
    #expect(offset >= tagged.count - audio.count)
    let cue = try MP3Decoder.decode(bytes: tagged, name: "huge-tag.mp3")
    let plain = try MP3Decoder.decode(bytes: audio, name: "plain.mp3")
    #expect(cue.sourceRate == 48000)
    #expect(cue.buffer.toArray() == plain.buffer.toArray())
  }

  @Test func aHugeID3TagInAFileLoadsFromDisk() throws {
    let dir = NSTemporaryDirectory() + "cued-hostile-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let audio = Self.contents("tone-44100-stereo.mp3")
    let bytes = Self.id3Tag(frame: "APIC", body: [0] + Array("image/png".utf8) + [0, 3, 0] + [UInt8](repeating: 0x89, count: 12 << 20)) + audio
    _ = FileManager.default.createFile(atPath: dir + "/big.mp3", contents: Data(bytes))
    let cue = try MP3Decoder.decode(path: dir + "/big.mp3")
    #expect(cue.sourceFrameCount == 5292)
    #expect(cue.warnings.isEmpty)
  }

  // MARK: - Format changes mid-file

  @Test(
    "a sample rate that changes mid-file is refused, naming both rates",
    arguments: [
      ("tone-44100-stereo.mp3", "loop-48000-stereo.mp3", 44100, 48000),
      ("loop-48000-stereo.mp3", "tone-44100-stereo.mp3", 48000, 44100),
      ("tone-22050-mono.mp3", "tone-44100-stereo.mp3", 22050, 44100),
      ("tone-44100-notag.mp3", "tone-48000-mono.mp3", 44100, 48000),
    ])
  func aRateChangeIsRefused(_ first: String, _ second: String, _ rate1: Int, _ rate2: Int) {
    expectRejected(
      Self.contents(first) + Self.contents(second), name: "glued.mp3", ["sample rate changes mid-file", "\(rate1) Hz", "\(rate2) Hz"])
  }

  @Test func aChannelCountThatChangesMidFileLoadsAsStereoWithAWarning() throws {
    let mono = Self.contents("tone-48000-mono.mp3")
    let stereo = Self.contents("loop-48000-stereo.mp3")
    for (bytes, order) in [(mono + stereo, "mono, then stereo"), (stereo + mono, "stereo, then mono")] {
      let cue = try MP3Decoder.decode(bytes: bytes, name: "glued.mp3")
      #expect(cue.sourceChannels == 2)  // so pan treats the stereo part as stereo
      #expect(cue.warnings.contains { $0.contains("channel count changes mid-file (\(order))") }, "\(cue.warnings)")
      // Both parts, at the right speed: at least their gapless lengths, at most their untrimmed ones.
      #expect(cue.buffer.frameCount >= 5760 + 4800)
      #expect(cue.buffer.frameCount <= 2 * 7 * 1152)
    }
  }

  // MARK: - Things that are not regular files

  static func scratchDirectory() throws -> String {
    let dir = NSTemporaryDirectory() + "cued-hostile-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    return dir
  }

  /// Runs `body` on another thread; fails the test instead of hanging if it does not return in time.
  static func returnsPromptly<T: Sendable>(_ seconds: Double = 5, _ body: @escaping @Sendable () -> T) -> T? {
    let done = DispatchSemaphore(value: 0)
    let box = ResultBox<T>()
    Thread.detachNewThread {
      box.value = body()
      done.signal()
    }
    return done.wait(timeout: .now() + seconds) == .success ? box.value : nil
  }

  @Test func aFIFONamedMP3IsRefusedWithoutBlocking() throws {
    let dir = try Self.scratchDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let path = dir + "/pipe.mp3"
    #expect(mkfifo(path, 0o644) == 0)
    defer {
      // Should the reader be stuck in open(2), a writer's open lets it go.
      let fd = open(path, O_WRONLY | O_NONBLOCK)
      if fd >= 0 { close(fd) }
    }
    let outcome = Self.returnsPromptly { () -> String in
      do throws(DecodeError) {
        _ = try MP3Decoder.decode(path: path)
        return "loaded"
      } catch {
        return error.description
      }
    }
    #expect(outcome == "\(path): it is a FIFO (named pipe), not a regular file")
  }

  @Test func aDeviceNamedMP3IsRefused() throws {
    let dir = try Self.scratchDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    try FileManager.default.createSymbolicLink(atPath: dir + "/zero.mp3", withDestinationPath: "/dev/zero")
    #expect {
      _ = try MP3Decoder.decode(path: dir + "/zero.mp3")
    } throws: { error in
      (error as? DecodeError)?.reason == "it is a character device, not a regular file"
    }
  }

  @Test func aDirectoryNamedMP3IsRefused() throws {
    let dir = try Self.scratchDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    try FileManager.default.createDirectory(atPath: dir + "/x.mp3", withIntermediateDirectories: false)
    #expect {
      _ = try MP3Decoder.decode(path: dir + "/x.mp3")
    } throws: { error in
      (error as? DecodeError)?.reason == "it is a directory, not a file"
    }
  }

  @Test func symlinkLoopsAndDanglingSymlinksAreRefusedWithTheirReason() throws {
    let dir = try Self.scratchDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    try FileManager.default.createSymbolicLink(atPath: dir + "/a.mp3", withDestinationPath: dir + "/b.mp3")
    try FileManager.default.createSymbolicLink(atPath: dir + "/b.mp3", withDestinationPath: "a.mp3")
    try FileManager.default.createSymbolicLink(atPath: dir + "/gone.mp3", withDestinationPath: dir + "/nowhere.mp3")
    for (file, reason) in [
      ("a.mp3", "it is a symlink loop"), ("b.mp3", "it is a symlink loop"),
      ("gone.mp3", "it is a dangling symlink: its target \(dir)/nowhere.mp3 does not exist"),
    ] {
      #expect {
        _ = try MP3Decoder.decode(path: dir + "/" + file)
      } throws: { error in
        guard let error = error as? DecodeError else { return false }
        return error.path == dir + "/" + file && error.reason.hasPrefix(reason)
      }
    }
  }

  /// A client-named path is checked when the request comes and decoded a moment later: confined
  /// decoding judges the file it actually opened, so a path swapped for a symlink in between
  /// (simulated here by naming one directly) is refused, not read.
  @Test func confinedDecodingRefusesAFileThatResolvesOutsideWhenOpened() throws {
    let dir = try Self.scratchDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let sounds = dir + "/sounds"
    try FileManager.default.createDirectory(atPath: sounds, withIntermediateDirectories: false)
    try FileManager.default.copyItem(atPath: fixture("tone-48000-mono.mp3"), toPath: sounds + "/inside.mp3")
    try FileManager.default.copyItem(atPath: fixture("tone-48000-mono.mp3"), toPath: dir + "/outside.mp3")
    try FileManager.default.createSymbolicLink(atPath: sounds + "/swapped.mp3", withDestinationPath: dir + "/outside.mp3")
    var options = DecodeOptions()
    let real = try #require(realpath(sounds, nil))
    defer { free(real) }
    options.confinedTo = [String(cString: real)]
    let inside = try MP3Decoder.decode(path: sounds + "/inside.mp3", options: options)
    #expect(inside.sourceFrameCount > 0)
    #expect {
      _ = try MP3Decoder.decode(path: sounds + "/swapped.mp3", options: options)
    } throws: { error in
      (error as? DecodeError)?.reason == "it resolves outside the sound directories now (it changed after it was checked)"
    }
    // Unconfined, the same link is read (the loader's own scan follows links, as documented).
    #expect(try MP3Decoder.decode(path: sounds + "/swapped.mp3").sourceFrameCount == inside.sourceFrameCount)
  }

  @Test func aFileOverTheSizeLimitIsRefusedWithoutReadingIt() throws {
    let dir = try Self.scratchDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    // Sparse: 100 MiB of nothing costs no disk.
    _ = FileManager.default.createFile(atPath: dir + "/huge.mp3", contents: nil)
    #expect(truncate(dir + "/huge.mp3", 100 << 20) == 0)
    #expect {
      _ = try MP3Decoder.decode(path: dir + "/huge.mp3")
    } throws: { error in
      (error as? DecodeError)?.reason.contains("larger than 64 MiB") == true
    }
  }
}

private final class ResultBox<T: Sendable>: @unchecked Sendable {
  private let lock = NSLock()
  private var stored: T?
  var value: T? {
    get { lock.withLock { stored } }
    set { lock.withLock { stored = newValue } }
  }
}
