// The libFuzzer entry point, compiled only in the fuzzing build (scripts/fuzz.sh):
//
//   swift build --scratch-path .build-fuzz -c release --sanitize=fuzzer -Xswiftc -DCUED_FUZZ \
//     -Xswiftc -assert-config -Xswiftc Debug --product cued-fuzz
//
// `--sanitize=fuzzer` instruments every module of the product for coverage and links libFuzzer,
// whose `main` drives this function; the replayer's `@main` (Replayer.swift) is compiled out.
#if CUED_FUZZ
import CueProtocolFuzzing

/// One fuzz input: bytes a client could send, through framing, decoding and the replies.
/// Traps when an invariant of `ProtocolFuzzing` breaks; libFuzzer saves the input as a crash.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  ProtocolFuzzing.run(UnsafeRawBufferPointer(start: data, count: size))
  return 0
}
#endif
