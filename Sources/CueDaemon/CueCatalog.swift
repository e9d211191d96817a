import CuePosix
import CueProtocol

/// The cues loaded now, by name: what `play`, players, sounds and paging look names up in.
///
/// A reload replaces the whole set at once; voices keep their own reference to the cue they
/// play, so nothing playing is cut.
final class CueCatalog {
  private(set) var cues: [String: Cue] = [:]
  /// The output rate, for durations.
  let sampleRate: Int

  init(sampleRate: Int) {
    self.sampleRate = sampleRate
  }

  func replace(with cues: [String: Cue]) { self.cues = cues }

  subscript(name: String) -> Cue? { cues[name] }

  var count: Int { cues.count }
  var byteCount: Int { cues.values.reduce(0) { $0 + $1.byteCount } }
  var names: Set<String> { Set(cues.keys) }

  /// The cue named `name`, or `unknown-cue` naming what is loaded.
  func cue(named name: String) throws(ProtocolError) -> Cue {
    guard let cue = cues[name] else { throw unknown(name) }
    return cue
  }

  /// `unknown-cue` for `name`, with the names that are loaded.
  func unknown(_ name: String) -> ProtocolError {
    ProtocolError(.unknownCue, "no cue named '\(name.prefix(200))'; \(hint())")
  }

  /// What is loaded, for messages about a missing cue.
  func hint() -> String {
    if cues.isEmpty { return "no cues are loaded (see the daemon's log for why)" }
    let names = cues.keys.sorted()
    let shown = names.prefix(8).joined(separator: ", ")
    return "loaded: \(shown)\(names.count > 8 ? ", … (\(names.count) in all; `cuectl list`)" : "")"
  }

  /// `list`'s entries, by name. Loudness and peaks to 0.01 dB: finer says nothing a listener hears.
  ///
  /// The first `list` measures the cues not measured yet (all of them when `loudness-normalize`
  /// is off), in parallel, one thread per core: about 1 ms of work per second of audio.
  func listing() -> [CueInfo] {
    func hundredths(_ x: Double?) -> Double? { x.map { ($0 * 100).rounded() / 100 } }
    let unmeasured = cues.values.filter { !$0.isMeasured }
    Threads.parallelFor(unmeasured.count) { unmeasured[$0].measureLoudness() }
    return cues.values.sorted { $0.name < $1.name }.map { cue in
      CueInfo(
        name: cue.name, duration: Double(cue.frameCount) / Double(sampleRate), frames: cue.frameCount,
        sourceRate: cue.decoded.sourceRate, channels: cue.decoded.sourceChannels, bytes: cue.byteCount,
        gapless: cue.decoded.hasGaplessInfo, path: cue.path, format: cue.decoded.format,
        loudness: hundredths(cue.loudness?.integratedLUFS), peak: hundredths(cue.loudness?.samplePeakDBFS))
    }
  }
}
