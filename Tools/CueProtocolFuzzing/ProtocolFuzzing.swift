import CueProtocol

/// The daemon's request path as one function of arbitrary bytes, with the invariants it must keep.
///
/// `cued-fuzz` (Tools/cued-fuzz) runs it under libFuzzer (`scripts/fuzz.sh`, `make fuzz`), and
/// `FuzzCorpusTests` replays every file of `Fuzz/corpus/` through it, so each input the fuzzer kept is
/// a regression test. It does with the input what `Daemon.serve` and `Daemon.handle(line:)` do with a
/// client's bytes:
///
/// 1. Frames it with a `LineFramer` of the daemon's limit (64 KiB) twice, draining `next()` after every
///    append as the daemon does: once as a single append, once in chunks whose lengths come from the
///    input (a chunk is 1 + (its first byte mod 64) bytes), so lines split anywhere, a "\r" apart from
///    its "\n" and an oversize line reported before its end are all reached.
/// 2. Skips blank lines (empty, or spaces and tabs only) and decodes every other line with
///    `RequestDecoder.decodeLine`, the daemon's entry point.
/// 3. Writes every error reply (a failed line, a `line-too-long`) as a `ReplyEnvelope` line, and a
///    success reply with the id (and an empty body) of every request and carousel message.
///
/// The invariants (a broken one is a `Violation`):
/// - both feeds give the same lines and the same oversize reports (a chunked report may come earlier,
///   so its count may be smaller, but it is above the limit); after draining, at most
///   `maxLineBytes + 1` bytes stay buffered;
/// - every line that is valid JSON survives `JSONWriter` then `JSONParser` as an equal value, and
///   writing that value again gives the same bytes;
/// - a reply line is valid JSON ending in its only "\n", with no raw CR, LF, U+2028 or U+2029, and the
///   client's `ServerMessage.parse` reads back the same id and the same error;
/// - a decoded request, written as a client writes it (`Request.json(id:)`), decodes to the same
///   request; likewise a carousel message (`CarouselMessage.json`).
///
/// Crashes, traps and hangs are for the caller to notice (libFuzzer does).
public enum ProtocolFuzzing {
  /// A broken invariant: what broke, and the start of the line involved.
  public struct Violation: Error, Sendable, CustomStringConvertible {
    public var description: String
  }

  /// What one input held, for the corpus replayer's summary.
  public struct Outcome: Sendable, Equatable {
    /// Complete lines that were not blank (each was decoded).
    public var lines = 0
    /// Lines that decoded to a request.
    public var requests = 0
    /// Lines that decoded to a carousel message.
    public var carouselMessages = 0
    /// Error replies written: lines refused, and oversize lines.
    public var errorReplies = 0
    /// Lines over the limit (each gets a `line-too-long` reply).
    public var oversizeLines = 0

    public init() {}

    public static func += (total: inout Outcome, next: Outcome) {
      total.lines += next.lines
      total.requests += next.requests
      total.carouselMessages += next.carouselMessages
      total.errorReplies += next.errorReplies
      total.oversizeLines += next.oversizeLines
    }
  }

  /// The daemon's line limit (`Daemon.acceptClients`).
  public static let maxLineBytes = 64 * 1024

  /// Runs `input` through the request path; traps on a broken invariant (for libFuzzer).
  public static func run(_ input: UnsafeRawBufferPointer) {
    do {
      try check(input)
    } catch {
      fatalError("ProtocolFuzzing: \(error)")
    }
  }

  /// Runs `input` through the request path and checks the invariants.
  @discardableResult
  public static func check(_ input: some Collection<UInt8>) throws(Violation) -> Outcome {
    let bytes = Array(input)
    let wholeFrames = try frames(of: bytes, chunked: false)
    try compare(wholeFrames, try frames(of: bytes, chunked: true))

    var outcome = Outcome()
    for frame in wholeFrames {
      switch frame {
      case .line(let line):
        if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { continue }  // the daemon ignores blank lines
        outcome.lines += 1
        try checkRoundTrip(line)
        switch RequestDecoder.decodeLine(line) {
        case .failure(let failure):
          outcome.errorReplies += 1
          try checkReply(.failure(id: failure.id, failure.error), for: line)
        case .success(.request(let envelope)):
          outcome.requests += 1
          try checkReply(.success(id: envelope.id, emptyBody), for: line)
          let written = envelope.request.line(id: envelope.id).dropLast()
          guard case .success(.request(let again)) = RequestDecoder.decodeLine(written), again == envelope else {
            throw violation("the request, written as a client writes it, decodes differently", line)
          }
        case .success(.carousel(let message)):
          outcome.carouselMessages += 1
          if let id = message.id { try checkReply(.success(id: id, emptyBody), for: line) }
          let written = message.line.dropLast()
          guard case .success(.carousel(let again)) = RequestDecoder.decodeLine(written), again == message else {
            throw violation("the carousel message, written again, decodes differently", line)
          }
        }
      case .oversize(let count):
        outcome.oversizeLines += 1
        outcome.errorReplies += 1
        guard count > maxLineBytes else { throw violation("an oversize report of \(count) bytes", []) }
        // The daemon's reply, as `Daemon.serve` writes it.
        let error = ProtocolError(
          .lineTooLong, "a request line of \(count)+ bytes was discarded; the limit is 65536 bytes per line")
        try checkReply(.failure(id: nil, error), for: [])
      }
    }
    return outcome
  }

