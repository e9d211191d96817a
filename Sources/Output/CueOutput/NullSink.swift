import CueCore
import CuePosix

/// A clock-paced sink that plays into nothing, for machines without sound (`--device null`).
///
/// ALSA's own `null` PCM swallows audio as fast as it is written; this one keeps real time, with
/// a buffer like a device's, so voices, events and idle timing behave as they would on a card.
public final class NullSink: OutputDevice, PushSink, @unchecked Sendable {
  public let name = "null"
  public let backend = "null"
  private let rate: Int
  private let periodFrames: Int
  private let bufferFrames: Int
  private var startNanoseconds: UInt64 = 0
  private var writtenFrames: Int = 0
  private var open_ = false

  public init(rate: Int, periodFrames: Int, bufferFrames: Int) {
    self.rate = rate
    self.periodFrames = periodFrames
    self.bufferFrames = max(bufferFrames, periodFrames * 2)
  }

  public func open() throws(AudioDeviceError) -> NegotiatedFormat {
    open_ = true
    startNanoseconds = 0
    writtenFrames = 0
    return NegotiatedFormat(sampleFormat: .float32, rate: rate, periodFrames: periodFrames, bufferFrames: bufferFrames)
  }

  public func close() {
    open_ = false
  }

  private func playedFrames(at now: UInt64) -> Int {
    Int((now &- startNanoseconds) * UInt64(rate) / 1_000_000_000)
  }

  private static func now() -> UInt64 { MonotonicClock.nanoseconds() }

  public func write(_ interleaved: UnsafePointer<Float>, frameCount: Int) -> SinkStatus {
    guard open_ else { return .lost(code: -19) }
    var status = SinkStatus.ok
    var now = Self.now()
    if writtenFrames == 0 && startNanoseconds == 0 {
      startNanoseconds = now
    } else if playedFrames(at: now) > writtenFrames {
      // The buffer ran dry (the process was stopped, or the machine stalled): an underrun.
      status = .recoveredUnderrun
      startNanoseconds = now
      writtenFrames = 0
    }
    // Wait until the buffer has room for this period, as a blocking snd_pcm_writei would.
    while writtenFrames + frameCount - playedFrames(at: now) > bufferFrames {
      let excess = writtenFrames + frameCount - playedFrames(at: now) - bufferFrames
      let nanos = (UInt64(excess) * 1_000_000_000 + UInt64(rate) - 1) / UInt64(rate)
      MonotonicClock.sleep(nanoseconds: nanos)
      now = Self.now()
    }
    writtenFrames += frameCount
    return status
  }

  public func waitForRoom(frameCount: Int, fillTargetFrames: Int) -> SinkStatus {
    guard open_ else { return .lost(code: -19) }
    guard startNanoseconds != 0 else { return .ok }  // nothing written yet: empty
    let target = min(max(fillTargetFrames, frameCount), bufferFrames)
    // Sleep until the fill has fallen to the target minus this period; an underrun is found by the write.
    var now = Self.now()
    while writtenFrames + frameCount - playedFrames(at: now) > target {
      let excess = writtenFrames + frameCount - playedFrames(at: now) - target
      MonotonicClock.sleep(nanoseconds: (UInt64(excess) * 1_000_000_000 + UInt64(rate) - 1) / UInt64(rate))
      now = Self.now()
    }
    return .ok
  }

  public func delayFrames() -> Int {
    guard open_, startNanoseconds != 0 else { return 0 }
    return max(0, writtenFrames - playedFrames(at: Self.now()))
  }
}
