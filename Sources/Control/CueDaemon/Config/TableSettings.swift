import CueProtocol

// The config file's own tables, key by key (TableKeys.swift says how a declaration is read). The
// defaults are the structs' (CueRule, PagingBinding, …); the help is the start of the key's row in
// docs/CONFIG.md, and a test checks each row's type and default against the declaration.
//
// Adding a key to one of these tables: the field in its struct (with its default), one entry in its
// list here, and its row in docs/CONFIG.md.

extension Settings {
  /// `[cues.NAME]`.
  public static let cueRuleKeys = TableKeys<CueRule>(
    title: "[cues.NAME]", taker: "a cue's table takes", blank: CueRule(),
    keys: [
      TableKey(
        "variations", .structured("1–256"), help: "The set a play picks from", default: "the cue's own file(s)",
        read: { (value, rule, key, context) throws(ConfigError) in rule.variations = try variations(value, key, context) }),
      .number("volume-spread", 0...24, of: "dB", help: "Each play's volume moves by a random amount within ± this", sets: \.volumeSpread),
      .number("rate-spread", 0...12, of: "semitones", help: "Each play's rate, and so its pitch, moves by a random amount within ± this", sets: \.rateSpread),
      .number("cooldown", 0...3600, of: "seconds", help: "A play within this time of the cue's last start is silent", sets: \.cooldown),
      .integer("max-instances", 0...256, help: "The most voices of this cue at once", note: ", no cap", sets: \.maxInstances),
      .choice(
        "past-max", [PastMaximum.steal, .refuse], glosses: [.steal: "the oldest instance fades out", .refuse: "the new play is silent"],
        help: "A play past `max-instances`", sets: \.pastMaximum),
      .integer("priority", 0...100, help: "At the voice limit (`max-voices`), a play takes the voice", sets: \.priority),
      .flag("muted", help: "The cue is silent", sets: \.muted),
      .name("group", "the name of a [groups.NAME] table", help: "The group (bus) it plays in", sets: \.group),
      .flag("important", help: "It plays at the level `quiet`", sets: \.important),
    ],
    finish: { (rule, context) throws(ConfigError) in rule.line = context.locator.line(of: context.section, in: context.section) })

  /// A `{ cue = "…", weight = W }` of a `variations` list.
  public static let variationKeys = TableKeys<Variation>(
    title: "variation", taker: "a variation", blank: Variation(cue: ""),
    keys: [
      .name("cue", "a cue name", help: "The cue", required: true, sets: \.cue),
      TableKey(
        "weight", .numberAbove(0...1000), help: "How likely it is against the others", sets: \.weight, shown: { .number($0) },
        as: \.double),
    ])

  /// `variations = ["a", { cue = "b", weight = 2 }]`.
  static func variations(_ value: JSONValue, _ key: String, _ context: TableContext) throws(ConfigError) -> [Variation] {
    let usage = "variations must be a list of cue names or tables like { cue = \"page-next/soft\", weight = 2 }"
    guard let items = value.arrayValue, !items.isEmpty, items.count <= 256 else { throw context.fail(key, usage + " (1 to 256 of them)") }
    var result: [Variation] = []
    for item in items {
      if let name = item.stringValue, !name.isEmpty {
        result.append(Variation(cue: name))
      } else if let fields = item.objectValue {
        result.append(try variationKeys.read(fields, context.inside(key, naming: "a variation's ")))
      } else {
        throw context.fail(key, usage)
      }
    }
    return result
  }

  /// `[groups.NAME]`.
  public static let groupKeys = TableKeys<GroupSettings>(
    title: "[groups.NAME]", taker: "a group takes", blank: GroupSettings(),
    keys: [
      .number("volume", 0...1, help: "The group's volume, a factor on each of its voices", sets: \.volume),
      .flag("muted", help: "Its voices fall silent", sets: \.muted),
      .flag("at-quiet", help: "Its cues play at the level `quiet`", sets: \.atQuiet),
      TableKey(
        "duck", .structured("`{ group = \"…\", by = dB, attack = s, release = s }`"), help: "While any cue of this group plays, the other group falls",
        default: "none",
        read: { (value, group, key, context) throws(ConfigError) in
          guard let fields = value.objectValue else { throw context.fail(key, duckUsage) }
          group.duck = try duckKeys.read(fields, context.inside(key, naming: "duck's "))
        }),
      TableKey(
        "roles", .structured("list of strings"), help: "The media roles (`play`'s `role`) it plays", default: "none",
        read: { (value, group, key, context) throws(ConfigError) in group.roles = try roles(value, key, context) }),
    ])

