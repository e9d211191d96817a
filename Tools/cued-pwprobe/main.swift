// cued-pwprobe: plays a 100 ms 1 kHz tone through the PipeWire shim (CPipeWireShims) into a sink,
// records the sink's monitor through the same shim, and checks what arrived.
//
//   eval "$(scripts/pipewire-env.sh start)"; .build/debug/cued-pwprobe [--quantum 256] [--rounds 2]
//   .build/debug/cued-pwprobe record --out FILE [--cycles FILE] [--sink NAME] [--seconds N]   (Record.swift)
//   .build/debug/cued-pwprobe adapt [--quantum 128] [--max 512] [--decay-ms 700] [--late-ms 40]   (Adapt.swift)
//   .build/debug/cued-pwprobe floor [--quantum 128] [--target NODE]   (Floor.swift: a kept-open tone on request)
//
// Prints `key=value` lines (quantum asked for and granted, the delay PipeWire reports, the onset
// measured by graph position, level and duration of the captured tone, whether the node left the
// graph on disconnect) and exits 1 when a check fails. Not installed; the tests run it.
import CPipeWireCapture
import CPipeWireShims
import CuePosix
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

var failures: [String] = []
@MainActor func check(_ condition: Bool, _ what: String) {
  if !condition { failures.append(what) }
}

func stateName(_ state: cued_pw_state) -> String {
  switch state {
  case CUED_PW_STATE_ERROR: "error"
  case CUED_PW_STATE_UNCONNECTED: "unconnected"
  case CUED_PW_STATE_CONNECTING: "connecting"
  case CUED_PW_STATE_PAUSED: "paused"
  case CUED_PW_STATE_STREAMING: "streaming"
  default: "unknown(\(state.rawValue))"
  }
}

func stateText(_ stream: OpaquePointer) -> String {
  var text = [CChar](repeating: 0, count: 256)
  let state = cued_pw_stream_state(stream, &text, text.count)
  let error = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
  return error.isEmpty ? stateName(state) : "\(stateName(state)): \(error)"
}

/// The node names `pw-cli ls Node` lists (pw-cli ships in pipewire-bin).
func graphNodeNames() -> [String] {
  guard let result = try? Spawn.run("/usr/bin/pw-cli", ["ls", "Node"]), result.status == 0 else { return [] }
  return String(decoding: result.output, as: UTF8.self).split(separator: "\n").compactMap { line in
    let key = "node.name = \""
    let trimmed = line.drop { $0 == " " || $0 == "\t" }
    guard trimmed.hasPrefix(key) else { return nil }
    return String(trimmed.dropFirst(key.count).dropLast())
  }
}

/// Polls `pw-cli ls Node` (every 20 ms, up to `timeoutMilliseconds`) until `present` holds for `name`.
func waitForNode(_ name: String, present: Bool, timeoutMilliseconds: Int) -> Bool {
  for _ in 0...(timeoutMilliseconds / 20) {
    if graphNodeNames().contains(name) == present { return true }
    sleepMilliseconds(20)
  }
  return false
}

// MARK: - Arguments

