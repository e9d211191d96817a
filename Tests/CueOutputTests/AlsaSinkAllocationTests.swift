import CAllocCounter
import CueOutput
import CueCore
import Testing

/// What the audio thread calls on a real ALSA sink (the wait for room with a changing fill target,
/// which sets avail_min through snd_pcm_sw_params, the write, the delay, the rewind) allocates
/// nothing: ALSA's `null` PCM, which every alsa-lib has and which needs no card.
@Suite(
  "An ALSA sink's audio-thread calls allocate nothing",
  .enabled(if: cued_alloc_counter_is_active() == 1, "the allocation counter is not interposed in this binary"))
struct AlsaSinkAllocationTests {
  @Test func waitingWithChangingTargetsWritingAndRewindingAllocateNothing() throws {
    let sink = AlsaSink(device: "null", rate: 48_000, periodFrames: 64, bufferFrames: 512)
    let format = try sink.open()
    defer { sink.close() }
    #expect(format.periodFrames > 0)
    let period = UnsafeMutablePointer<Float>.allocate(capacity: 64 * 2)
    defer { period.deallocate() }
    period.initialize(repeating: 0.125, count: 64 * 2)
    // Warm up: the first calls may resolve symbols or set up lazily.
    for target in [256, 320] {
      _ = sink.waitForRoom(frameCount: 64, fillTargetFrames: target)
      _ = sink.write(period, frameCount: 64)
    }
    let targets = [256, 320, 448, Int.max]
    cued_alloc_counter_start()
    var notOK = 0
    var delays = 0
    for cycle in 0..<200 {
      let target = targets[cycle % 4]
      if sink.waitForRoom(frameCount: 64, fillTargetFrames: target) != .ok { notOK += 1 }
      if sink.write(period, frameCount: 64) != .ok { notOK += 1 }
      delays &+= sink.delayFrames()
      _ = sink.rewind(maxFrames: 128)
    }
    let allocations = cued_alloc_counter_stop()
    #expect(allocations == 0)
    #expect(notOK == 0)
    #expect(delays >= 0)
  }
}

@Suite("Which sound server an ALSA PCM plays into")
struct SoundServerPluginTests {
  @Test func aPCMThatIsNoServersPluginIsNone() {
    // ALSA's own `null` PCM (alsa-lib's pcm_null) and a name that is no PCM at all.
    #expect(AlsaSink.soundServerPlugin(device: "null") == nil)
    #expect(AlsaSink.soundServerPlugin(device: "cued-no-such-pcm") == nil)
  }
}