  /// `roles = ["a11y", "phone"]`: media role names, each once.
  static func roles(_ value: JSONValue, _ key: String, _ context: TableContext) throws(ConfigError) -> [String] {
    let usage =
      "roles must be a list of media role names (letters, digits, '-', '_' and '.', at most \(PlayParameters.maximumRoleBytes) bytes), like [\"a11y\", \"phone\"]"
    guard let items = value.arrayValue else { throw context.fail(key, usage) }
    var result: [String] = []
    for item in items {
      guard let role = item.stringValue, PlayParameters.isRoleName(role) else { throw context.fail(key, usage) }
      if !result.contains(role) { result.append(role) }
    }
    return result
  }

  static let duckUsage = "duck must be a table like { group = \"ui\", by = -12, attack = 0.02, release = 0.3 } (another group)"

  /// `duck = { group = "ui", by = -12, attack = 0.02, release = 0.3 }` in `[groups.NAME]`.
  public static let duckKeys = TableKeys<Ducking>(
    title: "duck", taker: "duck", blank: Ducking(),
    keys: [
      .name("group", "the name of another group", help: "The group lowered", required: true, sets: \.group),
      .number("by", -60...0, of: "dB", help: "By how much", sets: \.byDecibels),
      .number("attack", 0...10, of: "seconds", help: "How long the fall takes", sets: \.attack),
      .number("release", 0...10, of: "seconds", help: "How long the rise takes", sets: \.release),
    ],
    missing: { _, _ in duckUsage },
    finish: { (duck, context) throws(ConfigError) in
      if duck.group == context.name { throw context.fail("group", duckUsage) }
    })

  /// `[clients.NAME]`.
  public static let clientKeys = TableKeys<ClientSettings>(
    title: "[clients.NAME]", taker: "a client takes", blank: ClientSettings(),
    keys: [
      .choice("ceiling", [SoundLevel.full, .quiet, .silent], help: "A client whose `hello` names it `NAME` never sounds above this level", sets: \.ceiling),
      .flag("breaks-silence", help: "Its `important` cues play even at `silent`", sets: \.breaksSilence),
    ])

  /// `[quiet-hours]`.
  public static let quietHourKeys = TableKeys<QuietHours>(
    title: "[quiet-hours]", taker: "quiet hours take", blank: QuietHours(from: 0, to: 0),
    keys: [
      .timeOfDay("from", help: "The daily range", sets: \.from),
      .timeOfDay("to", help: "The daily range", sets: \.to),
      .choice("level", [SoundLevel.quiet, .silent], help: "The level at their start", sets: \.level),
    ],
    finish: { (hours, context) throws(ConfigError) in
      if hours.from == hours.to { throw context.fail("to", "from and to are the same time; give a range") }
    })

  /// `[carousel.NAME]`: a key per binding name, and the carousel's own.
  public static let carouselKeys = TableKeys<CarouselBindings>(
    title: "[carousel.NAME]", taker: "a carousel takes", blank: CarouselBindings(),
    keys: CarouselBindings.bindingNames.map { name in
      TableKey(
        name, .structured("a cue name, `false`, or a binding table (below)"), help: "What the event plays", default: "nothing",
        read: { (value, carousel, key, context) throws(ConfigError) in carousel.bindings[key] = try binding(value, key, context) })
    } + [
      .number("pan-by-direction", 0...1, help: "Next pans right and previous pans left by this much", sets: \.panByDirection),
      .number("pan-by-position", 0...1, help: "A page sound pans by where the page sits", sets: \.panByPosition),
      .number("rate-spread", 0...0.5, help: "A random rate (and pitch) variation of ± this much", sets: \.rateSpread),
      .number("rate-by-page", 0...0.1, help: "The rate rises by this much per page index", sets: \.rateByPage),
      .integer("max-page-voices", 1...16, help: "The most page sounds heard at once", sets: \.maxPageVoices),
      .flag("vertical", help: "The pages are above and below each other (a vertical pager)", sets: \.vertical),
    ])

  /// A binding: a cue name, `false` or `""` for nothing, or `{ cue = "…", volume = …, … }`.
  static func binding(_ value: JSONValue, _ key: String, _ context: TableContext) throws(ConfigError) -> PagingBinding? {
    if value.boolValue == false || value.stringValue == "" { return nil }
    var binding: PagingBinding
    if let cue = value.stringValue {
      binding = PagingBinding(cue: cue)
    } else if let fields = value.objectValue {
      binding = try bindingKeys.read(fields, context.inside(key, naming: key + "'s "))
    } else {
      throw context.fail(key, "\(key) must be a cue name, false, or a table like { cue = \"page-next\", volume = 0.8 }")
    }
    binding.line = context.line(of: key)
    return binding
  }

