import CueProtocol

extension ProtocolDocs {
  /// The libcanberra driver's copy of what it matches on the wire, generated so that it cannot
  /// drift: the error codes, the finish and silent-play reasons, the `hello` features, and the
  /// `role` rule of `play` (Sources/Plugins/CanberraCued includes it).
  public static let headerPath = "Sources/Plugins/CanberraCued/cued-protocol.h"

  /// The header (whatever the file held).
  public static func header(updating _: String) throws(Problem) -> String { cHeader }

  static var cHeader: String {
    var lines = [
      "// The cued protocol's words and the play role rule, for the libcanberra driver. Generated from",
      "// CueProtocol (ErrorCode, FinishReason, SilenceReason, ProtocolFeature, PlayParameters) by",
      "// `\(command)` (Tools/CueProtocolDocs/CHeader.swift); do not edit: a test fails when it differs.",
      "#ifndef CUED_PROTOCOL_H",
      "#define CUED_PROTOCOL_H",
    ]
    func section(_ title: String, _ prefix: String, _ words: [String]) {
      lines += ["", "// \(title)"]
      lines += words.map { "#define \(prefix)_\(macro($0)) \"\($0)\"" }
    }
    section("Error codes: an error reply's error.code.", "CUED_CODE", ErrorCode.allCases.map(\.rawValue))
    section("Why a voice finished: a finished event's reason.", "CUED_FINISHED", FinishReason.allCases.map(\.rawValue))
    section("Why a play was silent: a play reply's reason when played is false.", "CUED_SILENT", SilenceReason.allCases.map(\.rawValue))
    section("Features of hello's capabilities.features.", "CUED_FEATURE", ProtocolFeature.allCases.map(\.rawValue))
    lines += [
      "", "// play's role: 1 to CUED_ROLE_MAX_BYTES bytes of ASCII letters, digits and CUED_ROLE_MARKS.",
      "#define CUED_ROLE_MAX_BYTES \(PlayParameters.maximumRoleBytes)", "#define CUED_ROLE_MARKS \"\(PlayParameters.nameMarks)\"", "",
      "#endif",
    ]
    return lines.joined(separator: "\n") + "\n"
  }

  /// `device-lost` as a C macro's tail: `DEVICE_LOST`.
  static func macro(_ word: String) -> String {
    String(word.uppercased().map { $0.isLetter || $0.isNumber ? $0 : "_" })
  }
}
