/// Keys and clicks from raw terminal input.
struct TopInput {
  enum Key: Equatable {
    case quit, up, down, tab, volumeUp, volumeDown, mute, level, stop, stopAll, pause
    /// A left click on a screen row (0 is the top).
    case click(row: Int)
  }

  /// Bytes of an escape sequence that a read split.
  private var pending: [UInt8] = []

  mutating func decode(_ bytes: [UInt8]) -> [Key] {
    var keys: [Key] = []
    var input = pending + bytes
    pending = []
    while !input.isEmpty {
      let byte = input.removeFirst()
      switch byte {
      case UInt8(ascii: "q"), 0x03, 0x04: keys.append(.quit)  // q, Ctrl-C, Ctrl-D
      case UInt8(ascii: "k"): keys.append(.up)
      case UInt8(ascii: "j"): keys.append(.down)
      case 0x09: keys.append(.tab)
      case UInt8(ascii: "+"), UInt8(ascii: "="): keys.append(.volumeUp)
      case UInt8(ascii: "-"), UInt8(ascii: "_"): keys.append(.volumeDown)
      case UInt8(ascii: "m"): keys.append(.mute)
      case UInt8(ascii: "l"): keys.append(.level)
      case UInt8(ascii: "s"): keys.append(.stop)
      case UInt8(ascii: "S"): keys.append(.stopAll)
      case UInt8(ascii: "p"), UInt8(ascii: " "): keys.append(.pause)
      case 0x1b:
        guard let (key, used) = Self.escape(input) else {
          // An incomplete sequence waits for the rest; a lone Escape is nothing.
          if !input.isEmpty && input.count < 16 && input.first == UInt8(ascii: "[") { pending = [0x1b] + input }
          return keys
        }
        input.removeFirst(used)
        if let key { keys.append(key) }
      default: break
      }
    }
    return keys
  }

  /// The key of a sequence after ESC and how many bytes it took; nil when incomplete.
  private static func escape(_ s: [UInt8]) -> (Key?, Int)? {
    guard s.count >= 2, s[0] == UInt8(ascii: "[") || s[0] == UInt8(ascii: "O") else { return s.isEmpty ? nil : (nil, 0) }
    switch s[1] {
    case UInt8(ascii: "A"): return (.up, 2)
    case UInt8(ascii: "B"): return (.down, 2)
    case UInt8(ascii: "C"): return (.volumeUp, 2)
    case UInt8(ascii: "D"): return (.volumeDown, 2)
    case UInt8(ascii: "<"):
      // SGR mouse: ESC [ < button ; column ; row (M press | m release)
      guard let end = s.firstIndex(where: { $0 == UInt8(ascii: "M") || $0 == UInt8(ascii: "m") }) else { return nil }
      let fields = String(decoding: s[2..<end], as: UTF8.self).split(separator: ";").compactMap { Int($0) }
      guard fields.count == 3, s[end] == UInt8(ascii: "M"), fields[0] == 0 else { return (nil, end + 1) }
      return (.click(row: fields[2] - 1), end + 1)
    default:
      // Another CSI sequence: skip to its final byte.
      guard let end = s.dropFirst().firstIndex(where: { (0x40...0x7e).contains($0) }) else { return nil }
      return (nil, end + 1)
    }
  }
}
