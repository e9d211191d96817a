/// Lays the carousel out on a frame: a header, the cards, the status line and the key help.
///
/// The cards are the carousel's five views, side by side, the viewport centred on the middle
/// one (shifted by the slide under way), so the current card sits in the middle with its
/// neighbours partly visible on either side. Pure: the carousel, the status and a size in, a frame out.
struct CarouselScreen {
  /// The carousel's name, shown in the header.
  let name: String

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
    return "←/→ page · wheel pages · q quit · " + autoText
  }

  private func drawHeader(_ carousel: Carousel, into frame: inout Frame) {
    var style = Frame.Style.plain
    style.bold = true
    frame.put(" cued-carousel · \(name)", row: 0, column: 0, style: style)
    let position = "page \(carousel.page + 1) of \(carousel.pageCount) "
    frame.put(position, row: 0, column: max(0, frame.columns - position.unicodeScalars.count), style: style)
  }

  private func drawCards(_ carousel: Carousel, into frame: inout Frame, top: Int, bottom: Int, now: Double) {
    let cardWidth = min(frame.columns - 4, max(12, frame.columns * 3 / 5))
    let stride = cardWidth + Self.gap
    let left = (frame.columns - cardWidth) / 2
    let offset = carousel.viewportOffset(at: now)
    for (slot, page) in carousel.views.enumerated() {
      let x = left + Int(((Double(slot - Carousel.middleView) - offset) * Double(stride)).rounded())
      guard x < frame.columns, x + cardWidth > 0 else { continue }
      drawCard(page: page, of: carousel.pageCount, into: &frame, x: x, width: cardWidth, top: top, bottom: bottom)
    }
  }

  private func drawCard(page: Int, of count: Int, into frame: inout Frame, x: Int, width: Int, top: Int, bottom: Int) {
    let colours = Self.palette[page % Self.palette.count]
    var style = Frame.Style(foreground: colours.foreground, background: colours.background)
    frame.fill(rows: top..<bottom, columns: x..<(x + width), style: style)
    style.bold = true
    let number = page + 1
    let label = "page \(number)/\(count)"
    let height = bottom - top
    let bigWidth = BigDigits.width(of: number)
    if height >= BigDigits.height + 4, bigWidth + 4 <= width {
      let firstRow = top + (height - BigDigits.height - 2) / 2
      for (i, line) in BigDigits.rows(for: number).enumerated() {
        frame.put(line, row: firstRow + i, column: x + (width - bigWidth) / 2, style: style)
      }
      frame.put(label, row: firstRow + BigDigits.height + 1, column: x + (width - label.count) / 2, style: style)
    } else {
      let middle = top + max(0, height - 2) / 2
      frame.put(String(number), row: middle, column: x + (width - String(number).count) / 2, style: style)
      frame.put(label, row: middle + 1, column: x + (width - label.count) / 2, style: style)
    }
  }

  /// `4`, `2.5`: seconds without a needless fraction.
  static func seconds(_ value: Double) -> String {
    value == value.rounded() && abs(value) < 1e9 ? String(Int(value)) : String(value)
  }
}
