/// When the carousel turns the page by itself.
///
/// Every `intervalSeconds` the page turns. Any interaction pauses it: auto-advance resumes
/// `resumeDelaySeconds` (AUTO_SCROLL_DELAY, 3 s) after the last interaction, and the interval
/// then runs afresh, so the next automatic page comes `resumeDelaySeconds + intervalSeconds` after
/// the last key or wheel notch. (Turning at once on resuming feels as if the carousel fought the
/// user; the delay is what keeps it from being fidgety.) An interval of 0 turns it off.
///
/// Times are seconds on any monotonic clock, passed in.
struct AutoAdvance: Equatable, Sendable {
  /// AUTO_SCROLL_DELAY: how long after the last interaction auto-advance resumes.
  static let defaultResumeDelaySeconds = 3.0

  /// Seconds between automatic pages; 0: off.
  let intervalSeconds: Double
  let resumeDelaySeconds: Double
  /// When the next automatic page is due; nil when off.
  private(set) var dueSeconds: Double?
  /// Until when it is paused by an interaction (nil: never paused yet).
  private(set) var pausedUntilSeconds: Double? = nil

  init(intervalSeconds: Double, resumeDelaySeconds: Double = defaultResumeDelaySeconds, now: Double) {
    self.intervalSeconds = max(0, intervalSeconds)
    self.resumeDelaySeconds = resumeDelaySeconds
    self.dueSeconds = intervalSeconds > 0 ? now + intervalSeconds : nil
  }

  var isEnabled: Bool { intervalSeconds > 0 }

  /// Whether an interaction holds it back at `now`.
  func isPaused(at now: Double) -> Bool {
    guard isEnabled, let pausedUntilSeconds else { return false }
    return now < pausedUntilSeconds
  }

  /// Whether the page is to turn now.
  func isDue(at now: Double) -> Bool {
    guard let dueSeconds else { return false }
    return now >= dueSeconds
  }

  /// The user paged (a key, the wheel): pause, and start counting again once resumed.
  mutating func userInteracted(at now: Double) {
    guard isEnabled else { return }
    pausedUntilSeconds = now + resumeDelaySeconds
    dueSeconds = now + resumeDelaySeconds + intervalSeconds
  }

  /// The page turned by itself: the next one is an interval away.
  mutating func advanced(at now: Double) {
    guard isEnabled else { return }
    dueSeconds = now + intervalSeconds
  }
}
