// Real-time rules for everything in this file (it runs on the audio thread):
// no allocation, no free, no locks, no logging, no awaiting, no untyped throws, no class
// references stored per voice. It works only on the slots `Mixer.init` preallocated.

/// Rendering one voice into the bus: the integer path (rate 1: the SIMD kernels, whole runs at a
/// time) and the varispeed path (any other rate: 4-point Hermite interpolation, per frame). The
/// slot table, the commands and the bookkeeping of starts and ends are `Mixer`'s (Mixer.swift).
extension Mixer {
  /// Mixes `frameCount` frames of the voice in slot `index` into `bus`: from its start frame, at
  /// its gain (ramping while a ramp runs), looping as it was told, ending it at its last frame or
  /// when a stop's fade reaches silence.
  func renderSlot(_ index: Int, into bus: UnsafeMutablePointer<Float>, frameCount: Int) {
    let slot = slots + index
    var done = 0
    // A voice scheduled for later sounds from its start frame on.
    if slot.pointee.startAtFrame > frameClock {
      let wait = slot.pointee.startAtFrame - frameClock
      if wait >= UInt64(frameCount) { return }
      done = Int(wait)
    }
    if !slot.pointee.sounded {
      slot.pointee.sounded = true
      slot.pointee.firstFrame = frameClock &+ UInt64(done)
    }
    let cueFrames = slot.pointee.samples.frameCount
    if slot.pointee.rate != 1 {
      renderResampled(index, into: bus, from: done, to: frameCount)
      return
    }
    while done < frameCount {
      if slot.pointee.position >= cueFrames {
        if slot.pointee.loopsLeft != 0 && cueFrames > 0 {
          slot.pointee.position = 0
          if slot.pointee.loopsLeft > 0 { slot.pointee.loopsLeft -= 1 }
          continue
        }
        finish(index, reason: .end)
        return
      }
      var n = min(frameCount - done, cueFrames - slot.pointee.position)
      let source = slot.pointee.samples.base + slot.pointee.position * 2
      let out = bus + done * 2
      if slot.pointee.rampFramesLeft > 0 {
        n = min(n, slot.pointee.rampFramesLeft)
        MixKernels.mixRamped(source, into: out, frameCount: n, gain: &slot.pointee.gain, step: slot.pointee.step)
        slot.pointee.rampFramesLeft -= n
        slot.pointee.position += n
        done += n
        if slot.pointee.rampFramesLeft == 0 {
          slot.pointee.gain = slot.pointee.target
          if slot.pointee.stopping {
            finish(index, reason: slot.pointee.stopReason)
            return
          }
        }
      } else {
        MixKernels.mix(source, into: out, frameCount: n, gain: slot.pointee.gain)
        slot.pointee.position += n
        done += n
      }
    }
    // A one-shot whose last frame landed exactly on the period's end ends now, not a period later.
    if slot.pointee.position >= cueFrames && slot.pointee.loopsLeft == 0 {
      finish(index, reason: .end)
    }
  }

  /// The varispeed path: reads the cue at a fractional position with 4-point Hermite
  /// interpolation (wrapping across the loop join, silence past either end of a one-shot).
  func renderResampled(_ index: Int, into bus: UnsafeMutablePointer<Float>, from start: Int, to frameCount: Int) {
    let slot = slots + index
    let source = slot.pointee.samples.base
    let n = slot.pointee.samples.frameCount
    guard n > 0 else {
      finish(index, reason: .end)
      return
    }
    let step = slot.pointee.rate
    var position = slot.pointee.position
    var fraction = slot.pointee.fraction
    var gain = slot.pointee.gain
    for f in start..<frameCount {
      if position >= n {
        if slot.pointee.loopsLeft != 0 {
          position -= n
          if slot.pointee.loopsLeft > 0 { slot.pointee.loopsLeft -= 1 }
        } else {
          slot.pointee.position = n
          slot.pointee.fraction = 0
          slot.pointee.gain = gain
          finish(index, reason: .end)
          return
        }
      }
      let looping = slot.pointee.loopsLeft != 0
      let t = Float(fraction)
      var l: Float = 0
      var r: Float = 0
      for channel in 0..<2 {
        @inline(__always) func at(_ k: Int) -> Float {
          var k = k
          if k < 0 { return 0 }
          if k >= n {
            guard looping else { return 0 }
            k -= n
            if k >= n { return 0 }
          }
          return source[2 * k + channel]
        }
        let xm1 = position > 0 ? at(position - 1) : 0
        let x0 = at(position)
        let x1 = at(position + 1)
        let x2 = at(position + 2)
        let c1 = 0.5 * (x1 - xm1)
        let c2 = xm1 - 2.5 * x0 + 2 * x1 - 0.5 * x2
        let c3 = 0.5 * (x2 - xm1) + 1.5 * (x0 - x1)
        let y = ((c3 * t + c2) * t + c1) * t + x0
        if channel == 0 { l = y } else { r = y }
      }
      bus[2 * f] += gain.ll * l + gain.lr * r
      bus[2 * f + 1] += gain.rl * l + gain.rr * r
      if slot.pointee.rampFramesLeft > 0 {
        gain.ll += slot.pointee.step.ll
        gain.lr += slot.pointee.step.lr
        gain.rl += slot.pointee.step.rl
        gain.rr += slot.pointee.step.rr
        slot.pointee.rampFramesLeft -= 1
        if slot.pointee.rampFramesLeft == 0 {
          gain = slot.pointee.target
          if slot.pointee.stopping {
            slot.pointee.gain = gain
            slot.pointee.position = position
            slot.pointee.fraction = fraction
            finish(index, reason: slot.pointee.stopReason)
            return
          }
        }
      }
      fraction += step
      let whole = Int(fraction)
      position += whole
      fraction -= Double(whole)
    }
    slot.pointee.position = position
    slot.pointee.fraction = fraction
    slot.pointee.gain = gain
  }
}
