import CPipeWireShims
import CPulseShims

/// A sound server's client library, loaded (dlopen) only when its backend is chosen or probed by
/// `--device auto`, as SDL and miniaudio load theirs: a daemon on ALSA or the null device maps
/// neither libpulse nor libpipewire, nor what they pull in.
///
/// The C face does the loading (`cued_pw_load`, `cued_pa_load`: one dlopen and a dlsym per function
/// it calls, done once); this says what a missing library means and what to do about it.
struct ClientLibrary: Sendable {
  /// The file dlopen looks for, e.g. `libpulse.so.0`.
  let soname: String
  /// The Debian (and Ubuntu) package that ships it.
  let debianPackage: String
  /// The face's loader: 0, or -1 with its reason written into the buffer.
  let loader: @Sendable (UnsafeMutablePointer<CChar>?, Int) -> Int32

  /// ELIBACC, "cannot access a needed shared library": the code of the error `load` throws.
  static let missingCode: Int32 = -79

  static let pipeWire = ClientLibrary(soname: "libpipewire-0.3.so.0", debianPackage: "libpipewire-0.3-0") { cued_pw_load($0, $1) }
  static let pulseAudio = ClientLibrary(soname: "libpulse.so.0", debianPackage: "libpulse0") { cued_pa_load($0, $1) }

  /// Loads the library (the first call; later ones return its result at once), or throws an error
  /// for `device` that names the file, the package that ships it and the outputs that need neither.
  func load(device: String) throws(AudioDeviceError) {
    var buffer = [CChar](repeating: 0, count: 512)
    guard loader(&buffer, buffer.count) != 0 else { return }
    let reason = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    throw AudioDeviceError(
      device: device, step: "load \(soname)", code: Self.missingCode,
      detail: "\(reason) (install the package \(debianPackage), or choose an output that needs no sound-server library: --device alsa or --device null)")
  }

  /// Whether the library loads, for `--device auto`: a server whose client library is missing is
  /// not there.
  var loads: Bool { (try? load(device: soname)) != nil }
}
