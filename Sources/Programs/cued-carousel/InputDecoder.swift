/// Turns the bytes a terminal in raw mode sends into the carousel's inputs.
///
/// Knows the arrow keys in both cursor modes (`ESC [ C`, `ESC O C`, with or without modifiers:
/// `ESC [ 1 ; 5 C`), `h`/`l`, `q` and Ctrl-C, and the mouse as SGR reports (`ESC [ < b ; x ; y M`,
/// `m` for a release: mode 1006) or legacy X10 reports (`ESC [ M` and three bytes): the wheel
/// (b = 64 up, 65 down) and the left button's press (0), motion while held (32: mode 1002's
/// button-event tracking) and release. Modifier bits (shift 4, meta 8, ctrl 16) are ignored; the
/// other buttons are skipped. A sequence split across reads is kept until the rest arrives;
/// anything else is skipped. Pure: bytes in, inputs out.
struct InputDecoder {
  enum Input: Equatable, Sendable {
    case previous
    case next
    case wheelPrevious
    case wheelNext
    /// The left button went down, moved while held, came up; at a column and row counted from 1.
    case press(column: Int, row: Int)
    case drag(column: Int, row: Int)
    case release(column: Int, row: Int)
    case quit
  }

  private static let escape: UInt8 = 0x1b
  /// The longest sequence kept while waiting for its end; past it the bytes are dropped.
  private static let maximumPending = 64

  /// Bytes of a sequence not complete yet.
  private var pending: [UInt8] = []

  /// Decodes `bytes` (after whatever was pending); returns the inputs complete so far.
  mutating func feed(_ bytes: some Sequence<UInt8>) -> [Input] {
    pending.append(contentsOf: bytes)
    var inputs: [Input] = []
    var index = 0
    while index < pending.count {
      switch decode(at: index) {
      case .incomplete:
        pending.removeFirst(index)
        if pending.count > Self.maximumPending { pending.removeAll() }
        return inputs
      case .consumed(let count, let input):
        if let input { inputs.append(input) }
        index += count
      }
    }
    pending.removeAll()
    return inputs
  }

  private enum Step {
    case incomplete
    case consumed(Int, Input?)
  }

  private func decode(at start: Int) -> Step {
    let byte = pending[start]
    guard byte == Self.escape else {
      switch byte {
      case UInt8(ascii: "q"), UInt8(ascii: "Q"), 0x03: return .consumed(1, .quit)
      case UInt8(ascii: "h"): return .consumed(1, .previous)
      case UInt8(ascii: "l"): return .consumed(1, .next)
      default: return .consumed(1, nil)
      }
    }
    guard start + 1 < pending.count else { return .incomplete }
    let introducer = pending[start + 1]
    switch introducer {
    case UInt8(ascii: "O"):
      // SS3: application cursor keys.
      guard start + 2 < pending.count else { return .incomplete }
      return .consumed(3, Self.arrow(pending[start + 2]))
    case UInt8(ascii: "["):
      return controlSequence(at: start)
    default:
      // A lone escape (the Esc key): ignored; the byte after it is read on its own.
      return .consumed(1, nil)
    }
  }

  /// `ESC [` …: parameters, then a final byte in 0x40…0x7e.
  private func controlSequence(at start: Int) -> Step {
    var index = start + 2
    guard index < pending.count else { return .incomplete }
    if pending[index] == UInt8(ascii: "M") {
      // X10 mouse: ESC [ M, then button+32, column+32, row+32.
      guard index + 3 < pending.count else { return .incomplete }
      let button = Int(pending[index + 1]) - 32
      let column = Int(pending[index + 2]) - 32
      let row = Int(pending[index + 3]) - 32
      // X10 reports any release as button 3.
      let input =
        (button & 3) == 3 && button & 64 == 0
        ? Input.release(column: column, row: row) : Self.mouse(button: button, column: column, row: row)
      return .consumed(6, input)
    }
    while index < pending.count {
      let byte = pending[index]
      if (0x40...0x7e).contains(byte) {
        let parameters = Array(pending[(start + 2)..<index])
        let count = index - start + 1
        if parameters.first == UInt8(ascii: "<") {
          // SGR mouse: ESC [ < button ; column ; row M (press, motion) or m (release).
          let fields = parameters.dropFirst().split(separator: UInt8(ascii: ";")).map { Int(String(decoding: $0, as: UTF8.self)) }
          guard fields.count == 3, let button = fields[0], let column = fields[1], let row = fields[2] else {
            return .consumed(count, nil)
          }
          if byte == UInt8(ascii: "m") {
            return .consumed(count, (button & ~(4 | 8 | 16)) == 0 ? .release(column: column, row: row) : nil)
          }
          guard byte == UInt8(ascii: "M") else { return .consumed(count, nil) }
          return .consumed(count, Self.mouse(button: button, column: column, row: row))
        }
        return .consumed(count, Self.arrow(byte))
      }
      guard (0x20...0x3f).contains(byte) else {
        // Not a control sequence after all: drop the escape, read on from the '['.
        return .consumed(1, nil)
      }
      index += 1
    }
    return .incomplete
  }

  private static func arrow(_ final: UInt8) -> Input? {
    switch final {
    case UInt8(ascii: "C"), UInt8(ascii: "B"): .next  // right, down
    case UInt8(ascii: "D"), UInt8(ascii: "A"): .previous  // left, up
    default: nil
    }
  }

  /// Wheel up (button 64) pages back, wheel down (65) forward; the left button's press (0) and
  /// motion while held (32); modifier bits (shift 4, meta 8, ctrl 16) are ignored.
  private static func mouse(button: Int, column: Int, row: Int) -> Input? {
    guard button >= 0 else { return nil }
    switch button & ~(4 | 8 | 16) {
    case 64: return .wheelPrevious
    case 65: return .wheelNext
    case 0: return .press(column: column, row: row)
    case 32: return .drag(column: column, row: row)
    default: return nil
    }
  }
}
