/// Writes values in D-Bus's little-endian wire format: each value starts on its type's boundary,
/// counted from the start of the message, with zero bytes as padding. Touches no descriptor.
struct DBusWriter {
  private(set) var bytes: [UInt8] = []

  /// Zero bytes up to the next multiple of `alignment`.
  mutating func pad(to alignment: Int) {
    while bytes.count % alignment != 0 { bytes.append(0) }
  }

  mutating func append<T: FixedWidthInteger>(_ value: T) {
    pad(to: MemoryLayout<T>.size)
    withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
  }

  /// Overwrites the UInt32 at `offset` (an array's length, once its elements are written).
  mutating func patch(_ value: UInt32, at offset: Int) {
    withUnsafeBytes(of: value.littleEndian) { raw in
      for (index, byte) in raw.enumerated() { bytes[offset + index] = byte }
    }
  }

  mutating func write(_ value: DBusValue) {
    switch value {
    case .byte(let v): bytes.append(v)
    case .boolean(let v): append(UInt32(v ? 1 : 0))
    case .int16(let v): append(v)
    case .uint16(let v): append(v)
    case .int32(let v): append(v)
    case .uint32(let v), .unixFD(let v): append(v)
    case .int64(let v): append(v)
    case .uint64(let v): append(v)
    case .double(let v): append(v.bitPattern)
    case .string(let text), .objectPath(let text):
      append(UInt32(text.utf8.count))
      bytes.append(contentsOf: text.utf8)
      bytes.append(0)
    case .signature(let text):
      bytes.append(UInt8(text.utf8.count))
      bytes.append(contentsOf: text.utf8)
      bytes.append(0)
    case .variant(let inner):
      write(.signature(inner.type.signature))
      write(inner)
    case .array(let element, let values):
      append(UInt32(0))
      let lengthOffset = bytes.count - 4
      // The length counts from the first element, after the padding to its boundary (also when empty).
      pad(to: element.alignment)
      let start = bytes.count
      for value in values {
        precondition(value.type == element, "an array of \(element.signature) holds a \(value.type.signature)")
        write(value)
      }
      patch(UInt32(bytes.count - start), at: lengthOffset)
    case .structure(let fields):
      pad(to: 8)
      for field in fields { write(field) }
    case .dictEntry(let key, let value):
      pad(to: 8)
      write(key)
      write(value)
    }
  }
}

/// Reads values in D-Bus's little-endian wire format from a whole message, checking what the
/// specification requires: zero padding, lengths inside the message, NUL-terminated valid UTF-8
/// strings, booleans 0 or 1, arrays of at most 64 MiB, variants nested at most 64 deep.
struct DBusReader {
  let bytes: [UInt8]
  /// Offset from the start of the message (alignment counts from there).
  var offset: Int

  init(_ bytes: [UInt8], offset: Int = 0) {
    self.bytes = bytes
    self.offset = offset
  }

  mutating func skipPadding(to alignment: Int) throws(DBusError) {
    let end = (offset + alignment - 1) / alignment * alignment
    guard end <= bytes.count else { throw DBusError.malformed("the message ends inside padding") }
    for index in offset..<end where bytes[index] != 0 { throw DBusError.malformed("non-zero padding at byte \(index)") }
    offset = end
  }

  mutating func take(_ count: Int) throws(DBusError) -> ArraySlice<UInt8> {
    guard count >= 0, count <= bytes.count - offset else {
      throw DBusError.malformed("a value at byte \(offset) runs past the end of the message")
    }
    defer { offset += count }
    return bytes[offset..<offset + count]
  }

  mutating func integer<T: FixedWidthInteger>(_: T.Type = T.self) throws(DBusError) -> T {
    try skipPadding(to: MemoryLayout<T>.size)
    var value = T.zero
    for (shift, byte) in try take(MemoryLayout<T>.size).enumerated() { value |= T(truncatingIfNeeded: byte) << (8 * shift) }
    return value
  }

  private mutating func text(length: Int, of what: String) throws(DBusError) -> String {
    let content = try take(length)
    guard try take(1).first == 0 else { throw DBusError.malformed("a \(what) is not NUL-terminated") }
    guard !content.contains(0), let text = String(validating: content, as: UTF8.self) else {
      throw DBusError.malformed("a \(what) is not valid UTF-8 without NUL")
    }
    return text
  }

  mutating func read(_ type: DBusType, variantDepth: Int = 0) throws(DBusError) -> DBusValue {
    switch type {
    case .byte: return .byte(try take(1).first!)
    case .boolean:
      switch try integer(UInt32.self) {
      case 0: return .boolean(false)
      case 1: return .boolean(true)
      case let other: throw DBusError.malformed("a boolean is \(other), not 0 or 1")
      }
    case .int16: return .int16(try integer())
    case .uint16: return .uint16(try integer())
    case .int32: return .int32(try integer())
    case .uint32: return .uint32(try integer())
    case .unixFD: return .unixFD(try integer())
    case .int64: return .int64(try integer())
    case .uint64: return .uint64(try integer())
    case .double: return .double(Double(bitPattern: try integer()))
    case .string: return .string(try text(length: Int(try integer(UInt32.self)), of: "string"))
    case .objectPath: return .objectPath(try text(length: Int(try integer(UInt32.self)), of: "object path"))
    case .signature: return .signature(try text(length: Int(try take(1).first!), of: "signature"))
    case .variant:
      guard variantDepth < 64 else { throw DBusError.malformed("variants nested deeper than 64") }
      guard case .signature(let signature) = try read(.signature) else { preconditionFailure("read(.signature) gives a signature") }
      let types = try DBusType.parse(signature: signature)
      guard types.count == 1 else { throw DBusError.malformed("a variant's signature '\(signature)' is not one complete type") }
      return .variant(try read(types[0], variantDepth: variantDepth + 1))
    case .array(let element):
      let length = Int(try integer(UInt32.self))
      guard length <= 1 << 26 else { throw DBusError.malformed("an array of \(length) bytes (at most 64 MiB)") }
      try skipPadding(to: element.alignment)
      let end = offset + length
      guard end <= bytes.count else { throw DBusError.malformed("an array runs past the end of the message") }
      var values: [DBusValue] = []
      while offset < end { values.append(try read(element, variantDepth: variantDepth)) }
      guard offset == end else { throw DBusError.malformed("an array's last element runs past its length") }
      return .array(element: element, values)
    case .structure(let fields):
      try skipPadding(to: 8)
      var values: [DBusValue] = []
      for field in fields { values.append(try read(field, variantDepth: variantDepth)) }
      return .structure(values)
    case .dictEntry(let keyType, let valueType):
      try skipPadding(to: 8)
      let key = try read(keyType, variantDepth: variantDepth)
      return .dictEntry(key: key, value: try read(valueType, variantDepth: variantDepth))
    }
  }
}
