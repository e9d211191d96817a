import CuePosix
import Logging

/// Writes log lines to standard error, unbuffered, in the form the reader expects.
///
/// Under systemd (`JOURNAL_STREAM` set) each line starts with a syslog priority prefix such as
/// `<4>`, which journald turns into the entry's priority; on a terminal lines read
/// `cued: warning: …`. Metadata follows the message as `key=value`.
public struct StandardErrorLogHandler: LogHandler {
  public var metadata: Logger.Metadata = [:]
  public var logLevel: Logger.Level
  private let journald: Bool
  private let label: String

  public init(label: String, level: Logger.Level, journald: Bool) {
    self.label = label
    self.logLevel = level
    self.journald = journald
  }

  /// True when standard error is connected to the journal (systemd sets JOURNAL_STREAM to its device:inode).
  public static var standardErrorIsJournal: Bool {
    ProcessInfo.environment("JOURNAL_STREAM") != nil
  }

  public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
    get { metadata[key] }
    set { metadata[key] = newValue }
  }

  public func log(event: LogEvent) {
    var all = metadata
    if let extra = event.metadata { all.merge(extra) { $1 } }
    let suffix = all.isEmpty ? "" : " " + all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
    let text: String
    if journald {
      text = "<\(Self.priority(event.level))>\(event.message)\(suffix)\n"
    } else {
      text = "\(label): \(Self.word(event.level))\(event.message)\(suffix)\n"
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
