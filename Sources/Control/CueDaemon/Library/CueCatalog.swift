import CuePosix
import CueProtocol

/// The cues loaded now, by name: what `play`, players, sounds and paging look names up in.
///
/// A reload replaces the whole set at once; voices keep their own reference to the cue they
/// play, so nothing playing is cut.
final class CueCatalog {
  /// Every file loaded, by cue name; a folder's files as `FOLDER/NAME`.
  private(set) var cues: [String: Cue] = [:]
  /// Folders of the sound directories: the set name, and its members' cue names in file-name order.
  private(set) var folders: [String: [String]] = [:]
  /// Sets the config's `[cues.NAME] variations` lists make.
  private(set) var configuredSets: [String: [Variation]] = [:]
  /// The output rate, for durations.
  let sampleRate: Int

  init(sampleRate: Int) {
    self.sampleRate = sampleRate
  }

  func replace(with cues: [String: Cue], folders: [String: [String]] = [:]) {
    self.cues = cues
    self.folders = folders
  }

  /// The `[cues.NAME]` tables in force: those with `variations` are sets.
  func setRules(_ rules: [String: CueRule]) {
    configuredSets = rules.compactMapValues { $0.variations.isEmpty ? nil : $0.variations }
  }

  /// The cue a single file is wanted for (a player, a system sound's duration): the cue itself, or
  /// the first member of the set of that name.
  subscript(name: String) -> Cue? {
    if let cue = cues[name] { return cue }
    return members(of: name).first?.cue
  }

  /// What a play of `name` picks from, with weights: a config set's members (a member naming a
  /// folder stands for its files, sharing its weight), a folder's files, or the one cue.
  func members(of name: String) -> [(name: String, cue: Cue, weight: Double)] {
    if let variations = configuredSets[name] {
      return variations.flatMap { variation -> [(name: String, cue: Cue, weight: Double)] in
        if let folder = folders[variation.cue], variation.cue != name {
          let files = folder.compactMap { member in cues[member].map { (member, $0) } }
          return files.map { ($0.0, $0.1, variation.weight / Double(files.count)) }
        }
        return cues[variation.cue].map { [(variation.cue, $0, variation.weight)] } ?? []
      }
    }
    if let folder = folders[name] { return folder.compactMap { member in cues[member].map { (member, $0, 1.0) } } }
    return cues[name].map { [(name, $0, 1.0)] } ?? []
  }

  var count: Int { cues.count }
  var byteCount: Int { cues.values.reduce(0) { $0 + $1.byteCount } }
  /// Every name a play may give: files, folders, configured sets.
  var names: Set<String> { Set(cues.keys).union(folders.keys).union(configuredSets.keys) }

  /// The cue named `name` (or the first of its set), or `unknown-cue` naming what is loaded.
  func cue(named name: String) throws(ProtocolError) -> Cue {
    guard let cue = self[name] else { throw unknown(name) }
    return cue
  }

  /// `unknown-cue` for `name`, with the names that are loaded.
  func unknown(_ name: String) -> ProtocolError {
    ProtocolError(.unknownCue, "no cue named '\(name.prefix(200))'; \(hint())")
  }

  /// What is loaded, for messages about a missing cue.
  func hint() -> String {
    if cues.isEmpty { return "no cues are loaded (see the daemon's log for why)" }
    let names = names.sorted()
    let shown = names.prefix(8).joined(separator: ", ")
    return "loaded: \(shown)\(names.count > 8 ? ", … (\(names.count) in all; `cuectl list`)" : "")"
  }

  /// `list`'s entries, by name; a folder's files name their set. Loudness and peaks to 0.01 dB:
  /// finer says nothing a listener hears.
  ///
  /// The first `list` measures the cues not measured yet (all of them when `loudness-normalize`
  /// is off), in parallel, one thread per core: about 1 ms of work per second of audio.
  func listing() -> [CueInfo] {
    func hundredths(_ x: Double?) -> Double? { x.map { ($0 * 100).rounded() / 100 } }
    let unmeasured = cues.values.filter { !$0.isMeasured }
    Threads.parallelFor(unmeasured.count) { unmeasured[$0].measureLoudness() }
    return cues.values.sorted { $0.name < $1.name }.map { cue in
      var info = CueInfo(
        name: cue.name, duration: Double(cue.frameCount) / Double(sampleRate), frames: cue.frameCount,
        sourceRate: cue.decoded.sourceRate, channels: cue.decoded.sourceChannels, bytes: cue.byteCount,
        gapless: cue.decoded.hasGaplessInfo, path: cue.path, format: cue.decoded.format,
        loudness: hundredths(cue.loudness?.integratedLUFS), peak: hundredths(cue.loudness?.samplePeakDBFS))
      if let slash = cue.name.firstIndex(of: "/") { info.set = String(cue.name[..<slash]) }
      return info
    }
  }
}
