import CueProtocol

#if canImport(Glibc)
import Glibc
#endif

/// One frame of `cuectl top`: the model laid out in `rows` lines of at most `columns` cells, with
/// or without colour (SGR), and which line is which group or voice (for mouse clicks). Pure.
struct TopScreen {
  enum Focus { case groups, voices }

  var columns = 80
  var rows = 24
  var colour = false
  var focus = Focus.groups
  var selectedGroup = 0
  var selectedVoice = 0
  var paused = false
  /// Keys work: the footer lists them (not in `--once`'s frame).
  var interactive = true

  /// What a line of the last frame shows, for clicks.
  enum Target: Equatable { case group(Int), voice(Int) }

  /// A line being built: text with styles, cut at the width, its visible length counted.
  struct Line {
    let width: Int
    let colour: Bool
    private(set) var text = ""
    private(set) var visible = 0

    init(width: Int, colour: Bool) {
      self.width = width
      self.colour = colour
    }

    mutating func add(_ s: String, _ style: String? = nil) {
      // Names come from the daemon: a control character in one must not move the cursor.
      let s = s.controlCharactersEscaped
      let room = width - visible
      guard room > 0 else { return }
      let cut = s.count > room ? String(s.prefix(room)) : s
      if colour, let style { text += "\u{1b}[\(style)m" + cut + "\u{1b}[0m" } else { text += cut }
      visible += cut.count
    }

    mutating func pad(to column: Int) {
      if column > visible { add(String(repeating: " ", count: column - visible)) }
    }
  }

  static let bold = "1"
  static let dim = "2"
  static let reverse = "7"
  static let heading = "1;36"

  /// The frame's lines, exactly `rows` of them, and the target of each line that has one.
  func render(_ model: TopModel, now: Double) -> (lines: [String], targets: [Int: Target]) {
    var out: [Line] = []
    var targets: [Int: Target] = [:]
    func line() -> Line { Line(width: columns, colour: colour) }

    out.append(titleLine(model))
    if !model.reachable {
      var l = line()
      l.add("cued is not reachable at \(model.socket)", "1;31")
      out.append(l)
      var why = line()
      why.add(model.problem ?? "", Self.dim)
      out.append(why)
      var retry = line()
      retry.add("retrying every second; q quits")
      out.append(retry)
      return finish(out, targets: targets, footer: footer())
    }
    out.append(deviceLine(model))
    out.append(levelLine(model))
    out.append(silencedLine(model))
    out.append(clientsLine(model))
    out.append(masterLine(model))

    // What is left for the lists: the footer and three headings come off.
    let free = max(0, rows - out.count - 4)
    let groupRows = min(model.groups.count, max(1, free / 4))
    let voiceRows = min(max(model.voices.count, 1), max(1, (free - groupRows) / 2))
    let recentRows = max(0, free - groupRows - voiceRows)

    var heading = line()
    heading.add(pad("GROUP", 12) + pad("VOLUME", 27) + pad("MUTE", 6) + "DUCKING", Self.heading)
    out.append(heading)
    let firstGroup = scrolled(selectedGroup, count: model.groups.count, shown: groupRows)
    for index in firstGroup..<min(model.groups.count, firstGroup + groupRows) {
      targets[out.count] = .group(index)
      out.append(groupLine(model.groups[index], selected: interactive && focus == .groups && index == selectedGroup))
    }

    var voicesHeading = line()
    voicesHeading.add(
      pad("VOICE", 7) + pad("CUE", 13) + pad("ORIGIN", 10) + (wide ? pad("CLIENT", 14) : "") + pad("GAIN", 7) + pad("PAN", 5) + pad("LOOPS", 6)
        + pad("PROGRESS", 13) + "PEAK", Self.heading)
    out.append(voicesHeading)
    if model.voices.isEmpty {
      var l = line()
      l.add("  (nothing sounding)", Self.dim)
      out.append(l)
    } else {
      let firstVoice = scrolled(selectedVoice, count: model.voices.count, shown: voiceRows)
      for index in firstVoice..<min(model.voices.count, firstVoice + voiceRows) {
        targets[out.count] = .voice(index)
        out.append(voiceLine(model, model.voices[index], now: now, selected: interactive && focus == .voices && index == selectedVoice))
      }
    }

    // A printed frame has no history to show (it saw no events).
    if !interactive && model.recent.isEmpty && model.pages.isEmpty { return finish(out, targets: targets, footer: footer()) }
    let half = columns / 2
    var recentHeading = line()
    recentHeading.add("LAST PLAYS", Self.heading)
    recentHeading.pad(to: half)
    recentHeading.add("PAGING", Self.heading)
    out.append(recentHeading)
    let plays = model.recent.suffix(recentRows).reversed().map { $0 }
    let pages = model.pages.suffix(recentRows).reversed().map { $0 }
    for row in 0..<recentRows {
      var l = line()
      if row < plays.count { playCell(&l, plays[row], now: now) }
      l.pad(to: half)
      if row < pages.count { pageCell(&l, pages[row], now: now) }
      out.append(l)
    }
    return finish(out, targets: targets, footer: footer())
  }

