/// What `play` asks for, and the rules of its names and paths (declared once: the field
/// declarations, the schema and the libcanberra driver's header take them from here).

/// What `play` asks for.
public struct PlayParameters: Sendable, Equatable {
  /// The cue to play; empty when `event` or `file` names what to play instead.
  public var cue: String
  /// A freedesktop sound-theme event name (`message-new-instant`), as libcanberra's `event.id`.
  public var event: String?
  /// A sound file's absolute path, as libcanberra's `media.filename`.
  public var file: String?
  /// Linear, 0...1.
  public var volume: Double
  /// -1 (left) ... 1 (right).
  public var pan: Double
  /// AVAudioPlayer's numberOfLoops: 0 once, n → n+1 times, negative → until stopped.
  public var loops: Int
  /// Send a `finished` event for this voice on this connection.
  public var notify: Bool
  /// What the sound is for, as libcanberra's and PulseAudio's `media.role` (`event`, `a11y`,
  /// `phone`): the group whose `roles` list it plays it, when its sound has no group of its own.
  public var role: String? = nil

  public init(cue: String, volume: Double = 1, pan: Double = 0, loops: Int = 0, notify: Bool = false) {
    self.cue = cue
    self.event = nil
    self.file = nil
    self.volume = volume
    self.pan = pan
    self.loops = loops
    self.notify = notify
  }

  /// A play of the sound-theme event `event` (`cue` stays empty).
  public init(event: String, volume: Double = 1, pan: Double = 0, loops: Int = 0, notify: Bool = false) {
    self.init(cue: "", volume: volume, pan: pan, loops: loops, notify: notify)
    self.event = event
  }

  /// A play of the sound file at `file`, an absolute path (`cue` stays empty).
  public init(file: String, volume: Double = 1, pan: Double = 0, loops: Int = 0, notify: Bool = false) {
    self.init(cue: "", volume: volume, pan: pan, loops: loops, notify: notify)
    self.file = file
  }

  /// The longest `file` accepted, in bytes (Linux's PATH_MAX less its NUL).
  public static let maximumPathBytes = 4095

  /// Whether `path` can be a `file` to play: absolute, at most `maximumPathBytes` bytes, no NUL (which
  /// would end it early for the system).
  public static func isFilePath(_ path: String) -> Bool {
    path.utf8.first == 0x2f && path.utf8.count <= maximumPathBytes && !path.utf8.contains(0)
  }

  /// The largest finite loop count accepted.
  public static let maximumLoops = 1_000_000

  /// The longest `role` accepted, in bytes.
  public static let maximumRoleBytes = 64

  /// Whether `name` can be a `role` (and a `[groups.NAME] roles` entry): 1 to `maximumRoleBytes`
  /// bytes of letters, digits, `-`, `_` and `.`.
  public static func isRoleName(_ name: String) -> Bool {
    (1...maximumRoleBytes).contains(name.utf8.count) && name.utf8.allSatisfy(isNameByte)
  }

  /// The marks a role or event name may hold besides ASCII letters and digits (the libcanberra
  /// driver's generated header, cued-protocol.h, carries them too).
  public static let nameMarks = "-_."

  /// A letter, digit, `-`, `_` or `.` (ASCII).
  static func isNameByte(_ byte: UInt8) -> Bool {
    (0x61...0x7a).contains(byte) || (0x41...0x5a).contains(byte) || (0x30...0x39).contains(byte) || nameMarks.utf8.contains(byte)
  }

  /// Whether `name` can be a sound-theme event name: 1 to 128 bytes of letters, digits, `-`, `_`
  /// and `.`, not starting with a dot (the Sound Naming Specification's names are lowercase words
  /// joined by dashes; a slash could lead out of the theme).
  public static func isEventName(_ name: String) -> Bool {
    guard (1...128).contains(name.utf8.count), name.first != "." else { return false }
    return name.utf8.allSatisfy(isNameByte)
  }

  /// An `event` is a sound-theme name (`play` and `prepare` take them alike).
  static let eventRule = StringRule(
    pattern: "^[A-Za-z0-9_-][A-Za-z0-9._-]*$", minLength: 1, maxLength: 128,
    range:
      "a sound-theme event name: letters, digits, `-`, `_`, `.`, not starting with `.` (no name of the Sound Naming Specification does; `.bell` is `invalid-request`), at most 128 bytes",
    admits: isEventName,
    message:
      "\"event\" must be a sound-theme name of letters, digits, '-', '_' and '.', not starting with '.' (at most 128 bytes), like bell or message-new-instant"
  )

  /// A `file` is an absolute path (`play` and `prepare` take them alike).
  static let fileRule = StringRule(
    pattern: "^/", minLength: 1, maxLength: maximumPathBytes, range: "an absolute path (starting with `/`), at most \(maximumPathBytes) bytes",
    admits: isFilePath,
    message:
      "\"file\" must be an absolute path (starting with /, at most \(maximumPathBytes) bytes, no NUL), like /usr/share/sounds/alsa/Front_Center.wav; give the whole path, not one relative to a directory"
  )

  /// A `role` is a media role's name.
  static let roleRule = StringRule(
    pattern: "^[A-Za-z0-9._-]+$", minLength: 1, maxLength: maximumRoleBytes,
    range: "letters, digits, `-`, `_`, `.`, 1 to \(maximumRoleBytes) bytes", admits: isRoleName,
    message:
      "\"role\" must be a media role of letters, digits, '-', '_' and '.' (1 to \(maximumRoleBytes) bytes), like event, a11y or phone (libcanberra's media.role)"
  )
}

/// What `stop` stops.
public enum StopTarget: Sendable, Equatable {
  case voice(UInt64)
  case cue(String)
  case all
}