  /// A binding's table, `page-next = { cue = "page-next", volume = 0.8 }`.
  public static let bindingKeys = TableKeys<PagingBinding>(
    title: "binding", taker: "", blank: PagingBinding(cue: ""),
    keys: [
      .name("cue", "a cue name", help: "The cue to play", required: true, sets: \.cue),
      .number("volume", 0...1, help: "Linear volume", sets: \.volume),
      .number("pan", -1...1, help: "Stereo position", sets: \.pan),
      .integer("loops", 0...1000, help: "numberOfLoops", sets: \.loops),
      .choice("retrigger", Retrigger.allCases, help: "While this binding's cue still sounds", sets: \.retrigger),
      .integer("max-voices", 1...64, help: "The cap for `overlap`", sets: \.maxVoices),
      .number("min-interval", 0...10, of: "seconds", help: "The shortest time between two starts of this binding", sets: \.minInterval),
      .number("deadline", 0.001...10, of: "seconds", help: "Latest wins", sets: \.deadline),
      .number("pan-by-direction", 0...1, help: "Next pans right and previous pans left by this much", sets: \.panByDirection, absent: "the carousel's"),
      .number("rate-spread", 0...0.5, help: "A random rate (and pitch) variation of ± this much", sets: \.rateSpread, absent: "the carousel's"),
      .number("rate-by-page", 0...0.1, help: "The rate rises by this much per page index", sets: \.rateByPage, absent: "the carousel's"),
      .choice("multi-page", MultiPage.allCases, help: "A page change across several pages", sets: \.multiPage),
      .number("page-spacing", 0.01...1, of: "seconds", help: "With `multi-page = \"each\"`: the time between the sounds", sets: \.pageSpacing),
    ],
    missing: { key, context in "\(context.inline ?? "a binding") needs \(key) = \"…\" (the cue to play), or false for nothing" })

  /// The tables of the file besides `[system-sounds]`, in the unknown-key message's order, and how
  /// each is read into the values.
  static let configTables: [ConfigTable] = [
    ConfigTable("carousel", named: true) { (value, values, path, locator) throws(ConfigError) in
      values.carousels = try ConfigFile.namedTables(value, kind: "carousel", path: path, locator: locator, carouselKeys)
    },
    ConfigTable("cues", named: true) { (value, values, path, locator) throws(ConfigError) in
      values.cueRules = try ConfigFile.namedTables(value, kind: "cues", path: path, locator: locator, cueRuleKeys)
    },
    ConfigTable("groups", named: true) { (value, values, path, locator) throws(ConfigError) in
      values.groups = try ConfigFile.interpretGroups(value, path: path, locator: locator)
    },
    ConfigTable("clients", named: true) { (value, values, path, locator) throws(ConfigError) in
      values.clients = try ConfigFile.namedTables(value, kind: "clients", path: path, locator: locator, clientKeys)
    },
    ConfigTable("quiet-hours", named: false) { (value, values, path, locator) throws(ConfigError) in
      let context = TableContext(path: path, locator: locator, section: "quiet-hours", name: "")
      guard let members = value.objectValue else { throw context.fail("quiet-hours", "must be a table: \(quietHourKeys.keyList)") }
      values.quietHours = try quietHourKeys.read(members, context)
    },
  ]

  /// Every declared table, as docs/CONFIG.md heads it, with its rows (for the documentation test).
  public static var tableDocumentation: [(title: String, rows: [(key: String, type: String, default: String, help: String)])] {
    [
      (carouselKeys.title, carouselKeys.documentation), (bindingKeys.title, bindingKeys.documentation),
      (cueRuleKeys.title, cueRuleKeys.documentation), (variationKeys.title, variationKeys.documentation),
      (groupKeys.title, groupKeys.documentation), (duckKeys.title, duckKeys.documentation),
      (clientKeys.title, clientKeys.documentation), (quietHourKeys.title, quietHourKeys.documentation),
    ]
  }
}

/// A table of the file that is not settings: `[cues.NAME]` (named: `cues` holds tables) or `[quiet-hours]`.
struct ConfigTable: Sendable {
  let key: String
  let named: Bool
  let read: @Sendable (JSONValue, inout ConfigValues, _ path: String, KeyLocator) throws(ConfigError) -> Void

  init(_ key: String, named: Bool, read: @escaping @Sendable (JSONValue, inout ConfigValues, String, KeyLocator) throws(ConfigError) -> Void) {
    self.key = key
    self.named = named
    self.read = read
  }

  /// `[cues.NAME]`, `[quiet-hours]`.
  var header: String { "[" + key + (named ? ".NAME]" : "]") }
}
