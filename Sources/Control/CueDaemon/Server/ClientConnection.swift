import CueProtocol
import CuePosix

/// A connection's byte stream: a socket in the daemon, memory in the in-process tests.
///
/// Nonblocking: `read` and `write` transfer what they can now and say when nothing could move.
protocol ClientTransport {
  func read(into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> FileDescriptor.IOResult
  func write(_ buffer: UnsafeRawBufferPointer) throws(SystemError) -> FileDescriptor.IOResult
  func close()
  /// The descriptor the control loop polls; nil for a transport that is not a descriptor.
  var pollDescriptor: FileDescriptor? { get }
}

extension FileDescriptor: ClientTransport {
  func write(_ buffer: UnsafeRawBufferPointer) throws(SystemError) -> IOResult { try write(buffer, isSocket: true) }
  var pollDescriptor: FileDescriptor? { self }
}

/// One connected client, as the control loop sees it: bytes in, lines out, never blocking.
final class ClientConnection {
  /// Serial number, never reused: voices refer to their owner by it.
  let serial: UInt64
  let transport: any ClientTransport
  var framer: LineFramer
  private var output: [UInt8] = []
  private var outputOffset = 0
  /// Set when the connection broke (a write failed); the loop removes the client.
  var isClosed = false
  /// Set when the peer shut down its sending side (read returned 0). It may still be reading:
  /// replies and promised events are still sent, then the loop closes the connection.
  var peerFinishedSending = false
  /// Events not sent because the client was not reading (its queue was full), in all.
  var droppedEvents = 0
  /// Events dropped since the last `events-dropped` notice went out.
  private var unreportedDrops = 0
  /// When the last bytes arrived (monotonic ns): a carousel message's arrival, for its deadline.
  var lastReceived: UInt64 = 0
  /// The events this connection asked for with `subscribe` (nil: none).
  var subscription: EventFilter? = nil
  /// The name its `hello` gave (`[clients.NAME]` in the config), if any.
  var name: String? = nil
  /// False for a peer of another user let in by `--allow-group`: the files it names by path must be
  /// inside the sound directories. cued's own user may name any file it could read itself.
  var isOwnUser = true

  /// While more than this much output waits, the client's requests are not read (backpressure).
  let readPauseBytes: Int
  /// Past this, events for the client are dropped instead of queued (`--max-client-queue`).
  let eventDropBytes: Int

  init(serial: UInt64, transport: any ClientTransport, queueBytes: Int) {
    self.serial = serial
    self.transport = transport
    framer = LineFramer(maxLineBytes: LineFramer.protocolLineLimit)
    eventDropBytes = queueBytes
    readPauseBytes = queueBytes / 4
  }

  var pendingOutputBytes: Int { output.count - outputOffset }
  var wantsToRead: Bool { !isClosed && !peerFinishedSending && pendingOutputBytes < readPauseBytes }
  var wantsToWrite: Bool { !isClosed && pendingOutputBytes > 0 }

  /// Queues a reply and tries to send it now.
  func send(_ reply: ReplyEnvelope) {
    send(line: reply.line)
  }

  /// Queues one encoded line (its newline included) and tries to send it now.
  private func send(line: [UInt8]) {
    guard !isClosed else { return }
    trace(UInt8(ascii: "<"), line)
    output.append(contentsOf: line)
    flush()
  }

  /// `CUED_PROTOCOL_LOG=FILE`: every line a client sent and every reply and event line sent to a
  /// client is also appended to FILE, as `SERIAL > LINE` (from connection SERIAL) or
  /// `SERIAL < LINE` (to it). For the end-to-end tests, which validate each line the daemon sent
  /// against docs/protocol.schema.json, a reply against its own request's op
  /// (Tests/Protocol/schema_check.py); not a setting (a trace of every client's traffic is no log
  /// for a running service).
  static let protocolTrace: AppendFile? = ProcessInfo.environment("CUED_PROTOCOL_LOG").flatMap { AppendFile(path: $0) }

  /// Traces a line the client sent (its newline not included), when `CUED_PROTOCOL_LOG` is set.
  func traceReceived(_ line: [UInt8]) {
    guard Self.protocolTrace != nil else { return }
    trace(UInt8(ascii: ">"), line + [UInt8(ascii: "\n")])
  }

  private func trace(_ direction: UInt8, _ line: [UInt8]) {
    guard let file = Self.protocolTrace else { return }
    file.append(Array("\(serial) ".utf8) + [direction, UInt8(ascii: " ")] + line)
  }

  /// Queues an event unless the client has stopped reading; returns false when it was dropped.
  ///
  /// A subscriber that stops reading costs a bounded queue: past `eventDropBytes` of unread output
  /// events are counted instead of queued, and once it has read half of that, one
  /// `events-dropped` event with the count goes out before the next event.
  @discardableResult
  func sendEvent(_ line: [UInt8]) -> Bool {
    guard !isClosed else { return false }
    if pendingOutputBytes > eventDropBytes {
      droppedEvents += 1
      unreportedDrops += 1
      return false
    }
    reportDrops()
    send(line: line)
    return true
  }

  /// Sends the `events-dropped` notice once there is room again.
  func reportDrops() {
    guard unreportedDrops > 0, !isClosed, pendingOutputBytes <= eventDropBytes / 2 else { return }
    let count = unreportedDrops
    unreportedDrops = 0
    send(line: Event.eventsDropped(Event.EventsDropped(count: count)).line)
  }

  /// Writes as much queued output as the socket takes.
  func flush() {
    while outputOffset < output.count && !isClosed {
      let result: FileDescriptor.IOResult
      do {
        result = try output.withUnsafeBytes { raw in
          try transport.write(UnsafeRawBufferPointer(rebasing: raw[outputOffset...]))
        }
      } catch {
        isClosed = true
        return
      }
      switch result {
      case .bytes(let n): outputOffset += n
      case .wouldBlock: compact(); return
      case .endOfFile: isClosed = true
      }
    }
    if outputOffset == output.count {
      output.removeAll(keepingCapacity: output.count <= 64 * 1024)
      outputOffset = 0
    }
    if unreportedDrops > 0 && pendingOutputBytes <= eventDropBytes / 2 { reportDrops() }
  }

  private func compact() {
    if outputOffset > 64 * 1024 && outputOffset * 2 > output.count {
      output.removeSubrange(0..<outputOffset)
      outputOffset = 0
    }
  }

  /// Reads what is available into the framer. Returns true when bytes arrived.
  func receive(into scratch: inout [UInt8], now: UInt64) -> Bool {
    let result: FileDescriptor.IOResult
    do {
      result = try scratch.withUnsafeMutableBytes { try transport.read(into: $0) }
    } catch {
      isClosed = true
      return false
    }
    switch result {
    case .bytes(let n):
      lastReceived = now
      framer.append(scratch[0..<n])
      return true
    case .wouldBlock:
      return false
    case .endOfFile:
      peerFinishedSending = true
      return false
    }
  }
}
