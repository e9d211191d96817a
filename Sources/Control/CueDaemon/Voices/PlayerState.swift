import CueCore
import CueProtocol

#if canImport(Glibc)
import Glibc
#endif

/// A player, as the control side keeps it: AVAudioPlayer's state, and the voice that plays it now.
///
/// A player owns at most one voice at a time. Pausing or stopping ends that voice (the engine
/// reports the exact frame it reached); playing again starts a new voice from there, so nothing is
/// skipped or repeated.
final class PlayerState {
  /// Where the player is in its life. Every change goes through `Players`.
  enum Phase: Equatable {
    /// No voice. The cue may still be nil: a path player nobody has asked to prepare or play.
    case idle
    /// Its file is being decoded (a player made from a path).
    case decoding
    /// `voice` plays from cue frame `startPosition`; `firstFrame` is the mixer frame of its first
    /// frame, once the engine has said (nil until then).
    case playing(voice: VoiceID, startPosition: Int, firstFrame: UInt64?)
    /// A pause or stop went to `voice` (which started at `startPosition`); its end, with the exact
    /// position, is on its way.
    case ending(voice: VoiceID, startPosition: Int)
  }

  let id: UInt64
  let owner: UInt64
  let detached: Bool
  let enableRate: Bool
  let meteringEnabled: Bool
  /// The audio; nil until a file given by path is decoded.
  var cue: Cue?
  /// The file to decode on `prepare`/`play` (players made from a path).
  let path: String?
  var phase = Phase.idle
  var volume = 1.0
  var pan = 0.0
  var numberOfLoops = 0
  var rate = 1.0
  /// The cue frame to play from next (when no voice plays).
  var position = 0
  /// Passes still to play after the current one (when no voice plays); -1 forever.
  var loopsLeft = 0
  /// `play` arrived while decoding or while the last voice ended: start when possible, at this
  /// device time (nil: at once).
  var pendingPlay: PendingPlay? = nil
  /// Replies that wait for the voice's end (pause, stop: the exact position) or the decode (prepare).
  var pendingReplies: [Waiter] = []

  struct PendingPlay: Equatable {
    var atDeviceTime: Double?
  }

  init(id: UInt64, owner: UInt64, detached: Bool, enableRate: Bool, meteringEnabled: Bool, cue: Cue?, path: String?) {
    self.id = id
    self.owner = owner
    self.detached = detached
    self.enableRate = enableRate
    self.meteringEnabled = meteringEnabled
    self.cue = cue
    self.path = path
  }

  /// The voice playing or ending now.
  var voice: VoiceID? {
    switch phase {
    case .playing(let voice, _, _), .ending(let voice, _): voice
    case .idle, .decoding: nil
    }
  }

  /// AVAudioPlayer's `isPlaying`: a voice plays, or a play waits only for the last voice to end.
  var isPlaying: Bool {
    if case .playing = phase { return true }
    return pendingPlay != nil && cue != nil
  }

  /// The effective playback rate of its voice.
  var voiceRate: Double { enableRate ? rate : 1 }

  /// The gain matrix for its volume and pan.
  func gain(for cue: Cue) -> StereoGain {
    StereoGain.voice(volume: volume, pan: pan, sourceIsMono: cue.isMono)
  }

  /// The player's position in cue frames, given the mixer frame being heard now: exact when no
  /// voice plays, estimated from the device clock while one does.
  func currentFrame(heardFrame: UInt64) -> Int {
    switch phase {
    case .idle, .decoding:
      return position
    case .ending(_, let start), .playing(_, let start, nil):
      return start
    case .playing(_, let start, let first?):
      guard let cue else { return position }
      let elapsed = heardFrame > first ? Double(heardFrame - first) * voiceRate : 0
      var frame = start + Int(elapsed)
      if cue.frameCount > 0 && frame >= cue.frameCount {
        frame = numberOfLoops != 0 ? frame % cue.frameCount : cue.frameCount
      }
      return frame
    }
  }

  /// AVAudioPlayer's meters, per source channel in dBFS (-160...0): the RMS and the peak of the
  /// 1024 frames before `frame`, at the player's volume.
  func meters(at frame: Int) -> (average: [Double], peak: [Double]) {
    guard let cue else { return ([], []) }
    let channels = cue.decoded.sourceChannels
    guard isPlaying, cue.frameCount > 0 else {
      return (Array(repeating: -160, count: channels), Array(repeating: -160, count: channels))
    }
    let end = min(max(frame, 1), cue.frameCount)
    let start = max(0, max(frame, 1) - 1024)
    let samples = cue.decoded.buffer.samples.base
    var average: [Double] = []
    var peak: [Double] = []
    for channel in 0..<channels {
      var sum = 0.0
      var top = 0.0
      for index in start..<max(start, end) {
        let x = Double(samples[2 * index + channel]) * volume
        sum += x * x
        top = max(top, abs(x))
      }
      let count = Double(max(end - start, 1))
      average.append(Self.decibels((sum / count).squareRoot()))
      peak.append(Self.decibels(top))
    }
    return (average, peak)
  }

  static func decibels(_ amplitude: Double) -> Double {
    amplitude <= 1e-8 ? -160 : max(-160, min(0, 20 * log10(amplitude)))
  }
}
