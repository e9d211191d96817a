import Synchronization

/// Live counters, readable from any thread.
public final class EngineCounters: Sendable {
  public let underruns = Atomic<UInt64>(0)
  public let framesWritten = Atomic<UInt64>(0)
  public let periodsWritten = Atomic<UInt64>(0)
  /// Events that had to wait for room in the event queue.
  public let eventsDeferred = Atomic<UInt64>(0)
  /// Bumped by the audio thread every cycle and every park: a watchdog sees it is alive.
  public let heartbeat = Atomic<UInt64>(0)
  /// The mixer clock: frames mixed so far (the device's clock, in frames written).
  public let mixerClock = Atomic<UInt64>(0)
  /// The device's delay (frames written but not yet heard) after the last write.
  public let delayFrames = Atomic<Int>(0)
  /// The fill target in force (frames the device is kept holding, `LatencyAdapter`); 0 without one
  /// (the whole buffer).
  public let fillTargetFrames = Atomic<Int>(0)
  /// Frames of queued silence taken back from the device so a new voice is heard sooner.
  public let rewoundFrames = Atomic<UInt64>(0)
  /// Times a pulled sink was paused after a silence (`EngineConfiguration.pullPause`).
  public let pullPauses = Atomic<UInt64>(0)
  /// Voices left sounding when the last block was mixed (what a gap after it would cut).
  public let voicesSounding = Atomic<Int>(0)
  /// Xruns by why they count or not (`XrunReport.Kind`): only the audible ones raise the latency.
  public let audibleXruns = Atomic<UInt64>(0)
  public let silentXruns = Atomic<UInt64>(0)
  public let xrunsAfterResume = Atomic<UInt64>(0)
  public let graphWideXruns = Atomic<UInt64>(0)
  /// The voices the last audible xrun cut.
  public let lastAudibleXrunVoices = Atomic<Int>(0)
  public init() {}

  /// Counts an xrun under its kind. Any thread; atomics only.
  public func count(_ report: XrunReport) {
    switch report.kind {
    case .audible:
      lastAudibleXrunVoices.store(report.voicesSounding, ordering: .relaxed)
      audibleXruns.add(1, ordering: .releasing)
    case .silent: silentXruns.add(1, ordering: .relaxed)
    case .afterResume: xrunsAfterResume.add(1, ordering: .relaxed)
    case .graphWide: graphWideXruns.add(1, ordering: .relaxed)
    }
  }
}

/// Settings fixed for the engine's life.
public struct EngineConfiguration: Sendable {
  public var periodFrames: Int
  /// Consecutive silent frames after which the sink is released.
  public var idleFrames: Int
  /// Voice table size: sounding voices plus those fading out.
  public var voiceCapacity: Int
  public var commandCapacity: Int
  public var eventCapacity: Int
  /// How full the push loop (`PushLoop`) keeps the sink; nil: as full as its buffer (the blocking write paces).
  public var fillTarget: LatencyAdapter.Policy?
  /// When a pulled sink that can pause (`PullSink.pausePulling`) is paused; nil: never.
  public var pullPause: PullPause?

  /// Past a short silence a pulled sink need not be asked for a quantum of zeros every cycle: the
  /// engine pauses it and the next command resumes it. A paused stream costs nothing (no callback,
  /// no wake-up), so it stays connected: the next cue, however long after, is as quick as one right
  /// after another.
  public struct PullPause: Sendable, Equatable {
    /// Consecutive silent frames after which the sink is paused; below `idleFrames` to matter.
    public var afterFrames: Int
    /// How long a paused sink stays open before it is released as idle (no frames are mixed while
    /// paused, so it is kept by the clock); nil: it stays open, paused, until the next command.
    public var releaseAfterNanoseconds: UInt64?

    public init(afterFrames: Int, releaseAfterNanoseconds: UInt64? = nil) {
      self.afterFrames = max(afterFrames, 1)
      self.releaseAfterNanoseconds = releaseAfterNanoseconds
    }
  }

  public init(
    periodFrames: Int, idleFrames: Int, voiceCapacity: Int, commandCapacity: Int = 1024, eventCapacity: Int? = nil,
    fillTarget: LatencyAdapter.Policy? = nil, pullPause: PullPause? = nil
  ) {
    precondition(periodFrames > 0 && voiceCapacity > 0)
    self.periodFrames = periodFrames
    self.idleFrames = max(idleFrames, 0)
    self.voiceCapacity = voiceCapacity
    self.commandCapacity = commandCapacity
    self.eventCapacity = eventCapacity ?? max(256, voiceCapacity * 4)
    self.fillTarget = fillTarget
    self.pullPause = pullPause
  }
}
