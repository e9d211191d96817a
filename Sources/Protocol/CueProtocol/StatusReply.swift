/// `status`: the daemon's health in one object (what `cuectl status` shows). Its sections are
/// declared beside it: `StatusDevice.swift`, `StatusCounters.swift` (paging, silenced, trigger
/// latency), `StatusScheduling.swift`, `StatusSoundTheme.swift`.
public struct StatusReply: ReplyFields {
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
  /// The control thread's nice level and who set it; nil from daemons before it was reported.
  public var controlThread: ControlThread?
  /// The sound theme of `play` with an `event`; nil from daemons before it was reported.
  public var soundTheme: SoundTheme?

  public init(
    version: String = cuedVersion, pid: Int, uptime: Double, device: Device, voices: Int = 0, voiceLimit: Int, plays: Int = 0,
    underruns: Int = 0, framesWritten: Int = 0, cues: Int = 0, cueBytes: Int = 0, clients: Int = 0, players: Int = 0,
    sounds: Int = 0, systemVolume: Double = 1, systemMuted: Bool = false, deviceCurrentTime: Double = 0,
    triggerLatency: Latency = Latency(), paging: PagingCounts = PagingCounts(), silenced: SilencedCounts = SilencedCounts(),
    eventsDropped: Int = 0,
    refusedConnections: Int = 0, socket: String, scheduling: Scheduling = Scheduling(policy: "other"), controlThread: ControlThread? = nil,
    soundTheme: SoundTheme? = nil
  ) {
    self.scheduling = scheduling
    self.controlThread = controlThread
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
    ] + (controlThread.map { [("controlThread", $0.json)] } ?? []) + (soundTheme.map { [("soundTheme", $0.json)] } ?? [])
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
    controlThread = try fields.object("controlThread").map { (json) throws(ProtocolError) in try ControlThread(json: json) }
    soundTheme = try fields.object("soundTheme").map { (json) throws(ProtocolError) in try SoundTheme(json: json) }
  }
}
