/// A D-Bus type, as one complete type of a signature (`u`, `as`, `a(yv)`, `a{sv}`).
///
/// Every basic type, variants, arrays, structs and dict entries; no Unix file descriptors are
/// passed (`h` is only its index).
public indirect enum DBusType: Sendable, Equatable {
  case byte, boolean, int16, uint16, int32, uint32, int64, uint64, double
  case string, objectPath, signature, unixFD, variant
  case array(DBusType)
  case structure([DBusType])
  case dictEntry(key: DBusType, value: DBusType)

  /// The type's code in a signature.
  public var signature: String {
    switch self {
    case .byte: "y"
    case .boolean: "b"
    case .int16: "n"
    case .uint16: "q"
    case .int32: "i"
    case .uint32: "u"
    case .int64: "x"
    case .uint64: "t"
    case .double: "d"
    case .string: "s"
    case .objectPath: "o"
    case .signature: "g"
    case .unixFD: "h"
    case .variant: "v"
    case .array(let element): "a" + element.signature
    case .structure(let fields): "(" + fields.map(\.signature).joined() + ")"
    case .dictEntry(let key, let value): "{" + key.signature + value.signature + "}"
    }
  }

  /// The boundary a value of this type starts on, in bytes from the start of the message.
  var alignment: Int {
    switch self {
    case .byte, .signature, .variant: 1
    case .int16, .uint16: 2
    case .boolean, .int32, .uint32, .unixFD, .string, .objectPath, .array: 4
    case .int64, .uint64, .double, .structure, .dictEntry: 8
    }
  }

  /// The complete types of `signature`, in order (the body of a message has several).
  ///
  /// Throws for anything the specification rejects: unknown codes, unbalanced brackets, empty
  /// structs, dict entries outside arrays or with a non-basic key, nesting deeper than 32 arrays or
  /// 32 structs, more than 255 bytes.
  public static func parse(signature: String) throws(DBusError) -> [DBusType] {
    let codes = Array(signature.utf8)
    guard codes.count <= 255 else { throw DBusError.malformed("a signature longer than 255 bytes") }
    var parser = SignatureParser(codes: codes)
    var types: [DBusType] = []
    while parser.index < codes.count { types.append(try parser.completeType(arrayDepth: 0, structDepth: 0)) }
    return types
  }
}

private struct SignatureParser {
  let codes: [UInt8]
  var index = 0

  mutating func completeType(arrayDepth: Int, structDepth: Int, inArray: Bool = false) throws(DBusError) -> DBusType {
    guard index < codes.count else { throw DBusError.malformed("a signature ends inside a type") }
    let code = codes[index]
    index += 1
    switch code {
    case UInt8(ascii: "y"): return .byte
    case UInt8(ascii: "b"): return .boolean
    case UInt8(ascii: "n"): return .int16
    case UInt8(ascii: "q"): return .uint16
    case UInt8(ascii: "i"): return .int32
    case UInt8(ascii: "u"): return .uint32
    case UInt8(ascii: "x"): return .int64
    case UInt8(ascii: "t"): return .uint64
    case UInt8(ascii: "d"): return .double
    case UInt8(ascii: "s"): return .string
    case UInt8(ascii: "o"): return .objectPath
    case UInt8(ascii: "g"): return .signature
    case UInt8(ascii: "h"): return .unixFD
    case UInt8(ascii: "v"): return .variant
    case UInt8(ascii: "a"):
      guard arrayDepth < 32 else { throw DBusError.malformed("arrays nested deeper than 32") }
      return .array(try completeType(arrayDepth: arrayDepth + 1, structDepth: structDepth, inArray: true))
    case UInt8(ascii: "("):
      guard structDepth < 32 else { throw DBusError.malformed("structs nested deeper than 32") }
      var fields: [DBusType] = []
      while index < codes.count && codes[index] != UInt8(ascii: ")") {
        fields.append(try completeType(arrayDepth: arrayDepth, structDepth: structDepth + 1))
      }
      guard index < codes.count else { throw DBusError.malformed("a struct in a signature is not closed") }
      guard !fields.isEmpty else { throw DBusError.malformed("an empty struct in a signature") }
      index += 1
      return .structure(fields)
    case UInt8(ascii: "{"):
      guard inArray else { throw DBusError.malformed("a dict entry outside an array") }
      guard structDepth < 32 else { throw DBusError.malformed("structs nested deeper than 32") }
      let key = try completeType(arrayDepth: arrayDepth, structDepth: structDepth + 1)
      guard !key.isContainer else { throw DBusError.malformed("a dict entry's key must be a basic type") }
      let value = try completeType(arrayDepth: arrayDepth, structDepth: structDepth + 1)
      guard index < codes.count, codes[index] == UInt8(ascii: "}") else {
        throw DBusError.malformed("a dict entry in a signature holds more than a key and a value")
      }
      index += 1
      return .dictEntry(key: key, value: value)
    default:
      throw DBusError.malformed("the signature code '\(String(decoding: [code], as: UTF8.self))' is unknown or misplaced")
    }
  }
}

extension DBusType {
  /// Arrays, structs, dict entries and variants: everything that is not a basic type.
  var isContainer: Bool {
    switch self {
    case .array, .structure, .dictEntry, .variant: true
    default: false
    }
  }
}

/// A D-Bus value with its type.
public indirect enum DBusValue: Sendable, Equatable {
  case byte(UInt8)
  case boolean(Bool)
  case int16(Int16)
  case uint16(UInt16)
  case int32(Int32)
  case uint32(UInt32)
  case int64(Int64)
  case uint64(UInt64)
  case double(Double)
  case string(String)
  case objectPath(String)
  case signature(String)
  /// The index of a passed file descriptor (this client passes none).
  case unixFD(UInt32)
  case variant(DBusValue)
  /// An array of values of `element`'s type (an empty array still has one).
  case array(element: DBusType, [DBusValue])
  case structure([DBusValue])
  case dictEntry(key: DBusValue, value: DBusValue)

  /// The value's type.
  public var type: DBusType {
    switch self {
    case .byte: .byte
    case .boolean: .boolean
    case .int16: .int16
    case .uint16: .uint16
    case .int32: .int32
    case .uint32: .uint32
    case .int64: .int64
    case .uint64: .uint64
    case .double: .double
    case .string: .string
    case .objectPath: .objectPath
    case .signature: .signature
    case .unixFD: .unixFD
    case .variant: .variant
    case .array(let element, _): .array(element)
    case .structure(let fields): .structure(fields.map(\.type))
    case .dictEntry(let key, let value): .dictEntry(key: key.type, value: value.type)
    }
  }

  /// The value inside a variant, or the value itself.
  public var unwrapped: DBusValue {
    if case .variant(let inner) = self { return inner.unwrapped }
    return self
  }
}
