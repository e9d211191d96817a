/// `status`: the daemon's health in one object (what `cuectl status` shows).
public struct StatusReply: ReplyFields {
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

  /// How many carousel messages ended in each decision; a decision never counted reads 0.
  public struct PagingCounts: Sendable, Equatable {
    /// Only the non-zero counts, so that equal tallies compare equal.
    private var counts: [PagingDecision: Int] = [:]
    /// Carousel messages that arrived out of the scroll lifecycle's order (handled all the same).
    public var outOfOrder = 0
    /// Scrolls that settled (the derived moment: drag ended without deceleration, deceleration or animation ended).
    public var settled = 0

    public init(_ counts: [PagingDecision: Int] = [:]) {
      for (decision, count) in counts { self[decision] = count }
    }

    public subscript(decision: PagingDecision) -> Int {
      get { counts[decision] ?? 0 }
      set { counts[decision] = newValue == 0 ? nil : newValue }
    }
  }

  /// How many plays were silent, by reason; a reason never counted reads 0.
  public struct SilencedCounts: Sendable, Equatable {
    private var counts: [SilenceReason: Int] = [:]

    public init(_ counts: [SilenceReason: Int] = [:]) {
      for (reason, count) in counts { self[reason] = count }
    }

    public subscript(reason: SilenceReason) -> Int {
      get { counts[reason] ?? 0 }
      set { counts[reason] = newValue == 0 ? nil : newValue }
    }

    /// Every reason, in `SilenceReason` order.
    var json: JSONValue { .object(SilenceReason.allCases.map { ($0.rawValue, .int(self[$0])) }) }

    init(json: JSONValue) throws(ProtocolError) {
      var fields = FieldReader(json)
      for reason in SilenceReason.allCases { self[reason] = try fields.integer(reason.rawValue) ?? 0 }
    }
  }

  /// The sound theme `play` with an `event` looks in now, where that choice came from, and whether
  /// event sounds are on (the desktop's switch, when cued follows the desktop).
  public struct SoundTheme: Sendable, Equatable {
    /// Where the theme came from.
    public enum Source: String, CaseIterable, Sendable {
      /// The desktop's own setting (`sound-theme = "desktop"`, read through GSettings).
      case desktop
      /// A theme named in the config file or on the command line (`sound-theme = "NAME"`).
      case config
      /// `freedesktop`: cued follows the desktop, but no desktop setting could be read.
      case `default`
    }

    public var name: String
    public var source: Source
    /// False while the desktop's event sounds are off: `play` with an `event` is then silent.
    public var eventSounds: Bool
    /// With `desktop`: the GSettings schema whose keys are read (`org.gnome.desktop.sound`).
    public var schema: String?
    /// With `desktop` or `default`: why the desktop's settings are followed, or why not (`no desktop
    /// session: no session bus (…)`, the `follow-desktop` setting).
    public var reason: String?

    public init(name: String, source: Source, eventSounds: Bool = true, schema: String? = nil, reason: String? = nil) {
      (self.name, self.source, self.eventSounds, self.schema, self.reason) = (name, source, eventSounds, schema, reason)
    }

    var json: JSONValue {
      var members: [(String, JSONValue)] = [("name", .string(name)), ("source", .string(source.rawValue)), ("eventSounds", .bool(eventSounds))]
      if let schema { members.append(("schema", .string(schema))) }
      if let reason { members.append(("reason", .string(reason))) }
      return .object(members)
    }

    /// One line for people: `Yaru, the desktop's (org.gnome.desktop.sound); event sounds off: events
    /// are silent`, `freedesktop, from sound-theme`, `freedesktop (no desktop setting to follow: no
    /// desktop session: no session bus (…))`.
    public var summary: String {
      var text: String
      switch source {
      case .desktop: text = "\(name), the desktop's" + (schema.map { " (\($0))" } ?? "")
      case .config: text = "\(name), from sound-theme"
      case .default: text = "\(name) (no desktop setting to follow" + (reason.map { ": \($0)" } ?? "") + ")"
      }
      if !eventSounds { text += "; event sounds off: events are silent" }
      return text
    }

    init(json: JSONValue) throws(ProtocolError) {
      var fields = FieldReader(json)
      let what = "the status reply's soundTheme"
      name = try required(fields.string("name"), "name", in: what)
      source = try required(fields.value("source", as: Source.self), "source", in: what)
      eventSounds = try required(fields.bool("eventSounds"), "eventSounds", in: what)
      schema = try fields.string("schema")
      reason = try fields.string("reason")
    }
  }

  /// Request-to-first-frame latency of plays: the count and percentiles, in microseconds.
  public struct Latency: Sendable, Equatable {
    public var count: Int
    public var p50Us: Double
    public var p99Us: Double
    public var maxUs: Double

    public init(count: Int = 0, p50Us: Double = 0, p99Us: Double = 0, maxUs: Double = 0) {
      self.count = count
      self.p50Us = p50Us
      self.p99Us = p99Us
      self.maxUs = maxUs
    }

