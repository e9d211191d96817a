import CueDecoding
import CueDaemon
import CuePosix
import Foundation
import Testing

func fixture(_ name: String) -> String {
  URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures/" + name).path
}

func makeDirectory(_ files: [String: String]) throws -> String {
  let dir = FileManager.default.temporaryDirectory.appendingPathComponent("cued-loader-\(UUID().uuidString)").path
  try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
  for (name, source) in files {
    try FileManager.default.copyItem(atPath: fixture(source), toPath: dir + "/" + name)
  }
  return dir
}

@Suite("Cue library")
struct CueLoaderTests {
  @Test(
    "cue names come from file names",
    arguments: [
      ("pico.mp3", "pico"), ("page-next.mp3", "page-next"), ("LOUD.MP3", "LOUD"), ("a b.mp3", "a b"),
      ("日本.mp3", "日本"), (".hidden.mp3", nil), ("notes.txt", nil), (".mp3", nil), ("x.mp3.bak", nil),
      ("bell.oga", "bell"), ("bell.OGG", "bell"), ("voice.opus", "voice"), ("click.wav", "click"), ("hit.flac", "hit"),
      ("é.wav", "é"), (".wav", nil), ("x.aiff", nil),
    ] as [(String, String?)])
  func cueNames(_ file: String, _ name: String?) {
    #expect(CueLoader.cueName(forFile: file) == name)
  }

  @Test func oggWaveAndFLACFilesAreCuesTooAndTheFirstOfANameWins() throws {
    let dir = try makeDirectory([
      "chime.ogg": "tone-48000-stereo.ogg", "click.wav": "tone-48000-mono.wav", "hit.flac": "tone-44100-stereo.flac",
      "voice.opus": "tone-48000-stereo.opus", "pico.mp3": "tone-48000-mono.mp3", "pico.wav": "tone-48000-mono.wav",
      "broken.oga": "truncated.ogg", "six.wav": "six-channels.wav",
    ])
    let scan = CueLoader(directories: [dir], options: DecodeOptions(), maximumTotalBytes: 1 << 30).scan()
    #expect(Set(scan.cues.keys) == ["chime", "click", "hit", "voice", "pico"])
    // An Ogg file cut inside its headers is refused, with libsndfile's reason.
    let broken = try #require(scan.failures.first { $0.path == dir + "/broken.oga" })
    #expect(broken.reason.contains("libsndfile cannot read it as Ogg"), "\(broken.reason)")
    #expect(scan.cues["pico"]?.path == dir + "/pico.mp3")
    #expect(scan.warnings.contains { $0.contains(dir + "/pico.wav") && $0.contains("comes from " + dir + "/pico.mp3") })
    #expect(scan.cues["click"]?.decoded.format == "WAV (PCM 16-bit)" && scan.cues["chime"]?.decoded.format == "Ogg Vorbis")
    #expect(scan.cues["hit"]?.decoded.sourceRate == 44100 && scan.cues["voice"]?.decoded.format == "Ogg Opus")
    let six = try #require(scan.failures.first { $0.path == dir + "/six.wav" })
    #expect(six.reason.contains("6 channels"))
  }

  /// When normalising, the workers measure every cue as they decode it; otherwise a cue is
  /// measured when first asked, and a rescan that wants the measurements measures kept cues too.
  @Test func cuesAreMeasuredAtLoadWhenAskedAndAReloadKeepsTheMeasurement() throws {
    let dir = try makeDirectory(["pico.mp3": "tone-48000-mono.mp3", "silence.wav": "silence-8000-mono.wav"])
    var loader = CueLoader(directories: [dir], options: DecodeOptions(), maximumTotalBytes: 1 << 30)
    let lazy = loader.scan()
    #expect(lazy.cues.values.allSatisfy { !$0.isMeasured })
    loader.measuresLoudness = true
    let rescanned = loader.scan(previous: lazy.cues)
    #expect(rescanned.cues["pico"] === lazy.cues["pico"] && rescanned.cues.values.allSatisfy { $0.isMeasured })

    let first = loader.scan()
    #expect(first.cues.values.allSatisfy { $0.isMeasured })
    let pico = try #require(first.cues["pico"]?.loudness)
    #expect(pico.integratedLUFS != nil && pico.isOneBlock)
    let silence = try #require(first.cues["silence"]?.loudness)
    #expect(silence.integratedLUFS == nil && silence.samplePeakDBFS == nil)
    let again = loader.scan(previous: first.cues)
    #expect(again.cues["pico"] === first.cues["pico"])
    #expect(again.cues["pico"]?.loudness == pico)
    // Measured when first asked, the same as at load.
    let asked = try #require(lazy.cues["pico"])
    #expect(asked.loudness == pico)
  }

