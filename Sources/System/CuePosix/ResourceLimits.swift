import CSystemShims
#if canImport(Glibc)
import Glibc
#endif

/// The process's resource limits.
public enum ResourceLimits {
  /// Raises the soft limit on open files to the hard limit (at most `ceiling`) and returns the
  /// new soft limit. systemd starts services with a soft limit of 1024, which a daemon serving
  /// `--max-clients` 1024 connections (plus its own descriptors) would hit; the hard limit is
  /// the administrator's ceiling, so raising to it is what daemons do.
  @discardableResult
  public static func raiseOpenFileLimit(ceiling: UInt = 1 << 20) -> Int {
    var limit = rlimit()
    guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return -1 }
    let wanted = min(limit.rlim_max, rlim_t(ceiling))
    if limit.rlim_cur < wanted {
      var raised = limit
      raised.rlim_cur = wanted
      if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { return Int(wanted) }
    }
    return Int(limit.rlim_cur)
  }

  /// Caps glibc's malloc arenas. glibc gives each thread that allocates under contention an
  /// arena of its own (up to 8 per core), so short-lived threads leave arenas behind and RSS steps
  /// up for good.
  public static func limitMallocArenas(to count: Int32) {
    _ = cued_limit_malloc_arenas(count)
  }

  /// Caps RLIMIT_RTTIME, the CPU time in microseconds a real-time thread may use without blocking
  /// (past the soft limit the process gets SIGXCPU, past the hard one SIGKILL), at `microseconds`,
  /// soft and hard: RTKit grants real-time only to a process whose limit is set and at most its
  /// RTTimeUSecMax. Limits already at or below it are kept; lowering needs no privilege.
  /// `getrlimit`/`setrlimit(RLIMIT_RTTIME)`.
  public static func capRealtimeCPUTime(microseconds: UInt64) throws(SystemError) {
    // glibc spells it __RLIMIT_RTTIME outside _GNU_SOURCE.
    let resource = Int32(__RLIMIT_RTTIME.rawValue)
    var limit = rlimit()
    guard getrlimit(resource, &limit) == 0 else { throw SystemError("getrlimit(RLIMIT_RTTIME)") }
    let cap = rlim_t(microseconds)
    // RLIM_INFINITY is the largest rlim_t, so an unlimited one is above any cap.
    if limit.rlim_cur <= cap && limit.rlim_max <= cap { return }
    var capped = rlimit(rlim_cur: min(limit.rlim_cur, cap), rlim_max: min(limit.rlim_max, cap))
    guard setrlimit(resource, &capped) == 0 else { throw SystemError("setrlimit(RLIMIT_RTTIME, \(microseconds) µs)") }
  }

  /// The soft limit on open files.
  public static var openFileLimit: Int {
    var limit = rlimit()
    guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return -1 }
    return Int(limit.rlim_cur)
  }
}

/// One descriptor held in reserve (on /dev/null), so that a server out of descriptors (EMFILE)
/// can free it, accept the waiting connection, tell it why and close it, instead of leaving it in
/// the backlog, where it keeps the listener readable and the poll loop spinning.
public struct ReservedDescriptor: ~Copyable {
  private var fd: Int32

  public init() { fd = open("/dev/null", O_RDONLY | O_CLOEXEC) }

  deinit { if fd >= 0 { close(fd) } }

  /// Gives the descriptor back to the system for one use.
  public mutating func release() {
    if fd >= 0 { close(fd) }
    fd = -1
  }

  /// Takes the descriptor again; false while none is free.
  public mutating func restore() -> Bool {
    if fd < 0 { fd = open("/dev/null", O_RDONLY | O_CLOEXEC) }
    return fd >= 0
  }
}
