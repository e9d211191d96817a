/// The program a multi-call `cued` runs: the one its name (argv[0]'s last path component) says,
/// and the daemon under any other name.
public enum Program: Equatable, Sendable {
  case daemon, cuectl, carousel

  public init(invokedAs argument0: String) {
    let name = argument0.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? argument0
    switch name {
    case "cuectl": self = .cuectl
    case "cued-carousel": self = .carousel
    default: self = .daemon
    }
  }
}
