import CuePosix

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The controlling terminal in full-screen mode: raw input, the alternate screen, no cursor, mouse reports.
///
/// `enter()` saves the terminal's settings (`tcgetattr`) and switches to raw mode (`tcsetattr`):
/// no echo, no line editing, no signals from Ctrl-C (it arrives as a byte), no output processing.
/// `leave()` puts back what it found, and is safe to call more than once. Used from one thread.
final class Terminal {
  /// Standard input, where keys and mouse reports arrive.
  let input = FileDescriptor.standardInput
  /// Standard output, where frames go.
  let output = FileDescriptor.standardOutput
  private var saved: termios? = nil

  /// Alternate screen, hidden cursor, mouse reports in SGR form (1006) for buttons, the wheel and
  /// motion while a button is held (1002, button-event tracking: a drag, without a report for
  /// every move of an idle pointer); and their undoing.
  private static let enterSequence = "\u{1b}[?1049h\u{1b}[?25l\u{1b}[?1002h\u{1b}[?1006h\u{1b}[2J"
  private static let leaveSequence = "\u{1b}[?1006l\u{1b}[?1002l\u{1b}[?1000l\u{1b}[0m\u{1b}[?25h\u{1b}[?1049l"

  enum Failure: Error, CustomStringConvertible {
    case notATerminal
    case cannotSetMode(Int32)

    var description: String {
      switch self {
      case .notATerminal: "standard input is not a terminal: run cued-carousel in a terminal (or under tmux)"
      case .cannotSetMode(let code): "cannot put the terminal in raw mode: \(String(cString: strerror(code)))"
      }
    }
  }

  /// Switches to raw mode and the alternate screen.
  func enter() throws(Failure) {
    guard isatty(input.rawValue) == 1 else { throw .notATerminal }
    var settings = termios()
    guard tcgetattr(input.rawValue, &settings) == 0 else { throw .cannotSetMode(errno) }
    saved = settings
    var raw = settings
    cfmakeraw(&raw)  // also VMIN 1, VTIME 0: a read returns as soon as a byte is there
    guard tcsetattr(input.rawValue, TCSAFLUSH, &raw) == 0 else {
      saved = nil
      throw .cannotSetMode(errno)
    }
    write(Self.enterSequence)
  }

  /// Puts the terminal back as `enter()` found it. Does nothing if it was not entered.
  func leave() {
    guard var settings = saved else { return }
    saved = nil
    write(Self.leaveSequence)
    _ = tcsetattr(input.rawValue, TCSAFLUSH, &settings)
  }

  deinit { leave() }

  /// The screen's size in cells (`TIOCGWINSZ`); 80 × 24 when the terminal does not say.
  func size() -> (columns: Int, rows: Int) {
    var window = winsize()
    if ioctl(output.rawValue, UInt(TIOCGWINSZ), &window) == 0, window.ws_col > 0, window.ws_row > 0 {
      return (Int(window.ws_col), Int(window.ws_row))
    }
    return (80, 24)
  }

  /// Writes `text` whole (blocking), ignoring a terminal that has gone away.
  func write(_ text: String) {
    try? output.writeAll(Array(text.utf8), isSocket: false)
  }

  /// Reads what input is there (after poll(2) said so); nil at end of input or on an error.
  func read() -> [UInt8]? {
    var buffer = [UInt8](repeating: 0, count: 1024)
    let result = buffer.withUnsafeMutableBytes { raw in
      Result { () throws(SystemError) -> FileDescriptor.IOResult in try input.read(into: raw) }
    }
    switch result {
    case .success(.bytes(let count)): return Array(buffer[0..<count])
    case .success(.wouldBlock): return []
    case .success(.endOfFile), .failure: return nil
    }
  }
}
