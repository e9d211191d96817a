import CueProtocol

// The keys of the config file's own tables (`[cues.NAME]`, `[carousel.NAME]` and its bindings,
// `[groups.NAME]` and its `duck`, `[clients.NAME]`, `[quiet-hours]`), declared as the options are
// in Settings.swift: each key once, with what it takes (a `ValueType`, checked by the settings'
// own checker, ValueType.swift), its help, and the field it sets. Their
// defaults are the fields' own (`TableKeys.blank`), so a default is written once, in the struct.
// One reader (`TableKeys.read`) checks every table: the unknown-key message, the range and the
// file:line of a problem come from the declaration. The declarations are in TableSettings.swift;
// a test checks docs/CONFIG.md's rows against them.

/// Where a table is in the file, for its problems: the file, the table (`cues.tick`), and how the
/// keys are named and located when the table is an inline one (`duck = { … }`).
struct TableContext {
  let path: String
  let locator: KeyLocator
  /// `cues.tick`, `quiet-hours`.
  let section: String
  /// The table's NAME (`tick`), "" for `[quiet-hours]`.
  let name: String
  /// For an inline table: the key it is the value of, whose line its problems point to.
  var inline: String? = nil
  /// How messages name a key: `duck's by`, `a variation's weight`.
  var prefix = ""

  /// The problem `message` about `key`, at its line.
  func fail(_ key: String, _ message: String) -> ConfigError {
    ConfigError(path: path, line: line(of: key), message: "[\(section)] " + message)
  }
  /// The line `key` is set on (an inline table's key), else the table's header.
  func line(of key: String) -> Int {
    let line = locator.line(of: inline ?? key, in: section)
    return line > 0 ? line : locator.line(of: section, in: section)
  }
  /// The same place, for the inline table that is the value of `key`, naming its keys with `prefix`.
  func inside(_ key: String, naming prefix: String) -> TableContext {
    var context = self
    context.inline = inline ?? key
    context.prefix = prefix
    return context
  }
}

/// One key of a table: its name, what it takes, its help (the start of its docs/CONFIG.md row),
/// its default as the docs show it, and how it is read into `Target`.
public struct TableKey<Target: Sendable>: Sendable {
  public let key: String
  public let type: ValueType
  public let help: String
  /// Must be given (`from`, a binding's `cue`).
  public let required: Bool
  /// The default: the value of the field in the blank struct (nil: none, or required).
  let defaultValue: @Sendable (Target) -> SettingValue?
  /// How docs/CONFIG.md's default column starts, when there is no default value: `none`, `required`.
  let absent: String
  /// Said after the default in a range message: `, no cap`.
  let note: String
  let read: @Sendable (JSONValue, inout Target, _ key: String, TableContext) throws(ConfigError) -> Void

  /// The default as docs/CONFIG.md's default column starts: `` `50` ``, `` `"steal"` ``, `none`.
  func documentedDefault(_ blank: Target) -> String {
    switch defaultValue(blank) {
    case nil: absent
    case .string(let s): "`\"\(s)\"`"
    case let value?: "`\(value.shown)`"
    }
  }
  /// The default as a range message states it, if it has one.
  func messageDefault(_ blank: Target) -> String? { defaultValue(blank).map { $0.shown + note } }

  /// A key whose checked value goes into `field`, converted by `convert`; `shown` says the field's
  /// value as a setting's (nil: no default).
  init<Field: Sendable>(
    _ key: String, _ type: ValueType, help: String, required: Bool = false, sets field: WritableKeyPath<Target, Field> & Sendable,
    shown: @escaping @Sendable (Field) -> SettingValue?, absent: String = "none", note: String = "",
    as convert: @escaping @Sendable (SettingValue) -> Field
  ) {
    self.key = key
    self.type = type
    self.help = help
    self.required = required
    self.absent = required ? "required" : absent
    self.note = note
    defaultValue = { blank in required ? nil : shown(blank[keyPath: field]) }
    let defaultValue = defaultValue
    read = { (value, target, key, context) throws(ConfigError) in
      do throws(SettingProblem) {
        // `target` has its defaults still in the fields not read yet (TOML gives a key once).
        let checked = try type.check(value, name: context.prefix + key, shownDefault: defaultValue(target).map { $0.shown + note })
        target[keyPath: field] = convert(checked)
      } catch {
        throw context.fail(key, error.message)
      }
    }
  }

  /// A key with its own reader (a list, an inline table).
  init(
    _ key: String, _ type: ValueType, help: String, required: Bool = false, default documented: String,
    read: @escaping @Sendable (JSONValue, inout Target, _ key: String, TableContext) throws(ConfigError) -> Void
  ) {
    self.key = key
    self.type = type
    self.help = help
    self.required = required
    absent = documented
    note = ""
    defaultValue = { _ in nil }
    self.read = read
  }

