/// When the carousel turns the page by itself (seed 003's auto-scroll).
///
/// Every `intervalSeconds` the page turns. The user's scroll holds it: a drag (from
/// willBeginDragging), a key or a wheel notch; and it resumes once that scroll has settled
/// (didEndDragging without deceleration, didEndDecelerating, or the end of a key's slide): the next
/// automatic page comes exactly `resumeDelaySeconds` (AUTO_SCROLL_DELAY, 3 s) after the settling.
/// (Turning at once on resuming feels as if the carousel fought the user; the delay is what keeps
/// it from being fidgety.) After an automatic page the next comes an interval later. An interval
/// of 0 turns it off.
///
/// Times are seconds on any monotonic clock, passed in.
struct AutoAdvance: Equatable, Sendable {
  /// AUTO_SCROLL_DELAY: how long after the user's scroll settles auto-advance turns the page.
  static let defaultResumeDelaySeconds = 3.0

  /// Seconds between automatic pages; 0: off.
  let intervalSeconds: Double
  let resumeDelaySeconds: Double
  /// When the next automatic page is due; nil when off or held.
  private(set) var dueSeconds: Double?
  /// Whether the user's scroll holds it (from its start until it settles).
  private(set) var isHeld = false
  /// Whether the next page (at `dueSeconds`) is the one after a user's scroll settled.
  private(set) var isResuming = false

  init(intervalSeconds: Double, resumeDelaySeconds: Double = defaultResumeDelaySeconds, now: Double) {
    self.intervalSeconds = max(0, intervalSeconds)
    self.resumeDelaySeconds = max(0, resumeDelaySeconds)
    self.dueSeconds = intervalSeconds > 0 ? now + intervalSeconds : nil
  }

  var isEnabled: Bool { intervalSeconds > 0 }

  /// Whether the user's scroll holds it back at `now` (or it waits to resume after one).
  func isPaused(at now: Double) -> Bool {
    guard isEnabled else { return false }
    if isHeld { return true }
    guard isResuming, let dueSeconds else { return false }
    return now < dueSeconds
  }

  /// Whether the page is to turn now.
  func isDue(at now: Double) -> Bool {
    guard let dueSeconds else { return false }
    return now >= dueSeconds
  }

  /// The user started a scroll (a drag began, a key, a notch): no automatic page until it settles.
  mutating func hold() {
    guard isEnabled else { return }
    isHeld = true
    dueSeconds = nil
  }

  /// A scroll settled at `now`: if the user's, the next automatic page is `resumeDelaySeconds` away.
  mutating func settled(at now: Double) {
    guard isEnabled, isHeld else { return }
    isHeld = false
    isResuming = true
    dueSeconds = now + resumeDelaySeconds
  }

  /// The page turned by itself: the next one is an interval away.
  mutating func advanced(at now: Double) {
    guard isEnabled else { return }
    isResuming = false
    dueSeconds = now + intervalSeconds
  }
}
