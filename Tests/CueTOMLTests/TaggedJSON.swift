import CueTOML

/// A TOML document in toml-test's tagged JSON: tables are objects, arrays are arrays, and each
/// scalar is `{"type": "integer", "value": "1"}` with its value as text.
indirect enum TaggedJSON: CustomStringConvertible {
  case table([String: TaggedJSON])
  case array([TaggedJSON])
  case scalar(type: String, value: String)

  struct Malformed: Error, CustomStringConvertible {
    var description: String
  }

  /// From `JSONSerialization`'s objects: an object of exactly `type` and `value` (a string) is a
  /// scalar, as toml-test reads it; any other object is a table.
  init(json: Any) throws {
    if let object = json as? [String: Any] {
      if object.count == 2, let type = object["type"] as? String, let value = object["value"] as? String {
        self = .scalar(type: type, value: value)
      } else {
        self = .table(try object.mapValues { value throws in try TaggedJSON(json: value) })
      }
    } else if let array = json as? [Any] {
      self = .array(try array.map { element throws in try TaggedJSON(json: element) })
    } else {
      throw Malformed(description: "the expected JSON holds \(json), neither an object nor an array")
    }
  }

  /// What toml-test's encoder would print for `value`.
  init(_ value: TOMLValue) {
    switch value {
    case .table(let table): self = .table(table.mapValues(TaggedJSON.init))
    case .array(let array): self = .array(array.map(TaggedJSON.init))
    case .string(let text): self = .scalar(type: "string", value: text)
    case .integer(let number): self = .scalar(type: "integer", value: String(number))
    case .float(let number): self = .scalar(type: "float", value: number.isNaN ? "nan" : String(number))
    case .boolean(let flag): self = .scalar(type: "bool", value: String(flag))
    case .dateTime(let time):
      let type =
        switch time.kind {
        case .offsetDateTime: "datetime"
        case .localDateTime: "datetime-local"
        case .localDate: "date-local"
        case .localTime: "time-local"
        }
      self = .scalar(type: type, value: time.text)
    }
  }

  var description: String {
    switch self {
    case .table(let table): "{" + table.keys.sorted().map { "\($0): \(table[$0]!)" }.joined(separator: ", ") + "}"
    case .array(let array): "[" + array.map(\.description).joined(separator: ", ") + "]"
    case .scalar(let type, let value): "\(type) \(value.debugDescription)"
    }
  }

  /// The first place where `actual` differs from this expected document, by toml-test's rules
  /// (json.go): floats compare as numbers (any NaN equals a NaN), dates and times as the instant or
  /// wall time they name, everything else as text. Nil when they agree.
  func difference(from actual: TaggedJSON, at path: String = "the document") -> String? {
    switch (self, actual) {
    case (.table(let want), .table(let have)):
      if let missing = want.keys.sorted().first(where: { have[$0] == nil }) { return "\(path) has no key \(missing.debugDescription)" }
      if let extra = have.keys.sorted().first(where: { want[$0] == nil }) { return "\(path) has an unexpected key \(extra.debugDescription)" }
      for key in want.keys.sorted() {
        if let difference = want[key]!.difference(from: have[key]!, at: path == "the document" ? key : path + "." + key) {
          return difference
        }
      }
      return nil
    case (.array(let want), .array(let have)):
      guard want.count == have.count else { return "\(path) has \(have.count) elements, expected \(want.count)" }
      for (index, pair) in zip(want, have).enumerated() {
        if let difference = pair.0.difference(from: pair.1, at: "\(path)[\(index)]") { return difference }
      }
      return nil
    case (.scalar(let wantType, let want), .scalar(let haveType, let have)) where wantType == haveType:
      let agree =
        switch wantType {
        case "float": Self.sameFloat(want, have)
        case "datetime", "datetime-local", "date-local", "time-local": Self.moment(want) != nil && Self.moment(want) == Self.moment(have)
        default: want == have
        }
      return agree ? nil : "\(path) is \(actual), expected \(self)"
    default:
      return "\(path) is \(actual), expected \(self)"
    }
  }

  static func sameFloat(_ want: String, _ have: String) -> Bool {
    if want.hasSuffix("nan") || have.hasSuffix("nan") { return want.hasSuffix("nan") && have.hasSuffix("nan") }
    guard let wantValue = Double(want), let haveValue = Double(have) else { return false }
    return wantValue == haveValue
  }

  /// A date, time or date-time as the instant it names: seconds (an offset applied) and nanoseconds.
  /// `T`, `t` and a space join date and time; `Z` and `z` are UTC. Nil when it is not one.
  static func moment(_ text: String) -> [Int]? {
    var rest = Substring(text)
    func number(_ digits: Int, then separator: Character?) -> Int? {
      let field = rest.prefix(digits)
      guard field.count == digits, field.allSatisfy(\.isASCII), let value = Int(field) else { return nil }
      rest = rest.dropFirst(digits)
      if let separator {
        guard rest.first == separator else { return nil }
        rest = rest.dropFirst()
      }
      return value
    }
    var seconds = 0
    if rest.dropFirst(4).first == "-" {
      guard let year = number(4, then: "-"), let month = number(2, then: "-"), let day = number(2, then: nil) else { return nil }
      seconds = daysFromCivil(year, month, day) * 86_400
      guard let separator = rest.first else { return [seconds, 0] }
      guard "Tt ".contains(separator) else { return nil }
      rest = rest.dropFirst()
    }
    guard let hour = number(2, then: ":"), let minute = number(2, then: ":"), let second = number(2, then: nil) else { return nil }
    seconds += hour * 3600 + minute * 60 + second
    var nanoseconds = 0
    if rest.first == "." {
      let fraction = rest.dropFirst().prefix(while: \.isNumber)
      nanoseconds = Int((fraction.prefix(9) + String(repeating: "0", count: max(0, 9 - fraction.count)))) ?? 0
      rest = rest.dropFirst(1 + fraction.count)
    }
    if rest == "Z" || rest == "z" {
      rest = ""
    } else if let sign = rest.first, sign == "+" || sign == "-" {
      rest = rest.dropFirst()
      guard let hours = number(2, then: ":"), let minutes = number(2, then: nil) else { return nil }
      seconds -= (sign == "+" ? 1 : -1) * (hours * 3600 + minutes * 60)
    }
    return rest.isEmpty ? [seconds, nanoseconds] : nil
  }

  /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
  static func daysFromCivil(_ year: Int, _ month: Int, _ day: Int) -> Int {
    let y = month <= 2 ? year - 1 : year
    let era = (y >= 0 ? y : y - 399) / 400
    let yearOfEra = y - era * 400
    let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
    let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    return era * 146_097 + dayOfEra - 719_468
  }
}
