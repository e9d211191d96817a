import CueProtocol

/// JSON as docs/protocol.schema.json is laid out: one member or element a line, indented by one
/// space a level, `": "` after keys, non-ASCII characters as themselves (Python's
/// `json.dumps(value, indent=1, ensure_ascii=False)`, which the file was first written with).
enum PrettyJSON {
  static func text(_ value: JSONValue) -> String {
    var out = ""
    write(value, depth: 0, into: &out)
    return out + "\n"
  }

  static func write(_ value: JSONValue, depth: Int, into out: inout String) {
    let inner = String(repeating: " ", count: depth + 1)
    switch value {
    case .null: out += "null"
    case .bool(let b): out += b ? "true" : "false"
    case .number(let x): out += x == x.rounded() && abs(x) < 9.2e18 ? String(Int(x)) : String(x)
    case .string(let s): quote(s, into: &out)
    case .array(let elements) where elements.isEmpty: out += "[]"
    case .array(let elements):
      out += "[\n"
      for (i, element) in elements.enumerated() {
        out += inner
        write(element, depth: depth + 1, into: &out)
        out += i == elements.count - 1 ? "\n" : ",\n"
      }
      out += String(repeating: " ", count: depth) + "]"
    case .object(let members) where members.isEmpty: out += "{}"
    case .object(let members):
      out += "{\n"
      for (i, (key, member)) in members.enumerated() {
        out += inner
        quote(key, into: &out)
        out += ": "
        write(member, depth: depth + 1, into: &out)
        out += i == members.count - 1 ? "\n" : ",\n"
      }
      out += String(repeating: " ", count: depth) + "}"
    }
  }

  static func quote(_ s: String, into out: inout String) {
    out += "\""
    for scalar in s.unicodeScalars {
      switch scalar {
      case "\"": out += "\\\""
      case "\\": out += "\\\\"
      case "\n": out += "\\n"
      case "\r": out += "\\r"
      case "\t": out += "\\t"
      case "\u{08}": out += "\\b"
      case "\u{0C}": out += "\\f"
      case let c where c.value < 0x20:
        let hex = String(c.value, radix: 16)
        out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
      default: out.unicodeScalars.append(scalar)
      }
    }
    out += "\""
  }
}
