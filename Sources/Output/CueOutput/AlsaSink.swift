import CALSA
import CAudioShims
import CueCore

/// Plays through an ALSA PCM (`default`, `pulse`, `hw:0`, a `file` PCM for tests, ...).
///
/// Kept at a fill target, not full: the hardware buffer is large (room to absorb a late wake-up),
/// but the engine asks `waitForRoom` to keep only its fill target queued (a few short periods), so
/// a new cue waits behind that much audio, not a whole buffer. The wait is `snd_pcm_wait` on the
/// avail_min threshold, set so the device wakes the thread when its fill has fallen to the target
/// minus a period; the write that follows has room and does not block. The device starts on the
/// first write. Float output when the device takes it, otherwise S16 (converted here into a
/// buffer allocated at open, not on the audio thread). Everything the audio thread calls here
/// works on what `open` allocated (the sw_params struct included): no allocation, no lock of ours.
///
/// Rewinding queued silence is done only on a hardware PCM (`hw:`): ALSA's ioplug plugins (pulse,
/// pipewire) answer `snd_pcm_rewindable` with what their ring holds, but they have already sent
/// those frames to the server, so a rewind would only corrupt the accounting.
public final class AlsaSink: OutputDevice, PushSink, @unchecked Sendable {
  public let name: String
  public let backend = "alsa"
  public var traits: DeviceTraits { DeviceTraits(asks: .fill) }
  private let rate: Int
  private let requestedPeriodFrames: Int
  private let requestedBufferFrames: Int
  private var pcm: OpaquePointer? = nil
  private var format: NegotiatedFormat? = nil
  private var int16Buffer: UnsafeMutablePointer<Int16>? = nil
  private var int16Capacity = 0
  /// Audio thread: see `recover`.
  private var consecutiveRecoveries = 0
  /// The software parameters, allocated at open so changing avail_min on the audio thread does not allocate.
  private var sw: OpaquePointer? = nil
  /// The fill target avail_min is set for now (frames; 0: none applied yet).
  private var appliedTargetFrames = 0
  /// Whether `rewind` may take frames back (a hardware PCM).
  private var canRewind = false
  /// Frames next to the play position never rewound: the DMA may already have fetched them
  /// (PulseAudio keeps about 1.33 ms for the same reason).
  private let rewindSafetyFrames: Int

  public init(device: String, rate: Int, periodFrames: Int, bufferFrames: Int) {
    name = device
    self.rate = rate
    requestedPeriodFrames = periodFrames
    requestedBufferFrames = bufferFrames
    rewindSafetyFrames = max(32, rate / 750)
    cued_alsa_silence_errors()
  }

  deinit {
    close()
    if let sw { snd_pcm_sw_params_free(sw) }
  }

  public var negotiated: NegotiatedFormat? { format }

  /// The sound server an ALSA PCM plays into through one of its ALSA plugins.
  public enum SoundServerPlugin: String, Sendable {
    /// pipewire-alsa's `pipewire` PCM type: a pw_stream that the server pulls a quantum from.
    case pipeWire = "PipeWire"
    /// alsa-plugins' `pulse` PCM type: a PulseAudio stream.
    case pulseAudio = "PulseAudio"
  }

  /// Which sound server's plugin the PCM `device` is (wrapped in `plug` or not), or nil for a card or
  /// anything else, or when it cannot be opened now. Opens the PCM without blocking and closes it:
  /// only `snd_pcm_dump`'s description is read ("ALSA <-> PipeWire PCM I/O Plugin").
  public static func soundServerPlugin(device: String) -> SoundServerPlugin? {
    cued_alsa_silence_errors()
    var handle: OpaquePointer? = nil
    guard snd_pcm_open(&handle, device, SND_PCM_STREAM_PLAYBACK, SND_PCM_NONBLOCK) == 0, let handle else { return nil }
    defer { snd_pcm_close(handle) }
    var output: OpaquePointer? = nil
    guard snd_output_buffer_open(&output) == 0, let output else { return nil }
    defer { snd_output_close(output) }
    guard snd_pcm_dump(handle, output) == 0 else { return nil }
    var text: UnsafeMutablePointer<CChar>? = nil
    let length = snd_output_buffer_string(output, &text)
    guard length > 0, let text else { return nil }
    let description = String(decoding: UnsafeRawBufferPointer(start: text, count: length), as: UTF8.self)
    return [SoundServerPlugin.pipeWire, .pulseAudio].first { description.contains("<-> \($0.rawValue)") }
  }

