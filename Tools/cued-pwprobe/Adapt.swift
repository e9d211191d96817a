// `cued-pwprobe adapt`: the shim's part of the adaptive node.latency, end to end on a real server.
//
//   cued-pwprobe adapt [--quantum 128] [--max 512] [--decay-ms 700] [--late-ms 40]
//
// Streams silence at --quantum, then makes its own process callback late once by --late-ms, which
// makes the graph skip cycles: an xrun, as a busy machine causes one. Checks that the callback
// finds it (cued's own test, GraphCycles: `SkippedCycles`), that asking for twice the quantum
// (what cued's LatencyAdapter asks after an xrun, up to --max) makes the graph run at it, and
// that asking for --quantum again after --decay-ms brings it back. The rule itself (when, how much) is Swift's and is tested in CueCoreTests and, through
// cued, in PipeWireOutputTests. Prints `key=value` lines and `result=ok`, or `failure=` lines and
// `result=fail` (exit 1).
import CPipeWireShims
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Silence, and what the server asked for in the latest cycle; sleeps once when told to.
private final class LateSource: Sendable {
  let lateMilliseconds = Atomic<Int>(0)
  let lastRequested = Atomic<UInt32>(0)
  let skipped = SkippedCycles()
}

private let lateProcess: cued_pw_process_fn = { user, buffer, frames, timing in
  guard let user, let buffer, let timing else { return }
  let source = Unmanaged<LateSource>.fromOpaque(user).takeUnretainedValue()
  source.skipped.cycle(timing.pointee)
  defer { source.skipped.finished() }
  source.lastRequested.store(timing.pointee.frames_requested, ordering: .relaxed)
  buffer.update(repeating: 0, count: Int(frames) * 2)
  // The probe's own callback, not cued's: a deliberately late client, once.
  let late = source.lateMilliseconds.exchange(0, ordering: .relaxed)
  if late > 0 { sleepMilliseconds(late) }
}

@MainActor func adapt(_ arguments: [String]) -> Int32 {
  var quantum: UInt32 = 128
  var maximum: UInt32 = 512
  var decayMilliseconds = 700
  var lateMilliseconds = 40
  var rest = arguments[...]
  while let argument = rest.popFirst() {
    switch argument {
    case "--quantum": quantum = UInt32(rest.popFirst() ?? "") ?? quantum
    case "--max": maximum = UInt32(rest.popFirst() ?? "") ?? maximum
    case "--decay-ms": decayMilliseconds = Int(rest.popFirst() ?? "") ?? decayMilliseconds
    case "--late-ms": lateMilliseconds = Int(rest.popFirst() ?? "") ?? lateMilliseconds
    default:
      print("usage: cued-pwprobe adapt [--quantum FRAMES] [--max FRAMES] [--decay-ms MS] [--late-ms MS]")
      return 2
    }
  }
  let source = LateSource()
  guard
    let output = cued_pw_output_new(
      "cued-pwprobe", "cued-pwprobe-adapt", "Notification", nil, rate, channels, quantum, lateProcess,
      Unmanaged.passUnretained(source).toOpaque())
  else {
    print("result=fail (could not make the stream)")
    return 1
  }
  defer { cued_pw_stream_free(output) }
  var failures: [String] = []
  func expect(_ condition: Bool, _ what: String) { if !condition { failures.append(what) } }
  /// Waits up to `milliseconds` for the graph to ask for `frames` per cycle.
  func quantumBecomes(_ frames: UInt32, within milliseconds: Int) -> Bool {
    for _ in 0..<(milliseconds / 10) {
      if source.lastRequested.load(ordering: .relaxed) == frames { return true }
      sleepMilliseconds(10)
    }
    return source.lastRequested.load(ordering: .relaxed) == frames
  }

  source.skipped.restart()
  guard cued_pw_stream_connect(output) == 0, cued_pw_stream_wait(output, CUED_PW_STATE_STREAMING, 2000) == CUED_PW_STATE_STREAMING
  else {
    print("result=fail (the stream did not start: \(stateText(output)))")
    return 1
  }
  expect(quantumBecomes(quantum, within: 500), "the graph did not run at \(quantum) frames at first")
  report("quantum_before", "\(source.lastRequested.load(ordering: .relaxed))")
  let xrunsBefore = source.skipped.count

  source.lateMilliseconds.store(lateMilliseconds, ordering: .relaxed)
  let raisedAt = monotonicNanoseconds()
  var xrunSeen = false
  for _ in 0..<50 where !xrunSeen {
    xrunSeen = source.skipped.count > xrunsBefore
    if !xrunSeen { sleepMilliseconds(10) }
  }
  expect(xrunSeen, "the late cycle was not counted as an xrun within 0.5 s")
  let raised = min(maximum, quantum * 2)
  cued_pw_stream_set_latency(output, raised)
  expect(quantumBecomes(raised, within: 500), "no \(raised)-frame quantum within 0.5 s of asking for it")
  report("xruns", "\(source.skipped.count - xrunsBefore)")
  report("latency_asked_after_xrun", "\(cued_pw_stream_latency(output))")
  report("quantum_after_xrun", "\(source.lastRequested.load(ordering: .relaxed))")
  report("raise_ms", "\(milliseconds(since: raisedAt))")
  expect(cued_pw_stream_latency(output) == raised, "asks for \(cued_pw_stream_latency(output)) frames, not \(raised)")

  sleepMilliseconds(decayMilliseconds)
  cued_pw_stream_set_latency(output, quantum)
  expect(quantumBecomes(quantum, within: 1000), "not back at \(quantum) frames within 1 s of asking for it")
  report("latency_asked_after_decay", "\(cued_pw_stream_latency(output))")
  report("quantum_after_decay", "\(source.lastRequested.load(ordering: .relaxed))")
  report("decay_ms", "\(milliseconds(since: raisedAt))")
  expect(cued_pw_stream_latency(output) == quantum, "still asks for \(cued_pw_stream_latency(output)) frames")
  cued_pw_stream_disconnect(output)

  if failures.isEmpty {
    print("result=ok")
    return 0
  }
  for failure in failures { print("failure=\(failure)") }
  print("result=fail")
  return 1
}
