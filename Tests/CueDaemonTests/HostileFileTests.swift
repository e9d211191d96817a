import CueDecoding
@testable import CueDaemon
import CuePosix
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Hostile sound directories: every `*.mp3` either loads or is skipped with a failure that names
/// the file and the reason, and nothing stops or stalls the scan.
@Suite("Hostile sound files: the library")
struct HostileFileTests {
  static func contents(_ file: String) -> [UInt8] {
    Array(FileManager.default.contents(atPath: fixture(file)) ?? Data())
  }

  static func write(_ bytes: [UInt8], to path: String) {
    #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes)), "cannot write \(path)")
  }

  /// An ID3v2.3 tag holding one frame.
  static func id3Tag(frame id: String, body: [UInt8]) -> [UInt8] {
    let size = body.count
    let frame = Array(id.utf8) + [UInt8(size >> 24 & 0xFF), UInt8(size >> 16 & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size & 0xFF), 0, 0] + body
    let n = frame.count
    return Array("ID3".utf8) + [3, 0, 0, UInt8(n >> 21 & 0x7F), UInt8(n >> 14 & 0x7F), UInt8(n >> 7 & 0x7F), UInt8(n & 0x7F)] + frame
  }

  static func emptyDirectory() throws -> String {
    try makeDirectory([:])
  }

  /// Scans on another thread, failing instead of hanging when the scan blocks (a FIFO, say).
  static func scanPromptly(_ loader: CueLoader, previous: [String: Cue] = [:], seconds: Double = 20) -> LibraryScan? {
    let done = DispatchSemaphore(value: 0)
    let result = Mutex<LibraryScan?>(nil)
    let previous = UncheckedBox(previous)
    Thread.detachNewThread {
      let scan = loader.scan(previous: previous.value)
      result.withLock { $0 = scan }
      done.signal()
    }
    guard done.wait(timeout: .now() + seconds) == .success else { return nil }
    return result.withLock { $0 }
  }

  static func loader(_ dir: String) -> CueLoader {
    CueLoader(directories: [dir], options: DecodeOptions(), maximumTotalBytes: 1 << 30)
  }

  @Test func everyHostileFileEitherLoadsOrIsSkippedWithItsPathAndReason() throws {
    let dir = try Self.emptyDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let good = Self.contents("tone-48000-mono.mp3")
    // Loads:
    Self.write(good, to: dir + "/good.mp3")
    Self.write(Self.contents("truncated.mp3"), to: dir + "/truncated.mp3")
    Self.write(Self.id3Tag(frame: "APIC", body: [0] + Array("image/jpeg".utf8) + [0, 3, 0] + [UInt8](repeating: 0xFF, count: 8 << 20)) + good, to: dir + "/huge tag.mp3")
    Self.write(good, to: dir + "/ding dong.mp3")
    Self.write(good, to: dir + "/ピコ.mp3")
    Self.write(good, to: dir + "/a\nb.mp3")
    try FileManager.default.createSymbolicLink(atPath: dir + "/alias.mp3", withDestinationPath: "good.mp3")
    // Skipped:
    Self.write([], to: dir + "/empty.mp3")
    Self.write(Self.contents("random.mp3"), to: dir + "/random.mp3")
    Self.write(Self.id3Tag(frame: "TIT2", body: [0] + Array("title".utf8)), to: dir + "/tag only.mp3")
    Self.write(Self.contents("tone-44100-stereo.mp3") + Self.contents("loop-48000-stereo.mp3"), to: dir + "/glued.mp3")
    try FileManager.default.createDirectory(atPath: dir + "/folder.mp3", withIntermediateDirectories: false)
    #expect(mkfifo(dir + "/pipe.mp3", 0o644) == 0)
    defer {
      let fd = open(dir + "/pipe.mp3", O_WRONLY | O_NONBLOCK)  // frees a reader stuck in open(2)
      if fd >= 0 { close(fd) }
    }
    try FileManager.default.createSymbolicLink(atPath: dir + "/loop-a.mp3", withDestinationPath: "loop-b.mp3")
    try FileManager.default.createSymbolicLink(atPath: dir + "/loop-b.mp3", withDestinationPath: "loop-a.mp3")
    try FileManager.default.createSymbolicLink(atPath: dir + "/dangling.mp3", withDestinationPath: "nowhere.mp3")
    try FileManager.default.createSymbolicLink(atPath: dir + "/zero.mp3", withDestinationPath: "/dev/zero")
    // A name that is not UTF-8 (Latin-1 "café.mp3"): FileManager cannot spell it.
    let latin1 = Array((dir + "/caf").utf8) + [0xE9] + Array(".mp3".utf8) + [0]
    let fd = latin1.withUnsafeBufferPointer { $0.withMemoryRebound(to: CChar.self) { open($0.baseAddress!, O_WRONLY | O_CREAT, 0o644) } }
    #expect(fd >= 0)
    good.withUnsafeBytes { _ = Glibc.write(fd, $0.baseAddress, $0.count) }
    close(fd)

    let scan = try #require(Self.scanPromptly(Self.loader(dir)), "the scan did not finish (blocked on the FIFO?)")
    #expect(Set(scan.cues.keys) == ["good", "truncated", "huge tag", "ding dong", "ピコ", "a\nb", "alias"])
    #expect(scan.cues["huge tag"]?.decoded.buffer.toArray() == scan.cues["good"]?.decoded.buffer.toArray())
    #expect(scan.cues["a\nb"]?.path == dir + "/a\nb.mp3")
    #expect(scan.warnings.contains { $0.hasPrefix(dir + "/truncated.mp3: ") && $0.contains("truncated") })
    let expected: [String: String] = [
      "empty.mp3": "the file is empty",
      "random.mp3": "it is not an MP3, Ogg, WAV or FLAC file",
      "tag only.mp3": "no MPEG audio after it",
      "glued.mp3": "its sample rate changes mid-file (44100 Hz, then 48000 Hz)",
      "folder.mp3": "it is a directory, not a file",
      "pipe.mp3": "it is a FIFO (named pipe), not a regular file",
      "loop-a.mp3": "it is a symlink loop",
      "loop-b.mp3": "it is a symlink loop",
      "dangling.mp3": "it is a dangling symlink: its target nowhere.mp3 does not exist",
      "zero.mp3": "it is a character device, not a regular file",
      "caf\u{FFFD}.mp3": "its name is not valid UTF-8",
    ]
    #expect(scan.failures.count == expected.count, "\(scan.failures)")
    for (file, reason) in expected {
      let failure = scan.failures.first { $0.path == dir + "/" + file }
      #expect(failure?.reason.contains(reason) == true, "\(file): \(failure?.reason ?? "not reported")")
    }
  }

