import CueDecoding
import CueCore
import CuePosix
import Synchronization

/// One loaded cue: decoded, immutable, shared by every voice that plays it.
public final class Cue: Sendable {
  public let name: String
  public let path: String
  public let decoded: DecodedCue
  /// The rate `decoded` is at (the output rate): what its loudness is measured at.
  let sampleRate: Int
  /// File identity when it was read, so a reload can keep what did not change.
  let fileStamp: FileStamp
  /// Its loudness, once measured (the outer nil: not yet).
  private let measured = Mutex<LoudnessMeasurement??>(nil)

  init(name: String, path: String, decoded: DecodedCue, sampleRate: Int, fileStamp: FileStamp) {
    self.name = name
    self.path = path
    self.decoded = decoded
    self.sampleRate = sampleRate
    self.fileStamp = fileStamp
  }

  /// Its EBU R128 loudness and sample peak (nil only when libebur128 could not allocate its
  /// state); `loudness-normalize` scales its voices by it.
  ///
  /// Measured once, on first use, then kept: at load on the decode worker when normalising is on
  /// (and always for files decoded on request), else when `list` first asks (CueCatalog). At
  /// start the measurement would cost more than the 10 % of start-up it may (docs/PERFORMANCE.md).
  /// Thread-safe: a second caller waits for the first one's measurement.
  @discardableResult
  public func measureLoudness() -> LoudnessMeasurement? {
    measured.withLock { state in
      if let done = state { return done }
      let measurement = Loudness.measure(decoded.buffer, sampleRate: sampleRate)
      state = .some(measurement)
      return measurement
    }
  }

  /// The measurement, measured now if it was not yet (`measureLoudness`).
  public var loudness: LoudnessMeasurement? { measureLoudness() }

  /// Whether the loudness has been measured.
  public var isMeasured: Bool { measured.withLock { $0 != nil } }

  public var frameCount: Int { decoded.buffer.frameCount }
  public var byteCount: Int { decoded.buffer.byteCount }
  public var isMono: Bool { decoded.sourceChannels == 1 }
}

/// Size, modification time, device and inode of a file: changes when the file is replaced,
/// rewritten, or a symlink to it is pointed elsewhere (stat follows the link).
struct FileStamp: Sendable, Hashable {
  var size: Int
  var modified: Int
  var modifiedNanoseconds: Int
  var inode: UInt
  var device: UInt64 = 0

  static func of(_ path: String) -> FileStamp? {
    Files.status(path).map(FileStamp.init)
  }
}

extension FileStamp {
  /// The stamp of what `fstat` or `stat` said.
  init(_ info: Files.Status) {
    self.init(
      size: info.size, modified: info.modifiedSeconds, modifiedNanoseconds: info.modifiedNanoseconds, inode: info.inode,
      device: info.device)
  }
}
