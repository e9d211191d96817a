// cued-fuzz in a normal build (`swift build`): a corpus replayer. It runs files through the same
// function as the fuzzer (`ProtocolFuzzing.check`), so a saved crash or a whole corpus can be
// replayed without libFuzzer:
//
//   cued-fuzz Fuzz/corpus                      every file in the directory
//   cued-fuzz .build-fuzz/artifacts/crash-…    one file
//
// It prints one summary line and exits 0, or names the file whose invariant broke and exits 1.
// A crash is a crash. The fuzzing build (FuzzTarget.swift, -DCUED_FUZZ) leaves this out.
#if !CUED_FUZZ
import CuePosix
import CueProtocolFuzzing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@main
struct Replayer {
  static func main() {
    let files = CorpusReplay.files(usage: "usage: cued-fuzz DIR|FILE...  (replays fuzz inputs; scripts/fuzz.sh fuzzes)")
    var total = ProtocolFuzzing.Outcome()
    var bytes = 0
    for file in files {
      let contents: [UInt8]
      do {
        contents = try Files.read(path: file, limit: 16 << 20)
      } catch {
        writeToStandardError("cued-fuzz: cannot read \(file): \(error.reason)\n")
        exit(1)
      }
      bytes += contents.count
      do {
        total += try ProtocolFuzzing.check(contents)
      } catch {
        writeToStandardError("cued-fuzz: \(file): \(error)\n")
        exit(1)
      }
    }
    print(
      "cued-fuzz: \(files.count) inputs (\(bytes) bytes): \(total.lines) lines, \(total.requests) requests, "
        + "\(total.carouselMessages) carousel messages, \(total.errorReplies) error replies "
        + "(\(total.oversizeLines) oversize); every invariant held")
  }
}

#endif
