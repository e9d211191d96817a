/// Splits a byte stream into lines terminated by "\n" (an optional preceding "\r" is dropped), enforcing a maximum line length. Pure: touches no file descriptor.
///
/// Usage: after each read, `append` the bytes, then call `next()` until it returns nil.
///
/// Line length is the length without the terminator ("\n" or "\r\n"): a line of exactly
/// `maxLineBytes` is accepted, one byte more is oversize.
///
/// Oversize lines are reported exactly once, as `.oversize(byteCount:)`, at the earliest moment
/// `next()` can tell:
/// - if the line's "\n" is already buffered when `next()` reaches it, the whole line is dropped and
///   `byteCount` is its exact length;
/// - otherwise, as soon as the buffered partial line is certain to exceed the limit, `next()` reports it
///   with `byteCount` = the bytes received so far, not counting a trailing "\r" (a lower bound of its final
///   length, always > `maxLineBytes`), drops the buffer and enters the discarding state (`isDiscarding`):
///   later appends are dropped up to and including the next "\n" without another frame, and the bytes
///   after that "\n" frame normally.
///
/// A line that never terminates therefore occupies at most `maxLineBytes + 1` bytes plus one `append`'s
/// worth, provided `next()` is drained after every `append`.
public struct LineFramer: Sendable {
  /// One unit produced by the framer.
  public enum Frame: Equatable, Sendable {
    /// One complete line, without the terminator. Empty lines are returned as `.line([])`.
    case line([UInt8])
    /// A line longer than `maxLineBytes` was discarded up to and including its "\n"; byteCount = its length
    /// (its exact length, or the bytes received so far when it was reported before its "\n" arrived).
    case oversize(byteCount: Int)
  }

  /// The longest accepted line, in bytes, without its terminator.
  public let maxLineBytes: Int

  /// Received bytes; `buffer[start...]` is not yet framed.
  private var buffer: [UInt8] = []
  /// Start of the first unframed line in `buffer`.
  private var start = 0
  /// `buffer[start..<scanOffset]` is known to hold no "\n" (so a long line is scanned only once).
  private var scanOffset = 0
  /// Whether the rest of an already reported oversize line is being dropped.
  private var discarding = false

  private static let lineFeed: UInt8 = 0x0A
  private static let carriageReturn: UInt8 = 0x0D

  /// Creates a framer accepting lines of up to `maxLineBytes` bytes (terminator excluded).
  public init(maxLineBytes: Int = 65536) {
    precondition(maxLineBytes >= 0, "maxLineBytes must not be negative")
    self.maxLineBytes = maxLineBytes
  }

  /// Bytes buffered for an incomplete line (for limits/diagnostics).
  ///
  /// Counts everything received and not yet returned by `next()`, which can include complete lines
  /// until `next()` has returned them.
  public var pendingByteCount: Int {
    buffer.count - start
  }

  /// True while discarding the rest of an oversize line whose "\n" has not arrived yet.
  public var isDiscarding: Bool {
    discarding
  }

  /// Appends received bytes.
  public mutating func append(_ bytes: some Collection<UInt8>) {
    if discarding {
      // The buffer is empty while discarding: drop up to and including the next "\n".
      guard let newline = bytes.firstIndex(of: LineFramer.lineFeed) else { return }
      discarding = false
      compact()
      buffer.append(contentsOf: bytes[bytes.index(after: newline)...])
      return
    }
    compact()
    buffer.append(contentsOf: bytes)
  }

  /// Returns the next complete frame, or nil when more bytes are needed.
  public mutating func next() -> Frame? {
    if discarding { return nil }
    let newline: Int? = buffer.withUnsafeBufferPointer { bytes in
      var position = scanOffset
      while position < bytes.count {
        if bytes[position] == LineFramer.lineFeed { return position }
        position += 1
      }
      return nil
    }

    if let newline {
      var lineEnd = newline
      if lineEnd > start && buffer[lineEnd - 1] == LineFramer.carriageReturn {
        lineEnd -= 1
      }
      let length = lineEnd - start
      let frame: Frame = length > maxLineBytes ? .oversize(byteCount: length) : .line(Array(buffer[start..<lineEnd]))
      start = newline + 1
      scanOffset = start
      return frame
    }

    scanOffset = buffer.count
    // The partial line is certainly oversize once it has more than maxLineBytes bytes, unless
    // its last byte is a "\r" that a following "\n" would turn into the terminator.
    let pending = buffer.count - start
    if pending > maxLineBytes && (pending - 1 > maxLineBytes || buffer[buffer.count - 1] != LineFramer.carriageReturn) {
      // A trailing "\r" may yet be part of the terminator, so it is not counted.
      let seen = buffer[buffer.count - 1] == LineFramer.carriageReturn ? pending - 1 : pending
      discarding = true
      buffer.removeAll(keepingCapacity: keepsCapacity)
      start = 0
      scanOffset = 0
      return .oversize(byteCount: seen)
    }
    return nil
  }

  /// Whether emptying the buffer should keep its storage (not after one huge read).
  private var keepsCapacity: Bool {
    (buffer.capacity - 4096) / 2 <= maxLineBytes
  }

  /// Drops consumed bytes from the front of the buffer once they are at least half of it
  /// (amortised O(1) per byte; never on every line).
  private mutating func compact() {
    guard start > 0 else { return }
    if start == buffer.count {
      buffer.removeAll(keepingCapacity: keepsCapacity)
    } else if start >= buffer.count / 2 {
      buffer.removeSubrange(0..<start)
    } else {
      return
    }
    scanOffset -= start
    start = 0
  }
}
