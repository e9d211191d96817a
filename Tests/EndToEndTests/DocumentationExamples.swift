// The Swift examples of README.md and docs/CLIENT.md, compiled, and run and heard by
// DocumentedExampleTests: each ```swift block of the documents appears in this file word for
// word (without its imports, which are at the top here), so keep the two in step.

import CueClient
import CueProtocol

// README.md, "From your program": a program's top-level code, here in a function.
func readmeExample() async throws {
let client = CueClient()
try await client.play(cue: "page-next", pan: 0.6)          // fire-and-forget

let tick = try await client.makeSystemSound(cue: "tick")    // System Sound Services' model
try await tick.play { playedToTheEnd in print("tick done:", playedToTheEnd) }
try await tick.dispose()                                    // does not cut the play above

let player = try await client.makePlayer(cue: "wrap")       // AVAudioPlayer's model
try await player.setNumberOfLoops(3)                        // four times through
try await player.play()
try await player.setVolume(0.2, fadeDuration: 0.8)          // a fade while it plays
_ = await player.events.first { $0.kind == "finished" }     // it stops when the program ends: wait for it
}

func hello() async throws {
  let client = CueClient()  // $CUED_SOCKET, else $XDG_RUNTIME_DIR/cued/cued.sock, else /tmp/cued-UID/cued.sock
  try await client.play(cue: "pico")
}

func fireAndForget(client: CueClient) async throws {
  try await client.play(cue: "pico")
  try await client.play(cue: "page-next", volume: 0.5, pan: -0.7)
  let loop = try await client.play(cue: "tick", loops: -1)  // until stopped
  try await client.stop(voice: loop, fadeDuration: 0.05)
}

func fadesPauseSeekAndLoops(client: CueClient) async throws {
  let player = try await client.makePlayer(cue: "wrap", enableRate: true)
  try await player.setNumberOfLoops(-1)  // loop until stopped
  try await player.setVolume(0)
  try await player.play()
  try await player.setVolume(1, fadeDuration: 0.2)  // fade in
  try await Task.sleep(for: .milliseconds(300))
  try await player.pause()
  let position = try await player.currentTime  // kept while paused
  try await player.setCurrentTime(position / 2)  // seek
  try await player.setRate(1.25)
  try await player.play()  // resumes from there
  try await player.setVolume(0, fadeDuration: 0.1)  // fade out...
  try await Task.sleep(for: .milliseconds(100))
  try await player.stop()  // ...and stop (no `finished` event)
}

func playTogether(client: CueClient) async throws -> (CuePlayer, CuePlayer) {
  let p1 = try await client.makePlayer(cue: "page-next")
  let p2 = try await client.makePlayer(cue: "page-prev")
  try await p1.prepareToPlay()
  try await p2.prepareToPlay()
  let t = try await p1.deviceCurrentTime + 0.1
  try await p1.play(atTime: t)
  try await p2.play(atTime: t)
  return (p1, p2)  // keep them: a released player stops
}

func playUntilDone(client: CueClient) async throws -> Bool {
  let player = try await client.makePlayer(cue: "page-next")
  try await player.play()
  for await event in player.events {
    if case .finished(let finished)? = event.daemonEvent { return finished.successfully }
  }
  return false
}

func playAndWait(client: CueClient) async throws -> Bool {
  let player = try await client.makePlayer(cue: "pico")
  return try await player.playToEnd()  // true: it played to its end
}

func systemSound(client: CueClient) async throws {
  let sound = try await client.makeSystemSound(cue: "pico")
  try await sound.play { played in
    print("pico \(played ? "was heard to its end" : "did not play to its end")")
  }
  try await sound.dispose()  // the play goes on to its end, and its completion still comes
}

func monitor(client: CueClient) async throws {
  for await event in try await client.events(EventFilter(kinds: [.started, .finished])) {
    switch event.daemonEvent {
    case .started(let started)?: print("voice \(started.voice) (\(started.cue)) is heard in \(started.heardIn) s")
    case .finished(let finished)?: print("voice \(finished.voice ?? 0) ended: \(finished.reason.rawValue)")
    case nil where event.kind == "reconnected": print("cued is back; events may have been missed")
    default: break
    }
  }
}

func playOrExplain(client: CueClient, cue: String) async -> UInt64? {
  do {
    return try await client.play(cue: cue)
  } catch {
    // The client's calls use typed throws: `error` is a ClientError.
    switch error {
    case .refused(let refusal) where refusal.code == .unknownCue:
      print("there is no cue named \(cue)")
    case .refused(let refusal):
      print("cued refused: \(refusal.code.rawValue): \(refusal.message)")
    case .unreachable, .disconnected:
      print("cued is not running: \(error)")
    case .protocolViolation, .timedOut:
      print("\(error)")
    }
    return nil
  }
}

func blocking(socketPath: String? = nil) throws(ClientError) -> String {
  let connection = try CueConnection.connect(socketPath: socketPath)
  let voice = try connection.send(.play(PlayParameters(cue: "pico", notify: true)), as: PlayReply.self).voice
  let event = try connection.nextEvent(timeoutSeconds: 2)  // {"event":"finished","voice":…}
  return "voice \(voice): \(event.kind), \(event.reason ?? "?")"
}

// docs/CLIENT.md, "A paging scroll view, forwarded".
final class PagerSounds {
  let client = CueClient()
  var tracker = ScrollTracker(pageCount: 5, pageWidth: 390)

  func send(_ events: [CarouselMessage.Event]) {
    let client = self.client
    for event in events { Task { try? await client.post(CarouselMessage(carousel: "photos", event: event)) } }
  }

  // The delegate calls, forwarded (x along a horizontal pager).
  func willBeginDragging() { send(tracker.willBeginDragging()) }
  func didScroll(x: Double) { send(tracker.didScroll(contentOffset: x)) }
  func willEndDragging(velocityX: Double, targetX: Double) {
    send(tracker.willEndDragging(velocityPointsPerMillisecond: velocityX, targetContentOffset: targetX))
  }
  func didEndDragging(decelerate: Bool) { send(tracker.didEndDragging(willDecelerate: decelerate)) }
  func didEndDecelerating() { send(tracker.didEndDecelerating()) }
  func jump(to x: Double) { send(tracker.setContentOffset(x, animated: false)) }
}

// A bounded pager (it does not loop) that scrolls by itself as seed 003's does: a timer moves
// the content offset a point at a time, until the user takes over.
func boundedPagerWithAutoScroll() -> [CarouselMessage.Event] {
  var tracker = ScrollTracker(pageCount: 3, pageWidth: 390)
  var sent: [CarouselMessage.Event] = []
  // The timer's steps: a page change (reason auto) as each page is crossed; nothing settles.
  for x in stride(from: 1.0, through: 500, by: 1) { sent += tracker.autoScroll(toOffset: x) }
  // A touch: the auto-scroll's end (its one settle), then the drag.
  sent += tracker.willBeginDragging()
  // Dragged on past the last page (the rubber band): `edge`, once per scroll.
  for x in [700.0, 780, 820, 850] { sent += tracker.didScroll(contentOffset: x) }
  sent += tracker.willEndDragging(velocityPointsPerMillisecond: 0, targetContentOffset: 780)
  sent += tracker.didEndDragging(willDecelerate: true)
  sent += tracker.didScroll(contentOffset: 780)  // it springs back
  sent += tracker.didEndDecelerating()
  return sent
}
