// cued-fuzz-decode in a normal build: a replayer of decoder fuzz inputs through the same check
// (`DecodeFuzzing.check`), for a saved crash or the whole corpus:
//
//   cued-fuzz-decode Fuzz/decode-corpus
//   cued-fuzz-decode .build-fuzz/artifacts/crash-…
//
// Prints one summary line and exits 0, or names the file whose invariant broke and exits 1.
#if !CUED_FUZZ
import CuePosix

#if canImport(Glibc)
import Glibc
#endif

@main
struct Replayer {
  static func main() {
    let files = CorpusReplay.files(
      usage: "usage: cued-fuzz-decode DIR|FILE...  (replays decoder fuzz inputs; FUZZ_TARGET=decode scripts/fuzz.sh fuzzes)")
    var total = DecodeFuzzing.Outcome()
    for file in files {
      do {
        total += try DecodeFuzzing.check(try Files.read(path: file, limit: 16 << 20))
      } catch let error as DecodeFuzzing.Broken {
        writeToStandardError("cued-fuzz-decode: \(file): \(error)\n")
        exit(1)
      } catch {
        writeToStandardError("cued-fuzz-decode: cannot read \(file): \(error)\n")
        exit(1)
      }
    }
    print("cued-fuzz-decode: \(files.count) inputs: \(total.decoded) decoded (\(total.frames) frames), \(total.refused) refused with a reason; every invariant held")
  }
}
#endif
