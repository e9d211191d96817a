/// A five-row block font for the page numbers on the cards.
///
/// Each digit is 3 × 5 pixels, a pixel two cells wide (`██`), so a digit takes 6 columns and
/// digits are 2 columns apart.
enum BigDigits {
  static let height = 5
  static let digitWidth = 6
  static let spacing = 2

  private static let glyphs: [[String]] = [
    ["###", "# #", "# #", "# #", "###"],  // 0
    [" # ", "## ", " # ", " # ", "###"],  // 1
    ["###", "  #", "###", "#  ", "###"],  // 2
    ["###", "  #", "###", "  #", "###"],  // 3
    ["# #", "# #", "###", "  #", "  #"],  // 4
    ["###", "#  ", "###", "  #", "###"],  // 5
    ["###", "#  ", "###", "# #", "###"],  // 6
    ["###", "  #", "  #", "  #", "  #"],  // 7
    ["###", "# #", "###", "# #", "###"],  // 8
    ["###", "# #", "###", "  #", "###"],  // 9
  ]

  /// The width in columns of `number` drawn big.
  static func width(of number: Int) -> Int {
    let digits = String(number).count
    return digits * digitWidth + (digits - 1) * spacing
  }

  /// The five rows of `number` drawn big (`█` on, space off), each `width(of:)` columns.
  static func rows(for number: Int) -> [String] {
    let digits = String(number).compactMap { $0.wholeNumberValue }
    return (0..<height).map { row in
      digits.map { digit in
        glyphs[digit][row].map { $0 == "#" ? "██" : "  " }.joined()
      }.joined(separator: String(repeating: " ", count: spacing))
    }
  }
}
