import CuePosix
import Logging
import Testing

#if canImport(Glibc)
import Glibc
#endif

@testable import CueDaemon

/// What `SoundWatcher` makes of real inotify events, on a hand-moved clock.
@Suite("Watching the sound directories")
struct SoundWatcherTests {
  /// A sound directory with a variation folder, watched; `gone` is not made.
  static func watched() throws -> (SoundWatcher, String) {
    let root = try Files.makeTemporaryDirectory(prefix: "cued-watch")
    try Files.makeDirectories(root + "/sounds/blip", mode: 0o755)
    let watcher = SoundWatcher(logger: Logger(label: "test"))
    watcher.watch([root + "/sounds", root + "/gone"], enabled: true)
    return (watcher, root + "/sounds")
  }

  /// Reads what waits (it is there once the calls that made it returned).
  static func read(_ watcher: SoundWatcher, at now: UInt64) throws {
    var poll = pollfd(fd: try #require(watcher.descriptor).rawValue, events: Int16(POLLIN), revents: 0)
    _ = Glibc.poll(&poll, 1, 1000)
    watcher.read(now: now)
  }

  @Test func existingDirectoriesAndTheirFoldersAreWatchedAndNothingWhenOff() throws {
    let (watcher, sounds) = try Self.watched()
    #expect(watcher.watchedDirectories == [sounds, sounds + "/blip"])
    watcher.watch([sounds], enabled: false)
    #expect(watcher.descriptor == nil && watcher.watchedDirectories.isEmpty)
  }

  @Test func soundFilesAndFoldersAreNotedAndTakenTogetherOnceTheySettle() throws {
    let (watcher, sounds) = try Self.watched()
    let ms: UInt64 = 1_000_000
    // An editor's temporary file and a text file start nothing...
    try Files.write([1, 2, 3], to: sounds + "/.ding.wav.swp")
    try Files.write([1, 2, 3], to: sounds + "/notes.txt")
    try Self.read(watcher, at: 1000 * ms)
    #expect(watcher.deadline == nil)
    // ...their rename to a sound name does; so does a file in a set's folder, and a new folder.
    #expect(rename(sounds + "/.ding.wav.swp", sounds + "/ding.wav") == 0)
    try Files.write([1, 2, 3], to: sounds + "/blip/a.mp3")
    try Files.makeDirectories(sounds + "/chime", mode: 0o755)
    try Self.read(watcher, at: 1100 * ms)
    #expect(watcher.deadline == 1300 * ms)
    #expect(watcher.due(now: 1299 * ms) == nil, "due before the burst settled")
    // The new folder is watched at once: what is written in it belongs to the same burst.
    #expect(watcher.watchedDirectories.contains(sounds + "/chime"))
    try Files.write([1, 2, 3], to: sounds + "/chime/b.ogg")
    try Self.read(watcher, at: 1250 * ms)
    #expect(watcher.due(now: 1300 * ms) == nil, "a change 50 ms ago did not push the deadline on")
    #expect(watcher.due(now: 1450 * ms) == [sounds + "/ding.wav", sounds + "/blip/a.mp3", sounds + "/chime", sounds + "/chime/b.ogg"])
    #expect(watcher.deadline == nil && watcher.due(now: 9000 * ms) == nil)
    // Deleted: noted too.
    #expect(unlink(sounds + "/ding.wav") == 0)
    try Self.read(watcher, at: 2000 * ms)
    #expect(watcher.due(now: 2200 * ms) == [sounds + "/ding.wav"])
    // A folder moved out: its set goes at the rescan, and what happens to it elsewhere is not ours.
    #expect(rename(sounds + "/chime", sounds + "/../chime-elsewhere") == 0)
    try Self.read(watcher, at: 3000 * ms)
    #expect(watcher.due(now: 3200 * ms) == [sounds + "/chime"])
    #expect(!watcher.watchedDirectories.contains(sounds + "/chime"))
    try Files.write([1, 2, 3], to: sounds + "/../chime-elsewhere/c.wav")
    try Self.read(watcher, at: 4000 * ms)
    #expect(watcher.deadline == nil)
  }

  @Test func aDirectoryThatNeverStopsChangingIsStillTakenEveryTwoSeconds() throws {
    let (watcher, sounds) = try Self.watched()
    let ms: UInt64 = 1_000_000
    for step in 0..<30 {
      try Files.write([UInt8(step)], to: sounds + "/busy.wav")
      try Self.read(watcher, at: UInt64(step) * 100 * ms)
    }
    #expect(watcher.deadline == 2000 * ms)
  }
}
