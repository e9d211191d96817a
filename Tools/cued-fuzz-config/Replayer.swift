// cued-fuzz-config in a normal build: a replayer of config fuzz inputs through the same check
// (`ConfigFuzzing.check`), for a saved crash or the whole corpus:
//
//   cued-fuzz-config Fuzz/config-corpus
//   cued-fuzz-config .build-fuzz/artifacts/crash-…
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
      usage: "usage: cued-fuzz-config DIR|FILE...  (replays config fuzz inputs; FUZZ_TARGET=config scripts/fuzz.sh fuzzes)")
    var total = ConfigFuzzing.Outcome()
    for file in files {
      do {
        total += try ConfigFuzzing.check(try Files.read(path: file, limit: 4 << 20))
      } catch let error as ConfigFuzzing.Broken {
        writeToStandardError("cued-fuzz-config: \(file): \(error)\n")
        exit(1)
      } catch {
        writeToStandardError("cued-fuzz-config: cannot read \(file): \(error)\n")
        exit(1)
      }
    }
    print("cued-fuzz-config: \(files.count) inputs: \(total.parsed) parsed, \(total.refused) refused with a line and a reason; every invariant held")
  }
}
#endif
