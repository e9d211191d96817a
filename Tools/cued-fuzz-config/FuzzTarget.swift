// The libFuzzer entry point of the config-file fuzzer, compiled only in the fuzzing build
// (FUZZ_TARGET=config scripts/fuzz.sh, `make fuzz-config`). See Tools/cued-fuzz/FuzzTarget.swift.
#if CUED_FUZZ
/// One fuzz input: the bytes of a cued.toml. Traps when `ConfigFuzzing.check` finds an invariant broken.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
  do {
    _ = try ConfigFuzzing.check(bytes)
  } catch {
    fatalError("config parser invariant broken: \(error)")
  }
  return 0
}
#endif
