// What cued-pwprobe's runs share (main.swift): the tone, the recorder, the real-time callbacks
// the shim calls, and helpers over the graph.
import CPipeWireShims
import CueOutput
import CuePosix
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

let rate: UInt32 = 48_000
let channels: UInt32 = 2
let toneFrames = 4_800  // 100 ms
let toneHz = 1_000.0
let toneAmplitude: Float = 0.5

// MARK: - What the real-time callbacks share with the control thread

/// The playback side: silence until triggered, then one tone; records the cycle the tone began in.
/// Touched by the PipeWire data thread through `play`; everything is preallocated or atomic.
final class ToneSource: Sendable {
  let trigger = Atomic<Bool>(false)
  let playedFrames = Atomic<Int>(-1)  // -1: not started; then frames of the tone written so far
  let startNowNanoseconds = Atomic<Int64>(0)
  let startDelay = Atomic<Int64>(0)
  let startQueuedBytes = Atomic<UInt64>(0)
  let minRequested = Atomic<UInt32>(.max)
  let maxRequested = Atomic<UInt32>(0)
  let cycles = Atomic<Int>(0)
  /// Graph cycles skipped, over every round (not reset).
  let skipped = SkippedCycles()

  func reset() {
    trigger.store(false, ordering: .relaxed)
    playedFrames.store(-1, ordering: .relaxed)
    minRequested.store(.max, ordering: .relaxed)
    maxRequested.store(0, ordering: .relaxed)
    cycles.store(0, ordering: .relaxed)
  }
}

/// The graph cycles a probe's own stream missed (xruns), found in its process callback by cued's
/// own test (CueOutput's `GraphCycles`: a cycle that does not start where the previous one ended),
/// as the C face no longer decides it. Every gap counts, whoever's fault it was (the probe reports
/// what the graph skipped; the floor's figure is what every client sees), except across a connect
/// or a resume, which moves the graph on without an xrun. The `GraphCycles` value is the data
/// thread's alone; the control side marks a (re)start and reads the count, both atomics.
final class SkippedCycles: @unchecked Sendable {
  private var cycles = GraphCycles()
  private let restarted = Atomic<Bool>(true)
  private let gaps = Atomic<UInt64>(0)

  /// The gaps so far (any thread).
  var count: UInt64 { gaps.load(ordering: .relaxed) }

  /// Before a connect or a resume (control side): the next cycle is the first.
  func restart() { restarted.store(true, ordering: .releasing) }

  /// On PipeWire's data thread, at the start of each process callback, with its timing.
  func cycle(_ timing: cued_pw_timing) {
    if restarted.exchange(false, ordering: .acquiring) { cycles.resumed() }
    let gap = cycles.cycle(
      ticks: timing.ticks, rateNumerator: timing.rate_num, rateDenominator: timing.rate_denom, frames: Int(timing.frames_requested),
      rate: Int(rate), startNanoseconds: timing.now_ns, calledAtNanoseconds: monotonicNanoseconds())
    if gap != nil { gaps.add(1, ordering: .relaxed) }
  }

  /// On the data thread, at the end of the callback (GraphCycles tells an overrun from a late wake by it).
  func finished() { cycles.finished(atNanoseconds: monotonicNanoseconds()) }
}

/// The capture side: a preallocated buffer of samples and, per cycle, when the graph cycle began and
/// how many frames it carried (the graph's quantum then: a sink's monitor delivers one quantum a cycle).
///
/// Cycles are placed by `now_ns`, not `ticks`: each pw_stream counts its ticks from its own start,
/// but every node in a graph cycle gets the same cycle time, so times compare across streams.
final class Recorder: @unchecked Sendable {
  let capacityFrames: Int
  let samples: UnsafeMutablePointer<Float>
  let maxCycles: Int
  let cycleNanoseconds: UnsafeMutablePointer<Int64>
  let cycleFirstFrame: UnsafeMutablePointer<Int>
  let cycleDelay: UnsafeMutablePointer<Int64>
  let cycleFrames: UnsafeMutablePointer<UInt32>
  let frameCount = Atomic<Int>(0)
  let cycleCount = Atomic<Int>(0)
  let recording = Atomic<Bool>(false)

