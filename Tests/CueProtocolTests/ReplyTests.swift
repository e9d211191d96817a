import CueProtocol
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// One reply body, the op it answers (nil: a carousel message), and the exact line the daemon writes for it today with id 1.
struct ReplySample: Sendable, CustomTestStringConvertible {
  var op: Op?
  var body: ReplyBody
  var line: String
  var testDescription: String { line }
}

let sampleStatus = StatusReply(
  version: "0.2.0", pid: 4242, uptime: 12.5,
  device: .init(
    name: "default", state: .lost, error: "No such device",
    format: .init(sampleFormat: "S16_LE", rate: 48000, periodFrames: 240, bufferFrames: 960), delayFrames: 0, opens: 2, losses: 1),
  voices: 3, voiceLimit: 32, plays: 120, underruns: 0, framesWritten: 576_000, cues: 5, cueBytes: 1_048_576, clients: 2,
  players: 1, sounds: 0, systemVolume: 0.8, systemMuted: false, deviceCurrentTime: 12.25,
  triggerLatency: .init(count: 120, p50Us: 850, p99Us: 2100.5, maxUs: 3000),
  paging: .init([.played: 4, .tooSoon: 1, .unchanged: 2]), silenced: .init([.eventSoundsOff: 2]), eventsDropped: 0, refusedConnections: 0,
  socket: "/run/user/1000/cued/cued.sock", scheduling: .init(policy: "other", refused: "Operation not permitted"),
  soundTheme: .init(name: "Yaru", source: .desktop, eventSounds: false, schema: "org.gnome.desktop.sound"))

