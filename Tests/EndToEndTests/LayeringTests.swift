import DaemonTestSupport
import Foundation
import Testing

/// What the layers promise about linking, read off the built binaries' ELF dynamic sections.
@Suite("The layers, as linked")
struct LayeringTests {
  /// The shared libraries `binary` needs (DT_NEEDED), as `readelf -d` prints them.
  static func needed(_ binary: String) throws -> [String] {
    let result = try run("/usr/bin/readelf", ["-d", Harness.productsDirectory + "/" + binary])
    #expect(result.status == 0, "\(result.stderr)")
    return result.stdout.split(separator: "\n").compactMap { line in
      guard line.contains("(NEEDED)"), let open = line.firstIndex(of: "["), let close = line.lastIndex(of: "]") else { return nil }
      return String(line[line.index(after: open)..<close])
    }
  }

  static let soundServerLibraries = ["libpulse", "libpipewire", "libasound"]

  /// The decoder fuzzer links the decoders and nothing of the output layer; cuectl and the client
  /// library link no audio library at all.
  @Test(arguments: ["cued-fuzz-decode", "cuectl", "cued-carousel"])
  func programsOutsideTheOutputLayerLinkNoSoundServer(binary: String) throws {
    let libraries = try Self.needed(binary)
    #expect(!libraries.isEmpty, "readelf found no NEEDED entries in \(binary)")
    for library in libraries {
      #expect(!Self.soundServerLibraries.contains { library.hasPrefix($0) }, "\(binary) links \(library)")
    }
    if binary == "cued-fuzz-decode" { #expect(libraries.contains { $0.hasPrefix("libmpg123") }) }
  }

  /// The daemon links ALSA, which every run may use, and neither sound server's client library nor
  /// GLib: those are loaded (dlopen) when that backend is chosen or probed, and when the desktop's
  /// sound settings are followed (BackendLoadingTests and DesktopSettingsTests see it happen).
  @Test func theDaemonLinksNoSoundServerClientNorGLib() throws {
    let libraries = try Self.needed("cued")
    #expect(libraries.contains { $0.hasPrefix("libasound") }, "cued: \(libraries)")
    for library in libraries {
      #expect(!library.hasPrefix("libpulse") && !library.hasPrefix("libpipewire"), "cued links \(library)")
      #expect(!library.hasPrefix("libgio") && !library.hasPrefix("libglib") && !library.hasPrefix("libgobject"), "cued links \(library)")
    }
  }
}
