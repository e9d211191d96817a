import CueProtocol

/// What cued made of one carousel message: a `paging` event (`Event.Paging`), as far as the status line cares.
struct PagingAnswer: Equatable, Sendable {
  /// The message it answers: `page-changed`, `wrapped`, `drag-began`, …
  var message: String
  /// `played`, `ignored`, `too-soon`, `late`, `unbound`, `merged`, `unchanged`, `failed` (or whatever cued says next).
  var decision: String
  /// The cue played or meant, when there is one.
  var cue: String?

  /// Reads a `paging` event's object; nil when it is not one, or concerns another carousel.
  init?(event body: JSONValue, carousel: String) {
    guard case .paging(let paging)? = try? Event(json: body) else { return nil }
    self.init(paging, carousel: carousel)
  }

  /// The answer a `paging` event gives; nil when it concerns another carousel.
  init?(_ paging: Event.Paging, carousel: String) {
    guard paging.carousel == carousel else { return nil }
    self.init(message: paging.message, decision: paging.outcome.decision.rawValue, cue: paging.outcome.cue)
  }

  init(message: String, decision: String, cue: String?) {
    self.message = message
    self.decision = decision
    self.cue = cue
  }

  /// How much it says about a page turn: a sound played says most; a sound held back (too soon,
  /// late, ignored, failed) says more than "nothing to play" (unbound, merged into the other
  /// half of a wrap, unchanged).
  var weight: Int {
    switch PagingDecision(rawValue: decision) {
    case .played: 3
    case .unbound, .merged, .unchanged: 1
    default: 2
    }
  }

  /// `played page-next`, `too-soon page-next`, `unbound (scroll-animation-ended)`.
  var summary: String {
    if let cue, !cue.isEmpty { return "\(decision) \(cue)" }
    return "\(decision) (\(message))"
  }
}
