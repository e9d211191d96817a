// `cued-pwprobe floor`: the floor of the onset benchmark (bench/heard.py), a native pw_stream that is
// kept open (streaming silence at --quantum) and plays the probe's tone when told to.
//
//   cued-pwprobe floor [--quantum 128] [--target NODE]
//
// Reads commands on standard input, one a line, and answers each on standard output:
//   connect     puts the stream into the graph and waits until it streams   -> `connected`
//   play        asks for a tone at the next cycle                          -> `played=NS`
//   disconnect  takes the stream out of the graph                          -> `disconnected`
// NS is CLOCK_MONOTONIC when the request was made, the moment a benchmark counts the onset from (as it
// counts cued's from the moment it sent `play`); the onset itself is read from a recording of the
// sink's monitor (`cued-pwprobe record`). End of input ends the run. While connected and silent the
// stream keeps asking for --quantum frames, so the graph runs at that quantum: a benchmark that
// measures another program alone disconnects the floor first.
import CPipeWireShims
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Silence, and one tone per request. The control thread only counts requests; the real-time
/// callback alone owns the tone's position, so a request never races a tone under way.
private final class FloorSource: Sendable {
  let requested = Atomic<Int>(0)
  let started = Atomic<Int>(0)  // written by the callback only
  let position = Atomic<Int>(toneFrames)  // frames of the current tone written; toneFrames: none under way
}

private let floorProcess: cued_pw_process_fn = { user, buffer, frames, _ in
  guard let user, let buffer else { return }
  let source = Unmanaged<FloorSource>.fromOpaque(user).takeUnretainedValue()
  var position = source.position.load(ordering: .relaxed)
  let started = source.started.load(ordering: .relaxed)
  if position >= toneFrames && source.requested.load(ordering: .acquiring) > started {
    source.started.store(started + 1, ordering: .relaxed)
    position = 0
  }
  for frame in 0..<Int(frames) {
    var value: Float = 0
    if position < toneFrames {
      value = toneAmplitude * Float(sin(2 * Double.pi * toneHz * Double(position) / Double(rate)))
      position += 1
    }
    buffer[frame * 2] = value
    buffer[frame * 2 + 1] = value
  }
  source.position.store(position, ordering: .relaxed)
}

@MainActor func keptOpenFloor(_ arguments: [String]) -> Int32 {
  var quantum: UInt32 = 128
  var target: String? = nil
  var rest = arguments[...]
  while let argument = rest.popFirst() {
    switch argument {
    case "--quantum": quantum = UInt32(rest.popFirst() ?? "") ?? quantum
    case "--target": target = rest.popFirst()
    default:
      print("usage: cued-pwprobe floor [--quantum FRAMES] [--target NODE]   (commands on stdin: connect, play, disconnect)")
      return 2
    }
  }
  let source = FloorSource()
  guard
    let output = cued_pw_output_new(
      "cued-pwprobe", "cued-pwprobe-floor", "Notification", target, rate, channels, quantum, floorProcess,
      Unmanaged.passUnretained(source).toOpaque())
  else {
    print("error=cannot make the stream")
    return 1
  }
  defer { cued_pw_stream_free(output) }
  while let line = readLine() {
    switch line {
    case "connect":
      guard cued_pw_stream_connect(output) == 0, cued_pw_stream_wait(output, CUED_PW_STATE_STREAMING, 2000) == CUED_PW_STATE_STREAMING
      else {
        print("error=the stream did not start: \(stateText(output))")
        return 1
      }
      print("connected")
    case "play":
      let now = monotonicNanoseconds()
      source.requested.add(1, ordering: .releasing)
      print("played=\(now)")
    case "disconnect":
      cued_pw_stream_disconnect(output)
      print("disconnected")
    default:
      print("error=unknown command '\(line)' (connect, play, disconnect)")
      return 2
    }
    fflush(nil)
  }
  return 0
}
