import CueClient
import CuePosix
import CueProtocol
import Synchronization

/// The carousel's line to cued: posts its messages in order, fire-and-forget, and brings back
/// cued's `paging` answers and whether cued is there at all.
///
/// The terminal loop calls `post` and `takeNews` and never waits for cued: the sending and the
/// listening happen in two tasks of their own, which wake the loop (through `Wakeup`) when
/// there is news. Without cued the carousel goes on silently: a post that cannot be delivered is
/// dropped, the subscription to `paging` events is tried again every `retrySeconds` (and at once
/// after a post got through), and once cued answers, sound resumes with the next page turn.
/// After a loss the client reconnects by itself while the subscription is open. The link counts
/// as connected once the subscription is up (from then on no answer is missed), and as not
/// running when a post or the subscription fails, or the connection is lost.
final class CuedLink: Sendable {
  /// What the loop learns from the link, in the order it happened.
  enum News: Equatable, Sendable {
    case connection(StatusLine.Connection)
    case answer(PagingAnswer)
  }

  /// A message waiting to be sent, and when it was queued (monotonic seconds).
  private struct Outgoing: Sendable {
    let message: CarouselMessage
    let queuedSeconds: Double
  }

  private struct Shared {
    var news: [News] = []
    var connection: StatusLine.Connection = .connecting
    var subscribed = false
    var kicked = false
  }

  /// A message older than this when its turn to be sent comes is dropped: the sound of a page
  /// turned long ago (while a reconnection was tried) would only confuse.
  static let staleSeconds = 0.5
  /// How often the subscription is tried again while cued is away.
  static let retrySeconds = 2.0

  let client: CueClient
  let carousel: String
  private let wakeup: Wakeup
  private let queue: AsyncStream<Outgoing>
  private let queueInput: AsyncStream<Outgoing>.Continuation
  private let shared = Mutex(Shared())

  /// A link for carousel `carousel` to the daemon at `socketPath` (nil: the client's default); call `start()`.
  init(socketPath: String?, carousel: String, wakeup: Wakeup) {
    self.client = CueClient(socketPath: socketPath)
    self.carousel = carousel
    self.wakeup = wakeup
    (queue, queueInput) = AsyncStream.makeStream(of: Outgoing.self, bufferingPolicy: .unbounded)
  }

  /// Starts the tasks that send and listen.
  func start() {
    Task.detached { await self.sendAll() }
    Task.detached { await self.listen() }
  }

  /// Queues `events` to be sent, in order, as this carousel's messages. Never blocks.
  func post(_ events: [CarouselMessage.Event]) {
    let now = MonotonicClock.seconds()
    for event in events {
      queueInput.yield(Outgoing(message: CarouselMessage(carousel: carousel, event: event), queuedSeconds: now))
    }
  }

  /// The news since the last call, oldest first.
  func takeNews() -> [News] {
    shared.withLock { state in
      defer { state.news.removeAll() }
      return state.news
    }
  }

  // MARK: - Tasks

  private func sendAll() async {
    for await item in queue {
      if MonotonicClock.seconds() - item.queuedSeconds > Self.staleSeconds { continue }
      do throws(ClientError) {
        try await client.post(item.message)
        // cued is there: if the subscription is not, it need not wait for its next try. (The
        // status says "connected" only once the subscription is up: before, answers would be missed.)
        shared.withLock { state in if !state.subscribed { state.kicked = true } }
      } catch {
        note(.notRunning)
      }
    }
  }

  private func listen() async {
    let filter = EventFilter(kinds: [.paging])
    while !Task.isCancelled {
      do throws(ClientError) {
        let events = try await client.events(filter)
        shared.withLock { $0.subscribed = true }
        note(.connected)
        for await event in events {
          if case .paging(let paging)? = event.daemonEvent {
            guard let answer = PagingAnswer(paging, carousel: carousel) else { continue }
            note(.connected)  // an answer is proof enough, whatever a failed post said before
            report(.answer(answer))
            continue
          }
          switch event.kind {
          case "disconnected": note(.notRunning)
          case "reconnected": note(.connected)
          default: break
          }
        }
        shared.withLock { $0.subscribed = false }
      } catch {
        note(.notRunning)
      }
      // Wait before trying again, but not once a post has got through: cued is back.
      let steps = Int(Self.retrySeconds / 0.05)
      for _ in 0..<steps {
        let kicked = shared.withLock { state in
          defer { state.kicked = false }
          return state.kicked
        }
        if kicked { break }
        try? await Task.sleep(for: .milliseconds(50))
      }
    }
  }

  // MARK: - News

  /// Records what is known of the connection, as news when it changed.
  private func note(_ connection: StatusLine.Connection) {
    let changed = shared.withLock { state in
      guard state.connection != connection else { return false }
      state.connection = connection
      state.news.append(.connection(connection))
      return true
    }
    if changed { wakeup.wake(.news) }
  }

  private func report(_ news: News) {
    shared.withLock { $0.news.append(news) }
    wakeup.wake(.news)
  }
}
