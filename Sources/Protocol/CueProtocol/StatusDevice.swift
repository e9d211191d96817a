/// `status`'s `device` section: the output device's state, format and counters.
extension StatusReply {
  /// The output device: its state, its format once it was opened, and its counters.
  public struct Device: Sendable, Equatable {
    /// Whether the device is open now.
    public enum State: String, CaseIterable, Sendable {
      case closed, open, lost
    }

    /// The format the device was last opened with.
    public struct Format: Sendable, Equatable {
      /// The ALSA sample format (for example `S16_LE`).
      public var sampleFormat: String
      public var rate: Int
      public var periodFrames: Int
      public var bufferFrames: Int

      public init(sampleFormat: String, rate: Int, periodFrames: Int, bufferFrames: Int) {
        self.sampleFormat = sampleFormat
        self.rate = rate
        self.periodFrames = periodFrames
        self.bufferFrames = bufferFrames
      }
    }

    /// One raise of the latency and the xrun that caused it.
    public struct LatencyRaise: Sendable, Equatable {
      /// When, in seconds of the daemon's uptime.
      public var uptime: Double
      public var fromFrames: Int
      public var toFrames: Int
      /// What the backend calls the glitch: `underrun` (ALSA), `xrun` (PipeWire), `underflow` (PulseAudio).
      public var cause: String
      /// Voices it cut (at least 1: only a glitch that cut sound raises the latency).
      public var voices: Int

      public init(uptime: Double, fromFrames: Int, toFrames: Int, cause: String, voices: Int) {
        (self.uptime, self.fromFrames, self.toFrames, self.cause, self.voices) = (uptime, fromFrames, toFrames, cause, voices)
      }

      var json: JSONValue {
        .object([
          ("uptime", .number(uptime)), ("fromFrames", .int(fromFrames)), ("toFrames", .int(toFrames)), ("cause", .string(cause)),
          ("voices", .int(voices)),
        ])
      }

      init(json: JSONValue) throws(ProtocolError) {
        var fields = FieldReader(json)
        let what = "a raise in the status reply's device"
        uptime = try required(fields.double("uptime"), "uptime", in: what)
        fromFrames = try required(fields.integer("fromFrames"), "fromFrames", in: what)
        toFrames = try required(fields.integer("toFrames"), "toFrames", in: what)
        cause = try required(fields.string("cause"), "cause", in: what)
        voices = try required(fields.integer("voices"), "voices", in: what)
      }

      /// `128 → 256 frames at 12.5 s (an xrun cut 1 voice)`.
      public var summary: String {
        let article = cause.first.map { "aeiou".contains($0) } == true ? "an" : "a"
        return "\(fromFrames) → \(toFrames) frames at \(Self.seconds(uptime)) s (\(article) \(cause) cut \(voices) voice\(voices == 1 ? "" : "s"))"
      }

      private static func seconds(_ value: Double) -> String {
        let tenths = Int((value * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)"
      }
    }

    /// Glitches that did not raise the latency, by why: only silence was late, the late cycle was
    /// the first after a resume or a (re)connect, or the whole graph stalled.
    public struct IgnoredXruns: Sendable, Equatable {
      public var silent: Int
      public var afterResume: Int
      public var graphWide: Int

      public init(silent: Int = 0, afterResume: Int = 0, graphWide: Int = 0) {
        (self.silent, self.afterResume, self.graphWide) = (silent, afterResume, graphWide)
      }

      var json: JSONValue {
        .object([("silent", .int(silent)), ("afterResume", .int(afterResume)), ("graphWide", .int(graphWide))])
      }

      init(json: JSONValue) throws(ProtocolError) {
        var fields = FieldReader(json)
        silent = try fields.integer("silent") ?? 0
        afterResume = try fields.integer("afterResume") ?? 0
        graphWide = try fields.integer("graphWide") ?? 0
      }

      public var total: Int { silent + afterResume + graphWide }
    }

    public var name: String
    /// How cued reaches it: `alsa` (a PCM, through a sound server's ALSA plugin or a card) or `null`.
    public var backend: String
    public var state: State
    /// Why it was lost (only when `lost`).
    public var error: String?
    /// Nil until the device was first opened.
    public var format: Format?
    /// Frames between the mixer and the ear after the last block: the device's queue (ALSA), or
    /// the quantum plus what the server reports downstream (PipeWire).
    public var delayFrames: Int
    /// PipeWire's graph quantum: the frames its last cycle asked for (only for `pipewire`, once it asked).
    public var quantumFrames: Int?
    /// How full ALSA's buffer is kept ahead of the ear now (only for `alsa`, once opened); it rises a
    /// step after an underrun that cut sound and comes down a step after each quiet `latency-decay`.
    public var fillTargetFrames: Int?
    /// For `pipewire` and `pulseaudio`: the latency asked of the server now (node.latency or tlength,
    /// frames). It doubles after an xrun or underflow that cut sound, up to `pipewire-latency-max` or
    /// `pulseaudio-latency-max`, and halves after each `latency-decay` seconds without one.
    public var latencyFrames: Int?
    /// For a device whose latency adapts (`fillTargetFrames` or `latencyFrames` present): how often a
    /// glitch that cut sound raised it.
    public var latencyRaises: Int?
    /// With `latencyRaises`: the latest raises (at most 8), oldest first, each with its cause.
    public var recentRaises: [LatencyRaise]?
    /// With `latencyRaises`: the glitches that did not raise it, by why.
    public var ignoredXruns: IgnoredXruns?
    /// The scheduling of the thread that runs cued's mix, for every backend: cued's audio thread
    /// (`alsa`, `null`; the same as `scheduling`), libpulse's mainloop thread (`pulseaudio`) or
    /// PipeWire's data thread (`pipewire`; `via` `pipewire` when PipeWire had made it real-time
    /// itself), the last two once the server has pulled since the device opened.
    public var mixingThread: Scheduling?
    /// Which thread `mixingThread` is, in words, when it is the server's (`PipeWire's data thread`,
    /// `libpulse's mainloop thread`); absent: cued's audio thread.
    public var mixingThreadName: String?
    /// For `pipewire` and `pulseaudio`: true while the stream is paused (corked) after a silence
    /// (`pipewire-pause-after`): connected, but not asked for audio until the next cue.
    public var paused: Bool?
    /// For `pipewire` and `pulseaudio`: how often the stream was paused so far.
    public var pauses: Int?
    public var opens: Int
    public var losses: Int

