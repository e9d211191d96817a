/// A screenful of character cells, drawn into and then written out as ANSI escapes in one go.
///
/// Each cell holds one Unicode scalar of width 1 and a style. Drawing is clipped to the frame,
/// so cards may lie partly (or wholly) off screen. Pure: no terminal is touched.
struct Frame {
  /// How a cell looks: 256-colour foreground and background (nil: the terminal's own), and attributes.
  struct Style: Equatable, Sendable {
    var foreground: UInt8? = nil
    var background: UInt8? = nil
    var bold = false
    var dim = false
    var reverse = false

    static let plain = Style()

    /// The SGR sequence that sets exactly this style (from a reset).
    var sgr: String {
      var codes = ["0"]
      if bold { codes.append("1") }
      if dim { codes.append("2") }
      if reverse { codes.append("7") }
      if let foreground { codes.append("38;5;\(foreground)") }
      if let background { codes.append("48;5;\(background)") }
      return "\u{1b}[" + codes.joined(separator: ";") + "m"
    }
  }

  let columns: Int
  let rows: Int
  private var scalars: [Unicode.Scalar]
  private var styles: [Style]

  /// A blank frame of `columns` × `rows` (each at least 0).
  init(columns: Int, rows: Int) {
    self.columns = max(0, columns)
    self.rows = max(0, rows)
    scalars = Array(repeating: " ", count: self.columns * self.rows)
    styles = Array(repeating: .plain, count: self.columns * self.rows)
  }

  /// Paints the cells of `rowRange` × `columnRange` (clipped) blank in `style`.
  mutating func fill(rows rowRange: Range<Int>, columns columnRange: Range<Int>, style: Style) {
    let rs = rowRange.clamped(to: 0..<rows)
    let cs = columnRange.clamped(to: 0..<columns)
    for r in rs {
      for c in cs {
        scalars[r * columns + c] = " "
        styles[r * columns + c] = style
      }
    }
  }

  /// Writes `text` from (`row`, `column`) rightwards, clipped; one cell per Unicode scalar.
  mutating func put(_ text: String, row: Int, column: Int, style: Style) {
    guard (0..<rows).contains(row) else { return }
    var c = column
    for scalar in text.unicodeScalars {
      if (0..<columns).contains(c) {
        scalars[row * columns + c] = scalar
        styles[row * columns + c] = style
      }
      c += 1
    }
  }

  /// The text of one row, without styles, trailing blanks kept.
  func text(row: Int) -> String {
    var s = String.UnicodeScalarView()
    s.append(contentsOf: scalars[(row * columns)..<((row + 1) * columns)])
    return String(s)
  }

  /// The whole frame as terminal output: each row placed with a cursor move, styles changed only
  /// where they change, attributes reset at the end.
  var ansi: String {
    var out = ""
    out.reserveCapacity(columns * rows * 2 + rows * 16)
    for r in 0..<rows {
      out += "\u{1b}[\(r + 1);1H"
      var current: Style? = nil
      for c in 0..<columns {
        let style = styles[r * columns + c]
        if style != current {
          out += style.sgr
          current = style
        }
        out.unicodeScalars.append(scalars[r * columns + c])
      }
    }
    out += "\u{1b}[0m"
    return out
  }
}
