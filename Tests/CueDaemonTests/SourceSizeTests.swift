import CuePosix
import Testing

/// No source file under Sources/ grows past 450 lines (issue 35): a file that does holds more than
/// one concern, and is split by concern, as Daemon.swift, StatusReply.swift and Mixer.swift were.
@Suite("Source files stay small enough to read")
struct SourceSizeTests {
  static let limit = 450

  /// The checkout's Sources/ directory.
  static let sources: String = {
    var path = #filePath
    for _ in 0..<3 { path = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)]) }
    return path + "/Sources"
  }()

  /// Every `.swift`, `.c` and `.h` file under `directory`, recursively.
  static func sourceFiles(under directory: String) throws -> [String] {
    var found: [String] = []
    for name in try Files.list(directory: directory) {
      let path = directory + "/" + name
      switch Files.kind(of: path) {
      case .directory: found += try sourceFiles(under: path)
      case .regular where name.hasSuffix(".swift") || name.hasSuffix(".c") || name.hasSuffix(".h"): found.append(path)
      default: break
      }
    }
    return found
  }

  @Test func noSourceFileIsOverTheLimit() throws {
    let files = try Self.sourceFiles(under: Self.sources)
    #expect(files.count > 100, "Sources/ was not found at \(Self.sources)")
    for path in files {
      let lines = try Files.read(path: path, limit: 1 << 20).reduce(0) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
      #expect(lines <= Self.limit, "\(path.dropFirst(Self.sources.count - 7)) has \(lines) lines (over \(Self.limit)): split it by concern")
    }
  }
}