  // MARK: - Framing

  /// Frames `bytes` in one append or in input-chosen chunks, draining after each append.
  private static func frames(of bytes: [UInt8], chunked: Bool) throws(Violation) -> [LineFramer.Frame] {
    var framer = LineFramer(maxLineBytes: maxLineBytes)
    var frames: [LineFramer.Frame] = []
    var position = 0
    while position < bytes.count {
      let length = chunked ? min(1 + Int(bytes[position] % 64), bytes.count - position) : bytes.count
      framer.append(bytes[position..<(position + length)])
      position += length
      while let frame = framer.next() { frames.append(frame) }
      guard framer.pendingByteCount <= maxLineBytes + 1, !framer.isDiscarding || framer.pendingByteCount == 0 else {
        throw violation(
          "the framer holds \(framer.pendingByteCount) bytes after draining (discarding: \(framer.isDiscarding))", [])
      }
    }
    return frames
  }

  /// The single-append frames against the chunked ones: the same lines, the same oversize reports.
  private static func compare(_ whole: [LineFramer.Frame], _ chunked: [LineFramer.Frame]) throws(Violation) {
    guard whole.count == chunked.count else {
      throw violation("one append gave \(whole.count) frames, chunks gave \(chunked.count)", [])
    }
    for (a, b) in zip(whole, chunked) {
      switch (a, b) {
      case (.line(let x), .line(let y)) where x == y:
        continue
      case (.oversize(let x), .oversize(let y)) where y <= x && y > maxLineBytes:
        continue
      default:
        throw violation("one append and chunks framed differently: \(describe(a)) against \(describe(b))", [])
      }
    }
  }

  private static func describe(_ frame: LineFramer.Frame) -> String {
    switch frame {
    case .line(let bytes): "a line of \(bytes.count) bytes"
    case .oversize(let count): "oversize(\(count))"
    }
  }

  // MARK: - JSON and replies

  /// A line that parses must survive the writer: parse(write(v)) == v, and write is stable.
  private static func checkRoundTrip(_ line: [UInt8]) throws(Violation) {
    guard let value = try? JSONParser.parse(line) else { return }
    var written: [UInt8] = []
    JSONWriter.write(value, into: &written)
    try checkNoRawLineBreak(written, line)
    let again: JSONValue
    do {
      again = try JSONParser.parse(written)
    } catch {
      throw violation("the writer's output does not parse (\(error.message))", line)
    }
    guard again == value else { throw violation("write then parse changed the value", line) }
    var rewritten: [UInt8] = []
    JSONWriter.write(again, into: &rewritten)
    guard rewritten == written else { throw violation("writing the value twice gave different bytes", line) }
  }

  /// The success body the checks write: only the id and the outcome are read back.
  private static let emptyBody = ReplyBody(EmptyReply())

  /// A reply must be one well-formed wire line that a client reads back with the same id and error.
  private static func checkReply(_ envelope: ReplyEnvelope, for line: [UInt8]) throws(Violation) {
    let reply = envelope.json
    let wire = envelope.line
    guard wire.last == 0x0A else { throw violation("a reply line does not end in \"\\n\"", line) }
    let body = wire.dropLast()
    try checkNoRawLineBreak(body, line)
    let parsed: JSONValue
    do {
      parsed = try JSONParser.parse(body)
    } catch {
      throw violation("a reply line does not parse (\(error.message))", line)
    }
    guard parsed == reply else { throw violation("a reply line parses to another value", line) }
    let message: ServerMessage
    do {
      message = try ServerMessage.parse(body)
    } catch {
      throw violation("a client cannot read the reply (\(error))", line)
    }
    guard case .reply(let readID, let result) = message, readID == envelope.id else {
      throw violation("a client reads another id from the reply", line)
    }
    switch (result, envelope.result) {
    case (.failure(let readError), .failure(let error)) where readError == error: break
    case (.success, .success): break
    default: throw violation("a client reads another outcome from the reply", line)
    }
  }

  /// The wire rule: no raw CR or LF, and no raw U+2028 or U+2029 (E2 80 A8/A9).
  private static func checkNoRawLineBreak(_ text: some Collection<UInt8>, _ line: [UInt8]) throws(Violation) {
    var previous: (UInt8, UInt8) = (0, 0)
    for byte in text {
      if byte == 0x0A || byte == 0x0D || (previous == (0xE2, 0x80) && (byte == 0xA8 || byte == 0xA9)) {
        throw violation("written JSON holds a raw line break", line)
      }
      previous = (previous.1, byte)
    }
  }

  private static func violation(_ what: String, _ line: [UInt8]) -> Violation {
    guard !line.isEmpty else { return Violation(description: what) }
    let shown = String(decoding: line.prefix(200), as: UTF8.self)
    return Violation(description: "\(what); line (\(line.count) bytes): \(shown)\(line.count > 200 ? "…" : "")")
  }
}
