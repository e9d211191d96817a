import CuePosix
import CueProtocol
import Testing

@testable import CueDaemon

/// `ConfigFile.load`: the file read and parsed in process, then checked; each problem names the file
/// and the line.
@Suite("The config file, read in process")
struct ConfigFileTests {
  static func load(_ toml: String) throws(ConfigError) -> ConfigValues {
    let path: String
    do {
      path = try Files.makeTemporaryDirectory(prefix: "cued-toml-file") + "/cued.toml"
      try Files.write(Array(toml.utf8), to: path)
    } catch {
      Issue.record("cannot write the file: \(error)")
      return ConfigValues()
    }
    return try ConfigFile.load(path: path)
  }

  /// Loads `toml` expecting a refusal on `line` whose message contains `message`.
  static func expectRefused(_ toml: String, line: Int, _ message: String, sourceLocation: SourceLocation = #_sourceLocation) {
    do {
      _ = try load(toml)
      Issue.record("\(toml.debugDescription) was accepted", sourceLocation: sourceLocation)
    } catch {
      #expect(error.line == line, "\(error)", sourceLocation: sourceLocation)
      #expect(error.message.contains(message), "\(error)", sourceLocation: sourceLocation)
      #expect(error.description.hasPrefix(error.path + ":\(line): "), sourceLocation: sourceLocation)
    }
  }

  @Test func settingsAndTablesAreRead() throws {
    let values = try Self.load(
      """
      # cued.toml
      device = "null"
      max-voices = 7
      idle-timeout = 0.5
      sounds = ["/one", '/two']

      [system-sounds]
      volume = 0.25
      muted = true

      [quiet-hours]
      from = "22:30"
      to = "07:00"

      [cues.tick]
      max-instances = 3
      group = "ui"

      [groups.ui]
      volume = 0.5
      """)
    #expect(values["device"] == .string("null"))
    #expect(values["max-voices"] == .integer(7))
    #expect(values["idle-timeout"] == .number(0.5))
    #expect(values["sounds"] == .strings(["/one", "/two"]))
    #expect(values.systemVolume == 0.25)
    #expect(values.systemMuted == true)
    #expect(values.quietHours?.from == 22 * 60 + 30)
    #expect(values.cueRules?["tick"]?.maxInstances == 3)
    #expect(values.groups?["ui"]?.volume == 0.5)
  }

  /// `[groups.NAME] roles`: a list of role names, each role in one group only.
  @Test func aGroupsRolesAreReadAndARoleInTwoGroupsIsRefused() throws {
    let values = try Self.load("[groups.assistive]\nroles = [\"a11y\", \"screen-reader.1\", \"a11y\"]\n[groups.calls]\nroles = [\"phone\"]\n")
    #expect(values.groups?["assistive"]?.roles == ["a11y", "screen-reader.1"])
    #expect(values.groups?["calls"]?.roles == ["phone"])
    Self.expectRefused(
      "[groups.alpha]\nroles = [\"a11y\"]\n\n[groups.beta]\nvolume = 0.5\nroles = [\"test\", \"a11y\"]\n", line: 6,
      "[groups.beta] roles lists 'a11y', which [groups.alpha] lists too")
    let usage = "[groups.ui] roles must be a list of media role names (letters, digits, '-', '_' and '.', at most 64 bytes)"
    Self.expectRefused("[groups.ui]\nroles = \"a11y\"\n", line: 2, usage)
    Self.expectRefused("[groups.ui]\nmuted = true\nroles = [1]\n", line: 3, usage)
    Self.expectRefused("[groups.ui]\nroles = [\"screen reader\"]\n", line: 2, usage)
    Self.expectRefused("[groups.ui]\nroles = [\"\"]\n", line: 2, usage)
  }

  @Test func aSyntaxErrorNamesTheLineAndColumn() {
    Self.expectRefused("device = \"null\"\nmax-voices = 01\n", line: 2, "TOML syntax (column 14): 01: a number cannot start with 0")
    Self.expectRefused("[cues.a]\ncooldown = 1\n[cues.a]\n", line: 3, "TOML syntax (column 1): the table [cues.a] is defined twice")
  }

  /// The parser gives each key's line, so a problem names it however the key is written: dotted
  /// from the top, in an inline table, or under a quoted NAME that holds a dot.
  @Test func aProblemNamesItsKeysLineHoweverTheKeyIsWritten() {
    let range = "volume must be a number from 0"
    Self.expectRefused("device = \"null\"\n\ngroups.ui.volume = 5\n", line: 3, "[groups.ui] " + range)
    Self.expectRefused("device = \"null\"\ngroups = { ui = { muted = true, volume = 5 } }\n", line: 2, "[groups.ui] " + range)
    Self.expectRefused("[groups.\"a.b\"]\nmuted = true\n\nvolume = 5\n", line: 4, "[groups.a.b] " + range)
  }

  /// Dates and times are text to the checks (as before the parser moved in process): a number key names itself.
  @Test func aDateWhereANumberBelongsIsATypeError() {
    Self.expectRefused("device = \"null\"\nmax-voices = 1979-05-27\n", line: 2, "max-voices must be a whole number")
    Self.expectRefused("[quiet-hours]\nfrom = 22:00:00\nto = \"07:00\"\n", line: 2, "from must be a time of day as \"HH:MM\"")
  }

  /// JSON has no infinity: as before, a non-finite number is refused by the key's own check.
  @Test func infinityIsRefusedByTheKeysCheck() {
    Self.expectRefused("[system-sounds]\nvolume = inf\n", line: 2, "volume must be a number from 0")
  }

  @Test func aMissingFileSaysSo() {
    #expect {
      try ConfigFile.load(path: "/nonexistent/cued-toml-test/cued.toml")
    } throws: { error in
      let error = error as? ConfigError
      return error?.line == 0 && error?.message == "cannot read it: No such file or directory"
    }
  }

  @Test func aDirectoryIsNotAFile() throws {
    let directory = try Files.makeTemporaryDirectory(prefix: "cued-toml-dir")
    #expect {
      try ConfigFile.load(path: directory)
    } throws: { error in
      (error as? ConfigError)?.description == directory + ": cannot read it: Is a directory"
    }
  }
}
