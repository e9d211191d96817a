// The C face of GSettings for Swift (see include/CGSettings.h for why it is loaded and declared here).
#include "CGSettings.h"
#include "CLibraryLoading.h"

// GLib's typedefs, as its headers spell them: gboolean is int, gulong unsigned long.
typedef void (*g_callback)(void);
typedef void (*g_closure_notify)(void *data, void *closure);

// libglib-2.0
static cued_gs_main_context *(*main_context_new)(void);
static void (*main_context_push_thread_default)(cued_gs_main_context *context);
static void (*main_context_pop_thread_default)(cued_gs_main_context *context);
static int (*main_context_iteration)(cued_gs_main_context *context, int may_block);
static char *(*variant_type_dup_string)(const cued_gs_variant_type *type);
static void (*free_memory)(void *memory);
// libgobject-2.0
static unsigned long (*signal_connect_data)(
  void *instance, const char *detailed_signal, g_callback handler, void *data, g_closure_notify destroy, int flags);
// libgio-2.0
static cued_gs_schema_source *(*schema_source_get_default)(void);
static cued_gs_schema *(*schema_source_lookup)(cued_gs_schema_source *source, const char *id, int recursive);
static void (*schema_unref)(cued_gs_schema *schema);
static int (*schema_has_key)(cued_gs_schema *schema, const char *name);
static cued_gs_schema_key *(*schema_get_key)(cued_gs_schema *schema, const char *name);
static const cued_gs_variant_type *(*schema_key_get_value_type)(cued_gs_schema_key *key);
static void (*schema_key_unref)(cued_gs_schema_key *key);
static cued_gs_settings *(*settings_new_full)(cued_gs_schema *schema, void *backend, const char *path);
static char *(*settings_get_string)(cued_gs_settings *settings, const char *key);
static int (*settings_get_boolean)(cued_gs_settings *settings, const char *key);

static const cued_library_symbol glib_symbols[] = {
  {"g_main_context_new", (void **)&main_context_new},
  {"g_main_context_push_thread_default", (void **)&main_context_push_thread_default},
  {"g_main_context_pop_thread_default", (void **)&main_context_pop_thread_default},
  {"g_main_context_iteration", (void **)&main_context_iteration},
  {"g_variant_type_dup_string", (void **)&variant_type_dup_string},
  {"g_free", (void **)&free_memory},
};
static const cued_library_symbol gobject_symbols[] = {
  {"g_signal_connect_data", (void **)&signal_connect_data},
};
static const cued_library_symbol gio_symbols[] = {
  {"g_settings_schema_source_get_default", (void **)&schema_source_get_default},
  {"g_settings_schema_source_lookup", (void **)&schema_source_lookup},
  {"g_settings_schema_unref", (void **)&schema_unref},
  {"g_settings_schema_has_key", (void **)&schema_has_key},
  {"g_settings_schema_get_key", (void **)&schema_get_key},
  {"g_settings_schema_key_get_value_type", (void **)&schema_key_get_value_type},
  {"g_settings_schema_key_unref", (void **)&schema_key_unref},
  {"g_settings_new_full", (void **)&settings_new_full},
  {"g_settings_get_string", (void **)&settings_get_string},
  {"g_settings_get_boolean", (void **)&settings_get_boolean},
};
static cued_library glib = CUED_LIBRARY_INIT("libglib-2.0.so.0", glib_symbols);
static cued_library gobject = CUED_LIBRARY_INIT("libgobject-2.0.so.0", gobject_symbols);
static cued_library gio = CUED_LIBRARY_INIT("libgio-2.0.so.0", gio_symbols);

int cued_gs_load(char *error, size_t capacity) {
  // In dependency order; each is loaded once, and a failure is kept (cued_library_load).
  if (cued_library_load(&glib, error, capacity) != 0) return -1;
  if (cued_library_load(&gobject, error, capacity) != 0) return -1;
  return cued_library_load(&gio, error, capacity);
}

// libgio is loaded last, only once libglib and libgobject are: it stands for all three.
static int ready(void) { return cued_library_ready(&gio); }

cued_gs_schema_source *cued_gs_schema_source_get_default(void) { return ready() ? schema_source_get_default() : NULL; }

cued_gs_schema *cued_gs_schema_source_lookup(cued_gs_schema_source *source, const char *id, int recursive) {
  return ready() ? schema_source_lookup(source, id, recursive) : NULL;
}

void cued_gs_schema_unref(cued_gs_schema *schema) {
  if (ready()) schema_unref(schema);
}

int cued_gs_schema_has_key(cued_gs_schema *schema, const char *name) { return ready() ? schema_has_key(schema, name) : 0; }

cued_gs_schema_key *cued_gs_schema_get_key(cued_gs_schema *schema, const char *name) {
  return ready() ? schema_get_key(schema, name) : NULL;
}

const cued_gs_variant_type *cued_gs_schema_key_get_value_type(cued_gs_schema_key *key) {
  return ready() ? schema_key_get_value_type(key) : NULL;
}

void cued_gs_schema_key_unref(cued_gs_schema_key *key) {
  if (ready()) schema_key_unref(key);
}

char *cued_gs_variant_type_dup_string(const cued_gs_variant_type *type) { return ready() ? variant_type_dup_string(type) : NULL; }

cued_gs_main_context *cued_gs_main_context_new(void) { return ready() ? main_context_new() : NULL; }

void cued_gs_main_context_push_thread_default(cued_gs_main_context *context) {
  if (ready()) main_context_push_thread_default(context);
}

void cued_gs_main_context_pop_thread_default(cued_gs_main_context *context) {
  if (ready()) main_context_pop_thread_default(context);
}

int cued_gs_main_context_iteration(cued_gs_main_context *context, int may_block) {
  return ready() ? main_context_iteration(context, may_block) : 0;
}

cued_gs_settings *cued_gs_settings_new_full(cued_gs_schema *schema) { return ready() ? settings_new_full(schema, NULL, NULL) : NULL; }

char *cued_gs_settings_get_string(cued_gs_settings *settings, const char *key) {
  return ready() ? settings_get_string(settings, key) : NULL;
}

int cued_gs_settings_get_boolean(cued_gs_settings *settings, const char *key) {
  return ready() ? settings_get_boolean(settings, key) : 0;
}

unsigned long cued_gs_settings_connect_changed(cued_gs_settings *settings, cued_gs_changed_fn handler, void *user) {
  return ready() ? signal_connect_data(settings, "changed", (g_callback)handler, user, NULL, 0) : 0;
}

void cued_gs_free(void *memory) {
  if (ready()) free_memory(memory);
}