// libpipewire-0.3 is loaded at run time (the shim's dlopen), before anything else of the shim.
var loadError = [CChar](repeating: 0, count: 512)
if cued_pw_load(&loadError, loadError.count) != 0 {
  let reason = String(decoding: loadError.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
  print("result=fail (cannot load \(CUED_PW_LIBRARY): \(reason); Debian: apt-get install libpipewire-0.3-0)")
  exit(1)
}

if CommandLine.arguments.dropFirst().first == "record" {
  exit(record(Array(CommandLine.arguments.dropFirst(2))))
}
if CommandLine.arguments.dropFirst().first == "adapt" {
  exit(adapt(Array(CommandLine.arguments.dropFirst(2))))
}
if CommandLine.arguments.dropFirst().first == "floor" {
  exit(keptOpenFloor(Array(CommandLine.arguments.dropFirst(2))))
}

var quantum: UInt32 = 256
var rounds = 2
var sinkName = "cued-test-sink"
var target: String? = nil
var restartCommand: String? = nil
var silentSeconds = 0
var captureOnsetSeconds = 0
var pauseMilliseconds = 0
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
  switch argument {
  case "--quantum": quantum = UInt32(arguments.popFirst() ?? "") ?? quantum
  case "--rounds": rounds = Int(arguments.popFirst() ?? "") ?? rounds
  case "--sink": sinkName = arguments.popFirst() ?? sinkName
  case "--target": target = arguments.popFirst()
  case "--restart-command": restartCommand = arguments.popFirst()
  case "--silent-seconds": silentSeconds = Int(arguments.popFirst() ?? "") ?? 0
  case "--capture-onsets": captureOnsetSeconds = Int(arguments.popFirst() ?? "") ?? 0
  case "--pause-before-trigger": pauseMilliseconds = Int(arguments.popFirst() ?? "") ?? 0
  default:
    print("usage: cued-pwprobe [--quantum FRAMES] [--rounds N] [--sink NAME] [--target NODE] [--restart-command SH]")
    print("  --restart-command: a shell command that restarts the server; run in round 2 while the output streams")
    print("  --silent-seconds: after the rounds, stream silence this long and report the probe's CPU use")
    print("  --capture-onsets SECONDS: only record the sink's monitor that long and print when each sound began")
    print("  --pause-before-trigger MS: pause the output (inactive) that long before each tone; the trigger resumes it")
    exit(2)
  }
}

// MARK: - The run

let answers = cued_pw_server_answers(nil, 1000) != 0
report("server_answers", "\(answers)")
guard answers else {
  print("result=fail (no PipeWire server answers; eval \"$(scripts/pipewire-env.sh start)\" first)")
  exit(1)
}

/// Records the sink's monitor for `seconds` and prints `onset_ns=` (CLOCK_MONOTONIC, placed by graph
/// position) for each sound that begins after at least 50 ms of silence: what another program played,
/// e.g. cued through the ALSA plugin, for a benchmark that knows when it asked (bench/run.py).
@MainActor func captureOnsets(seconds: Int) -> Never {
  let recorder = Recorder(seconds: seconds + 1)
  guard
    let capture = cued_pw_capture_new(
      "cued-pwprobe", "cued-pwprobe-capture", sinkName, rate, channels, 0, recordProcess,
      Unmanaged.passUnretained(recorder).toOpaque()),
    cued_pw_stream_connect(capture) == 0
  else {
    print("result=fail (cannot record \(sinkName))")
    exit(1)
  }
  _ = cued_pw_stream_wait(capture, CUED_PW_STATE_STREAMING, 2000)
  recorder.recording.store(true, ordering: .releasing)
  print("recording=1")
  fflush(nil)
  sleepMilliseconds(seconds * 1000)
  recorder.recording.store(false, ordering: .sequentiallyConsistent)
  sleepMilliseconds(20)
  let frames = recorder.frameCount.load(ordering: .acquiring)
  let cycles = recorder.cycleCount.load(ordering: .acquiring)
  var silentRun = Int(rate)
  var cycle = 0
  for frame in 0..<frames {
    let sounding = recorder.samples[frame * 2] != 0 || recorder.samples[frame * 2 + 1] != 0
    if sounding && silentRun >= Int(rate) / 20 {
      while cycle + 1 < cycles && recorder.cycleFirstFrame[cycle + 1] <= frame { cycle += 1 }
      let offset = Int64(frame - recorder.cycleFirstFrame[cycle])
      print("onset_ns=\(recorder.cycleNanoseconds[cycle] + offset * 1_000_000_000 / Int64(rate))")
    }
    silentRun = sounding ? 0 : silentRun + 1
  }
  report("frames_recorded", "\(frames)")
  cued_pw_stream_disconnect(capture)
  cued_pw_stream_free(capture)
  exit(0)
}

