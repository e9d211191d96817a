// A plain-C face of GSettings (libgio-2.0 with libgobject-2.0 and libglib-2.0), loaded with dlopen
// on first use: just the calls that read the desktop's sound settings (org.gnome.desktop.sound's
// `theme-name` and `event-sounds`, or the same keys of Cinnamon's and MATE's schemas) and hear them
// change. One C call each, no policy (CueDaemon/DesktopSettings.swift decides what to read, when,
// and what a value means).
//
// Why dlopen, not a link: only a daemon that follows the desktop (`sound-theme = "desktop"`, in a
// desktop session) on a machine with the schema installed needs GLib, and loading it costs memory (its type system, the
// GIO modules it loads: dconf's backend); a daemon on a server, or with a theme of its own, maps
// none of it. Why no <gio/gio.h>: nothing links GLib, so libglib2.0-dev would be needed only for
// these prototypes; they are declared here (as function-pointer types in gsettings.c) from GLib's
// reference manual, and the ABI they belong to has been stable since GLib 2.32 (GSettingsSchemaSource);
// g_settings_schema_key_get_value_type needs GLib 2.40.
#ifndef CUED_CGSETTINGS_H
#define CUED_CGSETTINGS_H
#include <stddef.h>

/// GLib's types, opaque: GSettingsSchemaSource, GSettingsSchema, GSettingsSchemaKey, GSettings,
/// GMainContext, GVariantType.
typedef struct cued_gs_schema_source cued_gs_schema_source;
typedef struct cued_gs_schema cued_gs_schema;
typedef struct cued_gs_schema_key cued_gs_schema_key;
typedef struct cued_gs_settings cued_gs_settings;
typedef struct cued_gs_main_context cued_gs_main_context;
typedef struct cued_gs_variant_type cued_gs_variant_type;

/// Loads libglib-2.0.so.0, libgobject-2.0.so.0 and libgio-2.0.so.0 (dlopen, RTLD_NOW | RTLD_LOCAL)
/// and looks up the calls below, once per process (later calls return the first answer): 0, or -1
/// with dlerror()'s text in `error` (of `capacity` bytes). Any thread; takes a mutex. Before a
/// successful load the calls below do nothing and return NULL, 0 or FALSE.
int cued_gs_load(char *error, size_t capacity);

/// `g_settings_schema_source_get_default`: the schemas GLib finds ($GSETTINGS_SCHEMA_DIR, then
/// glib-2.0/schemas under $XDG_DATA_HOME and each of $XDG_DATA_DIRS); NULL when there are none.
/// Not a reference: never unref'd.
cued_gs_schema_source *cued_gs_schema_source_get_default(void);

/// `g_settings_schema_source_lookup(source, id, recursive)`: the schema, or NULL when it is not installed.
cued_gs_schema *cued_gs_schema_source_lookup(cued_gs_schema_source *source, const char *id, int recursive);

/// `g_settings_schema_unref`.
void cued_gs_schema_unref(cued_gs_schema *schema);

/// `g_settings_schema_has_key`: nonzero when the schema has a key of that name.
int cued_gs_schema_has_key(cued_gs_schema *schema, const char *name);

/// `g_settings_schema_get_key`: the key (it must exist: ask cued_gs_schema_has_key first).
cued_gs_schema_key *cued_gs_schema_get_key(cued_gs_schema *schema, const char *name);

/// `g_settings_schema_key_get_value_type`: the key's GVariant type (owned by the key).
const cued_gs_variant_type *cued_gs_schema_key_get_value_type(cued_gs_schema_key *key);

/// `g_settings_schema_key_unref`.
void cued_gs_schema_key_unref(cued_gs_schema_key *key);

/// `g_variant_type_dup_string`: the type as a string ("s", "b", …), to be freed with cued_gs_free.
char *cued_gs_variant_type_dup_string(const cued_gs_variant_type *type);

/// `g_main_context_new`: a main context of its own, for the thread that hears the changes.
cued_gs_main_context *cued_gs_main_context_new(void);

/// `g_main_context_push_thread_default`: objects made after it on this thread (a GSettings, and the
/// backend the first one makes) deliver their signals through `context`.
void cued_gs_main_context_push_thread_default(cued_gs_main_context *context);

/// `g_main_context_pop_thread_default`.
void cued_gs_main_context_pop_thread_default(cued_gs_main_context *context);

/// `g_main_context_iteration(context, may_block)`: runs what is due (blocking until something is,
/// when `may_block`); nonzero when something was dispatched.
int cued_gs_main_context_iteration(cued_gs_main_context *context, int may_block);

/// `g_settings_new_full(schema, NULL, NULL)`: the settings of `schema` through the default backend
/// (dconf on a desktop, or what $GSETTINGS_BACKEND names) at the schema's own path. Never call it for
/// a schema that is not installed (GLib aborts): take `schema` from cued_gs_schema_source_lookup.
cued_gs_settings *cued_gs_settings_new_full(cued_gs_schema *schema);

/// `g_settings_get_string`: a key of type "s", to be freed with cued_gs_free.
char *cued_gs_settings_get_string(cued_gs_settings *settings, const char *key);

/// `g_settings_get_boolean`: a key of type "b".
int cued_gs_settings_get_boolean(cued_gs_settings *settings, const char *key);

/// The handler of GSettings' "changed" signal: the settings, the key that changed, `user`.
typedef void (*cued_gs_changed_fn)(cued_gs_settings *settings, const char *key, void *user);

/// `g_signal_connect_data(settings, "changed", handler, user, NULL, 0)`: `handler` runs in the main
/// context that was the thread default when `settings` was made, whenever a key changes (a key
/// must have been read once since the handler was connected). The handler id, 0 on failure.
unsigned long cued_gs_settings_connect_changed(cued_gs_settings *settings, cued_gs_changed_fn handler, void *user);

/// `g_free`. NULL is fine.
void cued_gs_free(void *memory);

#endif
