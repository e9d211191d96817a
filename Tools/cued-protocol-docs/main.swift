import CueProtocolDocs
import CuePosix

#if canImport(Glibc)
import Glibc
#endif

// Rewrites the generated parts of docs/protocol.schema.json and docs/PROTOCOL.md from the op
// table and the field declarations, and the libcanberra driver's cued-protocol.h (CueProtocolDocs), in the repository given as the argument
// (default: the working directory); `--check` only says which differ, and exits 1 if any does.
// `make protocol-docs` runs it.
let arguments = Array(CommandLine.arguments.dropFirst())
let check = arguments.contains("--check")
let root = arguments.first { !$0.hasPrefix("-") } ?? "."

func fail(_ message: String) -> Never {
  writeToStandardError("cued-protocol-docs: \(message)\n")
  exit(2)
}

var differing: [String] = []
for (path, update) in [
  (ProtocolDocs.schemaPath, ProtocolDocs.schema(updating:)), (ProtocolDocs.protocolPath, ProtocolDocs.protocolDocument(updating:)),
  (ProtocolDocs.headerPath, ProtocolDocs.header(updating:)),
] {
  let file = root + "/" + path
  // A file not there yet (the header, at first) is written whole.
  let old = (try? Files.read(path: file, limit: 16 << 20)).map { String(decoding: $0, as: UTF8.self) } ?? ""
  let new: String
  do {
    new = try update(old)
  } catch {
    fail(error.description)
  }
  guard new != old else { continue }
  differing.append(path)
  if !check {
    do {
      try Files.write(Array(new.utf8), to: file)
    } catch {
      fail("cannot write \(file): \(error)")
    }
  }
}
print(differing.isEmpty ? "up to date" : (check ? "differ: " : "rewrote: ") + differing.joined(separator: ", "))
exit(check && !differing.isEmpty ? 1 : 0)
