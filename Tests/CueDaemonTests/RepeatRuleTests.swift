import CueCore
import CueProtocol
import Testing

#if canImport(Glibc)
import Glibc
#endif

@testable import CueDaemon

/// Repeat rules through the one gate, on the manual clock: a paging binding's `retrigger`,
/// `max-voices` and `min-interval` are a repeat rule on the bound cue beside the cue's own
/// `cooldown` and `max-instances`; a bound play carries both, a one-shot its cue's, a player's none.
@Suite("Repeat rules: a binding's and a cue's through one gate, in process")
struct RepeatRuleTests {
  /// A rig whose carousel `t` binds `drag-began` (not a page sound, so `max-page-voices` stays out
  /// of it) to the looping `tone` with `binding`'s keys, and `cues` as its `[cues.tone]` table.
  static func rig(binding: String, cues: String = "") throws -> VoicePathRig {
    let table = cues.isEmpty ? "" : "[cues.tone]\n\(cues)\n"
    return try VoicePathRig("[carousel.t]\ndrag-began = { cue = \"tone\", loops = 1000, \(binding) }\n" + table)
  }

  /// A `drag-began` of the carousel `t`: the reply's decision, voice and `silenced`.
  static func drag(_ rig: VoicePathRig) -> (decision: String?, voice: VoiceID?, silenced: String?) {
    let reply = rig.ask(#""carousel":"t","event":"drag-began""#)
    return (reply["decision"]?.stringValue, reply["voice"]?.intValue.map { VoiceID(UInt64($0)) }, reply["silenced"]?.stringValue)
  }

  /// A looping one-shot `play` of `tone`: its voice, or nil with the reason it is silent.
  static func playTone(_ rig: VoicePathRig) -> (voice: VoiceID?, reason: String?) {
    let reply = rig.ask(#""op":"play","cue":"tone","loops":-1"#)
    let voice = reply["played"] == .bool(true) ? reply["voice"]?.intValue.map { VoiceID(UInt64($0)) } : nil
    return (voice, reply["reason"]?.stringValue)
  }

  /// The reason each voice finished with, once the engine has ended what was stopped.
  static func finished(_ rig: VoicePathRig) -> [VoiceID: String] {
    rig.embedded.runCycles(20)
    var reasons: [VoiceID: String] = [:]
    for event in rig.events() where event["event"] == .string("finished") {
      if let voice = event["voice"]?.intValue, let reason = event["reason"]?.stringValue { reasons[VoiceID(UInt64(voice))] = reason }
    }
    return reasons
  }

  static let bindingKey = RepeatKey.binding(carousel: "t", binding: "drag-began")

  static func status(_ rig: VoicePathRig, _ part: String, _ key: String) -> Int? {
    rig.ask(#""op":"status""#)[part]?[key]?.intValue
  }

  /// Each retrigger policy is one repeat rule: restart one instance, overlap `max-voices` stolen
  /// past, ignore-while-playing one refused past; `min-interval` is the cooldown.
  @Test func eachBindingPolicyIsARepeatRule() {
    func rule(_ retrigger: Retrigger, maxVoices: Int = 4, minInterval: Double = 0) -> RepeatRule {
      var binding = PagingBinding(cue: "tone", retrigger: retrigger)
      binding.maxVoices = maxVoices
      binding.minInterval = minInterval
      return binding.repeatRule(carousel: "t", name: "drag-began")
    }
    #expect(rule(.restart) == RepeatRule(key: Self.bindingKey, maxInstances: 1, pastMaximum: .restart))
    #expect(rule(.overlap, maxVoices: 3) == RepeatRule(key: Self.bindingKey, maxInstances: 3, pastMaximum: .steal))
    #expect(rule(.ignoreWhilePlaying, minInterval: 0.25) == RepeatRule(key: Self.bindingKey, cooldown: 0.25, maxInstances: 1, pastMaximum: .refuse))
    // A binding's rate spread is the cue's in semitones: a fraction of 2^(1/12) - 1 is one semitone.
    #expect(abs(PagingBinding.rateSpreadSemitones(pow(2, 1.0 / 12) - 1) - 1) < 1e-12)
  }

  @Test func restartStopsTheBindingsVoiceAndStartsAnew() throws {
    let rig = try Self.rig(binding: #"retrigger = "restart""#)
    let first = Self.drag(rig)
    let second = Self.drag(rig)
    #expect(first.decision == "played" && second.decision == "played")
    let (a, b) = (try #require(first.voice), try #require(second.voice))
    #expect(rig.embedded.daemon.gate.instances(of: Self.bindingKey) == [b])
    #expect(Self.finished(rig)[a] == "stopped")
    #expect(rig.embedded.daemon.voices.soundingCount == 1)
  }

  @Test func overlapKeepsMaxVoicesAndStealsTheOldest() throws {
    let rig = try Self.rig(binding: #"retrigger = "overlap", max-voices = 2"#)
    let voices = (0..<3).compactMap { _ in Self.drag(rig).voice }
    #expect(voices.count == 3)
    #expect(rig.embedded.daemon.gate.instances(of: Self.bindingKey) == Array(voices[1...]))
    #expect(Self.finished(rig) == [voices[0]: "stolen"])
  }

  @Test func ignoreWhilePlayingRefusesAndCountsItAsACap() throws {
    let rig = try Self.rig(binding: #"retrigger = "ignore-while-playing""#)
    let first = try #require(Self.drag(rig).voice)
    let second = Self.drag(rig)
    #expect(second.decision == "ignored" && second.silenced == "cap" && second.voice == nil)
    #expect(Self.status(rig, "silenced", "cap") == 1 && Self.status(rig, "paging", "ignored") == 1)
    // The gate checks the group before any repeat rule: in a muted group the play says so.
    rig.ask(#""op":"group","group":"default","muted":true"#)
    let muted = Self.drag(rig)
    #expect(muted.decision == "ignored" && muted.silenced == "group-muted")
    rig.ask(#""op":"group","group":"default","muted":false"#)
    // Once the voice has ended, the binding plays again.
    rig.ask(#""op":"stop","voice":\#(first.rawValue)"#)
    rig.embedded.runCycles(20)
    #expect(Self.drag(rig).decision == "played")
  }

  @Test func theMinimumIntervalIsTheBindingsCooldown() throws {
    let rig = try Self.rig(binding: #"retrigger = "overlap", min-interval = 0.5"#)
    #expect(Self.drag(rig).decision == "played")
    rig.embedded.clock.advance(milliseconds: 499)
    let early = Self.drag(rig)
    #expect(early.decision == "too-soon" && early.silenced == "cooldown")
    #expect(Self.status(rig, "silenced", "cooldown") == 1 && Self.status(rig, "paging", "too-soon") == 1)
    // The interval runs from the last start, not from the refused play.
    rig.embedded.clock.advance(milliseconds: 1)
    #expect(Self.drag(rig).decision == "played")
    #expect(rig.embedded.daemon.gate.instances(of: Self.bindingKey).count == 2)
  }

  /// One bound play under both rules: the binding would let a second voice overlap, the cue's
  /// `max-instances` (which counts its one-shots too) holds it.
  @Test func theCuesRuleAndTheBindingsBothApplyToOneBoundPlay() throws {
    let refusing = try Self.rig(binding: #"retrigger = "overlap", max-voices = 3"#, cues: "max-instances = 2\npast-max = \"refuse\"")
    let oneShot = try #require(Self.playTone(refusing).voice)
    let bound = try #require(Self.drag(refusing).voice)
    let third = Self.drag(refusing)
    #expect(third.decision == "ignored" && third.silenced == "cap")
    #expect(refusing.embedded.daemon.gate.instances(of: .cue("tone")) == [oneShot, bound])
    #expect(refusing.embedded.daemon.gate.instances(of: Self.bindingKey) == [bound])

    // A stealing cue rule takes the oldest instance, the one-shot's, inside the binding's limit;
    // past the binding's own (overlap, two voices) the binding steals its oldest too.
    let stealing = try Self.rig(binding: #"retrigger = "overlap", max-voices = 2"#, cues: "max-instances = 2")
    let first = try #require(Self.playTone(stealing).voice)
    let voices = (0..<3).compactMap { _ in Self.drag(stealing).voice }
    #expect(voices.count == 3)
    #expect(stealing.embedded.daemon.gate.instances(of: .cue("tone")) == Array(voices[1...]))
    #expect(Self.finished(stealing) == [first: "stolen", voices[0]: "stolen"])

    // The cue's cooldown holds a bound play after a one-shot (too-soon), as the binding's own would.
    let cooling = try Self.rig(binding: #"retrigger = "overlap""#, cues: "cooldown = 1")
    #expect(Self.playTone(cooling).voice != nil)
    let early = Self.drag(cooling)
    #expect(early.decision == "too-soon" && early.silenced == "cooldown")
    cooling.embedded.clock.advance(milliseconds: 1000)
    #expect(Self.drag(cooling).decision == "played")
  }

  /// The binding's rule is the binding's alone: a one-shot of the bound cue does not count under
  /// it, nor wait for its interval.
  @Test func aOneShotOfTheBoundCueTakesOnlyTheCuesRule() throws {
    let rig = try Self.rig(binding: #"retrigger = "ignore-while-playing", min-interval = 5"#)
    let bound = try #require(Self.drag(rig).voice)
    let oneShot = try #require(Self.playTone(rig).voice)
    #expect(rig.embedded.daemon.gate.instances(of: Self.bindingKey) == [bound])
    #expect(rig.embedded.daemon.voices[oneShot]?.repeatKeys == [.cue("tone")])
    #expect(rig.embedded.daemon.voices[bound]?.repeatKeys == [Self.bindingKey, .cue("tone")])
  }

  /// A player's plays take no repeat rule: the cue's cooldown and max-instances neither hold a
  /// player nor count its voice.
  @Test func aPlayersPlaysTakeNoRepeatRule() throws {
    let rig = try VoicePathRig("[cues.tone]\nmax-instances = 1\npast-max = \"refuse\"\ncooldown = 10\n")
    #expect(rig.play(.player) == (true, nil))
    let player = try #require(rig.object)
    let playerVoice = try #require(rig.embedded.daemon.voices.voices.first?.key)
    #expect(rig.embedded.daemon.voices[playerVoice]?.repeatKeys == [])
    // The one-shot is the cue's only instance, and starts its cooldown.
    #expect(Self.playTone(rig).voice != nil)
    #expect(Self.playTone(rig) == (nil, "cooldown"))
    // Within that cooldown, and past max-instances, a second player plays, and the first plays on
    // after a pause.
    #expect(rig.play(.player) == (true, nil))
    // (Pause is answered once the audio thread has stopped the voice: sent, then cycles run.)
    rig.client.send(#"{"id":1,"op":"player.pause","player":\#(player)}"#)
    rig.embedded.runCycles(10)
    #expect(rig.ask(#""op":"player.play","player":\#(player)"#)["playing"] == .bool(true))
    #expect(rig.embedded.daemon.gate.instances(of: .cue("tone")).count == 1)
  }

  /// multi-page "each": the later sounds of one page change are the same play, counted under the
  /// binding (its restart stops them) but once under the cue.
  @Test func theSoundsOfOneEachPlayCountOnceUnderTheCue() throws {
    let rig = try VoicePathRig("[carousel.t]\npage-next = { cue = \"tone\", loops = 1000, multi-page = \"each\" }\nmax-page-voices = 4\n")
    let reply = rig.ask(#""carousel":"t","event":"page-changed","from":0,"to":3,"count":10"#)
    #expect(reply["decision"] == .string("played") && reply["pages"] == .number(3))
    let key = RepeatKey.binding(carousel: "t", binding: "page-next")
    #expect(rig.embedded.daemon.gate.instances(of: key).count == 3)
    #expect(rig.embedded.daemon.gate.instances(of: .cue("tone")).count == 1)
    // The next page change restarts the binding: all three go, and one sound is left.
    #expect(rig.ask(#""carousel":"t","event":"page-changed","from":3,"to":4,"count":10"#)["decision"] == .string("played"))
    #expect(rig.embedded.daemon.gate.instances(of: key).count == 1)
  }
}
