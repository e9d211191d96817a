import CuePosix
import CueProtocol
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

struct Options {
  var socket: String? = nil
  var pid: Int32? = nil
  var plays = 100_000
  var cycles = 10_000
  var clients = 4
  var playerSessions: Int? = nil
  var soundSessions: Int? = nil
  var warmup = 0.1
  var budget: Int? = nil
  var rssLimitKiB = 1024
  var drainTimeout = 30.0
  var seed: UInt64 = 1
  var json = false
  var quick = false
  var progressSeconds = 5.0

  static let usage = """
    usage: cued-soak [options]

      --socket PATH        the daemon's socket (default: $CUED_SOCKET, else the usual path)
      --pid PID            the daemon's pid, for /proc/PID (default: the pid `status` reports)
      --plays N            one-shot plays (default 100000)
      --cycles N           connect/disconnect cycles (default 10000)
      --clients K          client threads, each with its own connection (default 4)
      --quick              the short mode for CI: 5000 plays, 500 cycles (later options still apply)
      --players N          player sessions (default: plays / 100)
      --sounds N           system sound sessions, 2-4 plays each (default: plays / 100)
      --warmup F           the share of the work done before the baseline (default 0.1; at least
                           2000 plays, 200 cycles, 30 player and 30 sound sessions, at most half)
      --max-in-flight N    voices the soak keeps sounding at most (default: 3/4 of the voice limit, less K)
      --rss-limit KIB      the RSS growth allowed after warm-up (default 1024)
      --drain-timeout S    how long to wait for voices to end at the end (default 30)
      --seed N             the random seed (default 1)
      --progress S         seconds between progress lines on stderr, 0 for none (default 5)
      --json               print a JSON summary on stdout (the human summary goes to stderr)

    """

  static let valued: Set<String> = [
    "--socket", "--pid", "--plays", "--cycles", "--clients", "--players", "--sounds", "--warmup", "--max-in-flight",
    "--rss-limit", "--drain-timeout", "--seed", "--progress",
  ]

  static func parse(_ arguments: [String]) -> Result<Options, UsageError> {
    var options = Options()
    var i = 0
    func value() -> String? {
      i += 1
      return i < arguments.count ? arguments[i] : nil
    }
    while i < arguments.count {
      let name = arguments[i]
      switch name {
      case "--help", "-h": return .failure(UsageError(""))
      case "--json": options.json = true
      case "--quick":
        options.quick = true
        options.plays = 5_000
        options.cycles = 500
      default:
        guard valued.contains(name) else { return .failure(UsageError("unknown option \(name)")) }
        guard let text = value() else { return .failure(UsageError("\(name) needs a value")) }
        switch name {
        case "--socket": options.socket = text
        case "--pid":
          guard let n = Int32(text), n > 0 else { return .failure(UsageError("--pid: not a process id: \(text)")) }
          options.pid = n
        case "--plays", "--cycles", "--clients", "--players", "--sounds", "--max-in-flight", "--rss-limit":
          guard let n = Int(text), n >= 0 else { return .failure(UsageError("\(name): not a count: \(text)")) }
          switch name {
          case "--plays": options.plays = n
          case "--cycles": options.cycles = n
          case "--clients": options.clients = max(1, n)
          case "--players": options.playerSessions = n
          case "--sounds": options.soundSessions = n
          case "--max-in-flight": options.budget = max(1, n)
          default: options.rssLimitKiB = n
          }
        case "--warmup", "--drain-timeout", "--progress":
          guard let x = Double(text), x >= 0 else { return .failure(UsageError("\(name): not a number: \(text)")) }
          switch name {
          case "--warmup": options.warmup = min(x, 0.9)
          case "--drain-timeout": options.drainTimeout = x
          default: options.progressSeconds = x
          }
        case "--seed":
          guard let n = UInt64(text) else { return .failure(UsageError("--seed: not a number: \(text)")) }
          options.seed = n
        default:
          return .failure(UsageError("unknown option \(name)"))
        }
      }
      i += 1
    }
    return .success(options)
  }
}
