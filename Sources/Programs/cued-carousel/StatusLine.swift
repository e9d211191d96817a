import CueProtocol

/// The status line: the last page turn sent, and what cued answered (or that it is not there).
///
/// `sent page-changed 3→4 (key) · cued: played page-next`. Pages are shown numbered from 1, as
/// on the cards (the wire counts from 0). Of cued's answers to one page turn the most telling is
/// kept (`PagingAnswer.weight`): a `played` over a `too-soon`, and either over an `unbound` or a
/// `merged` (the `scroll-animation-ended` after a slide is usually bound to nothing, and the
/// `wrapped` after a wrapping `page-changed` is merged into it: neither may hide the sound that played).
struct StatusLine: Equatable, Sendable {
  /// What is known of cued.
  enum Connection: Equatable, Sendable {
    case connecting
    case connected
    case notRunning
  }

  var connection: Connection = .connecting
  /// The last page turn sent, described; nil before the first.
  private(set) var lastSent: String? = nil
  /// cued's most telling answer to it.
  private(set) var answer: PagingAnswer? = nil

  /// Notes messages just sent; a group with a page change, or an edge (a push against an end of a
  /// bounded pager, which leaves the page where it was), starts a new turn.
  mutating func sent(_ events: [CarouselMessage.Event]) {
    var turn: String? = nil
    var wrapped = false
    for event in events {
      switch event {
      case .pageChanged(let from, let to, _, let reason, _, _): turn = "page-changed \(from + 1)→\(to + 1) (\(reason.rawValue))"
      case .wrapped: wrapped = true
      case .edge(let edge): turn = turn ?? "edge (\(edge == .start ? "first page" : "last page"))"
      default: break
      }
    }
    guard let turn else { return }
    lastSent = wrapped ? turn + " + wrapped" : turn
    answer = nil
  }

  /// Notes an answer from cued to this carousel.
  mutating func received(_ new: PagingAnswer) {
    if let answer, answer.weight > new.weight { return }
    answer = new
  }

  /// The line's text (not cut to the screen's width).
  var text: String {
    let left = lastSent.map { "sent \($0)" } ?? "no page turned yet"
    let right: String
    switch connection {
    case .notRunning: right = "cued is not running (silent)"
    case .connecting: right = "looking for cued…"
    case .connected:
      if let answer {
        right = "cued: \(answer.summary)"
      } else {
        right = lastSent == nil ? "cued is listening" : "cued: no answer yet"
      }
    }
    return left + " · " + right
  }
}
