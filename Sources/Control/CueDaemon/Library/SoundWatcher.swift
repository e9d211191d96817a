import CuePosix
import Logging

/// `watch-sounds`: the sound directories watched with inotify, so a cue is added, replaced or
/// removed when its file is, without a reload.
///
/// Each sound directory that exists is watched, and each variation-set folder in it (a folder
/// made or moved in later gets its watch when it appears). What a change concerns is noted (the
/// path of a sound file or a folder, never a hidden or unrelated file: an editor's swap and temp
/// files start nothing); once no change has come for `settleNanoseconds` (at most
/// `longestWaitNanoseconds` after the first), the paths noted are handed on (`due`), and the
/// daemon rescans the sound directories as `reload` does, so a file met at run time passes
/// exactly the checks of a file met at start. The control loop polls `descriptor`.
final class SoundWatcher {
  /// A burst of changes (an editor's write, rename and chmod; a copy of several files) is taken together.
  static let settleNanoseconds: UInt64 = 200_000_000
  /// A directory that never stops changing is still rescanned this often.
  static let longestWaitNanoseconds: UInt64 = 2_000_000_000
  static let watched: Inotify.Mask = [.closeWrite, .movedTo, .movedFrom, .create, .delete, .deleteSelf, .moveSelf, .onlyDirectory]

  private var inotify: Inotify? = nil
  /// Each watch's directory, and whether it is a sound directory (else a variation-set folder in one).
  private var directories: [Inotify.Watch: (path: String, isTop: Bool)] = [:]
  /// Paths changed since the last rescan was asked for.
  private var noted: Set<String> = []
  private var firstNoted: UInt64 = 0
  private var lastNoted: UInt64 = 0
  private let logger: Logger

  init(logger: Logger) {
    self.logger = logger
  }

  deinit { inotify?.close() }

  /// The descriptor to poll, while watching.
  var descriptor: FileDescriptor? { inotify?.descriptor }
  /// The directories watched now (sound directories and their folders).
  var watchedDirectories: [String] { directories.values.map(\.path).sorted() }

  /// Watches `soundDirectories` (those that exist) and their folders, or nothing when `enabled`
  /// is false; any earlier watch goes. At start and at every reload.
  func watch(_ soundDirectories: [String], enabled: Bool) {
    stop()
    guard enabled else { return }
    do {
      inotify = try Inotify()
    } catch {
      logger.warning("cannot watch the sound directories (\(error)); new files are loaded at the next reload")
      return
    }
    for directory in soundDirectories where Files.kind(of: directory) == .directory {
      add(directory, isTop: true)
      for entry in (try? Files.list(directory: directory)) ?? [] where CueLoader.isVariationFolder(entry, in: directory) {
        add(directory + "/" + entry, isTop: false)
      }
    }
  }

  func stop() {
    inotify?.close()
    inotify = nil
    directories.removeAll()
    noted.removeAll()
  }

  private func add(_ directory: String, isTop: Bool) {
    guard let inotify else { return }
    do {
      let watch = try inotify.add(directory, for: Self.watched)
      directories[watch] = (directory, isTop)
    } catch {
      logger.warning("cannot watch \(directory) (\(error)); its new files are loaded at the next reload")
    }
  }

  /// Reads what changed and notes what concerns cues.
  func read(now: UInt64) {
    guard let inotify else { return }
    let events: [Inotify.Event]
    do {
      events = try inotify.read()
    } catch {
      logger.warning("reading the sound-directory watch failed (\(error)); watching stops until the next reload")
      stop()
      return
    }
    for event in events {
      if event.mask.contains(.overflow) {
        // Changes were lost: look at everything.
        note(directories.values.filter(\.isTop).map(\.path), now: now)
        continue
      }
      guard let directory = directories[event.watch] else { continue }
      if event.mask.contains(.ignored) {
        directories[event.watch] = nil
        continue
      }
      if event.name.isEmpty {
        // The directory itself went (deleted or moved): its cues go at the rescan. A folder moved
        // elsewhere is no longer one of ours (a sound directory moved away is, again, at a reload).
        if event.mask.contains(.deleteSelf) || event.mask.contains(.moveSelf) { note([directory.path], now: now) }
        if event.mask.contains(.moveSelf) && !directory.isTop {
          inotify.remove(event.watch)
          directories[event.watch] = nil
        }
        continue
      }
      let path = directory.path + "/" + event.name
      if event.mask.contains(.isDirectory) {
        // A folder in a sound directory is a variation set: watch the one that came, rescan either way.
        guard directory.isTop, !event.name.hasPrefix("."), !event.name.contains(".") else { continue }
        if event.mask.contains(.create) || event.mask.contains(.movedTo) { add(path, isTop: false) }
        note([path], now: now)
      } else if CueLoader.cueName(forFile: event.name) != nil, !event.mask.contains(.create) {
        // A sound file written, moved in or out, or deleted (its creation is followed by its close).
        note([path], now: now)
      }
    }
  }

  private func note(_ paths: [String], now: UInt64) {
    if noted.isEmpty { firstNoted = now }
    noted.formUnion(paths)
    lastNoted = now
  }

  /// When the paths noted are due (nil: nothing noted).
  var deadline: UInt64? {
    guard !noted.isEmpty else { return nil }
    return min(lastNoted + Self.settleNanoseconds, firstNoted + Self.longestWaitNanoseconds)
  }

  /// The paths noted, once they are due; nil before.
  func due(now: UInt64) -> Set<String>? {
    guard let deadline, now >= deadline else { return nil }
    defer { noted.removeAll() }
    return noted
  }
}
