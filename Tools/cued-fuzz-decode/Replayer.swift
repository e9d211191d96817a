// cued-fuzz-decode in a normal build: a replayer of decoder fuzz inputs through the same check
// (`DecodeFuzzing.check`), for a saved crash or the whole corpus:
//
//   cued-fuzz-decode Fuzz/decode-corpus
//   cued-fuzz-decode .build-fuzz/artifacts/crash-…
//
// Prints one summary line and exits 0, or names the file whose invariant broke and exits 1.
#if !CUED_FUZZ
import CuePosix

@main
struct Replayer {
  static func main() {
    CorpusReplay.replay(
      program: "cued-fuzz-decode",
      usage: "usage: cued-fuzz-decode DIR|FILE...  (replays decoder fuzz inputs; FUZZ_TARGET=decode scripts/fuzz.sh fuzzes)",
      limit: 16 << 20, check: DecodeFuzzing.check
    ) { files, total in
      "cued-fuzz-decode: \(files) inputs: \(total.decoded) decoded (\(total.frames) frames), \(total.refused) refused with a reason; every invariant held"
    }
  }
}

extension DecodeFuzzing.Outcome: ReplayTally {}
#endif
