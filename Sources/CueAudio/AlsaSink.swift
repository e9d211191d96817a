import CALSA
import CAudioShims
import CueCore

/// Plays through an ALSA PCM (`default`, `pulse`, `hw:0`, a `file` PCM for tests, ...).
///
/// Blocking writes: `snd_pcm_writei` returns once a period has room, so the audio thread picks up
/// new commands once per period. Float output when the device takes it, otherwise S16 (converted
/// here into a buffer allocated at open, not on the audio thread).
public final class AlsaSink: OutputDevice, @unchecked Sendable {
  public let name: String
  public let backend = "alsa"
  private let rate: Int
  private let requestedPeriodFrames: Int
  private let requestedBufferFrames: Int
  private var pcm: OpaquePointer? = nil
  private var format: NegotiatedFormat? = nil
  private var int16Buffer: UnsafeMutablePointer<Int16>? = nil
  private var int16Capacity = 0

  public init(device: String, rate: Int, periodFrames: Int, bufferFrames: Int) {
    name = device
    self.rate = rate
    requestedPeriodFrames = periodFrames
    requestedBufferFrames = bufferFrames
    cued_alsa_silence_errors()
  }

  deinit {
    close()
  }

  public var negotiated: NegotiatedFormat? { format }

  public func open() throws(AudioDeviceError) -> NegotiatedFormat {
    close()
    var handle: OpaquePointer? = nil
    try check(snd_pcm_open(&handle, name, SND_PCM_STREAM_PLAYBACK, 0), "snd_pcm_open")
    guard let handle else { throw failure("snd_pcm_open", -5) }
    do {
      let negotiated = try configure(handle)
      pcm = handle
      format = negotiated
      if negotiated.sampleFormat == .int16 {
        int16Capacity = max(negotiated.periodFrames, requestedPeriodFrames) * 2 * 4
        int16Buffer = .allocate(capacity: int16Capacity)
      }
      return negotiated
    } catch {
      snd_pcm_close(handle)
      throw error
    }
  }

  private func configure(_ handle: OpaquePointer) throws(AudioDeviceError) -> NegotiatedFormat {
    // snd_pcm_hw_params_alloca is a macro Swift cannot call: the malloc'd variant, freed below.
    var hw: OpaquePointer? = nil
    try check(snd_pcm_hw_params_malloc(&hw), "snd_pcm_hw_params_malloc")
    defer { snd_pcm_hw_params_free(hw) }
    try check(snd_pcm_hw_params_any(handle, hw), "snd_pcm_hw_params_any")
    try check(snd_pcm_hw_params_set_access(handle, hw, SND_PCM_ACCESS_RW_INTERLEAVED), "set access (interleaved)")
    let sampleFormat: NegotiatedFormat.SampleFormat
    if snd_pcm_hw_params_test_format(handle, hw, SND_PCM_FORMAT_FLOAT_LE) == 0 {
      try check(snd_pcm_hw_params_set_format(handle, hw, SND_PCM_FORMAT_FLOAT_LE), "set format FLOAT_LE")
      sampleFormat = .float32
    } else {
      try check(snd_pcm_hw_params_set_format(handle, hw, SND_PCM_FORMAT_S16_LE), "set format S16_LE")
      sampleFormat = .int16
    }
    try check(snd_pcm_hw_params_set_channels(handle, hw, 2), "set 2 channels")
    try check(snd_pcm_hw_params_set_rate_resample(handle, hw, 1), "allow rate conversion")
    try check(snd_pcm_hw_params_set_rate(handle, hw, UInt32(rate), 0), "set rate \(rate) Hz")
    var period = snd_pcm_uframes_t(requestedPeriodFrames)
    var dir: Int32 = 0
    try check(snd_pcm_hw_params_set_period_size_near(handle, hw, &period, &dir), "set period size")
    var buffer = snd_pcm_uframes_t(max(requestedBufferFrames, Int(period) * 2))
    try check(snd_pcm_hw_params_set_buffer_size_near(handle, hw, &buffer), "set buffer size")
    try check(snd_pcm_hw_params(handle, hw), "snd_pcm_hw_params")
    snd_pcm_hw_params_get_period_size(hw, &period, &dir)
    snd_pcm_hw_params_get_buffer_size(hw, &buffer)

    var sw: OpaquePointer? = nil
    try check(snd_pcm_sw_params_malloc(&sw), "snd_pcm_sw_params_malloc")
    defer { snd_pcm_sw_params_free(sw) }
    try check(snd_pcm_sw_params_current(handle, sw), "snd_pcm_sw_params_current")
    // Start once the buffer is full: the first write (which holds the cue's first frame) is heard first.
    try check(snd_pcm_sw_params_set_start_threshold(handle, sw, buffer), "set start threshold")
    try check(snd_pcm_sw_params_set_avail_min(handle, sw, period), "set avail min")
    try check(snd_pcm_sw_params(handle, sw), "snd_pcm_sw_params")
    try check(snd_pcm_prepare(handle), "snd_pcm_prepare")
    return NegotiatedFormat(sampleFormat: sampleFormat, rate: rate, periodFrames: Int(period), bufferFrames: Int(buffer))
  }