    /// `{"count":…,"p50Us":…,"p99Us":…,"maxUs":…}`.
    public var json: JSONValue {
      .object([("count", .int(count)), ("p50Us", .number(p50Us)), ("p99Us", .number(p99Us)), ("maxUs", .number(maxUs))])
    }

    init(json: JSONValue) throws(ProtocolError) {
      var fields = FieldReader(json)
      let what = "the status reply's triggerLatency"
      count = try required(fields.integer("count"), "count", in: what)
      p50Us = try required(fields.double("p50Us"), "p50Us", in: what)
      p99Us = try required(fields.double("p99Us"), "p99Us", in: what)
      maxUs = try required(fields.double("maxUs"), "maxUs", in: what)
    }
  }

  public var version: String
  public var pid: Int
  /// Seconds since the daemon started.
  public var uptime: Double
  public var device: Device
  /// Voices sounding (not those fading out after a stop).
  public var voices: Int
  public var voiceLimit: Int
  /// Voices started since the daemon started.
  public var plays: Int
  public var underruns: Int
  public var framesWritten: Int
  /// Cues loaded, and the memory they take.
  public var cues: Int
  public var cueBytes: Int
  public var clients: Int
  public var players: Int
  /// System sounds held (disposed ones count until their last play ends).
  public var sounds: Int
  public var systemVolume: Double
  public var systemMuted: Bool
  public var deviceCurrentTime: Double
  public var triggerLatency: Latency
  /// Carousel messages handled, by decision.
  public var paging: PagingCounts
  /// Plays that were silent, by reason.
  public var silenced: SilencedCounts
  /// Events not sent because their connection read too slowly, since the daemon started.
  public var eventsDropped: Int
  public var refusedConnections: Int
  /// The socket the daemon listens on.
  public var socket: String
  /// What the scheduler granted the audio thread.
  public var scheduling: Scheduling
  /// The sound theme of `play` with an `event`; nil from daemons before it was reported.
  public var soundTheme: SoundTheme?

  /// The audio thread's scheduling: `fifo` or `rr` at a priority with who granted it, or `other`
  /// (time-sharing) with the reason when real-time was asked for and refused, and why RTKit did
  /// not grant it either when it was asked.
  public struct Scheduling: Sendable, Equatable {
    /// `fifo` (SCHED_FIFO), `rr` (SCHED_RR, what RTKit sets) or `other`.
    public var policy: String
    public var priority: Int?
    /// Who made the thread real-time: `sched_setscheduler` (the thread itself) or `rtkit`.
    public var via: String?
    /// Why the thread's own SCHED_FIFO request failed (`Operation not permitted`).
    public var refused: String?
    /// Why RTKit did not grant real-time either, when it was asked.
    public var rtkit: String?

    public init(policy: String, priority: Int? = nil, via: String? = nil, refused: String? = nil, rtkit: String? = nil) {
      (self.policy, self.priority, self.via, self.refused, self.rtkit) = (policy, priority, via, refused, rtkit)
    }

    var json: JSONValue {
      var members: [(String, JSONValue)] = [("policy", .string(policy))]
      if let priority { members.append(("priority", .int(priority))) }
      if let via { members.append(("via", .string(via))) }
      if let refused { members.append(("refused", .string(refused))) }
      if let rtkit { members.append(("rtkit", .string(rtkit))) }
      return .object(members)
    }

    init(json: JSONValue) throws(ProtocolError) {
      var fields = FieldReader(json)
      policy = try required(fields.string("policy"), "policy", in: "the status reply's scheduling")
      priority = try fields.integer("priority")
      via = try fields.string("via")
      refused = try fields.string("refused")
      rtkit = try fields.string("rtkit")
    }

    /// The real-time policy as people name it, with its priority (`SCHED_RR, priority 20`); nil when not real-time.
    public var realtimeText: String? {
      let name: String
      switch policy {
      case "fifo": name = "SCHED_FIFO"
      case "rr": name = "SCHED_RR"
      default: return nil
      }
      return priority.map { "\(name), priority \($0)" } ?? name
    }

    /// One line for people: `SCHED_RR, priority 20 (via RTKit)`, `SCHED_FIFO, priority 88 (set by
    /// pipewire)`, or `normal scheduling (real-time refused: Operation not permitted; RTKit: not running (…))`.
    public var summary: String {
      if let realtime = realtimeText {
        switch via {
        case "rtkit": return realtime + " (via RTKit)"
        case nil, "sched_setscheduler": return realtime
        case let server?: return realtime + " (set by \(server))"
        }
      }
      var why: [String] = []
      if let refused { why.append("real-time refused: \(refused)") }
      if let rtkit { why.append("RTKit: \(rtkit)") }
      return "normal scheduling" + (why.isEmpty ? "" : " (" + why.joined(separator: "; ") + ")")
    }
  }

