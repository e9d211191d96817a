// Why a play is silent, why a voice finished, why a system sound's play completed: the `reason`
// of replies and events.

/// Why a play was silent: it never sounded, or (`level`) a level change faded it out. The `reason`
/// of a play reply with `played: false`, of its `finished` event, and of a `completion`.
public enum SilenceReason: String, CaseIterable, Sendable {
  /// No such cue (a play reply is then the error `unknown-cue`, or `unknown-event`); counted only.
  case unknown
  /// Within the cue's cooldown after its last start, or a carousel binding's `min-interval`.
  case cooldown
  /// The cue's `max-instances` with `past-max = "refuse"`, a carousel binding with
  /// `ignore-while-playing` that still sounds, or every voice plays a cue of higher priority.
  case cap
  /// The level (or the client's ceiling) does not allow it, or a level change faded it out.
  case level
  /// Muted: the cue (`muted = true` in its table), or system sounds (`cuectl system --mute`).
  case muted
  /// Its group is muted.
  case groupMuted = "group-muted"
  /// It could not start before its deadline (a paging binding's `deadline`).
  case tooLate = "too-late"
  /// A sound-theme event while the desktop's event sounds are off (its `event-sounds` switch,
  /// followed with `sound-theme = "desktop"`); cues are the program's own sounds and still play.
  case eventSoundsOff = "event-sounds-off"
}

/// Why a voice finished (the `reason` of a `finished` event).
public enum FinishReason: String, CaseIterable, Sendable {
  /// It played to the end of its last loop.
  case end
  /// A client stopped it.
  case stopped
  /// The voice limit was reached and a newer voice took its place.
  case stolen
  /// Its system sound was disposed of with "dispose now".
  case disposed
  /// The output device went away and the voice grew too old to be played late.
  case deviceLost = "device-lost"
  /// It could not be played (a player's file failed to decode).
  case error
  /// Silent for one of the `SilenceReason`s (a play that never sounded, or a level change).
  case cooldown, cap, level, muted
  case groupMuted = "group-muted"
  case tooLate = "too-late"
  case eventSoundsOff = "event-sounds-off"

  /// The finish of a play that was silent for `reason`.
  public init(_ reason: SilenceReason) {
    self = Self(rawValue: reason.rawValue) ?? .error
  }
}

/// Why a play of a system sound completed (the `reason` of a `completion` event): a finish reason, or `muted`.
public enum CompletionReason: String, CaseIterable, Sendable {
  case end, stopped, stolen, disposed
  case deviceLost = "device-lost"
  case error
  /// Silent for a `SilenceReason`; `muted`: system sounds are muted, or the cue is.
  case cooldown, cap, level, muted
  case groupMuted = "group-muted"
  case tooLate = "too-late"
  /// Never for a system sound (it plays a cue); here so that every finish reason has its completion.
  case eventSoundsOff = "event-sounds-off"

  /// The completion reason for a voice that finished for `reason`.
  public init(_ reason: FinishReason) {
    self = Self(rawValue: reason.rawValue)!
  }
}