  @Test func namesThatDifferOnlyInUnicodeNormalisationAreOneCue() throws {
    let dir = try Self.emptyDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    Self.write(Self.contents("tone-48000-mono.mp3"), to: dir + "/caf\u{E9}.mp3")  // NFC
    Self.write(Self.contents("loop-48000-stereo.mp3"), to: dir + "/cafe\u{301}.mp3")  // NFD
    let scan = Self.loader(dir).scan()
    #expect(scan.cues.count == 1)
    #expect(scan.cues["caf\u{E9}"] != nil && scan.cues["cafe\u{301}"] != nil)
    #expect(scan.warnings.contains { $0.contains("is not loaded: cue") })
  }

  // MARK: - A file replaced while it loads

  /// Two 48 kHz versions of one cue (no rate conversion), of different sizes and lengths.
  static let versions = [contents("loop-48000-stereo.mp3"), contents("tone-48000-mono.mp3")]

  static func decodedVersions() throws -> [[Float]] {
    try versions.map { try MP3Decoder.decode(bytes: $0, name: "v").buffer.toArray() }
  }

  /// Replaces `path` over and over on another thread until `stop` is set; `inPlace` rewrites the
  /// file (truncate, then write in pieces) instead of renaming a new one over it.
  static func startReplacing(_ path: String, inPlace: Bool, state: Replacer) -> DispatchSemaphore {
    let done = DispatchSemaphore(value: 0)
    let versions = versions
    Thread.detachNewThread {
      var index = 0
      while !state.stop.load(ordering: .acquiring) {
        index ^= 1
        let bytes = versions[index]
        if inPlace {
          let fd = open(path, O_WRONLY | O_TRUNC)
          var offset = 0
          while offset < bytes.count {
            let n = min(500, bytes.count - offset)
            bytes.withUnsafeBytes { _ = Glibc.write(fd, $0.baseAddress! + offset, n) }
            offset += n
            usleep(20)  // a writer in pieces: readers can catch it half-way
          }
          close(fd)
          usleep(300)  // and whole, between rewrites
        } else {
          let temporary = path + ".new"
          let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
          bytes.withUnsafeBytes { _ = Glibc.write(fd, $0.baseAddress, $0.count) }
          close(fd)
          rename(temporary, path)
        }
        state.last.store(index, ordering: .releasing)
      }
      done.signal()
    }
    return done
  }

  @Test func aFileRenamedOverWhileItLoadsYieldsTheOldOrTheNewCueInFullAndTheRescanFollows() throws {
    let dir = try Self.emptyDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let decoded = try Self.decodedVersions()
    Self.write(Self.versions[0], to: dir + "/swap.mp3")
    Self.write(Self.versions[0], to: dir + "/steady.mp3")
    let loader = Self.loader(dir)
    let state = Replacer()
    let finished = Self.startReplacing(dir + "/swap.mp3", inPlace: false, state: state)
    var seen = Set<Int>()
    var previous: [String: Cue] = [:]
    for round in 0..<300 {
      // Every other scan starts afresh; the rest reuse what did not change.
      let scan = loader.scan(previous: round % 2 == 0 ? [:] : previous)
      #expect(scan.failures.isEmpty, "\(scan.failures)")
      let samples = try #require(scan.cues["swap"]).decoded.buffer.toArray()
      let version = decoded.firstIndex(of: samples)
      #expect(version != nil, "round \(round): a cue that is neither version (\(samples.count / 2) frames)")
      if let version { seen.insert(version) }
      #expect(scan.cues["steady"] != nil)
      previous = scan.cues
    }
    state.stop.store(true, ordering: .releasing)
    #expect(finished.wait(timeout: .now() + 10) == .success)
    #expect(seen.count == 2, "the replacement never raced the scans")
    // Once the replacing stops, a rescan holds exactly what is on disk.
    let final = loader.scan(previous: previous)
    #expect(final.cues["swap"]?.decoded.buffer.toArray() == decoded[state.last.load(ordering: .acquiring)])
    #expect(final.cues["steady"] === previous["steady"])
  }

