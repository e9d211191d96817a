/// Lays the carousel out on a frame: a header, the cards, the page dots, the status line and the help.
///
/// The cards sit side by side around the viewport's position (shifted by a drag, a slide or a
/// deceleration under way), so the current card is in the middle with its neighbours partly
/// visible on either side. Past the ends of a bounded pager there is no card: the gap a rubber band
/// opens shows where the pages end. Pure: the carousel, the status and a size in, a frame out.
struct CarouselScreen {
  /// The carousel's name, shown in the header.
  let name: String
  /// The cards stack top to bottom (a vertical pager) instead of side by side.
  var vertical = false

  /// Card colours (256-colour palette): a background and a text colour that reads on it.
  static let palette: [(background: UInt8, foreground: UInt8)] = [
    (25, 231),  // blue
    (160, 231),  // red
    (28, 231),  // green
    (178, 16),  // gold
    (91, 231),  // purple
    (166, 16),  // orange
    (30, 231),  // teal
    (162, 231),  // pink
  ]

  /// The smallest screen the carousel draws itself on.
  static let minimumColumns = 24
  static let minimumRows = 8
  /// Columns between two cards.
  static let gap = 2

  /// The frame for `carousel` at `now` on a screen of `columns` × `rows`.
  func render(_ carousel: Carousel, status: StatusLine, columns: Int, rows: Int, now: Double) -> Frame {
    var frame = Frame(columns: columns, rows: rows)
    guard columns >= Self.minimumColumns, rows >= Self.minimumRows else {
      frame.put("too small", row: 0, column: 0, style: .plain)
      frame.put("q quits", row: min(1, rows - 1), column: 0, style: .plain)
      return frame
    }
    drawHeader(carousel, into: &frame)
    drawCards(carousel, into: &frame, top: 2, bottom: rows - 3, now: now)
    drawDots(carousel, into: &frame, row: rows - 3)
    var statusStyle = Frame.Style.plain
    statusStyle.reverse = true
    frame.fill(rows: (rows - 2)..<(rows - 1), columns: 0..<columns, style: statusStyle)
    frame.put(" " + status.text, row: rows - 2, column: 0, style: statusStyle)
    var helpStyle = Frame.Style.plain
    helpStyle.dim = true
    frame.put(" " + help(carousel, now: now), row: rows - 1, column: 0, style: helpStyle)
    return frame
  }

  /// The key help, and what auto-advance is doing.
  func help(_ carousel: Carousel, now: Double) -> String {
    let auto = carousel.autoAdvance
    let autoText: String
    if !auto.isEnabled {
      autoText = "auto off"
    } else if auto.isPaused(at: now) {
      autoText = "auto paused"
    } else {
      autoText = "auto every \(Self.seconds(auto.intervalSeconds)) s"
    }
    return (vertical ? "↑/↓" : "←/→") + " page · drag or wheel · q quit · " + (carousel.loops ? "" : "no loop · ") + autoText
  }

  /// The width of a card on a screen `columns` wide.
  static func cardWidth(columns: Int) -> Int { min(columns - 4, max(12, columns * 3 / 5)) }

  /// A card and the gap after it: the pointer's unit when it drags the cards.
  static func stride(columns: Int) -> Int { cardWidth(columns: columns) + gap }

  /// Rows of a vertical pager's card, with `rows` for the cards in all.
  static func cardHeight(rows: Int) -> Int { max(3, rows * 3 / 5) }

  /// A vertical pager's card and the row after it, on a screen `rows` high: the pointer's unit there.
  static func verticalStride(rows: Int) -> Int { cardHeight(rows: cardRows(rows: rows)) + 1 }

  /// The rows the cards have on a screen `rows` high (below the header, above the dots).
  static func cardRows(rows: Int) -> Int { max(1, rows - 5) }

  private func drawHeader(_ carousel: Carousel, into frame: inout Frame) {
    var style = Frame.Style.plain
    style.bold = true
    frame.put(" cued-carousel · \(name)", row: 0, column: 0, style: style)
    let position = "page \(carousel.page + 1) of \(carousel.pageCount) "
    frame.put(position, row: 0, column: max(0, frame.columns - position.unicodeScalars.count), style: style)
  }

