import CueCore
import Logging

/// `loudness-normalize`: the gain that brings each cue to `loudness-target`, from the cue's
/// measured loudness (`Cue.loudness`, measured once per cue).
///
/// A link of the voice table's gain chain (`VoiceTable.chainGain`: source × this × the group), so it
/// reaches every voice, whatever started it, and every recomputation (a player's volume, a group's
/// change, this policy's own change at a reload). The gain is worked out from the cue's measurement
/// (one `pow`); a gain capped so that the cue's sample peak stays
/// at 0 dBFS is logged once per cue and policy.
final class LoudnessNormalizer {
  struct Policy: Equatable {
    var enabled: Bool
    var targetLUFS: Double

    init(enabled: Bool, targetLUFS: Double) {
      self.enabled = enabled
      self.targetLUFS = targetLUFS
    }

    init(_ configuration: DaemonConfiguration) {
      self.init(enabled: configuration.loudnessNormalize, targetLUFS: configuration.loudnessTargetLUFS)
    }
  }

  /// Reloadable: a change reaches sounding voices too (`VoiceTable.refreshGains`).
  var policy: Policy {
    didSet { if policy != oldValue { cappedLogged.removeAll() } }
  }
  /// The cue files whose capped gain has been logged under this policy.
  private var cappedLogged: Set<String> = []
  private let logger: Logger

  init(policy: Policy, logger: Logger) {
    self.policy = policy
    self.logger = logger
  }

  /// `gain` for a voice of `cue`: scaled to the target when normalising, unchanged otherwise and
  /// for a cue without a loudness (silence).
  func gain(_ gain: StereoGain, for cue: Cue) -> StereoGain {
    guard policy.enabled, let measured = cue.loudness, let loudness = measured.integratedLUFS,
      let normalization = measured.normalizationGain(targetLUFS: policy.targetLUFS)
    else { return gain }
    if normalization.capped, cappedLogged.insert(cue.path).inserted {
      let wanted = policy.targetLUFS - loudness
      logger.notice(
        "cue '\(cue.name)' (\(formatTenths(loudness)) LUFS, peak \(formatTenths(measured.samplePeakDBFS ?? 0)) dBFS) would need \(formatTenths(wanted)) dB to reach \(formatTenths(policy.targetLUFS)) LUFS; it gets \(formatTenths(-(measured.samplePeakDBFS ?? 0))) dB, which brings its peak to 0 dBFS"
      )
    }
    return gain.scaled(by: Float(normalization.gain))
  }
}
