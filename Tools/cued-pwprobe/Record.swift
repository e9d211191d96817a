// `cued-pwprobe record`: records a sink's monitor through the shim into a raw file, for the tests and
// benchmarks that check what another program (cued) played.
//
//   cued-pwprobe record --out FILE [--cycles FILE] [--sink NAME] [--seconds N]
//
// Prints `ready` once the capture streams, records until N seconds pass (default 10) or SIGTERM or
// SIGINT arrives, then writes FILE: interleaved stereo float32 at 48 kHz, every frame the capture got,
// and, with --cycles, one line per graph cycle: `NOW_NS FIRST_FRAME FRAMES` (the cycle's CLOCK_MONOTONIC
// start, the index of its first frame in FILE and the frames it carried, which is the graph's quantum
// in that cycle), so a frame's time on the monitor, and the quantum that carried it, are known.
// The capture is passive (node.passive, no node.latency): it never starts the graph nor sets its
// quantum; frames arrive only while some stream plays, at the quantum the players chose.
import CPipeWireCapture
import CPipeWireShims
import CuePosix
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

private let stopRequested = Atomic<Bool>(false)

@MainActor func record(_ arguments: [String]) -> Int32 {
  var out: String? = nil
  var cyclesPath: String? = nil
  var sink = "cued-test-sink"
  var seconds = 10
  var rest = arguments[...]
  while let argument = rest.popFirst() {
    switch argument {
    case "--out": out = rest.popFirst()
    case "--cycles": cyclesPath = rest.popFirst()
    case "--sink": sink = rest.popFirst() ?? sink
    case "--seconds": seconds = Int(rest.popFirst() ?? "") ?? seconds
    default:
      print("usage: cued-pwprobe record --out FILE [--cycles FILE] [--sink NAME] [--seconds N]")
      return 2
    }
  }
  guard let out, seconds > 0 else {
    print("usage: cued-pwprobe record --out FILE [--cycles FILE] [--sink NAME] [--seconds N]")
    return 2
  }
  signal(SIGTERM) { _ in stopRequested.store(true, ordering: .relaxed) }
  signal(SIGINT) { _ in stopRequested.store(true, ordering: .relaxed) }

  let recorder = Recorder(seconds: seconds + 1)
  // The callback holds it unretained: it must outlive the stream, freed by the defer below.
  defer { withExtendedLifetime(recorder) {} }
  guard
    let capture = cued_pw_capture_new(
      "cued-pwprobe", "cued-pwprobe-record", sink, rate, channels, 0, recordProcess,
      Unmanaged.passUnretained(recorder).toOpaque())
  else {
    print("error=cannot create the capture stream")
    return 1
  }
  defer { cued_pw_stream_free(capture) }
  guard cued_pw_stream_connect(capture) == 0 else {
    print("error=capture connect: \(stateText(capture))")
    return 1
  }
  // A passive capture of an idle sink pauses (the graph is not running): paused is ready too.
  let state = cued_pw_stream_wait(capture, CUED_PW_STATE_PAUSED, 2000)
  guard state == CUED_PW_STATE_PAUSED || state == CUED_PW_STATE_STREAMING else {
    print("error=capture did not start: \(stateText(capture))")
    return 1
  }
  recorder.recording.store(true, ordering: .releasing)
  print("ready")
  fflush(nil)
  let deadline = monotonicNanoseconds() + Int64(seconds) * 1_000_000_000
  while !stopRequested.load(ordering: .relaxed) && monotonicNanoseconds() < deadline {
    sleepMilliseconds(10)
  }
  recorder.recording.store(false, ordering: .sequentiallyConsistent)
  sleepMilliseconds(20)  // a callback that began before the store finishes
  cued_pw_stream_disconnect(capture)

  let frames = recorder.frameCount.load(ordering: .acquiring)
  guard write(recorder.samples, bytes: frames * Int(channels) * 4, to: out) else {
    print("error=cannot write \(out)")
    return 1
  }
  if let cyclesPath {
    var text = ""
    for cycle in 0..<recorder.cycleCount.load(ordering: .acquiring) {
      text += "\(recorder.cycleNanoseconds[cycle]) \(recorder.cycleFirstFrame[cycle]) \(recorder.cycleFrames[cycle])\n"
    }
    guard text.utf8.withContiguousStorageIfAvailable({ write($0.baseAddress!, bytes: $0.count, to: cyclesPath) }) ?? false else {
      print("error=cannot write \(cyclesPath)")
      return 1
    }
  }
  print("frames=\(frames)")
  return 0
}

private func write(_ bytes: UnsafeRawPointer, bytes count: Int, to path: String) -> Bool {
  let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
  guard fd >= 0 else { return false }
  defer { close(fd) }
  var done = 0
  while done < count {
    let n = Glibc.write(fd, bytes + done, count - done)
    if n < 0 && errno == EINTR { continue }
    guard n > 0 else { return false }
    done += n
  }
  return true
}
