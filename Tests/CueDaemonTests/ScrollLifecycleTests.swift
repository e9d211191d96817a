import CueCore
import CueProtocol
import DaemonBehaviours
import Testing

@testable import CueDaemon

/// The whole scroll lifecycle of the seeds (UIScrollView's delegate order), directions, jumps across
/// several pages, bounded pagers and bursts, on a daemon in process: what it decides and what the
/// test sink receives, sample for sample.
@Suite("Paging: the scroll lifecycle, directions, jumps and bursts")
struct ScrollLifecycleTests {
  static func daemon(_ bindings: CarouselBindings) throws -> (EmbeddedDaemon, EmbeddedClient) {
    let embedded = try EmbeddedDaemon()
    embedded.daemon.paging.setCarousels(["default": bindings])
    return (embedded, embedded.connect())
  }

  @Test func aDeceleratingFlickSettlesOnceAndPlaysTheSettledSoundOnce() throws {
    let (embedded, client) = try Self.daemon(CarouselBindings(bindings: ["settled": PagingBinding(cue: "tick")]))
    let lifecycle = [
      #"{"id":1,"carousel":"default","event":"drag-began"}"#,
      #"{"id":2,"carousel":"default","event":"will-end-dragging","velocity":4.5,"targetPage":3}"#,
      #"{"id":3,"carousel":"default","event":"drag-ended","decelerate":true}"#,
      #"{"id":4,"carousel":"default","event":"will-begin-decelerating"}"#,
      #"{"id":5,"carousel":"default","event":"page-changed","from":0,"to":3,"count":7,"reason":"drag","direction":"next"}"#,
    ]
    for line in lifecycle {
      let reply = client.reply(line)
      #expect(reply["outOfOrder"] == nil && reply["settled"] == nil, "\(line) → \(reply)")
    }
    #expect(embedded.daemon.voices.soundingCount == 0, "only settled is bound: nothing sounds before the scroll settles")
    let ended = client.reply(#"{"id":6,"carousel":"default","event":"deceleration-ended"}"#)
    #expect(ended["settled"] == .bool(true))
    // A second end for the same scroll is out of order and settles nothing.
    let again = client.reply(#"{"id":7,"carousel":"default","event":"deceleration-ended"}"#)
    #expect(again["outOfOrder"] == .bool(true) && again["settled"] == nil)
    #expect(embedded.daemon.paging.counts.settled == 1 && embedded.daemon.paging.counts.outOfOrder == 1)
    embedded.runCycles(until: { embedded.daemon.voices.soundingCount == 0 })
    // One tick: the settled sound, once.
    let tick = embedded.samples(of: "tick")
    let written = embedded.sink.written
    #expect(soundOnsets(written).count == 1)
    let start = try #require(soundOnsets(written).first)
    #expect(Array(written[(2 * start)..<(2 * start + tick.count)]) == tick)
  }

  @Test func aDragThatEndsWithoutDeceleratingSettlesAtOnceAndOutOfOrderMessagesAreCounted() throws {
    let (embedded, client) = try Self.daemon(CarouselBindings(bindings: ["settled": PagingBinding(cue: "tick")]))
    #expect(client.reply(#"{"id":1,"carousel":"default","event":"drag-began"}"#)["settled"] == nil)
    #expect(client.reply(#"{"id":2,"carousel":"default","event":"drag-ended","decelerate":false}"#)["settled"] == .bool(true))
    // will-begin-decelerating without a decelerating drag: out of order, handled, counted.
    #expect(client.reply(#"{"id":3,"carousel":"default","event":"will-begin-decelerating"}"#)["outOfOrder"] == .bool(true))
    // A programmatic scroll settles when its animation ends.
    _ = client.reply(#"{"id":4,"carousel":"default","event":"page-changed","from":1,"to":2,"count":5,"reason":"programmatic"}"#)
    #expect(client.reply(#"{"id":5,"carousel":"default","event":"scroll-animation-ended"}"#)["settled"] == .bool(true))
    #expect(embedded.daemon.paging.counts.settled == 2 && embedded.daemon.paging.counts.outOfOrder == 1)
    let status = client.reply(#"{"id":6,"op":"status"}"#)
    #expect(status["paging"]?["settled"] == .number(2) && status["paging"]?["outOfOrder"] == .number(1))
  }

  /// Seed 000's programmatic scrolls: an animated one (setContentOffset(_:animated: true)) settles
  /// with the scroll-animation-ended that follows it; one with no animation sends one
  /// scrollViewDidScroll and nothing else, so its page change settles the scroll at once.
  @Test func aProgrammaticJumpWithoutAnimationSettlesAtOnceAndAnAnimatedOneAtItsEnd() throws {
    let (embedded, client) = try Self.daemon(CarouselBindings(bindings: ["settled": PagingBinding(cue: "tick")]))
    client.request(#"{"op":"subscribe","kinds":["paging"]}"#)
    let jump = client.request(#"{"id":1,"carousel":"default","event":"page-changed","from":0,"to":3,"count":5,"reason":"programmatic","animated":false}"#)
    #expect(jump.first?["settled"] == .bool(true), "a jump with no animation settles")
    #expect(jump.contains { $0["event"] == .string("paging") && $0["message"] == .string("settled") && $0["decision"] == .string("played") })
    #expect(client.reply(#"{"id":2,"carousel":"default","event":"scroll-animation-ended"}"#)["settled"] == nil, "nothing is left to settle")
    let animated = client.reply(#"{"id":3,"carousel":"default","event":"page-changed","from":3,"to":4,"count":5,"reason":"programmatic"}"#)
    #expect(animated["settled"] == nil)
    #expect(client.reply(#"{"id":4,"carousel":"default","event":"scroll-animation-ended"}"#)["settled"] == .bool(true))
    // During a drag, a page change with no animation is part of the drag: the drag's end settles.
    _ = client.reply(#"{"id":5,"carousel":"default","event":"drag-began"}"#)
    #expect(client.reply(#"{"id":6,"carousel":"default","event":"page-changed","from":4,"to":3,"count":5,"reason":"drag","animated":false}"#)["settled"] == nil)
    #expect(client.reply(#"{"id":7,"carousel":"default","event":"drag-ended","decelerate":false}"#)["settled"] == .bool(true))
    #expect(embedded.daemon.paging.counts.settled == 3)
  }

  /// A vertical pager's page sounds stay centred: stereo has no up and down, so neither the
  /// direction nor the page's position pans them; the same carousel laid out in a row pans.
  @Test(arguments: [true, false])
  func aVerticalPagersSoundsAreNotPannedByDirectionOrPosition(vertical: Bool) throws {
    var bindings = CarouselBindings(bindings: ["page-next": PagingBinding(cue: "tick")])
    bindings.panByDirection = 1
    bindings.panByPosition = 1
    bindings.vertical = vertical
    let (embedded, client) = try Self.daemon(bindings)
    #expect(client.reply(#"{"id":1,"carousel":"default","event":"page-changed","from":3,"to":4,"count":5}"#)["decision"] == .string("played"))
    embedded.runCycles(40)
    let written = embedded.sink.written
    let frames = (0..<(written.count / 2)).filter { written[2 * $0] != 0 || written[2 * $0 + 1] != 0 }
    #expect(!frames.isEmpty)
    let centred = frames.allSatisfy { written[2 * $0] == written[2 * $0 + 1] }
    #expect(centred == vertical, vertical ? "a vertical pager's sound was panned" : "a row's sound was not panned")
  }

  @Test func aTwoPageCarouselPagesBothWaysWithTheRightSounds() throws {
    let (embedded, client) = try Self.daemon(.builtIn)
    defer { withExtendedLifetime(embedded) {} }
    func cue(_ line: String) -> JSONValue? { client.reply(line)["cue"] }
    // Without a direction, a tie goes the way the index moved.
    #expect(cue(#"{"id":1,"carousel":"default","event":"page-changed","from":0,"to":1,"count":2}"#) == .string("page-next"))
    #expect(cue(#"{"id":2,"carousel":"default","event":"page-changed","from":1,"to":0,"count":2}"#) == .string("page-prev"))
    // With one, it is taken: next from the last page wraps, previous from the first wraps back.
    #expect(cue(#"{"id":3,"carousel":"default","event":"page-changed","from":1,"to":0,"count":2,"direction":"next"}"#) == .string("wrap"))
    #expect(cue(#"{"id":4,"carousel":"default","event":"page-changed","from":0,"to":1,"count":2,"direction":"previous"}"#) == .string("wrap"))
    #expect(cue(#"{"id":5,"carousel":"default","event":"page-changed","from":0,"to":1,"count":2,"direction":"next"}"#) == .string("page-next"))
    let bad = client.reply(#"{"id":6,"carousel":"default","event":"page-changed","from":0,"to":1,"count":2,"direction":"up"}"#)
    #expect(bad["error"]?["code"] == .string("invalid-request"))
  }

  @Test func aFlickAcrossThreePagesPlaysASoundPerPageSpacedOnTheMixerClock() throws {
    var each = PagingBinding(cue: "tick")
    each.multiPage = .each
    each.pageSpacing = 0.05
    let (embedded, client) = try Self.daemon(CarouselBindings(bindings: ["page-next": each]))
    let reply = client.reply(#"{"id":1,"carousel":"default","event":"page-changed","from":0,"to":3,"count":7,"reason":"drag","direction":"next"}"#)
    #expect(reply["decision"] == .string("played") && reply["pages"] == .number(3))
    embedded.runCycles(until: { embedded.daemon.voices.soundingCount == 0 })
    let written = embedded.sink.written
    let onsets = soundOnsets(written)
    #expect(onsets.count == 3)
    #expect(onsets.map { $0 - onsets[0] } == [0, 2400, 4800], "50 ms apart at 48 kHz")
    let tick = embedded.samples(of: "tick")
    for onset in onsets { #expect(Array(written[(2 * onset)..<(2 * onset + tick.count)]) == tick) }
  }

  @Test func aJumpWithMultiPageRatePlaysOneSoundFasterByTheDistance() throws {
    var rate = PagingBinding(cue: "tick")
    rate.multiPage = .rate
    let (embedded, client) = try Self.daemon(CarouselBindings(bindings: ["page-next": rate]))
    _ = client.reply(#"{"id":1,"carousel":"default","event":"page-changed","from":0,"to":4,"count":7,"direction":"next"}"#)
    embedded.runCycles(until: { embedded.daemon.voices.soundingCount == 0 })
    let written = embedded.sink.written
    let onsets = soundOnsets(written)
    #expect(onsets.count == 1)
    // Three semitones up: 2^(3/12) faster, so about 1440 / 1.189 = 1211 frames long.
    let lastSounding = (0..<(written.count / 2)).last { written[2 * $0] != 0 || written[2 * $0 + 1] != 0 } ?? 0
    let length = lastSounding - onsets[0] + 1
    #expect(abs(length - 1211) <= 3, "\(length) frames")
  }

  @Test func aBurstOfTenPageChangesEndsWithOneSoundAndNeverTwoAtOnce() throws {
    let (embedded, client) = try Self.daemon(.builtIn)
    var page = 0
    var last: JSONValue? = nil
    for id in 1...10 {
      let next = (page + 1) % 5
      last = client.reply(#"{"id":\#(id),"carousel":"default","event":"page-changed","from":\#(page),"to":\#(next),"count":5}"#)["voice"]
      page = next
      #expect(embedded.daemon.voices.soundingCount <= 1, "after \(id): \(embedded.daemon.voices.soundingCount) page sounds")
      embedded.runCycles(1)  // 5 ms between presses: faster than any page sound
    }
    let final = try #require(last?.intValue)
    #expect(embedded.daemon.voices.sounding().map(\.rawValue) == [UInt64(final)])
    // The tenth move is 4 → 0 of five pages, a wrap: the final sound, and it plays whole.
    embedded.runCycles(until: { embedded.daemon.voices.soundingCount == 0 })
    let wrap = embedded.samples(of: "wrap")
    let tail = Array(embedded.sink.written.suffix(from: embedded.sink.written.count - wrap.count))
    #expect(tail.suffix(2000) == wrap.suffix(2000), "the final sound's end is intact")
  }

  /// Nine changes across two pages with `multi-page = "each"` (each second sound scheduled 30 ms
  /// on), then a one-page wrap, all at once or a cycle apart: the sounds not yet due when a newer
  /// change comes are dropped, so never more than one page sound is heard (the peak stays within
  /// 0.5 dB, a factor of 1.0593, of one cue's) and the wrap's sound, the last, plays whole.
  @Test(arguments: [0, 1])
  func aBurstOfMultiPageEachChangesDropsTheSoundsNotYetDue(cyclesBetween: Int) throws {
    var each = PagingBinding(cue: "tick")
    each.multiPage = .each
    each.pageSpacing = 0.03
    let (embedded, client) = try Self.daemon(CarouselBindings(bindings: ["page-next": each, "wrap": PagingBinding(cue: "wrap")]))
    let moves = stride(from: 0, to: 18, by: 2).map { ($0, $0 + 2) } + [(18, 0)]
    for (id, move) in moves.enumerated() {
      let reply = client.reply(
        #"{"id":\#(id + 1),"carousel":"default","event":"page-changed","from":\#(move.0),"to":\#(move.1),"count":19,"direction":"next"}"#)
      #expect(reply["decision"] == .string("played"))
      embedded.runCycles(cyclesBetween)
    }
    embedded.runCycles(until: { embedded.daemon.voices.soundingCount == 0 })
    let written = embedded.sink.written
    let peak = { (samples: [Float]) in samples.map(abs).max() ?? 0 }
    let loudest = max(peak(embedded.samples(of: "tick")), peak(embedded.samples(of: "wrap")))
    #expect(peak(written) <= loudest * 1.0593, "peak \(peak(written)), one cue's \(loudest)")
    let wrap = embedded.samples(of: "wrap")
    #expect(written.suffix(wrap.count - 2 * 384) == wrap.suffix(wrap.count - 2 * 384), "the wrap's sound is not whole")
  }

  /// pan-by-position: where the page sits is audible apart from the direction it came from.
  @Test func panByPositionPutsTheFirstPageLeftAndTheLastRight() throws {
    var bindings = CarouselBindings.builtIn
    bindings.panByPosition = 1
    let (embedded, client) = try Self.daemon(bindings)
    /// The loudest sample of each channel of what the move to `page` played.
    func channels(from: Int, to page: Int, _ direction: String) -> (left: Float, right: Float) {
      embedded.sink.written.removeAll()
      _ = client.reply(#"{"id":1,"carousel":"default","event":"page-changed","from":\#(from),"to":\#(page),"count":5,"direction":"\#(direction)"}"#)
      embedded.runCycles(until: { embedded.daemon.voices.soundingCount == 0 })
      let written = embedded.sink.written
      return (stride(from: 0, to: written.count, by: 2).map { abs(written[$0]) }.max() ?? 0,
              stride(from: 1, to: written.count, by: 2).map { abs(written[$0]) }.max() ?? 0)
    }
    let first = channels(from: 1, to: 0, "previous")
    #expect(first.left > 0.1 && first.right == 0, "page 1 of 5: \(first)")
    let last = channels(from: 3, to: 4, "next")
    #expect(last.left == 0 && last.right > 0.1, "page 5 of 5: \(last)")
    let middle = channels(from: 1, to: 2, "next")
    #expect(abs(middle.left - middle.right) < 0.01 && middle.left > 0.1, "page 3 of 5 sits in the middle: \(middle)")
  }

  @Test func aBoundedPagerPushedPastAnEndPlaysTheEdgeBindingPannedToThatEnd() throws {
    var bindings = CarouselBindings(bindings: ["edge": PagingBinding(cue: "pico"), "first-page": PagingBinding(cue: "tick")])
    bindings.panByDirection = 1
    let (embedded, client) = try Self.daemon(bindings)
    let edge = client.reply(#"{"id":1,"carousel":"default","event":"edge","edge":"end"}"#)
    #expect(edge["decision"] == .string("played") && edge["cue"] == .string("pico"))
    embedded.runCycles(until: { embedded.daemon.voices.soundingCount == 0 })
    let written = embedded.sink.written
    let left = stride(from: 0, to: written.count, by: 2).map { abs(written[$0]) }.max() ?? 0
    let right = stride(from: 1, to: written.count, by: 2).map { abs(written[$0]) }.max() ?? 0
    #expect(left == 0 && right > 0.1, "the end is on the right: left \(left), right \(right)")
    // Landing on the first page plays its own sound.
    #expect(client.reply(#"{"id":2,"carousel":"default","event":"page-changed","from":1,"to":0,"count":5}"#)["cue"] == .string("tick"))
    let missing = client.reply(#"{"id":3,"carousel":"default","event":"edge"}"#)
    #expect(missing["error"]?["code"] == .string("invalid-request"))
  }
}
