import CueProtocol
import Testing

/// Carousel lines, written and read back.
@Suite("Carousel messages")
struct CarouselMessageTests {
  static func roundTrip(_ message: CarouselMessage) throws -> CarouselMessage {
    try CarouselMessage.decode(JSONParser.parse(Array(JSONWriter.write(message.json).utf8)))
  }

  @Test func aPageChangeWithoutAnimationSaysSoAndReadsBack() throws {
    let jump = CarouselMessage(event: .pageChanged(from: 0, to: 3, count: 5, reason: .programmatic, animated: false))
    #expect(JSONWriter.write(jump.json) == #"{"carousel":"default","event":"page-changed","from":0,"to":3,"count":5,"reason":"programmatic","animated":false}"#)
    #expect(try Self.roundTrip(jump) == jump)
    // Animated is the default, and is not written.
    let scroll = CarouselMessage(event: .pageChanged(from: 0, to: 1, count: 5, reason: .programmatic))
    #expect(!JSONWriter.write(scroll.json).contains("animated"))
    #expect(try Self.roundTrip(scroll) == scroll)
  }

  @Test func animatedMustBeABoolean() throws {
    let line = #"{"carousel":"default","event":"page-changed","from":0,"to":1,"count":5,"animated":"no"}"#
    #expect(throws: ProtocolError.self) { try CarouselMessage.decode(JSONParser.parse(Array(line.utf8))) }
  }
}
