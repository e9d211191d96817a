import CAllocCounter
import CPipeWireShims
import CuePosix
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A private headless PipeWire (scripts/pipewire-env.sh) for in-process tests. The shim is pointed at
/// its socket by path (`cued_pw_stream_set_remote`), so the test process's environment stays as it
/// is for the suites that run beside this one.
final class HeadlessPipeWire {
  /// The repository's scripts/pipewire-env.sh, three levels above this file.
  static let script = String(#filePath.split(separator: "/", omittingEmptySubsequences: false).dropLast(3).joined(separator: "/"))
    + "/scripts/pipewire-env.sh"
  let directory: String
  var socket: String { directory + "/pipewire-0" }

  init() throws {
    directory = try Files.makeTemporaryDirectory(prefix: "cued-pw")
    try Self.run("start", directory)
  }

  deinit { try? Self.run("stop", directory) }

  private static func run(_ command: String, _ directory: String) throws {
    let result = try Spawn.run(script, [command, directory], timeout: 10)
    guard result.status == 0 else { throw SystemError("pipewire-env.sh \(command) (exit status \(result.status))", code: EIO) }
  }
}

/// Plays a quiet tone and counts the heap operations of the PipeWire data thread over 200 callbacks.
final class CountingTone: Sendable {
  static let firstCountedCycle = 10
  static let countedCycles = 200
  let cycles = Atomic<Int>(0)  // written by the data thread only
  let operations = Atomic<Int>(-1)  // -1 until the window closed
  let minFrames = Atomic<UInt32>(.max)
}

let countingProcess: cued_pw_process_fn = { user, buffer, frames, _ in
  guard let user, let buffer else { return }
  let tone = Unmanaged<CountingTone>.fromOpaque(user).takeUnretainedValue()
  let cycle = tone.cycles.load(ordering: .relaxed)
  if cycle == CountingTone.firstCountedCycle { cued_alloc_counter_start() }
  if frames < tone.minFrames.load(ordering: .relaxed) { tone.minFrames.store(frames, ordering: .relaxed) }
  for frame in 0..<Int(frames) {
    let value = 0.1 * Float(sin(Double((cycle * Int(frames) + frame) % 48) * 2 * Double.pi / 48))
    buffer[frame * 2] = value
    buffer[frame * 2 + 1] = value
  }
  if cycle == CountingTone.firstCountedCycle + CountingTone.countedCycles {
    tone.operations.store(cued_alloc_counter_stop(), ordering: .releasing)
  }
  tone.cycles.store(cycle + 1, ordering: .relaxed)
}

let counterUnavailable: String? = cued_alloc_counter_unavailable_reason().map { String(cString: $0) }

@Suite(
  "The PipeWire pull path allocates nothing",
  .enabled(if: counterUnavailable == nil, Comment(rawValue: counterUnavailable ?? "")))
struct PullPathAllocationTests {
  /// A 48 kHz stereo output asking for 256-frame cycles, playing `tone`, for the server at `socket`.
  static func output(named nodeName: String, playing tone: CountingTone, on socket: String) throws -> OpaquePointer {
    // libpipewire-0.3 is loaded at run time, before anything else of the shim.
    var loadError = [CChar](repeating: 0, count: 512)
    let loaded = cued_pw_load(&loadError, loadError.count)
    try #require(loaded == 0, "\(String(decoding: loadError.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))")
    let output = try #require(
      cued_pw_output_new(
        "cued-tests", nodeName, "Notification", nil, 48_000, 2, 256, countingProcess,
        Unmanaged.passUnretained(tone).toOpaque()))
    cued_pw_stream_set_remote(output, socket)
    return output
  }

  @Test func twoHundredRealTimeCallbacksDoNoMallocOrFree() throws {
    let pipewire = try HeadlessPipeWire()
    #expect(cued_pw_server_answers(pipewire.socket, 1000) == 1)
    #expect(cued_pw_server_answers(pipewire.directory + "/no-such-socket", 500) == 0)

    let tone = CountingTone()
    let output = try Self.output(named: "cued-allocation-test", playing: tone, on: pipewire.socket)
    defer { cued_pw_stream_free(output) }
    #expect(cued_pw_stream_state(output, nil, 0) == CUED_PW_STATE_UNCONNECTED)
    #expect(cued_pw_stream_connect(output) == 0)
    #expect(cued_pw_stream_wait(output, CUED_PW_STATE_STREAMING, 2000) == CUED_PW_STATE_STREAMING)

    let deadline = MonotonicClock.nanoseconds() + 5_000_000_000
    while tone.operations.load(ordering: .acquiring) < 0 && MonotonicClock.nanoseconds() < deadline {
      MonotonicClock.sleep(nanoseconds: 20_000_000)
    }
    var timing = cued_pw_timing()
    #expect(cued_pw_stream_time(output, &timing) == 0)
    cued_pw_stream_disconnect(output)
    #expect(cued_pw_stream_state(output, nil, 0) == CUED_PW_STATE_UNCONNECTED)
    #expect(cued_pw_stream_time(output, &timing) == -1)

    #expect(tone.operations.load(ordering: .acquiring) == 0, "heap operations on the data thread in 200 callbacks")
    #expect(tone.minFrames.load(ordering: .relaxed) == 256)
    var cycles: UInt64 = 0
    var missed: UInt64 = 0
    cued_pw_stream_counters(output, &cycles, &missed)
    #expect(cycles >= UInt64(CountingTone.firstCountedCycle + CountingTone.countedCycles))
    #expect(missed == 0)
  }

  @Test func connectingToNoServerFailsWithTheReason() throws {
    let tone = CountingTone()
    let output = try Self.output(named: "cued-no-server-test", playing: tone, on: "/nonexistent/pipewire-0")
    defer { cued_pw_stream_free(output) }
    #expect(cued_pw_stream_connect(output) < 0)
    var text = [CChar](repeating: 0, count: 256)
    #expect(cued_pw_stream_state(output, &text, text.count) == CUED_PW_STATE_ERROR)
    let message = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    #expect(message.hasPrefix("no PipeWire server"), "\(message)")
  }
}