if captureOnsetSeconds > 0 { captureOnsets(seconds: captureOnsetSeconds) }

let source = ToneSource()
let recorder = Recorder()
let nodeName = "cued-pwprobe"
guard
  let output = cued_pw_output_new(
    "cued-pwprobe", nodeName, "Notification", target, rate, channels, quantum, playProcess,
    Unmanaged.passUnretained(source).toOpaque()),
  let capture = cued_pw_capture_new(
    "cued-pwprobe", "cued-pwprobe-capture", sinkName, rate, channels, 0, recordProcess,
    Unmanaged.passUnretained(recorder).toOpaque())
else {
  print("result=fail (cannot create the PipeWire streams)")
  exit(1)
}
report("quantum_asked", "\(quantum)/\(rate)")

check(cued_pw_stream_connect(capture) == 0, "capture connect: \(stateText(capture))")

for round in 1...max(1, rounds) {
  source.reset()
  recorder.reset()
  let connectStart = monotonicNanoseconds()
  source.skipped.restart()
  let rc = cued_pw_stream_connect(output)
  let reached = cued_pw_stream_wait(output, CUED_PW_STATE_STREAMING, 2000)
  report("round", "\(round)")
  report("connect_ms", "\(milliseconds(since: connectStart))")
  guard rc == 0, reached == CUED_PW_STATE_STREAMING else {
    failures.append("round \(round): output did not stream: \(stateText(output))")
    break
  }
  check(waitForNode(nodeName, present: true, timeoutMilliseconds: 1000), "round \(round): node not in the graph while connected")
  if round == 2, let restartCommand {
    // The server goes away under a streaming output: the state must say so, and connect must come back.
    let restarted = (try? Spawn.run("/bin/sh", ["-c", restartCommand + " >/dev/null"]))?.status == 0
    check(restarted, "the restart command failed")
    let state = cued_pw_stream_wait(output, CUED_PW_STATE_ERROR, 2000)
    report("state_after_restart", stateText(output))
    check(state == CUED_PW_STATE_ERROR, "round 2: the output did not report the server's restart")
    let reconnectStart = monotonicNanoseconds()
    check(cued_pw_stream_connect(capture) == 0, "capture reconnect: \(stateText(capture))")
    source.skipped.restart()
    check(cued_pw_stream_connect(output) == 0, "output reconnect: \(stateText(output))")
    let back = cued_pw_stream_wait(output, CUED_PW_STATE_STREAMING, 2000)
    report("reconnect_ms", "\(milliseconds(since: reconnectStart))")
    check(back == CUED_PW_STATE_STREAMING, "round 2: no stream after the restart: \(stateText(output))")
    _ = cued_pw_stream_wait(capture, CUED_PW_STATE_STREAMING, 2000)
    check(waitForNode(nodeName, present: true, timeoutMilliseconds: 1000), "round 2: node not in the new graph")
  }
  recorder.recording.store(true, ordering: .releasing)
  sleepMilliseconds(200)
  if pauseMilliseconds > 0 {
    // Paused, the stream keeps its node but is not scheduled; the trigger resumes it (as cued's next cue does).
    check(cued_pw_stream_set_active(output, 0) == 0, "round \(round): pause")
    sleepMilliseconds(20)  // a cycle already under way when it paused
    var before: UInt64 = 0, after: UInt64 = 0, ignored: UInt64 = 0
    cued_pw_stream_counters(output, &before, &ignored)
    sleepMilliseconds(pauseMilliseconds)
    cued_pw_stream_counters(output, &after, &ignored)
    report("cycles_while_paused", "\(after - before)")
  }
  let triggerNanoseconds = monotonicNanoseconds()
  source.trigger.store(true, ordering: .releasing)
  if pauseMilliseconds > 0 {
    source.skipped.restart()  // the graph moved on while paused: no xrun
    check(cued_pw_stream_set_active(output, 1) == 0, "round \(round): resume")
  }
  sleepMilliseconds(400)
  recorder.recording.store(false, ordering: .sequentiallyConsistent)
  sleepMilliseconds(20)  // let a callback that began before the store finish

  var timing = cued_pw_timing()
  _ = cued_pw_stream_time(output, &timing)
  var cycles: UInt64 = 0
  var missed: UInt64 = 0
  cued_pw_stream_counters(output, &cycles, &missed)
  cued_pw_stream_disconnect(output)
  check(cued_pw_stream_state(output, nil, 0) == CUED_PW_STATE_UNCONNECTED, "round \(round): state after disconnect")
  let nodeGone = waitForNode(nodeName, present: false, timeoutMilliseconds: 1000)
  check(nodeGone, "round \(round): node still in the graph after disconnect")
  report("node_removed_on_disconnect", "\(nodeGone)")

  let minRequested = source.minRequested.load(ordering: .relaxed)
  let maxRequested = source.maxRequested.load(ordering: .relaxed)
  report("quantum_requested_min_max", "\(minRequested) \(maxRequested)")
  // PipeWire rounds node.latency down to a power of two unless the server sets
  // clock.power-of-two-quantum = false (240 becomes 128 on a stock desktop).
  let powerOfTwo = quantum.nonzeroBitCount == 1
  check(
    minRequested == maxRequested && maxRequested <= quantum && (!powerOfTwo || maxRequested == quantum),
    "round \(round): callback asked for \(minRequested)...\(maxRequested) frames, not \(quantum)")
  report("pw_time", "rate=\(timing.rate_num)/\(timing.rate_denom) delay=\(timing.delay) ticks=\(timing.ticks) queued_bytes=\(timing.queued_bytes) buffered=\(timing.buffered_frames) queued_buffers=\(timing.queued_buffers) avail_buffers=\(timing.avail_buffers)")
  report("cycles_missed", "\(cycles) \(missed)")
  report("xruns", "\(source.skipped.count)")  // skipped graph cycles so far (a pause is not one)
  let startDelay = source.startDelay.load(ordering: .relaxed)
  let startQueued = source.startQueuedBytes.load(ordering: .relaxed)
  report("delay_at_tone_frames", "\(startDelay) queued_bytes=\(startQueued)")

  // The captured tone: first and last sample above a threshold, level, zero crossings.
  let frames = recorder.frameCount.load(ordering: .acquiring)
  let threshold: Float = 0.05
  var first = -1
  var last = -1
  for frame in 0..<frames where abs(recorder.samples[frame * 2]) > threshold {
    if first < 0 { first = frame }
    last = frame
  }
  guard first >= 0, source.playedFrames.load(ordering: .acquiring) == toneFrames else {
    failures.append("round \(round): no tone captured (\(frames) frames recorded)")
    continue
  }
  // The tone's extent: from its first sample to the zero crossing after its last peak.
  let extent = last - (first - 1) + 1  // the tone's frame 0 is sin(0) = 0: its first nonzero sample is frame 1
  var sumSquares = 0.0
  var crossings = 0
  var sameInBothChannels = true
  for frame in first..<(first + toneFrames) where frame < frames {
    let left = recorder.samples[frame * 2]
    sumSquares += Double(left) * Double(left)
    if frame > first && (left >= 0) != (recorder.samples[frame * 2 - 2] >= 0) { crossings += 1 }
    if left != recorder.samples[frame * 2 + 1] { sameInBothChannels = false }
  }
  let rms = (sumSquares / Double(toneFrames)).squareRoot()
  let expectedRMS = Double(toneAmplitude) / 2.0.squareRoot()
  let levelDecibels = 20 * log10(rms / expectedRMS)
  report("tone_extent_frames", "\(extent)")
  report("tone_level_db_vs_sent", String(Int((levelDecibels * 100).rounded())) + "e-2")
  report("tone_zero_crossings", "\(crossings)")
  check(abs(extent - toneFrames) <= 48, "round \(round): tone lasted \(extent) frames, not about \(toneFrames)")
  check(abs(levelDecibels) < 0.5, "round \(round): tone level off by \(levelDecibels) dB")
  check(abs(crossings - 200) <= 2, "round \(round): \(crossings) zero crossings, not about 200 (1 kHz)")
  check(sameInBothChannels, "round \(round): left and right differ")

  // Onset: from the start of the cycle the tone was written in to the cycle time of its first frame on
  // the monitor. The tone's frame 0 is sin(0) = 0, so its first nonzero sample is frame 1.
  var cycle = recorder.cycleCount.load(ordering: .acquiring) - 1
  while cycle > 0 && recorder.cycleFirstFrame[cycle] > first { cycle -= 1 }
  let offsetFrames = Int64(first - 1 - recorder.cycleFirstFrame[cycle])
  let heardNanoseconds = recorder.cycleNanoseconds[cycle] + offsetFrames * 1_000_000_000 / Int64(rate)
  let onsetNanoseconds = heardNanoseconds - source.startNowNanoseconds.load(ordering: .relaxed)
  let onsetFrames = (onsetNanoseconds * Int64(rate) + 500_000_000) / 1_000_000_000
  report("onset_frames_cycle_to_monitor", "\(onsetFrames)")
  report("onset_quanta", "\(Double(onsetFrames) / Double(quantum))")
  // What a client would see: from the moment the control thread asks (the callback picks it up at the
  // next cycle) to the first frame on the monitor.
  report("trigger_to_heard_ms", "\(milliseconds(since: triggerNanoseconds, until: heardNanoseconds))")
  report("capture_delay_frames", "\(recorder.cycleDelay[cycle])")

  // Bit-exact? The monitor should carry exactly the samples written (volume 1, no conversion).
  var maxError: Float = 0
  for frame in 0..<toneFrames where first - 1 + frame < frames {
    let sent = toneAmplitude * Float(sin(2 * Double.pi * toneHz * Double(frame) / Double(rate)))
    maxError = max(maxError, abs(recorder.samples[(first - 1 + frame) * 2] - sent))
  }
  report("tone_max_sample_error", "\(maxError)")
}

