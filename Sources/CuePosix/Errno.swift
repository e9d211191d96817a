#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A failed system call: the operation, the errno value, and its text.
///
/// One place turns errno into a typed value (as swift-system's `Errno` and swift-nio's `IOError` do),
/// so every message names what was attempted: "connect(/run/user/1000/cued/cued.sock): No such file or directory".
public struct SystemError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The call and its main argument, e.g. `open(/tmp/x)`.
  public var operation: String
  public var code: Int32

  public init(_ operation: String, code: Int32 = errno) {
    self.operation = operation
    self.code = code
  }

  /// The C library's text for `code` (`strerror`).
  public var reason: String { String(cString: strerror(code)) }
  public var description: String { "\(operation): \(reason)" }
}

/// Calls `body` until it stops failing with EINTR; returns its result or throws the errno it set.
@inline(__always)
public func retryingOnInterrupt<T: BinaryInteger>(_ operation: @autoclosure () -> String, _ body: () -> T) throws(SystemError) -> T {
  while true {
    let result = body()
    if result >= 0 { return result }
    let code = errno
    if code == EINTR { continue }
    throw SystemError(operation(), code: code)
  }
}