/// Every op's reply, and each shape a reply takes (optional fields present and absent).
let replySamples: [ReplySample] = [
  ReplySample(
    op: HelloRequest.op, body: ReplyBody(HelloReply(server: "cued", version: "0.2.0", protocolVersion: 1)),
    line: #"{"id":1,"ok":true,"server":"cued","version":"0.2.0","protocol":1}"#),
  ReplySample(op: PingRequest.op, body: ReplyBody(PingReply()), line: #"{"id":1,"ok":true,"pong":true}"#),
  ReplySample(op: MetersRequest.op, body: ReplyBody(MetersReply(rate: 30)), line: #"{"id":1,"ok":true,"rate":30}"#),
  ReplySample(
    op: ClientsRequest.op,
    body: ReplyBody(
      ClientsReply(clients: [
        .init(connection: 1, name: "cuectl-top", subscribed: true, meters: 15), .init(connection: 4, asking: true),
      ])),
    line:
      #"{"id":1,"ok":true,"clients":[{"connection":1,"name":"cuectl-top","subscribed":true,"meters":15,"asking":false},{"connection":4,"subscribed":false,"asking":true}]}"#
  ),
  ReplySample(op: PlayRequest.op, body: ReplyBody(PlayReply(voice: 7)), line: #"{"id":1,"ok":true,"voice":7,"played":true}"#),
  ReplySample(
    op: PrepareRequest.op, body: ReplyBody(PrepareReply(file: "/usr/share/sounds/freedesktop/stereo/bell.oga", bytes: 76800)),
    line: #"{"id":1,"ok":true,"file":"/usr/share/sounds/freedesktop/stereo/bell.oga","bytes":76800}"#),
  ReplySample(op: PlayRequest.op, body: ReplyBody(PlayReply(voice: 7, stole: 3)), line: #"{"id":1,"ok":true,"voice":7,"played":true,"stole":3}"#),
  ReplySample(op: LevelRequest.op, body: ReplyBody(LevelReply(level: .quiet, setBy: "client")), line: #"{"id":1,"ok":true,"level":"quiet","setBy":"client"}"#),
  ReplySample(
    op: LevelRequest.op, body: ReplyBody(LevelReply(level: .quiet, setBy: "quiet-hours", quietHours: "22:00-07:00", inQuietHours: true)),
    line: #"{"id":1,"ok":true,"level":"quiet","setBy":"quiet-hours","quietHours":"22:00-07:00","inQuietHours":true}"#),
  ReplySample(
    op: GroupRequest.op, body: ReplyBody(GroupReply(groups: [.init(name: "ui", volume: 0.5, muted: true, ducked: 0.25, atQuiet: false)])),
    line: #"{"id":1,"ok":true,"groups":[{"name":"ui","volume":0.5,"muted":true,"ducked":0.25,"atQuiet":false}]}"#),
  ReplySample(
    op: PlayRequest.op, body: ReplyBody(PlayReply(voice: 8, silenced: .cooldown)), line: #"{"id":1,"ok":true,"voice":8,"played":false,"reason":"cooldown"}"#),
  ReplySample(
    op: PlayRequest.op, body: ReplyBody(PlayReply(voice: 9, silenced: .eventSoundsOff)),
    line: #"{"id":1,"ok":true,"voice":9,"played":false,"reason":"event-sounds-off"}"#),
  ReplySample(
    op: PlayRequest.op, body: ReplyBody(PlayReply(voice: 8, variation: "blip/b")), line: #"{"id":1,"ok":true,"voice":8,"played":true,"variation":"blip/b"}"#),
  ReplySample(op: StopRequest.op, body: ReplyBody(StopReply(stopped: 2)), line: #"{"id":1,"ok":true,"stopped":2}"#),
  ReplySample(op: VoicesRequest.op, body: ReplyBody(VoicesReply(voices: [])), line: #"{"id":1,"ok":true,"voices":[]}"#),
  ReplySample(
    op: VoicesRequest.op,
    body: ReplyBody(
      VoicesReply(voices: [
        VoicesReply.Voice(voice: 4, cue: "tick", loops: -1, seconds: 1.5),
        VoicesReply.Voice(voice: 9, cue: "pico", origin: .player(2), seconds: 0.25, stopping: true),
      ])),
    line:
      #"{"id":1,"ok":true,"voices":[{"voice":4,"cue":"tick","loops":-1,"seconds":1.5,"stopping":false},{"voice":9,"cue":"pico","player":2,"loops":0,"seconds":0.25,"stopping":true}]}"#
  ),
  ReplySample(
    op: VoicesRequest.op,
    body: ReplyBody(
      VoicesReply(voices: [
        VoicesReply.Voice(voice: 5, cue: "wrap", seconds: 2, mix: VoiceMix(group: "alerts", client: "mail", gain: 0.25, pan: -1)),
        VoicesReply.Voice(voice: 6, cue: "tick", seconds: 0, mix: VoiceMix(group: "default", gain: 1, pan: 0)),
      ])),
    line:
      #"{"id":1,"ok":true,"voices":[{"voice":5,"cue":"wrap","loops":0,"seconds":2,"stopping":false,"group":"alerts","client":"mail","gain":0.25,"pan":-1},{"voice":6,"cue":"tick","loops":0,"seconds":0,"stopping":false,"group":"default","gain":1,"pan":0}]}"#
  ),
  ReplySample(
    op: ListRequest.op,
    body: ReplyBody(
      ListReply(cues: [
        CueInfo(
          name: "pico", duration: 0.25, frames: 12000, sourceRate: 44100, channels: 1, bytes: 48000, gapless: true,
          path: "/srv/sounds/pico.mp3")
      ])),
    line:
      #"{"id":1,"ok":true,"cues":[{"name":"pico","duration":0.25,"frames":12000,"sourceRate":44100,"channels":1,"bytes":48000,"gapless":true,"path":"/srv/sounds/pico.mp3"}]}"#
  ),
  ReplySample(op: ListRequest.op, body: ReplyBody(ListReply(cues: [])), line: #"{"id":1,"ok":true,"cues":[]}"#),
  ReplySample(
    op: StatusRequest.op, body: ReplyBody(sampleStatus),
    line:
      #"{"id":1,"ok":true,"version":"0.2.0","pid":4242,"uptime":12.5,"device":{"name":"default","backend":"alsa","state":"lost","error":"No such device","format":"S16_LE","rate":48000,"periodFrames":240,"bufferFrames":960,"delayFrames":0,"opens":2,"losses":1},"voices":3,"voiceLimit":32,"plays":120,"underruns":0,"framesWritten":576000,"cues":5,"cueBytes":1048576,"clients":2,"players":1,"sounds":0,"systemVolume":0.8,"systemMuted":false,"deviceCurrentTime":12.25,"triggerLatency":{"count":120,"p50Us":850,"p99Us":2100.5,"maxUs":3000},"paging":{"played":4,"ignored":0,"too-soon":1,"late":0,"unbound":0,"merged":0,"unchanged":2,"failed":0,"outOfOrder":0,"settled":0},"silenced":{"unknown":0,"cooldown":0,"cap":0,"level":0,"muted":0,"group-muted":0,"too-late":0,"event-sounds-off":2},"eventsDropped":0,"refusedConnections":0,"socket":"/run/user/1000/cued/cued.sock","scheduling":{"policy":"other","refused":"Operation not permitted"},"soundTheme":{"name":"Yaru","source":"desktop","eventSounds":false,"schema":"org.gnome.desktop.sound"}}"#
  ),
  ReplySample(
    op: StatusRequest.op,
    body: ReplyBody(
      StatusReply(
        pid: 1, uptime: 0, device: .init(name: "null", backend: "null", state: .closed), voiceLimit: 32, systemVolume: 1, socket: "/tmp/s")),
    line:
      #"{"id":1,"ok":true,"version":"0.2.0","pid":1,"uptime":0,"device":{"name":"null","backend":"null","state":"closed","delayFrames":0,"opens":0,"losses":0},"voices":0,"voiceLimit":32,"plays":0,"underruns":0,"framesWritten":0,"cues":0,"cueBytes":0,"clients":0,"players":0,"sounds":0,"systemVolume":1,"systemMuted":false,"deviceCurrentTime":0,"triggerLatency":{"count":0,"p50Us":0,"p99Us":0,"maxUs":0},"paging":{"played":0,"ignored":0,"too-soon":0,"late":0,"unbound":0,"merged":0,"unchanged":0,"failed":0,"outOfOrder":0,"settled":0},"silenced":{"unknown":0,"cooldown":0,"cap":0,"level":0,"muted":0,"group-muted":0,"too-late":0,"event-sounds-off":0},"eventsDropped":0,"refusedConnections":0,"socket":"/tmp/s","scheduling":{"policy":"other"}}"#
  ),
  // Real-time from RTKit after SCHED_FIFO was refused; and neither.
  ReplySample(
    op: StatusRequest.op,
    body: ReplyBody(
      StatusReply(
        pid: 1, uptime: 0, device: .init(name: "null", backend: "null", state: .closed), voiceLimit: 32, systemVolume: 1, socket: "/tmp/s",
        scheduling: .init(policy: "rr", priority: 15, via: "rtkit"), soundTheme: .init(name: "freedesktop", source: .config))),
    line:
      #"{"id":1,"ok":true,"version":"0.2.0","pid":1,"uptime":0,"device":{"name":"null","backend":"null","state":"closed","delayFrames":0,"opens":0,"losses":0},"voices":0,"voiceLimit":32,"plays":0,"underruns":0,"framesWritten":0,"cues":0,"cueBytes":0,"clients":0,"players":0,"sounds":0,"systemVolume":1,"systemMuted":false,"deviceCurrentTime":0,"triggerLatency":{"count":0,"p50Us":0,"p99Us":0,"maxUs":0},"paging":{"played":0,"ignored":0,"too-soon":0,"late":0,"unbound":0,"merged":0,"unchanged":0,"failed":0,"outOfOrder":0,"settled":0},"silenced":{"unknown":0,"cooldown":0,"cap":0,"level":0,"muted":0,"group-muted":0,"too-late":0,"event-sounds-off":0},"eventsDropped":0,"refusedConnections":0,"socket":"/tmp/s","scheduling":{"policy":"rr","priority":15,"via":"rtkit"},"soundTheme":{"name":"freedesktop","source":"config","eventSounds":true}}"#
  ),
  ReplySample(
    op: StatusRequest.op,
    body: ReplyBody(
      StatusReply(
        pid: 1, uptime: 0, device: .init(name: "null", backend: "null", state: .closed), voiceLimit: 32, systemVolume: 1, socket: "/tmp/s",
        scheduling: .init(policy: "other", refused: "Operation not permitted", rtkit: "not running (org.freedesktop.DBus.Error.ServiceUnknown: x)"))),
    line:
      #"{"id":1,"ok":true,"version":"0.2.0","pid":1,"uptime":0,"device":{"name":"null","backend":"null","state":"closed","delayFrames":0,"opens":0,"losses":0},"voices":0,"voiceLimit":32,"plays":0,"underruns":0,"framesWritten":0,"cues":0,"cueBytes":0,"clients":0,"players":0,"sounds":0,"systemVolume":1,"systemMuted":false,"deviceCurrentTime":0,"triggerLatency":{"count":0,"p50Us":0,"p99Us":0,"maxUs":0},"paging":{"played":0,"ignored":0,"too-soon":0,"late":0,"unbound":0,"merged":0,"unchanged":0,"failed":0,"outOfOrder":0,"settled":0},"silenced":{"unknown":0,"cooldown":0,"cap":0,"level":0,"muted":0,"group-muted":0,"too-late":0,"event-sounds-off":0},"eventsDropped":0,"refusedConnections":0,"socket":"/tmp/s","scheduling":{"policy":"other","refused":"Operation not permitted","rtkit":"not running (org.freedesktop.DBus.Error.ServiceUnknown: x)"}}"#
  ),
  ReplySample(
    op: ReloadRequest.op,
    body: ReplyBody(
      ReloadReply(
        library: .init(cues: 3, added: ["a"], changed: [], removed: []),
        failed: [.init(path: "/srv/sounds/bad.mp3", reason: "not an MPEG stream")])),
    line:
      #"{"id":1,"ok":true,"cues":3,"added":["a"],"changed":[],"removed":[],"failed":[{"path":"/srv/sounds/bad.mp3","reason":"not an MPEG stream"}]}"#
  ),
  ReplySample(
    op: SubscribeRequest.op, body: ReplyBody(SubscribeReply(filter: EventFilter(kinds: [.started, .finished]))),
    line: #"{"id":1,"ok":true,"kinds":["finished","started"]}"#),
  ReplySample(op: UnsubscribeRequest.op, body: ReplyBody(EmptyReply()), line: #"{"id":1,"ok":true}"#),
  ReplySample(
    op: PlayerCreateRequest.op,
    body: ReplyBody(
      PlayerCreateReply(
        player: 4,
        properties: PlayerProperties(
          volume: 0.5, numberOfLoops: -1, duration: 1.5, numberOfChannels: 2, deviceCurrentTime: 3.25, detached: true,
          cue: "hum"))),
    line:
      #"{"id":1,"ok":true,"player":4,"volume":0.5,"pan":0,"numberOfLoops":-1,"currentTime":0,"duration":1.5,"isPlaying":false,"numberOfChannels":2,"deviceCurrentTime":3.25,"enableRate":false,"rate":1,"meteringEnabled":false,"detached":true,"cue":"hum"}"#
  ),
  ReplySample(
    op: PlayerGetRequest.op,
    body: ReplyBody(
      PlayerProperties(
        pan: -0.5, currentTime: 0.75, duration: 1.5, isPlaying: true, numberOfChannels: 1, deviceCurrentTime: 4,
        enableRate: true, rate: 1.25, meteringEnabled: true, cue: "hum", averagePower: [-20.5], peakPower: [-6])),
    line:
      #"{"id":1,"ok":true,"volume":1,"pan":-0.5,"numberOfLoops":0,"currentTime":0.75,"duration":1.5,"isPlaying":true,"numberOfChannels":1,"deviceCurrentTime":4,"enableRate":true,"rate":1.25,"meteringEnabled":true,"detached":false,"cue":"hum","averagePower":[-20.5],"peakPower":[-6]}"#
  ),
] + [PlayerPrepareRequest.op, PlayerPauseRequest.op, PlayerStopRequest.op, PlayerSetRequest.op].map { op in
  ReplySample(
    op: op, body: ReplyBody(PlayerProperties()),
    line:
      #"{"id":1,"ok":true,"volume":1,"pan":0,"numberOfLoops":0,"currentTime":0,"duration":0,"isPlaying":false,"numberOfChannels":0,"deviceCurrentTime":0,"enableRate":false,"rate":1,"meteringEnabled":false,"detached":false}"#
  )
} + [
  ReplySample(op: PlayerPlayRequest.op, body: ReplyBody(PlayerPlayReply()), line: #"{"id":1,"ok":true,"playing":true}"#),
  ReplySample(
    op: PlayerPlayRequest.op, body: ReplyBody(PlayerPlayReply(playing: false, silenced: .level)),
    line: #"{"id":1,"ok":true,"playing":false,"played":false,"reason":"level"}"#),
  ReplySample(op: PlayerDestroyRequest.op, body: ReplyBody(PlayerDestroyReply(destroyed: 4)), line: #"{"id":1,"ok":true,"destroyed":4}"#),
  ReplySample(op: SoundCreateRequest.op, body: ReplyBody(SoundCreateReply(sound: 5)), line: #"{"id":1,"ok":true,"sound":5}"#),
  ReplySample(op: SoundPlayRequest.op, body: ReplyBody(SoundPlayReply.playing(PlayReply(voice: 9))), line: #"{"id":1,"ok":true,"voice":9,"played":true}"#),
  ReplySample(
    op: SoundPlayRequest.op, body: ReplyBody(SoundPlayReply.playing(PlayReply(voice: 9, stole: 2))), line: #"{"id":1,"ok":true,"voice":9,"played":true,"stole":2}"#),
  ReplySample(op: SoundPlayRequest.op, body: ReplyBody(SoundPlayReply.silent(.muted)), line: #"{"id":1,"ok":true,"played":false,"reason":"muted","muted":true}"#),
  ReplySample(op: SoundPlayRequest.op, body: ReplyBody(SoundPlayReply.silent(.level)), line: #"{"id":1,"ok":true,"played":false,"reason":"level"}"#),
  ReplySample(
    op: SoundCompletionRequest.op, body: ReplyBody(SoundCompletionReply(sound: 5, completion: true)),
    line: #"{"id":1,"ok":true,"sound":5,"completion":true}"#),
  ReplySample(
    op: SoundDisposeRequest.op, body: ReplyBody(SoundDisposeReply(sound: 5, playing: 1)), line: #"{"id":1,"ok":true,"sound":5,"playing":1}"#),
  ReplySample(op: SystemRequest.op, body: ReplyBody(SystemReply(volume: 0.5, muted: false)), line: #"{"id":1,"ok":true,"volume":0.5,"muted":false}"#),
  ReplySample(
    op: nil, body: ReplyBody(PagingOutcome(decision: .played, cue: "page-next", voice: 12)),
    line: #"{"id":1,"ok":true,"decision":"played","cue":"page-next","voice":12}"#),
  ReplySample(op: nil, body: ReplyBody(PagingOutcome(decision: .unbound)), line: #"{"id":1,"ok":true,"decision":"unbound"}"#),
]

@Suite("Typed replies")
struct ReplyTests {
  @Test("encodes to the daemon's exact bytes", arguments: replySamples)
  func encodesToTheDaemonsBytes(_ sample: ReplySample) {
    // Compared as text, so that a failure shows the two lines.
    #expect(String(decoding: ReplyEnvelope.success(id: .number(1), sample.body).line, as: UTF8.self) == sample.line + "\n")
  }

  @Test("decodes the daemon's line and round-trips", arguments: replySamples)
  func decodesAndRoundTrips(_ sample: ReplySample) throws {
    let object = try JSONParser.parse(Array(sample.line.utf8))
    let envelope = ReplyEnvelope.success(id: .number(1), sample.body)
    guard case .reply(let id, .success(let read)) = try ServerMessage.parse(envelope.line.dropLast()) else {
      Issue.record("not read as a successful reply")
      return
    }
    #expect(id == .number(1))
    #expect(read == object)
    let decoded: ReplyBody
    if let op = sample.op {
      decoded = try ReplyBody(op: op, reply: object)
    } else {
      decoded = ReplyBody(try PagingOutcome(reply: object))
    }
    #expect(decoded == sample.body)
  }

  @Test func theSamplesCoverEveryOp() {
    #expect(Set(replySamples.compactMap(\.op)) == Set(Op.allCases))
  }

  @Test func aFailureIsWrittenAsTheDaemonWritesIt() throws {
    let envelope = ReplyEnvelope.failure(id: nil, ProtocolError(.unknownCue, "no cue named 'x'"))
    let line = #"{"id":null,"ok":false,"error":{"code":"unknown-cue","message":"no cue named 'x'"}}"#
    #expect(envelope.line == Array((line + "\n").utf8))
    #expect(try ServerMessage.parse(Array(line.utf8)) == .reply(id: nil, result: .failure(ProtocolError(.unknownCue, "no cue named 'x'"))))
    let withID = ReplyEnvelope.failure(id: .string("a"), ProtocolError(.busy, "later"))
    #expect(String(decoding: withID.line, as: UTF8.self) == #"{"id":"a","ok":false,"error":{"code":"busy","message":"later"}}"# + "\n")
  }

  @Test("refuses a reply that lacks what it needs", arguments: [
    (PlayRequest.op, #"{"id":1,"ok":true,"stole":3}"#),
    (StatusRequest.op, #"{"id":1,"ok":true,"version":"0.2.0"}"#),
    (PlayerGetRequest.op, #"{"id":1,"ok":true,"volume":"loud"}"#),
    (SoundDisposeRequest.op, #"{"id":1,"ok":true,"sound":5}"#),
    (PingRequest.op, #"{"id":1,"ok":true}"#),
  ])
  func refusesAnIncompleteReply(_ op: Op, _ line: String) throws {
    let object = try JSONParser.parse(Array(line.utf8))
    #expect(throws: ProtocolError.self) { try ReplyBody(op: op, reply: object) }
  }

  @Test func newFieldsFromANewerDaemonAreIgnored() throws {
    let object = try JSONParser.parse(Array(#"{"id":1,"ok":true,"voice":7,"queuedFor":0.001}"#.utf8))
    #expect(try PlayReply(reply: object) == PlayReply(voice: 7))
  }

  @Test func pagingCountsCompareByTheirNumbers() {
    var counts = StatusReply.PagingCounts()
    counts[.late] = 0
    #expect(counts == StatusReply.PagingCounts())
    counts[.late] = 2
    #expect(counts[.late] == 2 && counts[.played] == 0)
  }
}

@Suite("CueProtocol: the audio thread's scheduling for people")
struct SchedulingSummaryTests {
  @Test(arguments: [
    (StatusReply.Scheduling(policy: "other"), "normal scheduling"),
    (StatusReply.Scheduling(policy: "fifo", priority: 20, via: "sched_setscheduler"), "SCHED_FIFO, priority 20"),
    (StatusReply.Scheduling(policy: "fifo", priority: 20), "SCHED_FIFO, priority 20"),  // an older daemon says no via
    (StatusReply.Scheduling(policy: "rr", priority: 15, via: "rtkit"), "SCHED_RR, priority 15 (via RTKit)"),
    (StatusReply.Scheduling(policy: "fifo", priority: 88, via: "pipewire"), "SCHED_FIFO, priority 88 (set by pipewire)"),
    (StatusReply.Scheduling(policy: "other", refused: "Operation not permitted"), "normal scheduling (real-time refused: Operation not permitted)"),
    (
      StatusReply.Scheduling(policy: "other", refused: "Operation not permitted", rtkit: "not running"),
      "normal scheduling (real-time refused: Operation not permitted; RTKit: not running)"
    ),
  ])
  func summaryNamesThePolicyAndWhoGrantedItOrWhyNot(_ scheduling: StatusReply.Scheduling, _ text: String) {
    #expect(scheduling.summary == text)
  }
}

@Suite("A voice's mix read back from its chain")
struct VoiceMixTests {
  @Test func gainIsThePowerAndPanTheSinCosLaw() {
    // Centre, volume 0.5: both channels 0.5.
    #expect(VoiceMix(group: "g", client: nil, left: 0.5, right: 0.5) == VoiceMix(group: "g", gain: 0.5, pan: 0))
    // Hard left at unity (the mono law: √2 on the left).
    #expect(VoiceMix(group: "g", client: nil, left: 2.0.squareRoot(), right: 0) == VoiceMix(group: "g", gain: 1, pan: -1))
    #expect(VoiceMix(group: "g", client: nil, left: 0, right: 0.3) == VoiceMix(group: "g", gain: 0.2121, pan: 1))
    // Pan 0.5 of the law: θ = 3π/8.
    let theta = 3 * Double.pi / 8
    let half = VoiceMix(group: "g", client: "c", left: 2.0.squareRoot() * cos(theta), right: 2.0.squareRoot() * sin(theta))
    #expect(half == VoiceMix(group: "g", client: "c", gain: 1, pan: 0.5))
    // Silence has no side.
    #expect(VoiceMix(group: "g", client: nil, left: 0, right: 0) == VoiceMix(group: "g", gain: 0, pan: 0))
  }
}
