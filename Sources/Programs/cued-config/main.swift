// cued-config: reads a TOML file with TOMLKit (a maintained TOML 1.0 parser) and prints it as one
// line of JSON, so that cued itself needs no TOML parser and no Foundation.
//
//   cued-config FILE   →  {"ok":true,"document":{…}}
//                      or {"ok":false,"line":L,"column":C,"message":"…"}   (exit status 1)
//
// Dates and times become strings. The daemon checks what the document means (docs/CONFIG.md).
import CuePosix
import CueProtocol
import TOMLKit

#if canImport(Glibc)
import Glibc
#endif

func json(_ value: TOMLValueConvertible) -> JSONValue {
  let v = value.tomlValue
  switch v.type {
  case .table:
    guard let table = v.table else { return .null }
    return .object(table.keys.sorted().map { key in (key, table[key].map(json) ?? .null) })
  case .array:
    guard let array = v.array else { return .null }
    return .array(array.map { json($0) })
  case .string: return .string(v.string ?? "")
  case .int: return .number(Double(v.int ?? 0))
  case .double: return .number(v.double ?? 0)
  case .bool: return .bool(v.bool ?? false)
  case .date, .time, .dateTime: return .string(v.debugDescription)
  }
}

/// Writes to a file descriptor directly (C's stdout/stderr globals are not concurrency-safe in Swift 6).
func write(_ text: String, to fd: Int32) {
  try? FileDescriptor(rawValue: fd).writeAll(Array(text.utf8), isSocket: false)
}

func emit(_ value: JSONValue, status: Int32) -> Never {
  write(JSONWriter.write(value) + "\n", to: 1)
  exit(status)
}

let arguments = CommandLine.arguments
guard arguments.count == 2, !arguments[1].hasPrefix("-") else {
  write("usage: cued-config FILE\nPrints the TOML file as one line of JSON (for cued; see docs/CONFIG.md).\n", to: 2)
  exit(2)
}
let path = arguments[1]
guard let file = fopen(path, "r") else {
  emit(.object([("ok", false), ("line", 0), ("column", 0), ("message", .string("cannot read \(path): \(Errno(rawValue: errno).description)"))]), status: 1)
}
var bytes: [UInt8] = []
var chunk = [UInt8](repeating: 0, count: 65536)
while true {
  let n = fread(&chunk, 1, chunk.count, file)
  if n <= 0 { break }
  bytes.append(contentsOf: chunk[0..<n])
  if bytes.count > 4 << 20 {
    emit(.object([("ok", false), ("line", 0), ("column", 0), ("message", "the file is larger than 4 MiB")]), status: 1)
  }
}
fclose(file)
let text = String(decoding: bytes, as: UTF8.self)
do {
  let table = try TOMLTable(string: text)
  emit(.object([("ok", true), ("document", json(table))]), status: 0)
} catch let error as TOMLParseError {
  emit(
    .object([
      ("ok", false), ("line", .number(Double(error.source.begin.line))), ("column", .number(Double(error.source.begin.column))),
      ("message", .string(error.description)),
    ]), status: 1)
} catch {
  emit(.object([("ok", false), ("line", 0), ("column", 0), ("message", .string("\(error)"))]), status: 1)
}
