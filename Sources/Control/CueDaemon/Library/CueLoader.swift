import CueDecoding
import CueCore
import CuePosix
import Synchronization

/// A file that did not load, and why.
public struct LoadFailure: Sendable, Equatable {
  public var path: String
  public var reason: String
}

/// The result of scanning the sound directories.
public struct LibraryScan: Sendable {
  /// Files by cue name; a folder's files as `FOLDER/NAME`.
  public var cues: [String: Cue]
  /// Folders that are variation sets: the set's name and its members' cue names, in file-name order.
  public var folders: [String: [String]] = [:]
  public var failures: [LoadFailure]
  public var warnings: [String]
  /// Names present now that were not before, and the other way round, and those whose file changed.
  public var added: [String] = []
  public var removed: [String] = []
  public var changed: [String] = []
  public var totalBytes: Int { cues.values.reduce(0) { $0 + $1.byteCount } }
}

/// Finds and decodes the cues in the sound directories.
public struct CueLoader: Sendable {
  public var directories: [String]
  public var options: DecodeOptions
  /// The most decoded memory all cues together may take.
  public var maximumTotalBytes: Int
  /// The most cues loaded (`max-cues`, from the daemon's configuration; no limit unless given).
  public var maximumCues: Int
  /// Measure each cue's loudness on the decode workers (`loudness-normalize` is on: its first
  /// plays need it); otherwise it is measured when first asked for.
  public var measuresLoudness: Bool

  public init(
    directories: [String], options: DecodeOptions, maximumTotalBytes: Int, maximumCues: Int = .max, measuresLoudness: Bool = false
  ) {
    self.directories = directories
    self.options = options
    self.maximumTotalBytes = maximumTotalBytes
    self.maximumCues = maximumCues
    self.measuresLoudness = measuresLoudness
  }

  /// The cue name for a file name: the name without its extension (`.mp3`, `.oga`, `.ogg`,
  /// `.opus`, `.wav`, `.flac`, any case), or nil for other files and hidden ones.
  ///
  /// The name is kept exactly, spaces, Unicode and control characters included: the protocol's
  /// JSON escapes it, and the log handler escapes control characters, so `a\nb.mp3` is the cue
  /// `a\nb` and never a second log line. Two files of one name (`pico.mp3`, `pico.wav`) are one
  /// cue: the first in the search order, and in a directory the first by file name.
  public static func cueName(forFile file: String) -> String? { AudioFileDecoder.soundName(forFile: file) }

  /// Whether the entry `file` of a sound directory is a folder that makes a variation set of that
  /// name: a directory whose name has no dot and is not hidden.
  public static func isVariationFolder(_ file: String, in directory: String) -> Bool {
    !file.hasPrefix(".") && !file.contains(".") && Files.kind(of: directory + "/" + file) == .directory
  }