// Open and silent: what a connected output costs this process (the server's share is measured outside).
if silentSeconds > 0 {
  source.reset()
  cued_pw_stream_disconnect(capture)
  _ = cued_pw_stream_connect(output)
  _ = cued_pw_stream_wait(output, CUED_PW_STATE_STREAMING, 2000)
  var before = rusage()
  getrusage(RUSAGE_SELF.rawValue, &before)
  let start = monotonicNanoseconds()
  sleepMilliseconds(silentSeconds * 1000)
  var after = rusage()
  getrusage(RUSAGE_SELF.rawValue, &after)
  func microseconds(_ time: timeval) -> Int64 { Int64(time.tv_sec) * 1_000_000 + Int64(time.tv_usec) }
  let cpu = microseconds(after.ru_utime) - microseconds(before.ru_utime) + microseconds(after.ru_stime) - microseconds(before.ru_stime)
  let wall = (monotonicNanoseconds() - start) / 1000
  report("silent_cpu_percent", "\(Double(cpu * 10_000 / wall) / 100)")
  report("silent_context_switches", "\((after.ru_nvcsw + after.ru_nivcsw) - (before.ru_nvcsw + before.ru_nivcsw))")
  cued_pw_stream_disconnect(output)
}

cued_pw_stream_free(output)
cued_pw_stream_free(capture)

// The same probe against a server name nobody serves must say no.
let bogusAnswers = cued_pw_server_answers("cued-no-such-server", 500) != 0
report("server_answers_for_missing_remote", "\(bogusAnswers)")
check(!bogusAnswers, "a missing server was reported as answering")

if failures.isEmpty {
  print("result=ok")
} else {
  for failure in failures where !failure.isEmpty { print("failure=\(failure)") }
  print("result=fail")
  exit(1)
}