  @Test func aFileRewrittenInPlaceWhileItLoadsNeverYieldsAMixAndTheRescanFollows() throws {
    let dir = try Self.emptyDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let decoded = try Self.decodedVersions()
    Self.write(Self.versions[0], to: dir + "/swap.mp3")
    let loader = Self.loader(dir)
    let state = Replacer()
    let finished = Self.startReplacing(dir + "/swap.mp3", inPlace: true, state: state)
    var previous: [String: Cue] = [:]
    for round in 0..<300 {
      let scan = loader.scan(previous: previous)
      if let cue = scan.cues["swap"] {
        // A whole version, or (caught mid-write) a prefix of one, said to be truncated.
        let samples = cue.decoded.buffer.toArray()
        let whole = decoded.contains(samples)
        let prefix = decoded.contains { $0.count > samples.count && Array($0.prefix(samples.count)) == samples }
        #expect(whole || (prefix && cue.decoded.warnings.contains { $0.contains("truncated") }), "round \(round)")
      } else {
        // Caught right after the truncation: empty, or too short to hold a frame.
        #expect(scan.failures.count == 1 && scan.failures[0].path == dir + "/swap.mp3", "round \(round): \(scan.failures)")
      }
      previous = scan.cues
    }
    state.stop.store(true, ordering: .releasing)
    #expect(finished.wait(timeout: .now() + 10) == .success)
    let final = loader.scan(previous: previous)
    #expect(final.cues["swap"]?.decoded.buffer.toArray() == decoded[state.last.load(ordering: .acquiring)])
  }

  @Test func aReplacementWithTheSameSizeAndTimeIsStillSeenByItsInode() throws {
    let dir = try Self.emptyDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let first = Self.contents("tone-44100-stereo.mp3")
    let second = Self.contents("stereo-lr-44100.mp3")
    #expect(first.count == second.count && first != second)
    Self.write(first, to: dir + "/x.mp3")
    let loader = Self.loader(dir)
    let before = loader.scan()
    Self.write(second, to: dir + "/x.new")
    // Give the new file the old one's modification time, then rename it over.
    let old = try #require(Files.status(dir + "/x.mp3"))
    var times = [
      timespec(tv_sec: old.modifiedSeconds, tv_nsec: old.modifiedNanoseconds),
      timespec(tv_sec: old.modifiedSeconds, tv_nsec: old.modifiedNanoseconds),
    ]
    #expect(utimensat(AT_FDCWD, dir + "/x.new", &times, 0) == 0)
    #expect(rename(dir + "/x.new", dir + "/x.mp3") == 0)
    let after = loader.scan(previous: before.cues)
    #expect(after.changed == ["x"])
    #expect(after.cues["x"]?.decoded.buffer.toArray() == (try MP3Decoder.decode(bytes: second, name: "lr")).buffer.toArray())
  }

  // MARK: - Log lines

  @Test(
    "log lines escape control characters, so a file name cannot forge a line",
    arguments: [
      ("skipped /s/a\nb.mp3: bad", "skipped /s/a\\nb.mp3: bad"),
      ("x\r\n<2>cued: critical: forged", "x\\r\\n<2>cued: critical: forged"),
      ("tab\there", "tab\\there"),
      ("esc\u{1B}[31mred\u{7F}", "esc\\x1b[31mred\\x7f"),
      ("c1\u{9B}2J", "c1\\x9b2J"),
      ("line\u{2028}sep", "line\\u{2028}sep"),
      ("ピコ ding dong.mp3", "ピコ ding dong.mp3"),
    ])
  func logLinesAreEscaped(_ raw: String, _ logged: String) {
    #expect(raw.controlCharactersEscaped == logged)
    #expect(!raw.controlCharactersEscaped.contains { $0.isNewline })
  }
}

/// What the replacing thread shares with the test: stop when told, and which version it wrote last.
final class Replacer: Sendable {
  let stop = Atomic(false)
  let last = Atomic(0)
}

/// Carries a value the compiler cannot prove sendable into a thread the test joins.
private final class UncheckedBox<T>: @unchecked Sendable {
  let value: T
  init(_ value: T) { self.value = value }
}
