extension String {
  /// The text with every control character escaped, so that it prints as one line and sends the
  /// terminal nothing but text: a cue named after a file `a\nb.mp3` cannot start a line of its own
  /// (a forged log priority, a fake line of cuectl's output), nor can an escape sequence in a name
  /// reach the terminal. `\n`, `\r` and `\t` read as in C; other C0 and C1 controls and DEL as
  /// `\xHH`; the Unicode line and paragraph separators as `\u{2028}`. Printable text, Unicode
  /// included, is left as it is. The daemon's log and cuectl's output both print names this way.
  public var controlCharactersEscaped: String {
    func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
      scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.value == 0x2028 || scalar.value == 0x2029
    }
    guard unicodeScalars.contains(where: needsEscape) else { return self }
    var result = String.UnicodeScalarView()
    for scalar in unicodeScalars {
      guard needsEscape(scalar) else {
        result.append(scalar)
        continue
      }
      let escape: String
      switch scalar {
      case "\n": escape = "\\n"
      case "\r": escape = "\\r"
      case "\t": escape = "\\t"
      default:
        let hex = String(scalar.value, radix: 16)
        escape = scalar.value > 0xFF ? "\\u{\(hex)}" : "\\x" + (hex.count == 1 ? "0" : "") + hex
      }
      result.append(contentsOf: escape.unicodeScalars)
    }
    return String(result)
  }
}