  /// Pads or cuts the frame to `rows` lines, the footer last.
  private func finish(_ lines: [Line], targets: [Int: Target], footer: Line) -> (lines: [String], targets: [Int: Target]) {
    var text = lines.prefix(max(0, rows - 1)).map(\.text)
    while text.count < rows - 1 { text.append("") }
    text.append(footer.text)
    return (text, targets.filter { $0.key < rows - 1 })
  }

  /// The first of `shown` rows of a list of `count` that keeps `selected` in view.
  private func scrolled(_ selected: Int, count: Int, shown: Int) -> Int {
    guard count > shown, shown > 0 else { return 0 }
    return min(max(0, selected - shown + 1), count - shown)
  }

  private func titleLine(_ model: TopModel) -> Line {
    var l = Line(width: columns, colour: colour)
    l.add("cued top", Self.bold)
    if let version = model.status("version")?.stringValue { l.add(" \(version)") }
    if let pid = model.status("pid")?.intValue { l.add("  pid \(pid)") }
    if let uptime = model.status("uptime")?.doubleValue { l.add("  up \(Self.duration(uptime))") }
    if paused { l.add("  [view paused]", "1;33") }
    return l
  }

  private func deviceLine(_ model: TopModel) -> Line {
    var l = Line(width: columns, colour: colour)
    let device = model.status("device")
    let state = device?["state"]?.stringValue ?? "?"
    l.add("device ")
    l.add(device?["name"]?.stringValue ?? "?", Self.bold)
    if let backend = device?["backend"]?.stringValue { l.add(" (\(backend))") }
    l.add(" ")
    let paused = device?["paused"]?.boolValue == true
    l.add(paused ? "paused" : state, state == "open" ? (paused ? "33" : "32") : state == "lost" ? "31" : Self.dim)
    if let rate = device?["rate"]?.intValue { l.add("  \(rate) Hz") }
    if let quantum = device?["quantumFrames"]?.intValue ?? device?["periodFrames"]?.intValue { l.add("  quantum \(quantum)") }
    if let latency = device?["latencyFrames"]?.intValue ?? device?["fillTargetFrames"]?.intValue { l.add("  latency \(latency)") }
    let underruns = model.status("underruns")?.intValue ?? 0
    l.add("  xruns \(underruns)", underruns > 0 ? "31" : nil)
    if let raises = device?["latencyRaises"]?.intValue { l.add("  raises \(raises)") }
    if let thread = device?["mixingThread"] ?? model.status("scheduling"), let policy = thread["policy"]?.stringValue {
      l.add("  rt \(policy)" + (thread["priority"]?.intValue.map { "/\($0)" } ?? "") + (thread["via"]?.stringValue.flatMap { $0 == "sched_setscheduler" ? nil : " via \($0)" } ?? ""))
    }
    return l
  }

  private func levelLine(_ model: TopModel) -> Line {
    var l = Line(width: columns, colour: colour)
    l.add("level ")
    let level = model.level?.level.rawValue ?? "?"
    l.add(level, level == "full" ? "1;32" : level == "quiet" ? "1;33" : "1;31")
    if let by = model.level?.setBy { l.add(" (\(by))") }
    if let hours = model.level?.quietHours { l.add("  quiet hours \(hours) " + (model.level?.inQuietHours == true ? "on" : "off")) }
    if let voices = model.status("voices")?.intValue, let limit = model.status("voiceLimit")?.intValue { l.add("  voices \(voices)/\(limit)") }
    if let plays = model.status("plays")?.intValue { l.add("  plays \(plays)") }
    if let clients = model.status("clients")?.intValue { l.add("  clients \(clients)") }
    return l
  }

