import CueCore
import CueProtocol
import Testing

@testable import CueDaemon

@Suite("meters: peak and RMS events to the connections that ask, in process")
struct MeterFeedTests {
  /// The peak and RMS of interleaved samples.
  static func level(_ samples: ArraySlice<Float>) -> (peak: Double, rms: Double) {
    let peak = samples.map { Double(abs($0)) }.max() ?? 0
    let rms = (samples.map { Double($0) * Double($0) }.reduce(0, +) / Double(max(samples.count, 1))).squareRoot()
    return (peak, rms)
  }

  @Test func aSubscriberGetsTheMixAndEachVoiceAsWritten() throws {
    let embedded = try EmbeddedDaemon()
    let client = embedded.connect()
    #expect(client.reply(#"{"id":1,"op":"meters","rate":10}"#)["rate"] == .number(10))
    #expect(embedded.daemon.engine.meters.isEnabled)
    let voice = client.reply(#"{"id":2,"op":"play","cue":"tick","loops":-1}"#)["voice"]
    embedded.runCycles(20)  // 20 periods of 240 frames: 100 ms
    embedded.clock.advance(milliseconds: 100)
    embedded.daemon.meterFeed.sendIfDue()
    let events = client.received().filter { $0["event"] == .string("meters") }
    try #require(events.count == 1)
    let meters = try #require(try? Event(json: events[0]))
    guard case .meters(let m) = meters else { Issue.record("not a meters event: \(events[0])"); return }
    // The mix is what the device got, every frame of it (metering was on before it opened).
    let written = Self.level(embedded.sink.written[...])
    #expect(abs(m.mix.peak - written.peak) < 2e-5)
    #expect(abs(m.mix.rms - written.rms) < 2e-5)
    #expect(m.mix.peak > 0.05)
    // One voice alone under the limiter's knee: it is the mix.
    try #require(m.voices.count == 1)
    #expect(.number(Double(m.voices[0].voice)) == voice)
    #expect(abs(m.voices[0].level.peak - m.mix.peak) < 2e-5)
    #expect(abs(m.voices[0].level.rms - m.mix.rms) < 2e-4)
    // Not due again yet: nothing more.
    embedded.runCycles(4)
    embedded.daemon.meterFeed.sendIfDue()
    #expect(client.received().isEmpty)
  }

  @Test func nobodyAskingMeansNoMeteringAndNoTimer() throws {
    let embedded = try EmbeddedDaemon()
    let watcher = embedded.connect()
    let other = embedded.connect()
    _ = other.reply(#"{"id":1,"op":"subscribe"}"#)
    #expect(embedded.daemon.meterFeed.deadline == nil)
    #expect(!embedded.daemon.engine.meters.isEnabled)
    _ = watcher.reply(#"{"id":1,"op":"meters","rate":30}"#)
    #expect(embedded.daemon.engine.meters.isEnabled)
    // Asked for, but nothing is mixed (the device is closed): no timer either.
    #expect(embedded.daemon.meterFeed.deadline == nil)
    _ = other.reply(#"{"id":9,"op":"play","cue":"tick"}"#)
    embedded.runCycles(2)
    #expect(embedded.daemon.meterFeed.deadline != nil)
    embedded.runCycles(until: { embedded.daemon.device.state == .closed })
    #expect(embedded.daemon.meterFeed.deadline == nil)
    #expect(watcher.reply(#"{"id":2,"op":"meters","rate":0}"#)["rate"] == .number(0))
    #expect(embedded.daemon.meterFeed.deadline == nil)
    #expect(!embedded.daemon.engine.meters.isEnabled)
    // A plain subscription never gets them.
    _ = other.reply(#"{"id":2,"op":"play","cue":"tick"}"#)
    embedded.runCycles(20)
    embedded.clock.advance(milliseconds: 100)
    embedded.daemon.meterFeed.sendIfDue()
    #expect(!other.received().contains { $0["event"] == .string("meters") })
    // A connection that asked and went: metering stops with it.
    _ = watcher.reply(#"{"id":3,"op":"meters","rate":5}"#)
    watcher.transport.finishedSending = true
    embedded.daemon.clients.service(watcher.connection, events: .readable)
    embedded.daemon.clients.retireHalfClosed()
    #expect(embedded.daemon.clients.connection(watcher.serial) == nil)
    #expect(embedded.daemon.meterFeed.deadline == nil)
    #expect(!embedded.daemon.engine.meters.isEnabled)
  }

  @Test func nothingIsSentWhileNothingRenders() throws {
    let embedded = try EmbeddedDaemon()
    let client = embedded.connect()
    _ = client.reply(#"{"id":1,"op":"meters","rate":30}"#)
    embedded.clock.advance(milliseconds: 100)
    embedded.daemon.meterFeed.isMixing = { true }  // due, but the meters measured nothing
    embedded.daemon.meterFeed.sendIfDue()
    #expect(client.received().isEmpty)
  }

  @Test func badRatesAreRefusedWithTheRange() throws {
    let embedded = try EmbeddedDaemon()
    let client = embedded.connect()
    let tooFast = client.reply(#"{"id":1,"op":"meters","rate":60}"#)
    #expect(tooFast["error"]?["code"] == .string("out-of-range"))
    let none = client.reply(#"{"id":2,"op":"meters"}"#)
    #expect(none["error"]?["code"] == .string("invalid-request"))
    #expect(none["error"]?["message"]?.stringValue?.contains("rate") == true)
    #expect(embedded.daemon.meterFeed.deadline == nil)
  }
}

@Suite("clients: the connections and what each asked for, in process")
struct ClientsListingTests {
  @Test func eachConnectionWithItsNameSubscriptionAndMeters() throws {
    let embedded = try EmbeddedDaemon()
    let first = embedded.connect()
    let second = embedded.connect()
    _ = first.reply(#"{"id":1,"op":"hello","client":"panel"}"#)
    _ = first.reply(#"{"id":2,"op":"meters","rate":12}"#)
    _ = second.reply(#"{"id":1,"op":"subscribe","kinds":["paging"]}"#)
    let reply = try ClientsReply(reply: second.reply(#"{"id":2,"op":"clients"}"#))
    #expect(
      reply.clients == [
        .init(connection: first.serial, name: "panel", subscribed: false, meters: 12, asking: false),
        .init(connection: second.serial, subscribed: true, asking: true),
      ])
  }
}
