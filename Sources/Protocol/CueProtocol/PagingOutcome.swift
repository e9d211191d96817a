/// What the daemon did with a carousel message (`decision` in its reply and its `paging` event).
public enum PagingDecision: String, CaseIterable, Sendable {
  /// The bound cue started.
  case played
  /// The voice gate kept the bound cue silent for the reason `reason` names: ignore-while-playing
  /// while a voice of the binding still sounds (`cap`), the cue's own rules, the level, its group.
  case ignored
  /// Within the binding's min-interval of its last start, or the cue's cooldown (`reason`: `cooldown`).
  case tooSoon = "too-soon"
  /// It could not start before its deadline (latest wins).
  case late
  /// No cue is bound to it (or the bound cue is not loaded).
  case unbound
  /// The other half of a wrap already played the wrap cue.
  case merged
  /// The page did not change.
  case unchanged
  /// The device could not be opened, or the audio queue was full.
  case failed
}

/// What a carousel message led to: the decision, and the cue and voice when one started.
///
/// Both the reply to a carousel message with an id and the tail of its `paging` event.
public struct PagingOutcome: Sendable, Equatable {
  public var decision: PagingDecision
  public var cue: String?
  public var voice: UInt64?
  /// Why the bound cue is silent when the voice gate kept it so (its rules, the level, its group):
  /// as a silent `play`'s `reason`. The decision is then `ignored`, or `too-soon` for a cooldown.
  public var reason: SilenceReason?
  /// For a page change that crossed more than one page: how many (present only then).
  public var pages: Int?
  /// True when the message arrived out of the scroll lifecycle's order (it is still handled).
  public var outOfOrder: Bool
  /// True when this message settled the scroll (the derived `settled` moment; its own `paging` event follows).
  public var settled: Bool

  public init(
    decision: PagingDecision, cue: String? = nil, voice: UInt64? = nil, reason: SilenceReason? = nil, pages: Int? = nil, outOfOrder: Bool = false,
    settled: Bool = false
  ) {
    self.decision = decision
    self.cue = cue
    self.voice = voice
    self.reason = reason
    self.pages = pages
    self.outOfOrder = outOfOrder
    self.settled = settled
  }

  /// `decision`, then `cue`, `voice`, `reason`, `pages`, `outOfOrder` and `settled` when present (the flags only when true).
  public var fields: [(String, JSONValue)] {
    var members: [(String, JSONValue)] = [("decision", .string(decision.rawValue))]
    if let cue { members.append(("cue", .string(cue))) }
    if let voice { members.append(("voice", .id(voice))) }
    if let reason { members.append(("silenced", .string(reason.rawValue))) }
    if let pages { members.append(("pages", .int(pages))) }
    if outOfOrder { members.append(("outOfOrder", .bool(true))) }
    if settled { members.append(("settled", .bool(true))) }
    return members
  }

  static func decode(_ fields: inout FieldReader, in what: String) throws(ProtocolError) -> PagingOutcome {
    PagingOutcome(
      decision: try required(fields.value("decision", as: PagingDecision.self), "decision", in: what),
      cue: try fields.string("cue"), voice: try fields.id("voice"), reason: try fields.value("silenced", as: SilenceReason.self),
      pages: try fields.integer("pages"),
      outOfOrder: try fields.bool("outOfOrder") ?? false, settled: try fields.bool("settled") ?? false)
  }
}
