import CuePosix
import Logging
import Synchronization

/// Writes log lines to standard error, unbuffered, in the form the reader expects.
///
/// Under systemd (`JOURNAL_STREAM` set) each line starts with a syslog priority prefix such as
/// `<4>`, which journald turns into the entry's priority; on a terminal lines read
/// `cued: warning: …`. Metadata follows the message as `key=value`.
///
/// Every copy of a logger made from one handler shares its level, so a reload that changes
/// `log-level` through any owner's logger changes it for all of them.
public struct StandardErrorLogHandler: LogHandler {
  public var metadata: Logger.Metadata = [:]
  private let level: SharedLevel
  private let journald: Bool
  private let label: String

  public init(label: String, level: Logger.Level, journald: Bool) {
    self.label = label
    self.level = SharedLevel(level)
    self.journald = journald
  }

  public var logLevel: Logger.Level {
    get { level.value }
    nonmutating set { level.value = newValue }
  }

  /// A level that every copy of the handler reads.
  private final class SharedLevel: Sendable {
    private let raw: Atomic<Int>
    init(_ level: Logger.Level) { raw = Atomic(Logger.Level.allCases.firstIndex(of: level) ?? 0) }
    var value: Logger.Level {
      get { Logger.Level.allCases[raw.load(ordering: .relaxed)] }
      set { raw.store(Logger.Level.allCases.firstIndex(of: newValue) ?? 0, ordering: .relaxed) }
    }
  }

  /// True when standard error is connected to the journal: systemd sets JOURNAL_STREAM to the
  /// `device:inode` of the stream it connected, and systemd.exec(5) says to compare it with standard
  /// error's own, since the variable is inherited by everything the service starts (a `cued` run from a
  /// shell inside a unit, a terminal opened from one) whose standard error is elsewhere.
  public static var standardErrorIsJournal: Bool {
    guard let stream = ProcessInfo.environment("JOURNAL_STREAM") else { return false }
    return journalStream(stream, names: Files.deviceAndInode(of: .standardError))
  }

  /// Whether a JOURNAL_STREAM value (`device:inode`, both decimal) names the file `stderr` is.
  static func journalStream(_ value: String, names stderr: (device: UInt64, inode: UInt64)?) -> Bool {
    let parts = value.split(separator: ":", omittingEmptySubsequences: false)
    guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]), let stderr else { return false }
    return stderr.device == device && stderr.inode == inode
  }

  public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
    get { metadata[key] }
    set { metadata[key] = newValue }
  }

  public func log(event: LogEvent) {
    var all = metadata
    if let extra = event.metadata { all.merge(extra) { $1 } }
    let suffix =
      all.isEmpty ? "" : " " + all.sorted { $0.key < $1.key }.map { "\($0.key.controlCharactersEscaped)=\("\($0.value)".controlCharactersEscaped)" }.joined(separator: " ")
    let message = "\(event.message)".controlCharactersEscaped
    let text: String
    if journald {
      text = "<\(Self.priority(event.level))>\(message)\(suffix)\n"
    } else {
      text = "\(label): \(Self.word(event.level))\(message)\(suffix)\n"
    }
    writeToStandardError(text)
  }


  /// syslog priorities: journald reads them from the `<N>` prefix.
  static func priority(_ level: Logger.Level) -> Int {
    switch level {
    case .trace, .debug: 7
    case .info: 6
    case .notice: 5
    case .warning: 4
    case .error: 3
    case .critical: 2
    }
  }

  static func word(_ level: Logger.Level) -> String {
    switch level {
    case .trace: "trace: "
    case .debug: "debug: "
    case .info, .notice: ""
    case .warning: "warning: "
    case .error: "error: "
    case .critical: "critical: "
    }
  }
}
