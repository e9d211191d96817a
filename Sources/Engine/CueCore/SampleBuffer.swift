/// Owns decoded PCM: interleaved stereo Float32 frames.
///
/// Created and released on the control side. The audio thread only ever sees `samples`, a borrowed
/// view; the control side keeps the buffer alive until every voice reading it has ended.
public final class SampleBuffer: @unchecked Sendable {
  public let frameCount: Int
  private let storage: UnsafeMutablePointer<Float>
  /// Frees `storage` when it did not come from `UnsafeMutablePointer.allocate`.
  private let release: (@Sendable (UnsafeMutablePointer<Float>) -> Void)?

  /// Allocates `frameCount` silent frames.
  public init(frameCount: Int) {
    precondition(frameCount >= 0)
    self.frameCount = frameCount
    storage = .allocate(capacity: max(frameCount * 2, 2))
    storage.initialize(repeating: 0, count: max(frameCount * 2, 2))
    release = nil
  }

  /// Takes ownership of `storage` (allocated with `UnsafeMutablePointer.allocate`, holding at least
  /// `2 * frameCount` initialised floats); it is deallocated with the buffer.
  public init(adopting storage: UnsafeMutablePointer<Float>, frameCount: Int) {
    precondition(frameCount >= 0)
    self.frameCount = frameCount
    self.storage = storage
    release = nil
  }

  /// Takes ownership of `storage` (holding at least `2 * frameCount` initialised floats), which
  /// `release` frees with the buffer: for memory that `UnsafeMutablePointer.allocate` did not
  /// provide, such as a mapping of its own.
  public init(
    adopting storage: UnsafeMutablePointer<Float>, frameCount: Int,
    release: @escaping @Sendable (UnsafeMutablePointer<Float>) -> Void
  ) {
    precondition(frameCount >= 0)
    self.frameCount = frameCount
    self.storage = storage
    self.release = release
  }

  /// Copies interleaved stereo samples (`count` must be even).
  public convenience init(interleaved: [Float]) {
    precondition(interleaved.count % 2 == 0, "interleaved stereo needs an even number of samples")
    self.init(frameCount: interleaved.count / 2)
    interleaved.withUnsafeBufferPointer { source in
      if let base = source.baseAddress { storage.update(from: base, count: source.count) }
    }
  }

  deinit {
    if let release { release(storage) } else { storage.deallocate() }
  }

  /// The view voices read.
  public var samples: CueSamples { CueSamples(base: UnsafePointer(storage), frameCount: frameCount) }

  /// Bytes of sample memory held.
  public var byteCount: Int { frameCount * 2 * MemoryLayout<Float>.size }

  /// Mutable access while the buffer is being filled (before any voice reads it).
  public var mutableBase: UnsafeMutablePointer<Float> { storage }

  /// A copy of the samples, for tests and tools.
  public func toArray() -> [Float] { Array(UnsafeBufferPointer(start: storage, count: frameCount * 2)) }
}