    public init(
      name: String, backend: String = "alsa", state: State, error: String? = nil, format: Format? = nil, delayFrames: Int = 0,
      quantumFrames: Int? = nil, fillTargetFrames: Int? = nil, latencyFrames: Int? = nil, latencyRaises: Int? = nil,
      recentRaises: [LatencyRaise]? = nil, ignoredXruns: IgnoredXruns? = nil,
      mixingThread: Scheduling? = nil, mixingThreadName: String? = nil, paused: Bool? = nil, pauses: Int? = nil, opens: Int = 0,
      losses: Int = 0
    ) {
      self.mixingThreadName = mixingThreadName
      self.latencyFrames = latencyFrames
      self.latencyRaises = latencyRaises
      self.recentRaises = recentRaises
      self.ignoredXruns = ignoredXruns
      self.paused = paused
      self.pauses = pauses
      self.mixingThread = mixingThread
      self.quantumFrames = quantumFrames
      self.fillTargetFrames = fillTargetFrames
      self.name = name
      self.backend = backend
      self.state = state
      self.error = error
      self.format = format
      self.delayFrames = delayFrames
      self.opens = opens
      self.losses = losses
    }

    var json: JSONValue {
      var members: [(String, JSONValue)] = [("name", .string(name)), ("backend", .string(backend)), ("state", .string(state.rawValue))]
      if let error { members.append(("error", .string(error))) }
      if let format {
        members += [
          ("format", .string(format.sampleFormat)), ("rate", .int(format.rate)), ("periodFrames", .int(format.periodFrames)),
          ("bufferFrames", .int(format.bufferFrames)),
        ]
      }
      members.append(("delayFrames", .int(delayFrames)))
      if let quantumFrames { members.append(("quantumFrames", .int(quantumFrames))) }
      if let fillTargetFrames { members.append(("fillTargetFrames", .int(fillTargetFrames))) }
      if let latencyFrames { members.append(("latencyFrames", .int(latencyFrames))) }
      if let latencyRaises { members.append(("latencyRaises", .int(latencyRaises))) }
      if let recentRaises { members.append(("recentRaises", .array(recentRaises.map(\.json)))) }
      if let ignoredXruns { members.append(("ignoredXruns", ignoredXruns.json)) }
      if let mixingThread { members.append(("mixingThread", mixingThread.json)) }
      if let mixingThreadName { members.append(("mixingThreadName", .string(mixingThreadName))) }
      if let paused { members.append(("paused", .bool(paused))) }
      if let pauses { members.append(("pauses", .int(pauses))) }
      members += [("opens", .int(opens)), ("losses", .int(losses))]
      return .object(members)
    }

    init(json: JSONValue) throws(ProtocolError) {
      var fields = FieldReader(json)
      let what = "the status reply's device"
      name = try required(fields.string("name"), "name", in: what)
      backend = try fields.string("backend") ?? "alsa"  // daemons before 2026-11-23 had ALSA only
      state = try required(fields.value("state", as: State.self), "state", in: what)
      error = try fields.string("error")
      if let sampleFormat = try fields.string("format") {
        format = Format(
          sampleFormat: sampleFormat, rate: try required(fields.integer("rate"), "rate", in: what),
          periodFrames: try required(fields.integer("periodFrames"), "periodFrames", in: what),
          bufferFrames: try required(fields.integer("bufferFrames"), "bufferFrames", in: what))
      }
      delayFrames = try required(fields.integer("delayFrames"), "delayFrames", in: what)
      quantumFrames = try fields.integer("quantumFrames")
      fillTargetFrames = try fields.integer("fillTargetFrames")
      latencyFrames = try fields.integer("latencyFrames")
      latencyRaises = try fields.integer("latencyRaises")
      recentRaises = try fields.objects("recentRaises") { (json) throws(ProtocolError) in try LatencyRaise(json: json) }
      ignoredXruns = try fields.object("ignoredXruns").map { (json) throws(ProtocolError) in try IgnoredXruns(json: json) }
      mixingThread = try fields.object("mixingThread").map { (json) throws(ProtocolError) in try Scheduling(json: json) }
      mixingThreadName = try fields.string("mixingThreadName")
      paused = try fields.bool("paused")
      pauses = try fields.integer("pauses")
      opens = try required(fields.integer("opens"), "opens", in: what)
      losses = try required(fields.integer("losses"), "losses", in: what)
    }
  }
}
