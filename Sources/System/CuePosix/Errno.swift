#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A C library error number as a typed value (swift-system's `Errno`), for results that must not allocate.
public struct Errno: RawRepresentable, Error, Hashable, Sendable, CustomStringConvertible {
  public let rawValue: Int32
  public init(rawValue: Int32) { self.rawValue = rawValue }

  public static let interrupted = Errno(rawValue: EINTR)
  public static let notPermitted = Errno(rawValue: EPERM)
  public static let permissionDenied = Errno(rawValue: EACCES)
  public static let wouldBlock = Errno(rawValue: EAGAIN)
  public static let badFileDescriptor = Errno(rawValue: EBADF)
  public static let noSuchProcess = Errno(rawValue: ESRCH)
  public static let noChild = Errno(rawValue: ECHILD)

  /// The C library's text for the number (`strerror`).
  public var description: String { String(cString: strerror(rawValue)) }
}

/// A failed system call: the operation, the errno value, and its text.
///
/// One place turns errno into a typed value (as swift-system's `Errno` and swift-nio's `IOError` do),
/// so every message names what was attempted: "connect(/run/user/1000/cued/cued.sock): No such file or directory".
public struct SystemError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The call and its main argument, e.g. `open(/tmp/x)`.
  public var operation: String
  public var code: Int32

  public init(_ operation: String, code: Int32 = Glibc.errno) {
    self.operation = operation
    self.code = code
  }

  public init(_ operation: String, _ errno: Errno) {
    self.init(operation, code: errno.rawValue)
  }

  /// The typed error number.
  public var errnoValue: Errno { Errno(rawValue: code) }
  /// The C library's text for `code` (`strerror`).
  public var reason: String { String(cString: strerror(code)) }
  public var description: String { "\(operation): \(reason)" }
}

/// How most system calls read errno (swift-nio's `syscall` helper): EINTR retried, EBADF a trap.
/// A call that fails once and is not retried builds its `SystemError` where it is made.
public enum SystemCall {
  /// Calls `body` (a C call that returns -1 and sets errno on failure) until it stops failing
  /// with EINTR; returns its result, or the errno it failed with.
  ///
  /// EBADF traps, naming `operation`: a descriptor that was never opened or was already closed is a
  /// bug in this program, not an I/O condition such as a client going away, and carrying on would
  /// read or write whatever file later reuses the number.
  ///
  /// Allocation-free unless it traps (`operation` is only evaluated then), so the audio thread may use it.
  @inline(__always)
  public static func retrying<T: BinaryInteger>(
    _ operation: @autoclosure () -> String, _ body: () -> T
  ) -> Result<T, Errno> {
    while true {
      let result = body()
      if result >= 0 { return .success(result) }
      let code = Glibc.errno
      if code == EINTR { continue }
      if code == EBADF { badDescriptor(operation()) }
      return .failure(Errno(rawValue: code))
    }
  }

  /// Traps for a bad descriptor; out of line so the fast path stays small.
  @inline(never)
  public static func badDescriptor(_ operation: String) -> Never {
    preconditionFailure("\(operation): bad file descriptor (used after close, or never opened)")
  }
}

/// Calls `body` until it stops failing with EINTR; returns its result or throws the errno it set
/// (`SystemCall.retrying`, with the error as a `SystemError` naming `operation`).
@inline(__always)
public func retryingOnInterrupt<T: BinaryInteger>(_ operation: @autoclosure () -> String, _ body: () -> T) throws(SystemError) -> T {
  switch SystemCall.retrying(operation(), body) {
  case .success(let value): return value
  case .failure(let code): throw SystemError(operation(), code)
  }
}