  public init(
    version: String = cuedVersion, pid: Int, uptime: Double, device: Device, voices: Int = 0, voiceLimit: Int, plays: Int = 0,
    underruns: Int = 0, framesWritten: Int = 0, cues: Int = 0, cueBytes: Int = 0, clients: Int = 0, players: Int = 0,
    sounds: Int = 0, systemVolume: Double = 1, systemMuted: Bool = false, deviceCurrentTime: Double = 0,
    triggerLatency: Latency = Latency(), paging: PagingCounts = PagingCounts(), silenced: SilencedCounts = SilencedCounts(),
    eventsDropped: Int = 0,
    refusedConnections: Int = 0, socket: String, scheduling: Scheduling = Scheduling(policy: "other"), soundTheme: SoundTheme? = nil
  ) {
    self.scheduling = scheduling
    self.soundTheme = soundTheme
    self.version = version
    self.pid = pid
    self.uptime = uptime
    self.device = device
    self.voices = voices
    self.voiceLimit = voiceLimit
    self.plays = plays
    self.underruns = underruns
    self.framesWritten = framesWritten
    self.cues = cues
    self.cueBytes = cueBytes
    self.clients = clients
    self.players = players
    self.sounds = sounds
    self.systemVolume = systemVolume
    self.systemMuted = systemMuted
    self.deviceCurrentTime = deviceCurrentTime
    self.triggerLatency = triggerLatency
    self.paging = paging
    self.silenced = silenced
    self.eventsDropped = eventsDropped
    self.refusedConnections = refusedConnections
    self.socket = socket
  }

  public var fields: [(String, JSONValue)] {
    [
      ("version", .string(version)), ("pid", .int(pid)), ("uptime", .number(uptime)), ("device", device.json),
      ("voices", .int(voices)), ("voiceLimit", .int(voiceLimit)), ("plays", .int(plays)), ("underruns", .int(underruns)),
      ("framesWritten", .int(framesWritten)), ("cues", .int(cues)), ("cueBytes", .int(cueBytes)), ("clients", .int(clients)),
      ("players", .int(players)), ("sounds", .int(sounds)), ("systemVolume", .number(systemVolume)),
      ("systemMuted", .bool(systemMuted)), ("deviceCurrentTime", .number(deviceCurrentTime)),
      ("triggerLatency", triggerLatency.json),
      ("paging", .object(PagingDecision.allCases.map { ($0.rawValue, .int(paging[$0])) } + [("outOfOrder", .int(paging.outOfOrder)), ("settled", .int(paging.settled))])),
      ("silenced", silenced.json),
      ("eventsDropped", .int(eventsDropped)), ("refusedConnections", .int(refusedConnections)), ("socket", .string(socket)),
      ("scheduling", scheduling.json),
    ] + (soundTheme.map { [("soundTheme", $0.json)] } ?? [])
  }

  public init(reply: JSONValue) throws(ProtocolError) {
    var fields = FieldReader(reply)
    let what = "the status reply"
    func count(_ key: String) throws(ProtocolError) -> Int { try required(fields.integer(key), key, in: what) }
    func number(_ key: String) throws(ProtocolError) -> Double { try required(fields.double(key), key, in: what) }
    version = try required(fields.string("version"), "version", in: what)
    pid = try count("pid")
    uptime = try number("uptime")
    device = try Device(json: try required(fields.object("device"), "device", in: what))
    voices = try count("voices")
    voiceLimit = try count("voiceLimit")
    plays = try count("plays")
    underruns = try count("underruns")
    framesWritten = try count("framesWritten")
    cues = try count("cues")
    cueBytes = try count("cueBytes")
    clients = try count("clients")
    players = try count("players")
    sounds = try count("sounds")
    systemVolume = try number("systemVolume")
    systemMuted = try required(fields.bool("systemMuted"), "systemMuted", in: what)
    deviceCurrentTime = try number("deviceCurrentTime")
    triggerLatency = try Latency(json: try required(fields.object("triggerLatency"), "triggerLatency", in: what))
    var counts = FieldReader(try required(fields.object("paging"), "paging", in: what))
    paging = PagingCounts()
    for decision in PagingDecision.allCases { paging[decision] = try counts.integer(decision.rawValue) ?? 0 }
    paging.outOfOrder = try counts.integer("outOfOrder") ?? 0
    paging.settled = try counts.integer("settled") ?? 0
    silenced = try fields.object("silenced").map { (json) throws(ProtocolError) in try SilencedCounts(json: json) } ?? SilencedCounts()
    eventsDropped = try count("eventsDropped")
    refusedConnections = try count("refusedConnections")
    socket = try required(fields.string("socket"), "socket", in: what)
    scheduling = try fields.object("scheduling").map { (json) throws(ProtocolError) in try Scheduling(json: json) } ?? Scheduling(policy: "other")
    soundTheme = try fields.object("soundTheme").map { (json) throws(ProtocolError) in try SoundTheme(json: json) }
  }
}
