import CuePosix
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The synchronous tests stay on one thread from start to end, which the signal-mask tests need.
@Suite("CuePosix: eventfd, signalfd, poll sets")
struct EventAndSignalTests {
  @Test func anEventFDCountsSignalsUntilDrained() throws {
    let event = try EventFD()
    defer { event.close() }
    #expect(!event.wait(timeoutMilliseconds: 0))
    #expect(event.drain() == 0)
    event.signal()
    event.signal()
    #expect(event.wait(timeoutMilliseconds: 0))
    #expect(event.drain() == 2)
    #expect(event.drain() == 0)
    #expect(!event.wait(timeoutMilliseconds: 0))
  }

  @Test func inotifyReportsFilesWrittenRenamedAndDeletedByName() throws {
    let directory = try Files.makeTemporaryDirectory(prefix: "cued-inotify")
    let watch = try Inotify()
    defer { watch.close() }
    #expect(try watch.read().isEmpty)
    let watched = try watch.add(directory, for: [.closeWrite, .movedTo, .movedFrom, .delete, .onlyDirectory])
    // Written in place (Files.write renames a temporary file into place).
    let fd = open(directory + "/a file.wav", O_WRONLY | O_CREAT, 0o644)
    #expect(fd >= 0 && Glibc.write(fd, "one", 3) == 3)
    close(fd)
    #expect(rename(directory + "/a file.wav", directory + "/b.wav") == 0)
    #expect(unlink(directory + "/b.wav") == 0)
    var poll = pollfd(fd: watch.descriptor.rawValue, events: Int16(POLLIN), revents: 0)
    #expect(Glibc.poll(&poll, 1, 1000) == 1)
    let events = try watch.read()
    #expect(events.allSatisfy { $0.watch == watched })
    let seen = events.map { ($0.name, $0.mask.intersection([.closeWrite, .movedFrom, .movedTo, .delete])) }
    #expect(seen.map(\.0) == ["a file.wav", "a file.wav", "b.wav", "b.wav"])
    #expect(seen.map(\.1) == [.closeWrite, .movedFrom, .movedTo, .delete])
    #expect(try watch.read().isEmpty)
    // A file is no directory to watch.
    #expect(throws: SystemError.self) { try watch.add(directory + "/missing", for: [.closeWrite, .onlyDirectory]) }
  }

  @Test func aWaitOnAnEventFDTimesOutAfterItsTimeout() throws {
    let event = try EventFD()
    defer { event.close() }
    let began = MonotonicClock.nanoseconds()
    #expect(!event.wait(timeoutMilliseconds: 30))
    #expect(MonotonicClock.nanoseconds() - began >= 30_000_000)
  }

  @Test func aSignalFDDeliversARaisedBlockedSignal() throws {
    let signals = try SignalFD(signals: [SIGUSR1])
    defer {
      signals.close()
      unblock(SIGUSR1)
    }
    #expect(try signals.next() == nil)
    // raise() sends to this thread, where the signal is blocked: it waits, pending, for the read.
    raise(SIGUSR1)
    #expect(try signals.next() == SIGUSR1)
    #expect(try signals.next() == nil)
  }

  enum Source: Hashable { case first, second, third }

  /// Two fresh eventfds, closed with the object.
  final class TwoEvents {
    let first: EventFD
    let second: EventFD
    init() throws {
      first = try EventFD()
      second = try EventFD()
    }
    deinit {
      first.close()
      second.close()
    }
  }

  @Test func aPollSetReportsEventsByKey() throws {
    let events = try TwoEvents()
    let (first, second) = (events.first, events.second)
    var set = PollSet<Source>()
    set.register(.first, first.descriptor, for: .readable)
    set.register(.second, second.descriptor, for: .readable)
    #expect(set.count == 2)
    #expect(try set.wait(timeoutMilliseconds: 0).isEmpty)

    second.signal()
    let ready = try set.wait(timeoutMilliseconds: 1000)
    #expect(ready[.second].contains(.readable))
    #expect(ready[.first].isEmpty)
    #expect(ready[.third].isEmpty)
    #expect(ready.readable == [.second])

    second.drain()
    set.unregister(.second)
    first.signal()
    #expect(try set.wait(timeoutMilliseconds: 1000).readable == [.first])
  }

  @Test func aPollSetKeyRegisteredAgainReplacesItsDescriptor() throws {
    let events = try TwoEvents()
    let (first, second) = (events.first, events.second)
    var set = PollSet<Source>()
    set.register(.first, first.descriptor, for: .readable)
    set.register(.first, second.descriptor, for: .readable)
    #expect(set.count == 1)
    first.signal()
    #expect(try set.wait(timeoutMilliseconds: 0).isEmpty)
    second.signal()
    #expect(try set.wait(timeoutMilliseconds: 0)[.first] == .readable)
  }
}

func unblock(_ signal: Int32) {
  var set = sigset_t()
  sigemptyset(&set)
  sigaddset(&set, signal)
  pthread_sigmask(SIG_UNBLOCK, &set, nil)
}
