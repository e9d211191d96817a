import CuePosix

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The controlling terminal in full-screen mode: raw input, the alternate screen, no cursor, mouse
/// reports. Shared by the full-screen programs (`cued-carousel`, `cuectl top`).
///
/// `enter()` saves the terminal's settings (`tcgetattr`) and switches to raw mode (`tcsetattr`):
/// no echo, no line editing, no signals from Ctrl-C (it arrives as a byte), no output processing.
/// `leave()` puts back what it found, and is safe to call more than once. Used from one thread.
public final class Terminal {
  /// Which mouse reports the terminal sends (always in SGR form, 1006).
  public enum MouseReports: Int {
    /// Presses and releases of buttons, and the wheel (1000): clicks.
    case buttons = 1000
    /// Those, and motion while a button is held (1002, button-event tracking): a drag, without a
    /// report for every move of an idle pointer.
    case buttonEvents = 1002
  }

  /// Standard input, where keys and mouse reports arrive.
  public let input = FileDescriptor.standardInput
  /// Standard output, where frames go.
  public let output = FileDescriptor.standardOutput
  private let mouse: MouseReports
  private let advice: String
  private var saved: termios? = nil

  public enum Failure: Error, CustomStringConvertible {
    case notATerminal(advice: String)
    case cannotSetMode(Int32)

    public var description: String {
      switch self {
      case .notATerminal(let advice): "standard input is not a terminal: \(advice)"
      case .cannotSetMode(let code): "cannot put the terminal in raw mode: \(String(cString: strerror(code)))"
      }
    }
  }

  /// `advice`: what to do when standard input is not a terminal ("run cued-carousel in a terminal").
  public init(mouse: MouseReports, advice: String) {
    self.mouse = mouse
    self.advice = advice
  }

  /// Alternate screen, hidden cursor, the mouse reports; and their undoing.
  private var enterSequence: String { "\u{1b}[?1049h\u{1b}[?25l\u{1b}[?\(mouse.rawValue)h\u{1b}[?1006h\u{1b}[2J" }
  private static let leaveSequence = "\u{1b}[?1006l\u{1b}[?1002l\u{1b}[?1000l\u{1b}[0m\u{1b}[?25h\u{1b}[?1049l"

  /// Switches to raw mode and the alternate screen.
  public func enter() throws(Failure) {
    guard isatty(input.rawValue) == 1 else { throw .notATerminal(advice: advice) }
    var settings = termios()
    guard tcgetattr(input.rawValue, &settings) == 0 else { throw .cannotSetMode(errno) }
    saved = settings
    var raw = settings
    cfmakeraw(&raw)  // also VMIN 1, VTIME 0: a read returns as soon as a byte is there
    guard tcsetattr(input.rawValue, TCSAFLUSH, &raw) == 0 else {
      saved = nil
      throw .cannotSetMode(errno)
    }
    write(enterSequence)
  }

  /// Puts the terminal back as `enter()` found it. Does nothing if it was not entered.
  public func leave() {
    guard var settings = saved else { return }
    saved = nil
    write(Self.leaveSequence)
    _ = tcsetattr(input.rawValue, TCSAFLUSH, &settings)
  }

  deinit { leave() }

  /// The screen's size in cells (`TIOCGWINSZ`); 80 × 24 when the terminal does not say.
  public func size() -> (columns: Int, rows: Int) {
    Self.size(of: output) ?? (80, 24)
  }

  /// The size of the terminal `descriptor` is, or nil when it is none.
  public static func size(of descriptor: FileDescriptor) -> (columns: Int, rows: Int)? {
    var window = winsize()
    guard ioctl(descriptor.rawValue, UInt(TIOCGWINSZ), &window) == 0, window.ws_col > 0, window.ws_row > 0 else { return nil }
    return (Int(window.ws_col), Int(window.ws_row))
  }

  /// Writes `text` whole (blocking), ignoring a terminal that has gone away.
  public func write(_ text: String) {
    try? output.writeAll(Array(text.utf8), isSocket: false)
  }

  /// Reads what input is there (after poll(2) said so); nil at end of input or on an error.
  public func read() -> [UInt8]? {
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