  @Test func everyMP3InTheDirectoriesLoadsAndBrokenOnesAreSkippedWithAReason() throws {
    let dir = try makeDirectory([
      "pico.mp3": "tone-48000-mono.mp3", "wrap.mp3": "tone-44100-stereo.mp3", "bad.mp3": "not-audio.mp3",
      "readme.txt": "not-audio.mp3",
    ])
    try FileManager.default.createDirectory(atPath: dir + "/folder.mp3", withIntermediateDirectories: true)
    let scan = CueLoader(directories: [dir], options: DecodeOptions(), maximumTotalBytes: 1 << 30).scan()
    #expect(Set(scan.cues.keys) == ["pico", "wrap"])
    #expect(scan.failures.map(\.path).sorted() == [dir + "/bad.mp3", dir + "/folder.mp3"])
    #expect(scan.failures.allSatisfy { !$0.reason.isEmpty })
    #expect(scan.failures.first { $0.path.hasSuffix("folder.mp3") }?.reason.contains("directory") == true)
  }

  @Test func anEarlierDirectoryWins() throws {
    let first = try makeDirectory(["pico.mp3": "tone-48000-mono.mp3"])
    let second = try makeDirectory(["pico.mp3": "tone-44100-stereo.mp3", "tick.mp3": "tone-22050-mono.mp3"])
    let scan = CueLoader(directories: [first, "/nonexistent/dir", second], options: DecodeOptions(), maximumTotalBytes: 1 << 30).scan()
    #expect(scan.cues["pico"]?.path == first + "/pico.mp3")
    #expect(scan.cues["tick"] != nil)
    #expect(scan.warnings.contains { $0.contains(second + "/pico.mp3") })
  }

  @Test func theDecodedMemoryLimitSkipsWhatDoesNotFit() throws {
    let dir = try makeDirectory(["a.mp3": "tone-44100-stereo.mp3", "b.mp3": "tone-44100-stereo.mp3"])
    // One cue is 5760 frames × 8 bytes = 46080 bytes.
    let scan = CueLoader(directories: [dir], options: DecodeOptions(), maximumTotalBytes: 50_000).scan()
    #expect(scan.cues.count == 1)
    #expect(scan.failures.count == 1)
    #expect(scan.failures[0].reason.contains("--max-memory"))
  }

  @Test func theCueLimitIsEnforced() throws {
    let dir = try makeDirectory(["a.mp3": "tone-44100-stereo.mp3", "b.mp3": "tone-44100-stereo.mp3", "c.mp3": "tone-44100-stereo.mp3"])
    let scan = CueLoader(directories: [dir], options: DecodeOptions(), maximumTotalBytes: 1 << 30, maximumCues: 2).scan()
    #expect(scan.cues.count == 2)
    #expect(scan.failures.first?.reason.contains("--max-cues") == true)
  }

  @Test func aRescanKeepsUnchangedCuesAndReportsTheDifference() throws {
    let dir = try makeDirectory(["a.mp3": "tone-44100-stereo.mp3", "b.mp3": "tone-48000-mono.mp3"])
    let loader = CueLoader(directories: [dir], options: DecodeOptions(), maximumTotalBytes: 1 << 30)
    let first = loader.scan()
    try FileManager.default.removeItem(atPath: dir + "/b.mp3")
    try FileManager.default.copyItem(atPath: fixture("tone-22050-mono.mp3"), toPath: dir + "/c.mp3")
    let second = loader.scan(previous: first.cues)
    #expect(second.cues["a"] === first.cues["a"])
    #expect(second.added == ["c"])
    #expect(second.removed == ["b"])
    #expect(second.changed.isEmpty)
    // Replacing a file counts as a change.
    try FileManager.default.removeItem(atPath: dir + "/a.mp3")
    try FileManager.default.copyItem(atPath: fixture("tone-48000-mono.mp3"), toPath: dir + "/a.mp3")
    let third = loader.scan(previous: second.cues)
    #expect(third.changed == ["a"])
    #expect(third.cues["a"]?.decoded.sourceChannels == 1)
  }

  @Test func theDefaultDirectoriesFollowXDGThenTheSystemThenTheCheckout() {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    let directories = DaemonConfiguration.defaultSoundDirectories(executablePath: root + "/.build/debug/cued")
    #expect(directories.suffix(3) == ["/usr/local/share/cued/sounds", "/usr/share/cued/sounds", root + "/sounds"])
    #expect(directories.first?.hasSuffix("/cued/sounds") == true)
    #expect(!DaemonConfiguration.defaultSoundDirectories(executablePath: "/usr/bin/cued").contains(root + "/sounds"))
  }
}