  public func open() throws(AudioDeviceError) -> NegotiatedFormat {
    close()
    consecutiveRecoveries = 0
    var handle: OpaquePointer? = nil
    try check(snd_pcm_open(&handle, name, SND_PCM_STREAM_PLAYBACK, 0), "snd_pcm_open")
    guard let handle else { throw failure("snd_pcm_open", -5) }
    do {
      let negotiated = try configure(handle)
      pcm = handle
      format = negotiated
      canRewind = snd_pcm_type(handle) == SND_PCM_TYPE_HW
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

    if sw == nil { try check(snd_pcm_sw_params_malloc(&sw), "snd_pcm_sw_params_malloc") }
    try check(snd_pcm_sw_params_current(handle, sw), "snd_pcm_sw_params_current")
    // Start on the first write until the engine names its fill target (then: once that is queued),
    // never only when the whole buffer is full.
    try check(snd_pcm_sw_params_set_start_threshold(handle, sw, 1), "set start threshold")
    // Until the engine names a fill target: wake when a period has room (the whole buffer in use).
    try check(snd_pcm_sw_params_set_avail_min(handle, sw, period), "set avail min")
    try check(snd_pcm_sw_params(handle, sw), "snd_pcm_sw_params")
    appliedTargetFrames = Int(buffer)
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
    appliedTargetFrames = 0
    canRewind = false
  }

  // MARK: Audio thread

  public func write(_ interleaved: UnsafePointer<Float>, frameCount: Int) -> SinkStatus {
    guard let pcm, let format else { return .lost(code: -19) }  // ENODEV
    var status = SinkStatus.ok
    var offset = 0
    while offset < frameCount {
      let remaining = frameCount - offset
      let written: Int
      if format.sampleFormat == .float32 {
        written = snd_pcm_writei(pcm, interleaved + offset * 2, snd_pcm_uframes_t(remaining))
      } else {
        let n = min(remaining, int16Capacity / 2)
        let out = int16Buffer!
        SampleConversion.int16(from: interleaved + offset * 2, count: n * 2, into: out)
        written = snd_pcm_writei(pcm, out, snd_pcm_uframes_t(n))
      }
      if written >= 0 {
        offset += written
        if written > 0 { consecutiveRecoveries = 0 }
        continue
      }
      let code = Int32(written)
      if recover(pcm, code) {
        if code != -4 { status = .recoveredUnderrun }
        continue
      }
      return .lost(code: code)
    }
    return status
  }

  public func waitForRoom(frameCount: Int, fillTargetFrames: Int) -> SinkStatus {
    guard let pcm, let format else { return .lost(code: -19) }  // ENODEV
    let bufferFrames = format.bufferFrames
    let target = min(max(fillTargetFrames, frameCount), bufferFrames)
    if target != appliedTargetFrames { applyFillTarget(target, frameCount: frameCount, pcm: pcm, bufferFrames: bufferFrames) }
    var status = SinkStatus.ok
    // A stalled device (a sound server that stopped reading) must not hang the thread here for
    // good: after a long wait, leave the pacing to the blocking write, as before.
    let timeoutMilliseconds = Int32(max(100, 4 * bufferFrames * 1000 / max(rate, 1)))
    while true {
      let avail = snd_pcm_avail(pcm)
      if avail < 0 {
        guard recover(pcm, Int32(avail)) else { return .lost(code: Int32(avail)) }
        if avail != -4 { status = .recoveredUnderrun }
        continue
      }
      if bufferFrames - avail + frameCount <= target { return status }
      let woken = snd_pcm_wait(pcm, timeoutMilliseconds)
      if woken == 0 { return status }
      if woken < 0 {
        guard recover(pcm, woken) else { return .lost(code: woken) }
        if woken != -4 { status = .recoveredUnderrun }
      }
    }
  }

  /// Sets avail_min so `snd_pcm_wait` returns once the fill is at most `target - frameCount`:
  /// avail (= buffer − fill) ≥ buffer − target + frameCount. On the preallocated sw_params.
  private func applyFillTarget(_ target: Int, frameCount: Int, pcm: OpaquePointer, bufferFrames: Int) {
    appliedTargetFrames = target
    let availMin = min(max(bufferFrames - target + frameCount, 1), bufferFrames)
    guard let sw, snd_pcm_sw_params_set_avail_min(pcm, sw, snd_pcm_uframes_t(availMin)) == 0 else { return }
    // A stopped device (just opened, or after an underrun) starts once the target is queued: a
    // sound server that starts on one period drains it at its first cycle and underruns.
    _ = snd_pcm_sw_params_set_start_threshold(pcm, sw, snd_pcm_uframes_t(target))
    _ = snd_pcm_sw_params(pcm, sw)
  }

  public func rewind(maxFrames: Int) -> Int {
    guard canRewind, let pcm, maxFrames > 0 else { return 0 }
    let rewindable = snd_pcm_rewindable(pcm)
    let frames = min(maxFrames, rewindable - rewindSafetyFrames)
    guard frames > 0 else { return 0 }
    return max(0, snd_pcm_rewind(pcm, snd_pcm_uframes_t(frames)))
  }

  /// Underrun (-EPIPE), suspend (-ESTRPIPE) and signals (-EINTR) are recoverable, but not
  /// forever: a sound server's plugin whose server died fails every write after a "successful"
  /// recovery (the pipewire plugin: -EPIPE at once, every time), and that is a lost device.
  private func recover(_ pcm: OpaquePointer, _ code: Int32) -> Bool {
    consecutiveRecoveries += 1
    return consecutiveRecoveries <= Self.recoveriesBeforeLoss && snd_pcm_recover(pcm, code, 1) == 0
  }

  /// Recoveries in a row, with no frame accepted between them, after which the device counts as lost.
  static let recoveriesBeforeLoss = 4

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
    var error = AudioDeviceError(device: name, step: step, code: rc, detail: detail)
    if step == "snd_pcm_open" && !Self.machineHasSoundCard {
      error.hint = "this machine has no sound card and no sound server answered: run `cued --device null` to run without sound, or start PipeWire or PulseAudio"
    }
    return error
  }

  /// Whether ALSA sees any sound card (`snd_card_next` from -1 gives the first, or -1 for none).
  static var machineHasSoundCard: Bool {
    var card: Int32 = -1
    return snd_card_next(&card) == 0 && card >= 0
  }
}
