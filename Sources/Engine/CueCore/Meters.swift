import Synchronization

// Real-time rules for the audio-side half of this file (`scratch`, `addVoice`, `noteMix`): no
// allocation, no free, no locks, no logging. Everything is allocated in `init`, on the control side.

/// The peak and RMS of each voice and of the mix, measured on the audio thread while a client reads
/// them (`isEnabled`), and read and reset from the control side (`take`).
///
/// One accumulator per mixer slot and one for the mix, each a handful of atomics the audio thread
/// alone adds to and the control side alone empties (`exchange`), so neither ever waits for the
/// other. The peak is kept as the bit pattern of a non-negative Float, whose order is the integers'
/// (an atomic `max`); the sum of squares in fixed point. Off, the mixer reads one flag per block and
/// measures nothing.
public final class MeterBank: @unchecked Sendable {
  /// What a meter gathered since it was last taken.
  public struct Reading: Sendable, Equatable {
    /// The largest sample magnitude, either channel.
    public var peak: Float
    /// The sum of the squares of the samples, both channels.
    public var sumOfSquares: Double
    /// How many samples (frames × 2) were measured.
    public var samples: UInt64

    public init(peak: Float = 0, sumOfSquares: Double = 0, samples: UInt64 = 0) {
      self.peak = peak
      self.sumOfSquares = sumOfSquares
      self.samples = samples
    }

    /// The root mean square of the samples measured (0 when none were).
    public var rms: Float { samples == 0 ? 0 : Float((sumOfSquares / Double(samples)).squareRoot()) }

    /// Both readings as one: the larger peak, the sums added.
    public mutating func merge(_ other: Reading) {
      peak = Swift.max(peak, other.peak)
      sumOfSquares += other.sumOfSquares
      samples += other.samples
    }
  }

  /// The most frames a voice is measured in at once; a longer block is mixed in pieces this long.
  public static let scratchFrames = 4096
  /// The sum of squares is kept as an integer of this many units per 1.0 (2^24).
  static let squareScale: Float = 16_777_216

  /// Mixer slots metered (the mix's accumulator comes after them).
  public let slotCount: Int
  private let enabled = Atomic<Bool>(false)
  private let voices: UnsafeMutablePointer<Atomic<UInt64>>
  private let peaks: UnsafeMutablePointer<Atomic<UInt32>>
  private let squares: UnsafeMutablePointer<Atomic<UInt64>>
  private let counts: UnsafeMutablePointer<Atomic<UInt64>>
  /// Where one voice is mixed alone to be measured before it joins the bus.
  private let scratchBuffer: UnsafeMutablePointer<Float>

  public init(slotCount: Int) {
    self.slotCount = slotCount
    let n = slotCount + 1
    voices = .allocate(capacity: n)
    peaks = .allocate(capacity: n)
    squares = .allocate(capacity: n)
    counts = .allocate(capacity: n)
    for i in 0..<n {
      (voices + i).initialize(to: Atomic(0))
      (peaks + i).initialize(to: Atomic(0))
      (squares + i).initialize(to: Atomic(0))
      (counts + i).initialize(to: Atomic(0))
    }
    scratchBuffer = .allocate(capacity: Self.scratchFrames * 2)
  }

  deinit {
    let n = slotCount + 1
    voices.deinitialize(count: n)
    peaks.deinitialize(count: n)
    squares.deinitialize(count: n)
    counts.deinitialize(count: n)
    voices.deallocate()
    peaks.deallocate()
    squares.deallocate()
    counts.deallocate()
    scratchBuffer.deallocate()
  }

  // MARK: Control side

  /// Whether the audio thread measures (a client subscribed). Turned on, the old readings are dropped.
  public var isEnabled: Bool {
    get { enabled.load(ordering: .relaxed) }
    set {
      if newValue && !isEnabled {
        for slot in 0...slotCount { _ = take(slot) }
      }
      enabled.store(newValue, ordering: .relaxed)
    }
  }

  /// The voice last measured in mixer slot `slot` and what it gathered since the last take (emptied).
  public func takeVoice(slot: Int) -> (voice: VoiceID, reading: Reading) {
    precondition(slot >= 0 && slot < slotCount)
    return (VoiceID(voices[slot].load(ordering: .acquiring)), take(slot))
  }

  /// What the mix gathered (after the limiter) since the last take (emptied).
  public func takeMix() -> Reading { take(slotCount) }

  private func take(_ slot: Int) -> Reading {
    let peak = peaks[slot].exchange(0, ordering: .relaxed)
    let sum = squares[slot].exchange(0, ordering: .relaxed)
    let samples = counts[slot].exchange(0, ordering: .relaxed)
    return Reading(peak: Float(bitPattern: peak), sumOfSquares: Double(sum) / Double(Self.squareScale), samples: samples)
  }

  // MARK: Audio side

  /// A buffer, cleared, to mix one voice of a `frameCount`-frame block into; nil when metering is
  /// off or the block is longer than `scratchFrames`.
  func scratch(frameCount: Int) -> UnsafeMutablePointer<Float>? {
    guard frameCount <= Self.scratchFrames, enabled.load(ordering: .relaxed) else { return nil }
    scratchBuffer.update(repeating: 0, count: frameCount * 2)
    return scratchBuffer
  }

  /// Measures the voice `id` mixed alone into `scratch` for slot `slot`, adds it to `bus`, and
  /// clears the scratch again.
  func addVoice(slot: Int, id: VoiceID, _ scratch: UnsafeMutablePointer<Float>, into bus: UnsafeMutablePointer<Float>, frameCount: Int) {
    if voices[slot].load(ordering: .relaxed) != id.rawValue {
      // A new voice in the slot: what the last one left is not its own.
      _ = take(slot)
      voices[slot].store(id.rawValue, ordering: .releasing)
    }
    for i in 0..<frameCount * 2 { bus[i] += scratch[i] }
    accumulate(slot, scratch, sampleCount: frameCount * 2)
    scratch.update(repeating: 0, count: frameCount * 2)  // cleared for the next voice
  }

  /// Measures the mixed block (after the limiter), when metering is on.
  func noteMix(_ bus: UnsafeMutablePointer<Float>, frameCount: Int) {
    guard enabled.load(ordering: .relaxed) else { return }
    accumulate(slotCount, bus, sampleCount: frameCount * 2)
  }

  private func accumulate(_ slot: Int, _ samples: UnsafeMutablePointer<Float>, sampleCount: Int) {
    var peak: Float = 0
    var sum: Float = 0
    for i in 0..<sampleCount {
      let x = samples[i]
      peak = Swift.max(peak, Swift.abs(x))
      sum += x * x
    }
    guard peak.isFinite, sum.isFinite else { return }
    peaks[slot].max(peak.bitPattern, ordering: .relaxed)
    squares[slot].wrappingAdd(UInt64(Swift.min(sum, 1e9) * Self.squareScale), ordering: .relaxed)
    counts[slot].wrappingAdd(UInt64(sampleCount), ordering: .relaxed)
  }
}

extension Engine {
  /// The meters of the mixer's voices and of the mix: turned on and read by the control side.
  public var meters: MeterBank { mixer.meters }
}
