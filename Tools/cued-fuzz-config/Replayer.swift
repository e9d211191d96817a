// cued-fuzz-config in a normal build: a replayer of config fuzz inputs through the same check
// (`ConfigFuzzing.check`), for a saved crash or the whole corpus:
//
//   cued-fuzz-config Fuzz/config-corpus
//   cued-fuzz-config .build-fuzz/artifacts/crash-…
//
// Prints one summary line and exits 0, or names the file whose invariant broke and exits 1.
#if !CUED_FUZZ
import CuePosix

@main
struct Replayer {
  static func main() {
    CorpusReplay.replay(
      program: "cued-fuzz-config",
      usage: "usage: cued-fuzz-config DIR|FILE...  (replays config fuzz inputs; FUZZ_TARGET=config scripts/fuzz.sh fuzzes)",
      limit: 4 << 20, check: ConfigFuzzing.check
    ) { files, total in
      "cued-fuzz-config: \(files) inputs: \(total.parsed) parsed, \(total.refused) refused with a line and a reason; every invariant held"
    }
  }
}

extension ConfigFuzzing.Outcome: ReplayTally {}
#endif
