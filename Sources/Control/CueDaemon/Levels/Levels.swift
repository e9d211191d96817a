import CueCore
import CueProtocol

#if canImport(Glibc)
import Glibc
#endif

/// `[clients.NAME]`: what a client that says `hello` with that name may do.
public struct ClientSettings: Sendable, Equatable {
  /// Its plays never sound above this level.
  public var ceiling = SoundLevel.full
  /// Its important cues play even at `silent`.
  public var breaksSilence = false
}

/// `[quiet-hours]`: a daily time range (local time) and the level it sets.
public struct QuietHours: Sendable, Equatable {
  /// Minutes after local midnight.
  public var from: Int
  public var to: Int
  public var level = SoundLevel.quiet

  /// Whether `minute` (after local midnight) falls inside; a range may cross midnight.
  public func contains(_ minute: Int) -> Bool {
    from <= to ? (minute >= from && minute < to) : (minute >= from || minute < to)
  }

  /// `22:00-07:00`.
  public var text: String {
    func hhmm(_ m: Int) -> String {
      let h = m / 60, mm = m % 60
      return (h < 10 ? "0" : "") + "\(h):" + (mm < 10 ? "0" : "") + "\(mm)"
    }
    return hhmm(from) + "-" + hhmm(to)
  }
}

/// The local time of day, for quiet hours (tests inject their own).
protocol WallClock {
  /// Seconds after local midnight, now.
  func secondsOfDay() -> Double
}

struct LocalWallClock: WallClock {
  func secondsOfDay() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    var seconds = now.tv_sec
    var local = tm()
    localtime_r(&seconds, &local)
    return Double(local.tm_hour * 3600 + local.tm_min * 60 + local.tm_sec) + Double(now.tv_nsec) / 1e9
  }
}

/// The level (full, quiet, silent): who may sound at the level in force, client ceilings by
/// `hello` name, and the quiet hours that change it; a level change fades out what it no longer allows.
final class Levels {
  private(set) var clients: [String: ClientSettings] = [:]
  private(set) var quietHours: QuietHours? = nil
  private(set) var level = SoundLevel.full
  private(set) var setBy = "start"
  /// The level quiet hours found when they began, and whether they are on.
  private var inQuietHours = false
  private var levelBeforeQuietHours = SoundLevel.full

  private let voices: VoiceTable
  private let groups: Groups
  private let events: EventRouter
  private let wallClock: WallClock
  private let sampleRate: Int
  /// The fade of a voice the level no longer allows.
  static let levelFadeSeconds = 0.05

  init(voices: VoiceTable, groups: Groups, events: EventRouter, wallClock: WallClock, sampleRate: Int) {
    self.voices = voices
    self.groups = groups
    self.events = events
    self.wallClock = wallClock
    self.sampleRate = sampleRate
  }

  /// The config's `[clients.NAME]` and `[quiet-hours]` tables.
  func configure(clients: [String: ClientSettings]?, quietHours: QuietHours?) {
    self.clients = clients ?? [:]
    self.quietHours = quietHours
    checkQuietHours()
  }

  // MARK: - Who may sound

  /// The lowest level at which a cue sounds for `client` (its hello name, if any).
  func lowestLevel(important: Bool, group: String, client: String?) -> SoundLevel {
    if important && (client.flatMap { clients[$0] }?.breaksSilence ?? false) { return .silent }
    if important || groups.settings(group).atQuiet { return .quiet }
    return .full
  }

  /// The level a client's plays are held to: the level in force, or its ceiling when lower.
  func ceiling(for client: String?) -> SoundLevel { client.flatMap { clients[$0] }?.ceiling ?? .full }

  /// The level's rule, the one both a play starting (`silences(lowest:ceiling:)`) and a level
  /// change (`setLevel`, for the voices sounding) ask: a play that may sound down to `lowest`, for
  /// a client held to `ceiling`, is silent at `level` when the lower of the two is below `lowest`.
  static func silences(_ level: SoundLevel, lowest: SoundLevel, ceiling: SoundLevel) -> Bool {
    min(level, ceiling) < lowest
  }

  /// Whether a play that may sound down to `lowest`, for a client held to `ceiling`, is silent at the level in force.
  func silences(lowest: SoundLevel, ceiling: SoundLevel) -> Bool {
    Self.silences(level, lowest: lowest, ceiling: ceiling)
  }

  // MARK: - Changes

  /// `level`: sets the level; what it no longer allows fades out (finished `level`); a `level`
  /// event tells subscribers.
  func setLevel(_ new: SoundLevel, by: String) {
    let previous = level
    setBy = by
    guard new != previous else { return }
    level = new
    let fade = Int(Self.levelFadeSeconds * Double(sampleRate))
    let tooLoud = voices.sounding { Self.silences(new, lowest: $0.lowestLevel, ceiling: $0.ceiling) }
    for id in tooLoud { voices.stop(id, fadeFrames: fade, reason: .level) }
    events.emit(.level(Event.LevelChange(level: new, previous: previous, setBy: by)))
  }

  // MARK: - Quiet hours

  /// Enters or leaves quiet hours when the time of day says so; call at start, on reload and at each boundary.
  func checkQuietHours() {
    guard let hours = quietHours else {
      if inQuietHours {
        inQuietHours = false
        setLevel(levelBeforeQuietHours, by: "quiet-hours")
      }
      return
    }
    let minute = Int(wallClock.secondsOfDay() / 60)
    let inside = hours.contains(minute)
    guard inside != inQuietHours else { return }
    inQuietHours = inside
    if inside {
      levelBeforeQuietHours = level
      setLevel(min(level, hours.level), by: "quiet-hours")
    } else {
      setLevel(levelBeforeQuietHours, by: "quiet-hours")
    }
  }

  /// Seconds until the next quiet-hours boundary (nil: no quiet hours), for the loop's timeout.
  func secondsToNextBoundary() -> Double? {
    guard let hours = quietHours else { return nil }
    let now = wallClock.secondsOfDay()
    func until(_ minute: Int) -> Double {
      let t = Double(minute * 60) - now
      return t > 0 ? t : t + 86400
    }
    return min(until(hours.from), until(hours.to))
  }

  var levelReply: LevelReply {
    LevelReply(level: level, setBy: setBy, quietHours: quietHours?.text, inQuietHours: inQuietHours)
  }
}

extension Levels: OpHandler {
  /// `level`.
  func register(_ routes: inout Routes) {
    routes.on(LevelRequest.self) { [unowned self] request, _ in
      if let level = request.level { setLevel(level, by: "client") }
      return levelReply
    }
  }
}
