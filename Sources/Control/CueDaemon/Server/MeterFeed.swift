import CueCore
import CueProtocol

/// `meters`: which connections asked for meter events and how often, and the events themselves.
///
/// The audio thread measures only while some connection asks (`MeterBank.isEnabled`), and the loop
/// has a deadline of this owner's only while one does (`deadline`): with nobody asking, metering
/// costs nothing and wakes nothing. At each due time the engine's meters are read once (and so
/// emptied) into every asker's own sums, and each asker whose time has come gets its event, so two
/// connections at different rates each see every peak.
final class MeterFeed {
  private struct Asker {
    var interval: UInt64
    var due: UInt64
    var mix = MeterBank.Reading()
    var voices: [UInt64: MeterBank.Reading] = [:]
  }

  private let bank: MeterBank
  private unowned let clients: ClientServer
  private let clock: DaemonClock
  private var askers: [UInt64: Asker] = [:]
  /// Whether a voice is still in the voice table (a slot's leftovers from an ended voice are not sent).
  var isLive: (VoiceID) -> Bool = { _ in true }
  /// Whether the audio thread mixes now (the device attached): while it does not, there is nothing
  /// to measure and no deadline, so a `cuectl top` left open on an idle daemon wakes nothing.
  var isMixing: () -> Bool = { true }

  init(bank: MeterBank, clients: ClientServer, clock: DaemonClock) {
    self.bank = bank
    self.clients = clients
    self.clock = clock
  }

  /// When the next event is due (nil: nobody asks, or nothing is mixed: no timer).
  var deadline: UInt64? { isMixing() ? askers.values.map(\.due).min() : nil }

  /// `meters` from `client`: `rate` events a second from now on, 0 none. Returns the rate in force.
  func set(client: UInt64, rate: Double) -> Double {
    if rate > 0 {
      let interval = UInt64(1e9 / rate)
      askers[client] = Asker(interval: interval, due: clock.nanoseconds() + interval)
    } else {
      askers[client] = nil
    }
    bank.isEnabled = !askers.isEmpty
    return askers[client] == nil ? 0 : rate
  }

  /// The rate `client` asked for, if it asks.
  func rate(of client: UInt64) -> Double? {
    askers[client].map { 1e9 / Double($0.interval) }
  }

  /// The connection went: its events stop.
  func release(_ client: UInt64) {
    guard askers.removeValue(forKey: client) != nil else { return }
    bank.isEnabled = !askers.isEmpty
  }

  /// Reads the meters and sends each connection whose time has come its event; nothing is sent
  /// while nothing was measured (the device closed, or a pulled stream paused).
  func sendIfDue() {
    let now = clock.nanoseconds()
    guard let deadline, deadline <= now else { return }
    let mix = bank.takeMix()
    var voices: [(UInt64, MeterBank.Reading)] = []
    for slot in 0..<bank.slotCount {
      let (voice, reading) = bank.takeVoice(slot: slot)
      if reading.samples > 0 && isLive(voice) { voices.append((voice.rawValue, reading)) }
    }
    for serial in Array(askers.keys) {
      guard var asker = askers[serial] else { continue }
      asker.mix.merge(mix)
      for (voice, reading) in voices { asker.voices[voice, default: MeterBank.Reading()].merge(reading) }
      if asker.due <= now {
        if asker.mix.samples > 0 || !asker.voices.isEmpty {
          _ = clients.connection(serial)?.sendEvent(Event.meters(Self.event(asker)).line)
        }
        asker.mix = MeterBank.Reading()
        asker.voices = [:]
        asker.due = asker.due + asker.interval > now ? asker.due + asker.interval : now + asker.interval
      }
      askers[serial] = asker
    }
  }

  private static func event(_ asker: Asker) -> Event.Meters {
    Event.Meters(
      mix: level(asker.mix),
      voices: asker.voices.keys.sorted().map { Event.Meters.Voice(voice: $0, level: level(asker.voices[$0]!)) })
  }

  private static func level(_ reading: MeterBank.Reading) -> Event.Meters.Level {
    Event.Meters.Level(peak: Double(reading.peak), rms: Double(reading.rms))
  }
}
