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
import CueProtocol

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@main
struct Replayer {
  static func main() {
    let arguments = Array(CommandLine.arguments.dropFirst())
    if arguments.isEmpty || arguments.contains("-h") || arguments.contains("--help") {
      print("usage: cued-fuzz DIR|FILE...  (replays fuzz inputs; scripts/fuzz.sh fuzzes)")
      exit(arguments.isEmpty ? 2 : 0)
    }
    var files: [String] = []
    for argument in arguments {
      if let names = directoryEntries(argument) {
        files += names.map { argument.hasSuffix("/") ? argument + $0 : argument + "/" + $0 }
      } else {
        files.append(argument)
      }
    }
    var total = ProtocolFuzzing.Outcome()
    var bytes = 0
    for file in files {
      guard let contents = readFile(file) else {
        printError("cued-fuzz: cannot read \(file): \(String(cString: strerror(errno)))")
        exit(1)
      }
      bytes += contents.count
      do {
        total += try ProtocolFuzzing.check(contents)
      } catch {
        printError("cued-fuzz: \(file): \(error)")
        exit(1)
      }
    }
    print(
      "cued-fuzz: \(files.count) inputs (\(bytes) bytes): \(total.lines) lines, \(total.requests) requests, "
        + "\(total.carouselMessages) carousel messages, \(total.errorReplies) error replies "
        + "(\(total.oversizeLines) oversize); every invariant held")
  }

  /// One line on standard error (the C `stderr` global is not concurrency-safe in Swift 6).
  static func printError(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
  }

  /// The names of a directory's regular files, sorted, without dot files; nil when `path` is not a directory.
  static func directoryEntries(_ path: String) -> [String]? {
    guard let directory = opendir(path) else { return nil }
    defer { closedir(directory) }
    var names: [String] = []
    while let entry = readdir(directory) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
        String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
      }
      if name.hasPrefix(".") { continue }
      var info = stat()
      let full = path.hasSuffix("/") ? path + name : path + "/" + name
      if stat(full, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG { names.append(name) }
    }
    return names.sorted()
  }

  /// A whole file's bytes, or nil (errno set).
  static func readFile(_ path: String) -> [UInt8]? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var contents: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 64 * 1024)
    while true {
      let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
      if n < 0 {
        if errno == EINTR { continue }
        return nil
      }
      if n == 0 { return contents }
      contents += chunk[0..<n]
    }
  }
}
#endif
