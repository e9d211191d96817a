/// `status`'s `soundTheme` section: the sound theme that theme events play from, and why.
extension StatusReply {
  /// The sound theme `play` with an `event` looks in now, where that choice came from, and whether
  /// event sounds are on (the desktop's switch, when cued follows the desktop).
  public struct SoundTheme: Sendable, Equatable {
    /// Where the theme came from.
    public enum Source: String, CaseIterable, Sendable {
      /// The desktop's own setting (`sound-theme = "desktop"`, read through GSettings).
      case desktop
      /// A theme named in the config file or on the command line (`sound-theme = "NAME"`).
      case config
      /// `freedesktop`: cued follows the desktop, but no desktop setting could be read.
      case `default`
    }

    public var name: String
    public var source: Source
    /// False while the desktop's event sounds are off: `play` with an `event` is then silent.
    public var eventSounds: Bool
    /// With `desktop`: the GSettings schema whose keys are read (`org.gnome.desktop.sound`).
    public var schema: String?
    /// With `desktop` or `default`: why the desktop's settings are followed, or why not (`no desktop
    /// session: no session bus (…)`, the `follow-desktop` setting).
    public var reason: String?

    public init(name: String, source: Source, eventSounds: Bool = true, schema: String? = nil, reason: String? = nil) {
      (self.name, self.source, self.eventSounds, self.schema, self.reason) = (name, source, eventSounds, schema, reason)
    }

    var json: JSONValue {
      var members: [(String, JSONValue)] = [("name", .string(name)), ("source", .string(source.rawValue)), ("eventSounds", .bool(eventSounds))]
      if let schema { members.append(("schema", .string(schema))) }
      if let reason { members.append(("reason", .string(reason))) }
      return .object(members)
    }

    /// One line for people: `Yaru, the desktop's (org.gnome.desktop.sound); event sounds off: events
    /// are silent`, `freedesktop, from sound-theme`, `freedesktop (no desktop setting to follow: no
    /// desktop session: no session bus (…))`.
    public var summary: String {
      var text: String
      switch source {
      case .desktop: text = "\(name), the desktop's" + (schema.map { " (\($0))" } ?? "")
      case .config: text = "\(name), from sound-theme"
      case .default: text = "\(name) (no desktop setting to follow" + (reason.map { ": \($0)" } ?? "") + ")"
      }
      if !eventSounds { text += "; event sounds off: events are silent" }
      return text
    }

    init(json: JSONValue) throws(ProtocolError) {
      var fields = FieldReader(json)
      let what = "the status reply's soundTheme"
      name = try required(fields.string("name"), "name", in: what)
      source = try required(fields.value("source", as: Source.self), "source", in: what)
      eventSounds = try required(fields.bool("eventSounds"), "eventSounds", in: what)
      schema = try fields.string("schema")
      reason = try fields.string("reason")
    }
  }
}
