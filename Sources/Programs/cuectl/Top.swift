import ArgumentParser
import CueClient
import CuePosix
import CueProtocol
import TerminalScreen

#if canImport(Glibc)
import Glibc
#endif

struct Top: ParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Shows what cued is doing, live: device, level, groups, voices with meters, last plays and why they were silent.",
    discussion: """
      A full-screen view redrawn as events arrive (no polling): the device and its latency, the \
      level and quiet hours, each group's volume, mute and ducking, the voices sounding with a \
      live peak meter, the master meter, the last plays (a silent one with its reason) and the \
      carousels' page events. Keys (shown at the bottom): Up/Down select, Tab switches between \
      groups and voices, -/+ change the selected group's volume, m mutes it, l cycles the level, \
      s stops the selected voice, S stops every voice, p pauses the view, q quits; a click \
      selects a line. NO_COLOR turns colour off.

      Examples:
        cuectl top
        cuectl top --once          # one frame as plain text, for scripts and bug reports
        cuectl top --once --json   # the same snapshot as JSON
      """)

  @OptionGroup var global: GlobalOptions

  @Flag(help: "Print one frame as plain text (or the snapshot as JSON with --json) and exit.")
  var once = false

  @Option(help: ArgumentHelp("Meter events a second, 1 to 30.", valueName: "n"))
  var rate: Double = 15

  func validate() throws {
    guard rate.isFinite, (1...MetersRequest.maximumRate).contains(rate) else { throw ValidationError("--rate must be between 1 and 30") }
    if global.json && !once { throw ValidationError("--json prints a snapshot: use it with --once") }
  }

  func run() throws {
    if once {
      try printOnce()
      return
    }
    let app = TopApp(socket: global.socket, rate: rate)
    try app.run()
  }

  /// `--once`: one snapshot, as a frame of plain text or as JSON.
  private func printOnce() throws {
    let session = try Session(socket: global.socket, json: false)
    var model = TopModel(socket: session.connection.socketPath)
    do {
      try TopLink.refreshAll(session.connection, &model)
      model.reachable = true
      if !model.voices.isEmpty {
        // One meter reading of what sounds now.
        _ = try session.connection.send(Request(MetersRequest(rate: MetersRequest.maximumRate)))
        let deadline = MonotonicClock.seconds() + 0.5
        while model.mix == nil, MonotonicClock.seconds() < deadline {
          let event = try session.connection.nextEvent(timeoutSeconds: max(0.01, deadline - MonotonicClock.seconds()))
          if let daemonEvent = event.daemonEvent { _ = model.apply(daemonEvent, at: MonotonicClock.seconds()) }
        }
      }
    } catch {
      if case .timedOut = error {} else { throw session.fail(error) }
    }
    let now = MonotonicClock.seconds()
    if global.json {
      writeToStandardOutput(JSONWriter.write(model.json(at: now)) + "\n")
      return
    }
    let size = Terminal.size(of: .standardOutput) ?? (columns: 80, rows: 24)
    var screen = TopScreen(columns: size.columns, rows: max(24, 12 + model.groups.count + model.voices.count), colour: false)
    screen.interactive = false
    let frame = screen.render(model, now: now).lines.map { line in String(line.reversed().drop { $0 == " " }.reversed()) }
    // No padding past the last line that says something.
    let used = (frame.lastIndex { !$0.isEmpty } ?? 0) + 1
    writeToStandardOutput(frame.prefix(used).joined(separator: "\n") + "\n")
  }
}

/// The requests `top` sends, on a connection of its own.
enum TopLink {
  /// The kinds `top` subscribes to.
  static let kinds: Set<EventKind> = [.started, .finished, .completion, .device, .level, .paging, .reloaded]

  static func refreshAll(_ connection: CueConnection, _ model: inout TopModel) throws(ClientError) {
    try refresh([.cues, .status, .level, .groups, .voices, .clients], connection, &model)
  }

  static func refresh(_ what: Set<TopModel.Refresh>, _ connection: CueConnection, _ model: inout TopModel) throws(ClientError) {
    if what.contains(.cues) {
      let list = try connection.send(.list, as: ListReply.self)
      model.durations = Dictionary(list.cues.map { ($0.name, $0.duration) }, uniquingKeysWith: { a, _ in a })
    }
    if what.contains(.status) { model.status = try connection.send(.status) }
    if what.contains(.clients) || model.status?["clients"]?.intValue.map({ $0 != model.clients.count }) == true {
      do {
        model.clients = try connection.send(Request(ClientsRequest()), as: ClientsReply.self).clients
      } catch {
        guard case .refused = error else { throw error }  // an older daemon: no list
      }
    }
    if what.contains(.level) { model.level = try connection.send(.level(nil), as: LevelReply.self) }
    if what.contains(.groups) { model.groups = try connection.send(.group(name: nil, volume: nil, muted: nil), as: GroupReply.self).groups }
    if what.contains(.voices) { model.apply(voices: try connection.send(.voices, as: VoicesReply.self), at: MonotonicClock.seconds()) }
  }
}

