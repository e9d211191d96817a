import CueDecoding
import CuePosix
import CueProtocol

/// Files that clients name by path (`player.create` / `sound.create` with a path, `play` with a
/// `file`): where they may be, and their decoding in the background.
final class PathDecoder {
  /// Paths must resolve inside these (unless `allowAnyPath`); reloadable.
  var soundDirectories: [String]
  var allowAnyPath: Bool
  var options: DecodeOptions
  private let work: WorkQueue

  init(soundDirectories: [String], allowAnyPath: Bool, options: DecodeOptions, work: WorkQueue) {
    self.soundDirectories = soundDirectories
    self.allowAnyPath = allowAnyPath
    self.options = options
    self.work = work
  }

  /// Checks that `requested` names a regular file inside a sound directory (symlinks resolved)
  /// and returns its real path.
  func resolve(_ requested: String) throws(ProtocolError) -> String {
    let directories = soundDirectories.joined(separator: ", ")
    let outside = ProtocolError(
      .badPath,
      "\(requested.prefix(300)) is not a file inside the sound directories (\(directories)); cued reads only files inside them. Move it into one of them, or start cued with --allow-any-path")
    guard let resolved = Files.realPath(requested) else {
      // Without --allow-any-path, a missing file and one outside read the same: no probing the disk.
      if !allowAnyPath { throw outside }
      throw ProtocolError(.badPath, "\(requested.prefix(300)) does not exist (or is a dangling symlink or a loop)")
    }
    // Compared as bytes: String's == and hasPrefix treat NFC and NFD spellings as equal, and the
    // file system does not.
    guard allowAnyPath || roots.contains(where: { resolved.utf8.starts(with: ($0 + "/").utf8) }) else {
      throw outside
    }
    guard Files.kind(of: resolved) == .regular else {
      throw ProtocolError(.badPath, "\(requested.prefix(300)) is not a regular file")
    }
    return resolved
  }

  /// Checks the `file` of a `play` and returns its real path (symlinks and `..` resolved). cued's
  /// own user may name any regular file (it could read it itself, so nothing is disclosed);
  /// another user's client, let in by `--allow-group`, is held to the sound directories as by
  /// `resolve` (unless `--allow-any-path`).
  func playable(_ requested: String, ownUser: Bool) throws(ProtocolError) -> String {
    guard ownUser || allowAnyPath else { return try resolve(requested) }
    guard let resolved = Files.realPath(requested) else {
      throw ProtocolError(.badPath, "\(requested.prefix(300)) does not exist (or is a dangling symlink or a loop); give the path of a sound file")
    }
    switch Files.kind(of: resolved) {
    case .regular: return resolved
    case .directory: throw ProtocolError(.badPath, "\(requested.prefix(300)) is a directory, not a sound file")
    default: throw ProtocolError(.badPath, "\(requested.prefix(300)) is not a regular file (a device, a socket or a pipe); give the path of a sound file")
    }
  }

  private var roots: [String] { soundDirectories.compactMap { Files.realPath($0) } }

  /// Decodes `path` on a worker thread; the result comes back to the control loop as
  /// `WorkResult.decoded(token:)`.
  func decode(path: String, token: UInt64, confined: Bool = true) {
    var options = options
    // Checked when the request came; checked again on the descriptor the decoder opens, so a
    // component swapped for a symlink in between cannot lead outside. (Not for a sound theme's
    // file: its path comes from the theme lookup, never from a client.)
    if confined && !allowAnyPath { options.confinedTo = roots }
    work.run { [options] in
      do throws(DecodeError) {
        // One descriptor: the bytes are one version of the file, and the stamp is that
        // descriptor's, so it names exactly what was decoded (a theme file is known by it).
        let read = try MP3Decoder.readFile(path: path, options: options)
        let decoded = try AudioFileDecoder.decode(bytes: read.bytes, name: path, options: options)
        let file = path.split(separator: "/").last.map(String.init) ?? path
        let name = AudioFileDecoder.soundName(forFile: file) ?? file
        let cue = Cue(name: name, path: path, decoded: decoded, sampleRate: options.outputRate, fileStamp: FileStamp(read.status))
        // Here on the worker, as the decode: it is one file, and its play may need it at once.
        cue.measureLoudness()
        return .decoded(token: token, .success(cue))
      } catch {
        return .decoded(token: token, .failure(error))
      }
    }
  }

  /// The error a client gets for a file that did not decode.
  static func failure(_ error: DecodeError) -> ProtocolError {
    ProtocolError(.badPath, "\(error.path): \(error.reason)")
  }
}
