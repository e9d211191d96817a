// The libFuzzer entry point of the decoder fuzzer, compiled only in the fuzzing build
// (FUZZ_TARGET=decode scripts/fuzz.sh, `make fuzz-decode`). See Tools/cued-fuzz/FuzzTarget.swift.
#if CUED_FUZZ
/// One fuzz input: the bytes of a sound file. Traps when `DecodeFuzzing.check` finds an
/// invariant broken; libFuzzer saves the input as a crash (a crash in libmpg123, libsndfile or libFLAC is one too).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
  do {
    _ = try DecodeFuzzing.check(bytes)
  } catch {
    fatalError("decoder invariant broken: \(error)")
  }
  return 0
}
#endif