/// The live view: a poll(2) loop over the keyboard, the daemon's connection and a signalfd.
final class TopApp {
  private let socket: String?
  private let rate: Double
  private let terminal = Terminal(mouse: .buttons, advice: "run cuectl top in a terminal (or under tmux); for scripts, cuectl top --once (or --once --json)")
  private var connection: CueConnection? = nil
  private var model: TopModel
  private var screen = TopScreen()
  private var targets: [Int: TopScreen.Target] = [:]
  private var nextAttempt = 0.0
  private var running = true
  /// The signal that ended the view (its exit status is 128 + it, after the terminal is restored).
  private var endedBy: Int32? = nil
  private var input = TopInput()
  /// What the view shows while paused (the model still follows the daemon underneath).
  private var frozen: TopModel? = nil

  init(socket: String?, rate: Double) {
    self.socket = socket
    self.rate = rate
    model = TopModel(socket: DefaultPaths.socket(explicit: socket))
    let noColour = getenv("NO_COLOR").map { String(cString: $0) }
    let term = getenv("TERM").map { String(cString: $0) }
    screen.colour = (noColour ?? "").isEmpty && term != "dumb"
  }

  func run() throws {
    let signals: SignalFD
    do {
      signals = try SignalFD(signals: [SIGINT, SIGTERM, SIGHUP, SIGWINCH])
    } catch {
      writeToStandardError("cuectl: cannot watch signals: \(error)\n")
      throw ExitCode(ExitStatus.unreachable.rawValue)
    }
    SignalFD.ignore(SIGPIPE)
    defer { signals.close() }
    guard isatty(FileDescriptor.standardOutput.rawValue) == 1 else {
      writeToStandardError("cuectl: standard output is not a terminal: run cuectl top in one, or cuectl top --once (or --once --json)\n")
      throw ExitCode(ExitStatus.usage.rawValue)
    }
    do {
      try terminal.enter()
    } catch {
      writeToStandardError("cuectl: \(String(describing: error).controlCharactersEscaped)\n")
      throw ExitCode(ExitStatus.usage.rawValue)
    }
    defer { terminal.leave() }
    connect()
    draw()
    while running {
      var requests = [PollRequest(fd: terminal.input, events: .readable), PollRequest(fd: signals.descriptor, events: .readable)]
      if let connection { requests.append(PollRequest(fd: connection.descriptor, events: .readable)) }
      let ready = (try? Poll.wait(requests, timeoutMilliseconds: timeout())) ?? []
      let now = MonotonicClock.seconds()
      if ready.count > 1, !ready[1].isEmpty { handleSignals(signals) }
      if ready.count > 0, !ready[0].isEmpty { handleInput() }
      if ready.count > 2, !ready[2].isEmpty { drainEvents() }
      if connection == nil, now >= nextAttempt { connect() }
      if running { draw() }
    }
    terminal.leave()
    if let endedBy { throw ExitCode(128 + endedBy) }
  }

  /// Wakes for the next reconnection, or to move the voices' progress; else only for news.
  private func timeout() -> Int32 {
    if connection == nil { return Int32(max(10, (nextAttempt - MonotonicClock.seconds()) * 1000)) }
    return model.voices.isEmpty || screen.paused ? -1 : 250
  }

  // MARK: The daemon

  private func connect() {
    nextAttempt = MonotonicClock.seconds() + 1
    do {
      let connection = try CueConnection.connect(socketPath: socket)
      _ = try connection.send(.hello(client: "cuectl-top"))
      _ = try connection.send(.subscribe(EventFilter(kinds: TopLink.kinds)))
      try TopLink.refreshAll(connection, &model)
      _ = try connection.send(Request(MetersRequest(rate: screen.paused ? 0 : rate)))
      self.connection = connection
      model.reachable = true
      model.problem = nil
      drainEvents()
    } catch {
      lost(error)
    }
  }