  static func number(
    _ key: String, _ range: ClosedRange<Double>, of unit: String? = nil, help: String, sets field: WritableKeyPath<Target, Double> & Sendable
  ) -> TableKey {
    TableKey(key, .number(range, unit: unit), help: help, sets: field, shown: { .number($0) }, as: \.double)
  }
  /// A number whose absence means "someone else's" (`absent` says whose).
  static func number(
    _ key: String, _ range: ClosedRange<Double>, of unit: String? = nil, help: String, sets field: WritableKeyPath<Target, Double?> & Sendable,
    absent: String
  ) -> TableKey {
    TableKey(key, .number(range, unit: unit), help: help, sets: field, shown: { $0.map { .number($0) } }, absent: absent, as: { $0.double })
  }
  static func integer(
    _ key: String, _ range: ClosedRange<Int>, help: String, note: String = "", sets field: WritableKeyPath<Target, Int> & Sendable
  ) -> TableKey {
    TableKey(key, .integer(range), help: help, sets: field, shown: { .integer($0) }, note: note, as: \.int)
  }
  static func flag(_ key: String, help: String, sets field: WritableKeyPath<Target, Bool> & Sendable) -> TableKey {
    TableKey(key, .boolean, help: help, sets: field, shown: { .bool($0) }, as: \.bool)
  }
  static func name(
    _ key: String, _ what: String, help: String, required: Bool = false, sets field: WritableKeyPath<Target, String> & Sendable
  ) -> TableKey {
    TableKey(key, .name(what), help: help, required: required, sets: field, shown: { .string($0) }, as: \.string)
  }
  /// One of `words`, each glossed in the message when `glosses` has it.
  static func choice<Word: RawRepresentable & Hashable & Sendable>(
    _ key: String, _ words: [Word], glosses: [Word: String] = [:], help: String, sets field: WritableKeyPath<Target, Word> & Sendable
  ) -> TableKey where Word.RawValue == String {
    TableKey(
      key, .choice(words.map(\.rawValue), glosses: words.map { glosses[$0] ?? "" }), help: help, sets: field,
      shown: { .string($0.rawValue) }, as: { Word(rawValue: $0.string)! })
  }
  static func timeOfDay(_ key: String, help: String, sets field: WritableKeyPath<Target, Int> & Sendable) -> TableKey {
    TableKey(key, .timeOfDay, help: help, required: true, sets: field, shown: { _ in nil }, as: \.int)
  }
}

/// The keys of one kind of table, and how it reads one: from the blank struct (the defaults), each
/// key by its declaration, then the required keys, then `finish` (checks across keys).
public struct TableKeys<Target: Sendable>: Sendable {
  /// How docs/CONFIG.md heads its table: `[cues.NAME]`, `duck`.
  public let title: String
  /// Who takes the keys, for the unknown-key message: `a cue's table takes …`; for an inline
  /// table what it is (`a variation`; "": the key it is the value of).
  let taker: String
  /// The struct with every default.
  public let blank: Target
  public let keys: [TableKey<Target>]
  /// What a missing required key says, when not the type's message (`page-next needs cue = …`).
  var missing: (@Sendable (_ key: String, TableContext) -> String)? = nil
  /// A check across keys, once all are read.
  var finish: (@Sendable (inout Target, TableContext) throws(ConfigError) -> Void)? = nil

  var keyList: String { keys.map(\.key).spoken() }

  /// The key names and docs/CONFIG.md's cells for them: type (a part of it) and default (its start).
  public var documentation: [(key: String, type: String, default: String, help: String)] {
    keys.map { ($0.key, $0.type.documented, $0.documentedDefault(blank), $0.help) }
  }

  /// Reads `members` into a copy of `blank`.
  func read(_ members: [(String, JSONValue)], _ context: TableContext) throws(ConfigError) -> Target {
    var target = blank
    for (key, value) in members {
      guard let declaration = keys.first(where: { $0.key == key }) else {
        // `a cue's table takes …`; in an inline table: `unknown key x in duck; it takes …`.
        let message =
          context.inline.map { "unknown key \(key) in \(taker.isEmpty ? $0 : taker); it takes \(keyList)" }
          ?? "unknown key \(key); \(taker) \(keyList)"
        throw context.fail(key, message)
      }
      try declaration.read(value, &target, key, context)
    }
    for declaration in keys where declaration.required && !members.contains(where: { $0.0 == declaration.key }) {
      if let missing { throw context.fail(declaration.key, missing(declaration.key, context)) }
      try declaration.read(.null, &target, declaration.key, context)
    }
    try finish?(&target, context)
    return target
  }
}

extension Array where Element == String {
  /// `a, b and c`.
  func spoken(_ last: String = "and") -> String {
    count > 1 ? dropLast().joined(separator: ", ") + " \(last) " + self.last! : joined()
  }
}