  /// Scans every directory and decodes in parallel, reusing cues from `previous` whose file did not change.
  public func scan(previous: [String: Cue] = [:]) -> LibraryScan {
    var warnings: [String] = []
    var failures: [LoadFailure] = []
    var candidates: [(name: String, path: String)] = []
    var seen: [String: String] = [:]
    var folders: [String: [String]] = [:]
    for directory in directories {
      let names: [(name: String, isValidUTF8: Bool)]
      do {
        names = try Files.listNames(directory: directory)
      } catch {
        if error.code != 2 { warnings.append("cannot read sound directory \(directory): \(error.reason)") }
        continue
      }
      // Files first, then folders: a file and a folder of one name make the file the cue.
      var sets: [(name: String, path: String)] = []
      for (file, isValidUTF8) in names {
        guard let name = Self.cueName(forFile: file) else {
          if isValidUTF8, Self.isVariationFolder(file, in: directory) {
            sets.append((file, directory + "/" + file))
          }
          continue
        }
        let path = directory + "/" + file
        guard isValidUTF8 else {
          // The name cannot be spelled exactly (� stands for the bad bytes), so it cannot be opened
          // or named by a client.
          failures.append(LoadFailure(path: path, reason: "its name is not valid UTF-8; give it a UTF-8 name"))
          continue
        }
        if let earlier = seen[name] {
          warnings.append("\(path) is not loaded: cue '\(name)' comes from \(earlier), which is earlier in the search order")
          continue
        }
        seen[name] = path
        candidates.append((name, path))
      }
      // A folder is a variation set: its sound files are its members, `FOLDER/NAME` each.
      for set in sets.sorted(by: { $0.name < $1.name }) {
        if let earlier = seen[set.name] {
          warnings.append("\(set.path)/ is not loaded: cue '\(set.name)' comes from \(earlier), which is earlier in the search order")
          continue
        }
        let files = ((try? Files.listNames(directory: set.path)) ?? []).filter { $0.isValidUTF8 }.map(\.name).sorted()
        var members: [String] = []
        for file in files {
          guard let member = Self.cueName(forFile: file), !members.contains(set.name + "/" + member) else { continue }
          members.append(set.name + "/" + member)
          candidates.append((set.name + "/" + member, set.path + "/" + file))
        }
        guard !members.isEmpty else { continue }
        seen[set.name] = set.path + "/"
        folders[set.name] = members
      }
    }
    if candidates.count > maximumCues {
      for dropped in candidates[maximumCues...] {
        failures.append(LoadFailure(path: dropped.path, reason: "the cue limit (\(maximumCues)) is reached; raise --max-cues"))
      }
      candidates.removeSubrange(maximumCues...)
    }

    // Decode what is new or changed, in parallel.
    let slots = ResultSlots(count: candidates.count)
    let options = options
    let measuresLoudness = measuresLoudness
    let work = candidates
    Threads.parallelFor(work.count) { index in
      let candidate = work[index]
      let stamp = FileStamp.of(candidate.path)
      if let old = previous[candidate.name], old.path == candidate.path, let stamp, old.fileStamp == stamp {
        // A kept cue keeps its measurement; one not measured yet is measured here if it is wanted now.
        if measuresLoudness { old.measureLoudness() }
        slots.set(index, .success(old))
        return
      }
      do throws(DecodeError) {
        // One descriptor: the bytes are one version of the file, even when it is renamed over
        // mid-read, and the stamp is that descriptor's, so it describes exactly these bytes. A
        // file replaced after this read has another inode or time, and the next reload reads it.
        let file = try MP3Decoder.readFile(path: candidate.path, options: options)
        let decoded = try AudioFileDecoder.decode(bytes: file.bytes, name: candidate.path, options: options)
        let cue = Cue(
          name: candidate.name, path: candidate.path, decoded: decoded, sampleRate: options.outputRate, fileStamp: FileStamp(file.status))
        if measuresLoudness { cue.measureLoudness() }
        slots.set(index, .success(cue))
      } catch {
        slots.set(index, .failure(error))
      }
    }

    var cues: [String: Cue] = [:]
    var total = 0
    for (index, candidate) in candidates.enumerated() {
      switch slots.get(index) {
      case .success(let cue):
        if total + cue.byteCount > maximumTotalBytes {
          failures.append(
            LoadFailure(
              path: candidate.path,
              reason: "the decoded-memory limit (\(maximumTotalBytes >> 20) MiB) is reached; raise --max-memory or remove cues"))
          continue
        }
        total += cue.byteCount
        cues[candidate.name] = cue
        if previous[candidate.name] !== cue {
          for warning in cue.decoded.warnings { warnings.append("\(candidate.path): \(warning)") }
        }
      case .failure(let error):
        failures.append(LoadFailure(path: error.path, reason: error.reason))
      case nil:
        failures.append(LoadFailure(path: candidate.path, reason: "it was not decoded"))
      }
    }
    // A set keeps the members that loaded; one with none left is no cue.
    folders = folders.compactMapValues { members in
      let loaded = members.filter { cues[$0] != nil }
      return loaded.isEmpty ? nil : loaded
    }
    var scan = LibraryScan(cues: cues, failures: failures, warnings: warnings)
    scan.folders = folders
    scan.added = cues.keys.filter { previous[$0] == nil }.sorted()
    scan.removed = previous.keys.filter { cues[$0] == nil }.sorted()
    scan.changed = cues.keys.filter { previous[$0] != nil && previous[$0] !== cues[$0] }.sorted()
    return scan
  }
}

/// Fixed slots written once each by parallel workers.
private final class ResultSlots: Sendable {
  private let results: Mutex<[Result<Cue, DecodeError>?]>

  init(count: Int) { results = Mutex(Array(repeating: nil, count: count)) }

  func set(_ index: Int, _ result: Result<Cue, DecodeError>) {
    results.withLock { $0[index] = result }
  }

  func get(_ index: Int) -> Result<Cue, DecodeError>? {
    results.withLock { $0[index] }
  }
}