  private func drawCards(_ carousel: Carousel, into frame: inout Frame, top: Int, bottom: Int, now: Double) {
    if vertical { return drawStackedCards(carousel, into: &frame, top: top, bottom: bottom, now: now) }
    let cardWidth = Self.cardWidth(columns: frame.columns)
    let stride = cardWidth + Self.gap
    let left = (frame.columns - cardWidth) / 2
    for card in carousel.cards(at: now) {
      let x = left + Int((card.place * Double(stride)).rounded())
      guard x < frame.columns, x + cardWidth > 0 else { continue }
      drawCard(page: card.page, of: carousel.pageCount, into: &frame, x: x, width: cardWidth, top: top, bottom: bottom)
    }
    guard !carousel.loops else { return }
    // A bounded pager: the space past the first or the last card is marked, so that a rubber
    // band pulled open shows the end.
    var style = Frame.Style.plain
    style.dim = true
    let offset = carousel.viewportOffset(at: now)
    let firstX = left + Int(((Double(-carousel.anchor) - offset) * Double(stride)).rounded())
    let lastX = left + Int(((Double(carousel.pageCount - 1 - carousel.anchor) - offset) * Double(stride)).rounded()) + cardWidth
    let middle = top + (bottom - top) / 2
    if firstX > 0 {
      for row in top..<bottom { frame.put("┊", row: row, column: firstX - 1, style: style) }
      let label = "first ▸"
      if firstX - 2 >= label.count { frame.put(label, row: middle, column: firstX - 2 - label.count, style: style) }
    }
    if lastX < frame.columns {
      for row in top..<bottom { frame.put("┊", row: row, column: lastX, style: style) }
      let label = "◂ last"
      if frame.columns - lastX - 2 >= label.count { frame.put(label, row: middle, column: lastX + 2, style: style) }
    }
  }

  /// A vertical pager: the cards one above the other around the viewport's position, clipped to
  /// the rows between the header and the dots; past the ends of a bounded pager, a dotted line.
  private func drawStackedCards(_ carousel: Carousel, into frame: inout Frame, top: Int, bottom: Int, now: Double) {
    let width = Self.cardWidth(columns: frame.columns)
    let height = Self.cardHeight(rows: bottom - top)
    let stride = height + 1
    let x = (frame.columns - width) / 2
    let centreTop = top + (bottom - top - height) / 2
    for card in carousel.cards(at: now) {
      let y = centreTop + Int((card.place * Double(stride)).rounded())
      guard y < bottom, y + height > top else { continue }
      drawCard(page: card.page, of: carousel.pageCount, into: &frame, x: x, width: width, top: y, bottom: y + height, clip: top..<bottom)
    }
    guard !carousel.loops else { return }
    var style = Frame.Style.plain
    style.dim = true
    let offset = carousel.viewportOffset(at: now)
    let firstY = centreTop + Int(((Double(-carousel.anchor) - offset) * Double(stride)).rounded())
    let lastY = centreTop + Int(((Double(carousel.pageCount - 1 - carousel.anchor) - offset) * Double(stride)).rounded()) + height
    let line = String(repeating: "┈", count: width)
    if firstY - 1 >= top { frame.put(line, row: firstY - 1, column: x, style: style) }
    if lastY < bottom { frame.put(line, row: lastY, column: x, style: style) }
  }

  /// A dot per page under the cards, the page under the middle of the screen filled (● ○ ○);
  /// with more pages than fit, the dots around it, with … where there are more.
  private func drawDots(_ carousel: Carousel, into frame: inout Frame, row: Int) {
    let fits = max(1, (frame.columns - 8) / 2)
    let count = carousel.pageCount
    let current = carousel.page
    var first = 0
    var last = count - 1
    if count > fits {
      first = max(0, min(count - fits, current - fits / 2))
      last = first + fits - 1
    }
    var text = (first...last).map { $0 == current ? "●" : "○" }.joined(separator: " ")
    if first > 0 { text = "… " + text }
    if last < count - 1 { text += " …" }
    frame.put(text, row: row, column: max(0, (frame.columns - text.unicodeScalars.count) / 2), style: .plain)
  }

  /// A card from `top` to `bottom`, drawn only within `clip` (a vertical pager's card half out of sight).
  private func drawCard(
    page: Int, of count: Int, into frame: inout Frame, x: Int, width: Int, top: Int, bottom: Int, clip: Range<Int>? = nil
  ) {
    let colours = Self.palette[page % Self.palette.count]
    var style = Frame.Style(foreground: colours.foreground, background: colours.background)
    let visible = clip.map { max(top, $0.lowerBound)..<min(bottom, $0.upperBound) } ?? top..<bottom
    guard !visible.isEmpty else { return }
    frame.fill(rows: visible, columns: x..<(x + width), style: style)
    func put(_ text: String, row: Int, column: Int, style: Frame.Style) {
      if visible.contains(row) { frame.put(text, row: row, column: column, style: style) }
    }
    style.bold = true
    let number = page + 1
    let label = "page \(number)/\(count)"
    let height = bottom - top
    let bigWidth = BigDigits.width(of: number)
    if height >= BigDigits.height + 4, bigWidth + 4 <= width {
      let firstRow = top + (height - BigDigits.height - 2) / 2
      for (i, line) in BigDigits.rows(for: number).enumerated() {
        put(line, row: firstRow + i, column: x + (width - bigWidth) / 2, style: style)
      }
      put(label, row: firstRow + BigDigits.height + 1, column: x + (width - label.count) / 2, style: style)
    } else {
      let middle = top + max(0, height - 2) / 2
      put(String(number), row: middle, column: x + (width - String(number).count) / 2, style: style)
      put(label, row: middle + 1, column: x + (width - label.count) / 2, style: style)
    }
  }

  /// `4`, `2.5`: seconds without a needless fraction.
  static func seconds(_ value: Double) -> String {
    value == value.rounded() && abs(value) < 1e9 ? String(Int(value)) : String(value)
  }
}
