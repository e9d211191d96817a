#if canImport(Testing)
import Testing

/// One behaviour test's body, by name: each surface's suite runs the same list as one
/// parameterised test (`@Test(arguments: CueRules.all)`), so a body added to a list runs both ways.
public struct Behaviour: Sendable, CustomTestStringConvertible {
  public let name: String
  public let body: @Sendable (DaemonStarter) throws -> Void

  public init(_ name: String, _ body: @escaping @Sendable (DaemonStarter) throws -> Void) {
    self.name = name
    self.body = body
  }

  public var testDescription: String { name }
}
#endif