  /// `status`'s count of silent plays by reason, since the daemon started.
  private func silencedLine(_ model: TopModel) -> Line {
    var l = Line(width: columns, colour: colour)
    l.add("silent plays since start:")
    let counts = (model.status("silenced")?.objectValue ?? []).compactMap { key, value in
      value.intValue.flatMap { $0 > 0 ? (key, $0) : nil }
    }
    if counts.isEmpty { l.add(" none", Self.dim) }
    for (reason, count) in counts {
      l.add(" \(reason) ", "31")
      l.add("\(count)")
    }
    return l
  }

  /// The connections: each by its hello name (or number), this view's own marked.
  private func clientsLine(_ model: TopModel) -> Line {
    var l = Line(width: columns, colour: colour)
    l.add("clients:")
    for client in model.clients {
      l.add(" ")
      l.add(client.name ?? "#\(client.connection)", client.asking ? Self.dim : Self.bold)
      var notes: [String] = []
      if client.asking { notes.append("this view") }
      if let meters = client.meters, !client.asking { notes.append("meters \(String(format3: meters))/s") }
      if client.subscribed && !client.asking { notes.append("events") }
      if !notes.isEmpty { l.add(" (" + notes.joined(separator: ", ") + ")", Self.dim) }
    }
    return l
  }

  private func masterLine(_ model: TopModel) -> Line {
    var l = Line(width: columns, colour: colour)
    l.add("master ", Self.bold)
    meter(&l, model.mix?.peak ?? 0, width: 30)
    l.add(" peak " + Self.decibels(model.mix?.peak ?? 0) + "  rms " + Self.decibels(model.mix?.rms ?? 0))
    return l
  }

  private func groupLine(_ group: GroupReply.Group, selected: Bool) -> Line {
    var l = Line(width: columns, colour: colour)
    l.add(selected ? ">" : " ", selected ? Self.reverse : nil)
    l.add(pad(" " + group.name, 11), selected ? Self.reverse : nil)
    bar(&l, fraction: group.volume, width: 20, style: group.muted ? Self.dim : "32")
    l.add(" " + pad(Self.fixed2(group.volume), 6))
    l.add(pad(group.muted ? "muted" : "", 6), group.muted ? "1;31" : nil)
    if group.ducked < 1 { l.add(String(format3: (20 * log10(group.ducked) * 10).rounded() / 10) + " dB", "33") }
    if group.atQuiet { l.add(group.ducked < 1 ? "  at quiet" : "at quiet", Self.dim) }
    return l
  }

  private func voiceLine(_ model: TopModel, _ voice: TopModel.Voice, now: Double, selected: Bool) -> Line {
    var l = Line(width: columns, colour: colour)
    l.add(selected ? ">" : " ", selected ? Self.reverse : nil)
    l.add(pad(" " + String(voice.voice), 6), selected ? Self.reverse : nil)
    l.add(pad(voice.cue, 12) + " ", voice.stopping ? Self.dim : Self.bold)
    l.add(pad(voice.origin, 10))
    if wide { l.add(pad(voice.mix?.client ?? "-", 13) + " ") }
    if let mix = voice.mix {
      l.add(pad(mix.gain > 0 ? String(format3: (20 * log10(mix.gain) * 10).rounded() / 10) : "-inf", 7), mix.gain < 0.001 ? Self.dim : nil)
      l.add(pad(Self.pan(mix.pan), 5))
    } else {
      l.add(pad("", 12))
    }
    l.add(pad(voice.loops < 0 ? "inf" : String(voice.loops), 6))
    if let progress = model.progress(of: voice, at: now) {
      bar(&l, fraction: progress.fraction, width: 7, style: "36")
      l.add(" " + pad(voice.loops < 0 ? "#\(progress.pass + 1)" : "\(progress.pass + 1)/\(voice.loops + 1)", 5))
    } else {
      l.add(pad("", 13))
    }
    meter(&l, voice.peak, width: max(4, columns - l.visible - 9))
    l.add(" " + Self.decibels(voice.peak))
    return l
  }