  private func lost(_ error: ClientError) {
    connection = nil
    model.reachable = false
    model.problem = "\(error)"
    model.voices = []
    model.mix = nil
  }

  /// Reads every event that came, applies it, and asks again for what the events made stale.
  private func drainEvents() {
    guard let connection else { return }
    var stale = Set<TopModel.Refresh>()
    do throws(ClientError) {
      while true {
        let event: CueEvent
        do {
          event = try connection.nextEvent(timeoutSeconds: 0.001)
        } catch {
          if case .timedOut = error {
            guard !stale.isEmpty else { break }
            try TopLink.refresh(stale, connection, &model)
            stale = []
            continue
          }
          throw error
        }
        if let daemonEvent = event.daemonEvent { stale.formUnion(model.apply(daemonEvent, at: MonotonicClock.seconds())) }
      }
    } catch {
      lost(error)
    }
  }

  /// Sends a request the keys asked for, then refreshes what it changed.
  private func act(_ request: Request, refreshing: Set<TopModel.Refresh>) {
    guard let connection else { return }
    do {
      _ = try connection.send(request)
      try TopLink.refresh(refreshing, connection, &model)
    } catch {
      if case .refused = error { return }  // shown by what did not change
      lost(error)
    }
  }

  // MARK: Keys, clicks, signals

  private func handleSignals(_ signals: SignalFD) {
    while let number = try? signals.next() {
      if number == SIGWINCH { continue }  // the next draw reads the new size
      running = false
      endedBy = number
    }
  }

  private func handleInput() {
    guard let bytes = terminal.read() else {
      running = false
      return
    }
    for key in input.decode(bytes) { handle(key) }
  }

  private func handle(_ key: TopInput.Key) {
    switch key {
    case .quit: running = false
    case .up: move(-1)
    case .down: move(1)
    case .tab: screen.focus = screen.focus == .groups ? .voices : .groups
    case .volumeUp: changeVolume(by: 0.05)
    case .volumeDown: changeVolume(by: -0.05)
    case .mute:
      guard let group = selectedGroup else { return }
      act(.group(name: group.name, volume: nil, muted: !group.muted), refreshing: [.groups])
    case .level:
      let next: SoundLevel =
        switch model.level?.level ?? .full {
        case .full: .quiet
        case .quiet: .silent
        case .silent: .full
        }
      act(.level(next), refreshing: [.level, .status])
    case .stop:
      guard screen.selectedVoice < model.voices.count else { return }
      act(.stop(.voice(model.voices[screen.selectedVoice].voice), fadeSeconds: nil), refreshing: [.voices])
    case .stopAll:
      act(.stop(.all, fadeSeconds: nil), refreshing: [.voices])
    case .pause:
      screen.paused.toggle()
      frozen = screen.paused ? model : nil
      act(Request(MetersRequest(rate: screen.paused ? 0 : rate)), refreshing: [])
    case .click(let row):
      switch targets[row] {
      case .group(let index):
        screen.focus = .groups
        screen.selectedGroup = index
      case .voice(let index):
        screen.focus = .voices
        screen.selectedVoice = index
      case nil: break
      }
    }
  }

  private var selectedGroup: GroupReply.Group? {
    screen.selectedGroup < model.groups.count ? model.groups[screen.selectedGroup] : nil
  }

  private func move(_ step: Int) {
    switch screen.focus {
    case .groups: screen.selectedGroup = min(max(0, screen.selectedGroup + step), max(0, model.groups.count - 1))
    case .voices: screen.selectedVoice = min(max(0, screen.selectedVoice + step), max(0, model.voices.count - 1))
    }
  }

  private func changeVolume(by step: Double) {
    guard let group = selectedGroup else { return }
    let volume = min(max(0, ((group.volume + step) * 100).rounded() / 100), 1)
    act(.group(name: group.name, volume: volume, muted: nil), refreshing: [.groups])
  }

  private func draw() {
    let size = terminal.size()
    screen.columns = size.columns
    screen.rows = size.rows
    screen.selectedGroup = min(screen.selectedGroup, max(0, model.groups.count - 1))
    screen.selectedVoice = min(screen.selectedVoice, max(0, model.voices.count - 1))
    let frame = screen.render(frozen ?? model, now: MonotonicClock.seconds())
    targets = frame.targets
    // Home, each line then the rest of it cleared, nothing below: redrawn in place without a flash.
    terminal.write("\u{1b}[H" + frame.lines.map { $0 + "\u{1b}[K" }.joined(separator: "\r\n") + "\u{1b}[J")
  }
}
