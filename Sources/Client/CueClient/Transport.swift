import CuePosix
import CueProtocol
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What the reader thread hands to the client, in the order it was read.
enum Inbound: Sendable {
  /// One reply or event line from the daemon.
  case message(ServerMessage)
  /// The connection ended: end-of-file, a read error, or a line this client cannot use.
  case closed(ClientError)
}

/// One socket connection to cued and the thread that reads it.
///
/// The reader thread does a blocking `read(2)` on the socket, frames lines with `LineFramer`,
/// parses them with `ServerMessage.parse` and yields them, in order, into `messages`. When the
/// daemon closes the connection (or `shutdown()` is called) it yields one `.closed` and ends.
/// Writes are plain blocking writes of whole lines, made by the client actor.
///
/// The descriptor is closed in `deinit`, which runs only once the reader thread is done (it keeps
/// the object alive) and the client has dropped it, so no write or shutdown can ever touch a
/// descriptor number that was reused.
final class Connection: Sendable {
  let fd: FileDescriptor
  let socketPath: String
  /// Which connection of its client this is (1, 2, …): stale messages are told apart by it.
  let serial: Int
  /// The daemon's process id (SO_PEERCRED): a new one means a new daemon, without detached objects.
  let daemonPID: Int32?
  /// The lines read, in order; finishes after `.closed`.
  let messages: AsyncStream<Inbound>
  private let continuation: AsyncStream<Inbound>.Continuation
  private let open = Atomic<Bool>(true)

  /// The longest line accepted from the daemon (a `list` with thousands of cues is long).
  static let maximumLineBytes = 16 << 20

  /// Connects to `socketPath` and starts the reader thread.
  init(socketPath: String, serial: Int) throws(ClientError) {
    let fd: FileDescriptor
    do {
      fd = try UnixSocket.connect(path: socketPath)
    } catch {
      throw .unreachable(socketPath: socketPath, reason: error.reason)
    }
    self.fd = fd
    self.socketPath = socketPath
    self.serial = serial
    self.daemonPID = (try? UnixSocket.peerCredentials(fd))?.pid
    (messages, continuation) = AsyncStream.makeStream(of: Inbound.self, bufferingPolicy: .unbounded)
    guard ReaderThread.start(self) else {
      open.store(false, ordering: .relaxed)
      throw .unreachable(socketPath: socketPath, reason: "cannot start the client's reader thread")
    }
  }

  deinit {
    fd.close()
  }

  /// False once the reader saw the end of the connection or `shutdown()` was called.
  var isOpen: Bool { open.load(ordering: .acquiring) }

  /// Writes one line (blocking until the socket took all of it).
  func write(_ line: [UInt8]) throws(SystemError) {
    try fd.writeAll(line)
  }

  /// Ends the connection both ways; the reader thread wakes with end-of-file and reports `.closed`.
  func shutdown() {
    open.store(false, ordering: .releasing)
    fd.shutdown(.readAndWrite)
  }

  /// The reader thread's body: read, frame, parse, yield, until the connection ends.
  fileprivate func readLoop() {
    var framer = LineFramer(maxLineBytes: Self.maximumLineBytes)
    var scratch = [UInt8](repeating: 0, count: 64 * 1024)
    var ending: ClientError = .disconnected(socketPath: socketPath)
    reading: while true {
      let result: FileDescriptor.IOResult
      do {
        result = try scratch.withUnsafeMutableBytes { raw throws(SystemError) in try fd.read(into: raw) }
      } catch {
        break reading
      }
      switch result {
      case .bytes(let count):
        framer.append(scratch[0..<count])
      case .wouldBlock:
        continue reading
      case .endOfFile:
        break reading
      }
      while let frame = framer.next() {
        switch frame {
        case .line(let bytes):
          if bytes.isEmpty { continue }
          do {
            continuation.yield(.message(try ServerMessage.parse(bytes)))
          } catch {
            ending = .protocolViolation(error.message)
            break reading
          }
        case .oversize(let count):
          ending = .protocolViolation("a line of \(count)+ bytes, longer than this client accepts (\(Self.maximumLineBytes))")
          break reading
        }
      }
    }
    open.store(false, ordering: .releasing)
    fd.shutdown(.readAndWrite)
    continuation.yield(.closed(ending))
    continuation.finish()
  }
}

/// Starts the one pthread per connection that reads it (not a task: it blocks in `read`).
private enum ReaderThread {
  /// Starts the reader of `connection`; false when no thread could be made.
  static func start(_ connection: Connection) -> Bool {
    (try? Threads.start(stackBytes: 256 * 1024) { connection.readLoop() }) != nil
  }
}
