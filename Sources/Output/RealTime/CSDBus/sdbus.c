// The C face of sd-bus for Swift (see include/CSDBus.h for why it is loaded and declared here).
#include "CSDBus.h"
#include "CLibraryLoading.h"
#include <errno.h>

typedef struct sd_bus sd_bus;
typedef struct sd_bus_message sd_bus_message;

static int (*open_system)(sd_bus **bus);
static int (*set_method_call_timeout)(sd_bus *bus, uint64_t usec);
static int (*get_property_trivial)(
  sd_bus *bus, const char *destination, const char *path, const char *interface, const char *member,
  cued_sdbus_error *error, char type, void *ret);
static int (*call_method)(
  sd_bus *bus, const char *destination, const char *path, const char *interface, const char *member,
  cued_sdbus_error *error, sd_bus_message **reply, const char *types, ...);
static sd_bus_message *(*message_unref)(sd_bus_message *message);
static void (*error_free)(cued_sdbus_error *error);
static sd_bus *(*flush_close_unref)(sd_bus *bus);

static const cued_library_symbol symbols[] = {
  {"sd_bus_open_system", (void **)&open_system},
  {"sd_bus_set_method_call_timeout", (void **)&set_method_call_timeout},
  {"sd_bus_get_property_trivial", (void **)&get_property_trivial},
  {"sd_bus_call_method", (void **)&call_method},
  {"sd_bus_message_unref", (void **)&message_unref},
  {"sd_bus_error_free", (void **)&error_free},
  {"sd_bus_flush_close_unref", (void **)&flush_close_unref},
};
static cued_library systemd = CUED_LIBRARY_INIT("libsystemd.so.0", symbols);

int cued_sdbus_load(char *error, size_t size) { return cued_library_load(&systemd, error, size); }

static int ready(void) { return cued_library_ready(&systemd); }

int cued_sdbus_open_system(cued_sdbus **bus) {
  if (!ready()) return -ENOSYS;
  return open_system((sd_bus **)bus);
}

int cued_sdbus_set_method_call_timeout(cued_sdbus *bus, uint64_t usec) {
  if (!ready()) return -ENOSYS;
  return set_method_call_timeout((sd_bus *)bus, usec);
}

int cued_sdbus_get_property_trivial(
  cued_sdbus *bus, const char *destination, const char *path, const char *interface, const char *member,
  cued_sdbus_error *error, char type, void *value) {
  if (!ready()) return -ENOSYS;
  return get_property_trivial((sd_bus *)bus, destination, path, interface, member, error, type, value);
}

int cued_sdbus_call_method_tu(
  cued_sdbus *bus, const char *destination, const char *path, const char *interface, const char *member,
  cued_sdbus_error *error, uint64_t t, uint32_t u) {
  if (!ready()) return -ENOSYS;
  sd_bus_message *reply = NULL;
  int rc = call_method((sd_bus *)bus, destination, path, interface, member, error, &reply, "tu", t, u);
  if (reply != NULL) message_unref(reply);
  return rc;
}

int cued_sdbus_call_method_ti(
  cued_sdbus *bus, const char *destination, const char *path, const char *interface, const char *member,
  cued_sdbus_error *error, uint64_t t, int32_t i) {
  if (!ready()) return -ENOSYS;
  sd_bus_message *reply = NULL;
  int rc = call_method((sd_bus *)bus, destination, path, interface, member, error, &reply, "ti", t, i);
  if (reply != NULL) message_unref(reply);
  return rc;
}

void cued_sdbus_error_free(cued_sdbus_error *error) {
  if (ready()) error_free(error);
}

void cued_sdbus_close_unref(cued_sdbus *bus) {
  if (ready() && bus != NULL) flush_close_unref((sd_bus *)bus);
}
