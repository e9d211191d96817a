/// Where cued's socket lives when nobody says otherwise; shared by the daemon and its clients.
public enum DefaultPaths {
  /// `--socket` wins, then `CUED_SOCKET`, then `$XDG_RUNTIME_DIR/cued/cued.sock`, then `/tmp/cued-UID/cued.sock`.
  public static func socket(explicit: String? = nil) -> String {
    if let explicit, !explicit.isEmpty { return explicit }
    if let fromEnvironment = ProcessInfo.environment("CUED_SOCKET"), !fromEnvironment.isEmpty { return fromEnvironment }
    if let runtime = ProcessInfo.environment("XDG_RUNTIME_DIR"), runtime.hasPrefix("/") {
      return runtime + "/cued/cued.sock"
    }
    return "/tmp/cued-\(ProcessInfo.userID)/cued.sock"
  }

  /// The directory part of a path ("." when there is none).
  public static func directory(of path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "." }
    if slash == path.startIndex { return "/" }
    return String(path[..<slash])
  }
}