  init(seconds: Int = 4) {
    capacityFrames = Int(rate) * seconds
    // Room for every cycle down to a 32-frame quantum (the smallest any stream here asks for is 64).
    maxCycles = max(65_536, capacityFrames / 32)
    samples = .allocate(capacity: capacityFrames * Int(channels))
    cycleNanoseconds = .allocate(capacity: maxCycles)
    cycleFirstFrame = .allocate(capacity: maxCycles)
    cycleDelay = .allocate(capacity: maxCycles)
    cycleFrames = .allocate(capacity: maxCycles)
  }

  deinit {
    samples.deallocate()
    cycleNanoseconds.deallocate()
    cycleFirstFrame.deallocate()
    cycleDelay.deallocate()
    cycleFrames.deallocate()
  }

  func reset() {
    recording.store(false, ordering: .sequentiallyConsistent)
    frameCount.store(0, ordering: .relaxed)
    cycleCount.store(0, ordering: .relaxed)
  }
}

let playProcess: cued_pw_process_fn = { user, buffer, frames, timing in
  guard let user, let buffer, let timing else { return }
  let source = Unmanaged<ToneSource>.fromOpaque(user).takeUnretainedValue()
  source.skipped.cycle(timing.pointee)
  defer { source.skipped.finished() }
  let count = Int(frames)
  source.cycles.add(1, ordering: .relaxed)
  let requested = timing.pointee.frames_requested
  if requested < source.minRequested.load(ordering: .relaxed) { source.minRequested.store(requested, ordering: .relaxed) }
  if requested > source.maxRequested.load(ordering: .relaxed) { source.maxRequested.store(requested, ordering: .relaxed) }
  var played = source.playedFrames.load(ordering: .relaxed)
  if played < 0 && source.trigger.load(ordering: .acquiring) {
    played = 0
    source.startNowNanoseconds.store(timing.pointee.now_ns, ordering: .relaxed)
    source.startDelay.store(timing.pointee.delay, ordering: .relaxed)
    source.startQueuedBytes.store(timing.pointee.queued_bytes, ordering: .relaxed)
  }
  for frame in 0..<count {
    var value: Float = 0
    if played >= 0 && played < toneFrames {
      value = toneAmplitude * Float(sin(2 * Double.pi * toneHz * Double(played) / Double(rate)))
      played += 1
    }
    buffer[frame * 2] = value
    buffer[frame * 2 + 1] = value
  }
  if played >= 0 { source.playedFrames.store(played, ordering: .releasing) }
}

let recordProcess: cued_pw_process_fn = { user, buffer, frames, timing in
  guard let user, let buffer, let timing else { return }
  let recorder = Unmanaged<Recorder>.fromOpaque(user).takeUnretainedValue()
  guard recorder.recording.load(ordering: .acquiring) else { return }
  let first = recorder.frameCount.load(ordering: .relaxed)
  let cycle = recorder.cycleCount.load(ordering: .relaxed)
  let count = min(Int(frames), recorder.capacityFrames - first)
  guard count > 0, cycle < recorder.maxCycles else { return }
  (recorder.samples + first * 2).update(from: buffer, count: count * 2)
  recorder.cycleNanoseconds[cycle] = timing.pointee.now_ns
  recorder.cycleFirstFrame[cycle] = first
  recorder.cycleDelay[cycle] = timing.pointee.delay
  recorder.cycleFrames[cycle] = frames
  recorder.cycleCount.store(cycle + 1, ordering: .releasing)
  recorder.frameCount.store(first + count, ordering: .releasing)
}

// MARK: - Helpers

func sleepMilliseconds(_ milliseconds: Int) {
  var request = timespec(tv_sec: milliseconds / 1000, tv_nsec: (milliseconds % 1000) * 1_000_000)
  nanosleep(&request, nil)
}

func monotonicNanoseconds() -> Int64 {
  var now = timespec()
  clock_gettime(CLOCK_MONOTONIC, &now)
  return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
}

/// Milliseconds from `start` to `end` (default: now), to 0.01 ms.
func milliseconds(since start: Int64, until end: Int64 = monotonicNanoseconds()) -> Double {
  Double((end - start) / 10_000) / 100
}

func report(_ key: String, _ value: String) { print("\(key)=\(value)") }