  private func playCell(_ l: inout Line, _ play: TopModel.Play, now: Double) {
    l.add(pad(Self.ago(now - play.at), 5))
    l.add(pad(play.cue, 12) + " ")
    if let reason = play.silentBecause {
      l.add("silent: " + reason, "1;31")
    } else {
      l.add("played" + (play.voice.map { " \($0)" } ?? ""), "32")
    }
  }

  private func pageCell(_ l: inout Line, _ page: TopModel.Page, now: Double) {
    l.add(pad(Self.ago(now - page.at), 5))
    var what = page.carousel + " " + page.message
    if let from = page.from, let to = page.to { what += " \(from)>\(to)" }
    l.add(what + " ")
    l.add(page.decision, page.decision == "played" ? "32" : "33")
  }

  private func footer() -> Line {
    var l = Line(width: columns, colour: colour)
    guard interactive else { return l }
    let keys: [(String, String)] = [
      ("Up/Dn", "select"), ("Tab", "switch"), ("-/+", "volume"), ("m", "mute"), ("l", "level"), ("s", "stop"), ("S", "all"),
      ("p", "pause"), ("q", "quit"),
    ]
    for (index, (key, what)) in keys.enumerated() {
      if index > 0 { l.add(" ") }
      l.add(key, Self.reverse)
      l.add(" " + what)
    }
    return l
  }

  // MARK: Pieces

  /// A bar of `width` cells, `fraction` of it filled: `[|||||     ]`.
  private func bar(_ l: inout Line, fraction: Double, width: Int, style: String) {
    let inner = max(1, width - 2)
    let filled = Int((min(max(fraction, 0), 1) * Double(inner)).rounded())
    l.add("[")
    l.add(String(repeating: "|", count: filled), style)
    l.add(String(repeating: " ", count: inner - filled) + "]")
  }

  /// A peak meter from -60 dBFS (empty) to 0 dBFS (full), green, yellow past -12, red past -3.
  private func meter(_ l: inout Line, _ peak: Double, width: Int) {
    let inner = max(1, width - 2)
    let db = peak > 0 ? 20 * log10(peak) : -120
    let filled = Int((min(max((db + 60) / 60, 0), 1) * Double(inner)).rounded())
    let yellow = Int(Double(inner) * 48 / 60)
    let red = Int(Double(inner) * 57 / 60)
    l.add("[")
    l.add(String(repeating: "|", count: min(filled, yellow)), "32")
    if filled > yellow { l.add(String(repeating: "|", count: min(filled, red) - yellow), "33") }
    if filled > red { l.add(String(repeating: "|", count: filled - red), "31") }
    l.add(String(repeating: " ", count: inner - filled) + "]")
  }

  private func pad(_ s: String, _ width: Int) -> String {
    s.count >= width ? String(s.prefix(width)) : s + String(repeating: " ", count: width - s.count)
  }

  /// Room for the client's name.
  private var wide: Bool { columns >= 100 }

  /// `C`, `L0.5`, `R1`: a pan position.
  static func pan(_ x: Double) -> String {
    let tenths = Int((abs(x) * 10).rounded())
    guard tenths > 0 else { return "C" }
    return (x < 0 ? "L" : "R") + (tenths == 10 ? "1" : "0.\(tenths)")
  }

  /// `0.80`: two decimals.
  static func fixed2(_ x: Double) -> String {
    let hundredths = Int((x * 100).rounded())
    let fraction = hundredths % 100
    return "\(hundredths / 100)." + (fraction < 10 ? "0\(fraction)" : "\(fraction)")
  }

  /// `-12.3 dB`, or `-inf dB` for silence.
  static func decibels(_ x: Double) -> String {
    guard x > 0 else { return "-inf dB" }
    return String(format3: (20 * log10(x) * 10).rounded() / 10) + " dB"
  }

  /// `1:02:03` or `4:05`.
  static func duration(_ seconds: Double) -> String {
    let s = Int(seconds)
    func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
    return s >= 3600 ? "\(s / 3600):\(two(s / 60 % 60)):\(two(s % 60))" : "\(s / 60):\(two(s % 60))"
  }

  /// `3s`, `2m`, `1h`: how long ago.
  static func ago(_ seconds: Double) -> String {
    let s = Int(max(0, seconds))
    return s < 60 ? "\(s)s" : s < 3600 ? "\(s / 60)m" : "\(s / 3600)h"
  }
}