  public func close() {
    if let pcm {
      snd_pcm_drop(pcm)
      snd_pcm_close(pcm)
    }
    pcm = nil
    format = nil
    int16Buffer?.deallocate()
    int16Buffer = nil
    int16Capacity = 0
  }

  // MARK: Audio thread

  public func write(_ interleaved: UnsafePointer<Float>, frameCount: Int) -> SinkStatus {
    guard let pcm, let format else { return .lost(code: -19) }  // ENODEV
    var status = SinkStatus.ok
    var offset = 0
    var recoveries = 0
    while offset < frameCount {
      let remaining = frameCount - offset
      let written: Int
      if format.sampleFormat == .float32 {
        written = snd_pcm_writei(pcm, interleaved + offset * 2, snd_pcm_uframes_t(remaining))
      } else {
        let n = min(remaining, int16Capacity / 2)
        let out = int16Buffer!
        for i in 0..<(n * 2) {
          let x = max(-1, min(1, interleaved[offset * 2 + i]))
          out[i] = Int16((x * 32767).rounded())
        }
        written = snd_pcm_writei(pcm, out, snd_pcm_uframes_t(n))
      }
      if written >= 0 {
        offset += written
        continue
      }
      let code = Int32(written)
      // Underrun (-EPIPE), suspend (-ESTRPIPE) and signals (-EINTR) are recoverable, but not
      // forever: a sound server's plugin whose server died fails every write after a "successful"
      // recovery (the pipewire plugin: -EPIPE at once, every time), and that is a lost device.
      recoveries += 1
      if recoveries <= 4 && snd_pcm_recover(pcm, code, 1) == 0 {
        if code != -4 { status = .recoveredUnderrun }
        continue
      }
      return .lost(code: code)
    }
    return status
  }

  public func delayFrames() -> Int {
    guard let pcm else { return 0 }
    var delay: snd_pcm_sframes_t = 0
    return snd_pcm_delay(pcm, &delay) == 0 ? max(delay, 0) : 0
  }

  // MARK: Helpers

  private func check(_ rc: Int32, _ step: String) throws(AudioDeviceError) {
    if rc < 0 { throw failure(step, rc) }
  }

  private func failure(_ step: String, _ rc: Int32) -> AudioDeviceError {
    var detail = String(cString: snd_strerror(rc))
    var buffer = [CChar](repeating: 0, count: 256)
    let length = cued_alsa_last_error(&buffer, Int32(buffer.count))
    if length > 0 {
      let last = String(decoding: buffer.prefix(Int(length)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
      detail += " (\(last))"
    }
    return AudioDeviceError(device: name, step: step, code: rc, detail: detail)
  }
}
