import CGSettings
import CuePosix

/// The desktop's sound settings read through GSettings (`CGSettings`, GLib loaded with dlopen),
/// and heard as they change: the watch behind `sound-theme = "desktop"`.
///
/// GSettings delivers its "changed" signal through the main context that was its thread's default
/// when it was made, so the watch makes a `GMainContext` of its own, pushes it as the control
/// thread's default just while it makes the `GSettings` (and, the first time, GLib's settings
/// backend: dconf's, or the one `$GSETTINGS_BACKEND` names) and reads the first values, then
/// hands it to a thread of its own (`cued-desktop`) that does nothing but iterate it. The control
/// thread never touches GLib again: each change is read on that thread and handed to the control
/// loop as `WorkResult.desktopSound` through the work queue's eventfd.
///
/// A watch lives as long as the process (GLib stays loaded, as every library cued loads does).
final class DesktopSettingsWatch: @unchecked Sendable {
  /// GLib's pointers, handed once from the control thread to the watch's thread.
  private struct Handle: @unchecked Sendable {
    let pointer: OpaquePointer
  }

  let schema: String
  private let settings: Handle
  private let post: @Sendable (DesktopSoundSettings) -> Void

  private init(schema: String, settings: OpaquePointer, post: @escaping @Sendable (DesktopSoundSettings) -> Void) {
    self.schema = schema
    self.settings = Handle(pointer: settings)
    self.post = post
  }

  /// The keys read, and their GVariant types.
  static let themeKey = "theme-name"
  static let eventSoundsKey = "event-sounds"

  /// Why the desktop's settings are not followed, in words for the log.
  struct Unavailable: Error, Equatable {
    let reason: String
  }

  /// Loads GLib, opens the first of `schemas` that GLib finds with both keys, reads them, and starts
  /// the thread that hears them change (each change is given to `post`, on that thread). The first
  /// reading and the watch, or why there is none.
  static func start(
    schemas: [String], post: @escaping @Sendable (DesktopSoundSettings) -> Void
  ) -> Result<(DesktopSoundSettings, DesktopSettingsWatch), Unavailable> {
    var error = [CChar](repeating: 0, count: 512)
    guard cued_gs_load(&error, error.count) == 0 else {
      let reason = String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
      return .failure(Unavailable(reason: "GLib cannot be loaded: \(reason) (Debian: libglib2.0-0)"))
    }
    guard let source = cued_gs_schema_source_get_default() else {
      return .failure(Unavailable(reason: "GLib finds no GSettings schemas"))
    }
    var problems: [String] = []
    for id in schemas {
      guard let schema = cued_gs_schema_source_lookup(source, id, 1) else { continue }
      defer { cued_gs_schema_unref(schema) }
      if let problem = keyProblem(schema, id: id) {
        problems.append(problem)
        continue
      }
      return open(schema, id: id, post: post)
    }
    return .failure(Unavailable(reason: problems.first ?? "GLib finds none of the schemas \(schemas.joined(separator: ", "))"))
  }

  /// Why `schema` cannot be read as a sound schema (a key missing or of another type), if so: read
  /// with a wrong type, GSettings would abort the process.
  private static func keyProblem(_ schema: OpaquePointer, id: String) -> String? {
    for (key, type) in [(themeKey, "s"), (eventSoundsKey, "b")] {
      guard cued_gs_schema_has_key(schema, key) != 0, let handle = cued_gs_schema_get_key(schema, key) else {
        return "the schema \(id) has no key \(key)"
      }
      defer { cued_gs_schema_key_unref(handle) }
      let found = cued_gs_variant_type_dup_string(cued_gs_schema_key_get_value_type(handle))
      defer { cued_gs_free(found) }
      let text = found.map { String(cString: $0) } ?? "?"
      if text != type { return "the schema \(id) has \(key) of type '\(text)', not '\(type)'" }
    }
    return nil
  }

  /// Makes the GSettings under a main context of its own, reads it once and starts the thread.
  private static func open(
    _ schema: OpaquePointer, id: String, post: @escaping @Sendable (DesktopSoundSettings) -> Void
  ) -> Result<(DesktopSoundSettings, DesktopSettingsWatch), Unavailable> {
    let context = cued_gs_main_context_new()!
    cued_gs_main_context_push_thread_default(context)
    let settings = cued_gs_settings_new_full(schema)!
    let watch = DesktopSettingsWatch(schema: id, settings: settings, post: post)
    // Retained for good: GLib holds the pointer for as long as the settings exist.
    let user = Unmanaged.passRetained(watch).toOpaque()
    // Connected before the first read: GSettings signals only keys read since a handler was connected.
    _ = cued_gs_settings_connect_changed(
      settings,
      { _, key, user in
        guard let key, let user else { return }
        let name = String(cString: key)
        guard name == DesktopSettingsWatch.themeKey || name == DesktopSettingsWatch.eventSoundsKey else { return }
        let watch = Unmanaged<DesktopSettingsWatch>.fromOpaque(user).takeUnretainedValue()
        watch.post(watch.read())
      }, user)
    let first = watch.read()
    cued_gs_main_context_pop_thread_default(context)
    let loop = Handle(pointer: context)
    do {
      // It only waits in poll(2) and reads two keys.
      try Threads.start(name: "cued-desktop", stackBytes: 512 << 10) {
        while true { _ = cued_gs_main_context_iteration(loop.pointer, 1) }
      }
    } catch {
      // Without it changes would not be heard: better the plain default than a setting that sticks.
      return .failure(Unavailable(reason: "no thread to hear them change: \(error)"))
    }
    return .success((first, watch))
  }

  /// The two keys now (on the control thread before the watch's thread starts, then on it).
  private func read() -> DesktopSoundSettings {
    let theme = cued_gs_settings_get_string(settings.pointer, Self.themeKey)
    defer { cued_gs_free(theme) }
    return DesktopSoundSettings(
      themeName: theme.map { String(cString: $0) } ?? "", eventSounds: cued_gs_settings_get_boolean(settings.pointer, Self.eventSoundsKey) != 0,
      schema: schema)
  }
}
