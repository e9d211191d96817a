// The C face of sd-bus for Swift (see include/CSDBus.h for why it is loaded and declared here).
#include "CSDBus.h"
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>

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

static int loaded;  // 0: not tried; 1: loaded; -1: failed (load_error says why)
static char load_error[256];

int cued_sdbus_load(char *error, size_t size) {
  if (loaded == 0) {
    void *library = dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL);
    struct { void **slot; const char *name; } symbols[] = {
      {(void **)&open_system, "sd_bus_open_system"},
      {(void **)&set_method_call_timeout, "sd_bus_set_method_call_timeout"},
      {(void **)&get_property_trivial, "sd_bus_get_property_trivial"},
      {(void **)&call_method, "sd_bus_call_method"},
      {(void **)&message_unref, "sd_bus_message_unref"},
      {(void **)&error_free, "sd_bus_error_free"},
      {(void **)&flush_close_unref, "sd_bus_flush_close_unref"},
    };
    loaded = 1;
    if (library == NULL) {
      snprintf(load_error, sizeof load_error, "%s", dlerror());
      loaded = -1;
    }
    for (size_t i = 0; loaded == 1 && i < sizeof symbols / sizeof symbols[0]; i++) {
      *symbols[i].slot = dlsym(library, symbols[i].name);
      if (*symbols[i].slot == NULL) {
        snprintf(load_error, sizeof load_error, "libsystemd.so.0 has no %s", symbols[i].name);
        loaded = -1;
      }
    }
  }
  if (loaded < 0 && error != NULL && size > 0) snprintf(error, size, "%s", load_error);
  return loaded < 0 ? -1 : 0;
}

int cued_sdbus_open_system(cued_sdbus **bus) {
  if (loaded != 1) return -ENOSYS;
  return open_system((sd_bus **)bus);
}

int cued_sdbus_set_method_call_timeout(cued_sdbus *bus, uint64_t usec) {
  if (loaded != 1) return -ENOSYS;
  return set_method_call_timeout((sd_bus *)bus, usec);
}

int cued_sdbus_get_property_trivial(
  cued_sdbus *bus, const char *destination, const char *path, const char *interface, const char *member,
  cued_sdbus_error *error, char type, void *value) {
  if (loaded != 1) return -ENOSYS;
  return get_property_trivial((sd_bus *)bus, destination, path, interface, member, error, type, value);
}

int cued_sdbus_call_method_tu(
  cued_sdbus *bus, const char *destination, const char *path, const char *interface, const char *member,
  cued_sdbus_error *error, uint64_t t, uint32_t u) {
  if (loaded != 1) return -ENOSYS;
  sd_bus_message *reply = NULL;
  int rc = call_method((sd_bus *)bus, destination, path, interface, member, error, &reply, "tu", t, u);
  if (reply != NULL) message_unref(reply);
  return rc;
}

void cued_sdbus_error_free(cued_sdbus_error *error) {
  if (loaded == 1) error_free(error);
}

void cued_sdbus_close_unref(cued_sdbus *bus) {
  if (loaded == 1 && bus != NULL) flush_close_unref((sd_bus *)bus);
}
