#ifndef CUED_CANBERRA_ABI_H
#define CUED_CANBERRA_ABI_H
// What libcanberra 0.30 gives a driver module, declared here so that building the driver needs no
// libcanberra headers (libcanberra-dev ships only the public canberra.h; a driver also reads the
// context's fields, which only libcanberra's own source declares).
//
// libcanberra loads a driver NAME from its plugin directory, CA_PLUGIN_PATH "/libcanberra-NAME"
// (an absolute path compiled in: Debian's is /usr/lib/<multiarch>/libcanberra-0.30), with
// lt_dlopenext, and looks up each entry point as "NAME_driver_open" (any character of NAME that is
// not a letter or a digit becomes '_'), then the bare "driver_open". It calls every entry point
// with the context's mutex held, so calls on one context never overlap; the finish callbacks come
// from whatever thread the driver chooses, and an application may call no libcanberra function
// from inside one.
#include <stdint.h>

typedef struct ca_mutex ca_mutex;
typedef struct ca_proplist ca_proplist;

// A proplist's first member is its mutex (proplist.h): a driver locks it around the *_unlocked reads.
struct ca_proplist_head {
  ca_mutex *mutex;
};

// The context (common.h), as a driver sees it; libcanberra allocates it. `opened` is a ca_bool_t (an
// int). `props` are the application's properties (ca_context_change_props), `driver` the name it was
// opened with or NULL when libcanberra's built-in order chose, `device` the CANBERRA_DEVICE or
// ca_context_change_device string, `private` the driver's own pointer. `private_dso` (dso.c's) exists
// when drivers are modules, as they are here: the driver never touches it.
typedef struct ca_context {
  int opened;
  ca_mutex *mutex;
  ca_proplist *props;
  char *driver;
  char *device;
  void *private;
  void *private_dso;
} ca_context;

typedef void (*ca_finish_callback_t)(ca_context *c, uint32_t id, int error_code, void *userdata);

// canberra.h's error codes.
enum {
  CA_SUCCESS = 0,
  CA_ERROR_NOTSUPPORTED = -1,
  CA_ERROR_INVALID = -2,
  CA_ERROR_STATE = -3,
  CA_ERROR_OOM = -4,
  CA_ERROR_NODRIVER = -5,
  CA_ERROR_SYSTEM = -6,
  CA_ERROR_CORRUPT = -7,
  CA_ERROR_TOOBIG = -8,
  CA_ERROR_NOTFOUND = -9,
  CA_ERROR_DESTROYED = -10,
  CA_ERROR_CANCELED = -11,
  CA_ERROR_NOTAVAILABLE = -12,
  CA_ERROR_ACCESS = -13,
  CA_ERROR_IO = -14,
  CA_ERROR_INTERNAL = -15,
  CA_ERROR_DISABLED = -16,
  CA_ERROR_FORKED = -17,
  CA_ERROR_DISCONNECTED = -18,
};

// Exported by libcanberra.so.0, which the driver links (NEEDED), as libcanberra's own drivers do: a
// host may have loaded libcanberra with local binding, and then only the driver's own dependencies
// supply these.
void ca_mutex_lock(ca_mutex *m);
void ca_mutex_unlock(ca_mutex *m);
const char *ca_proplist_gets_unlocked(ca_proplist *p, const char *key);
int ca_debug(void);

// The public API, for the context of the next driver (the fallback), as libcanberra's multi driver
// drives its backends.
int ca_context_create(ca_context **c);
int ca_context_destroy(ca_context *c);
int ca_context_set_driver(ca_context *c, const char *driver);
int ca_context_change_device(ca_context *c, const char *device);
int ca_context_change_props_full(ca_context *c, ca_proplist *p);
int ca_context_open(ca_context *c);
int ca_context_play_full(ca_context *c, uint32_t id, ca_proplist *p, ca_finish_callback_t cb, void *userdata);
int ca_context_cancel(ca_context *c, uint32_t id);
int ca_context_cache_full(ca_context *c, ca_proplist *p);
int ca_context_playing(ca_context *c, uint32_t id, int *playing);

// libcanberra's built-in driver order (driver-order.c; Debian: pulse, alsa, gstreamer), NULL-ended.
// Exported, though not in canberra.h: weak, so that a libcanberra without it still loads the driver.
extern const char *const ca_driver_order[] __attribute__((weak));

// The eight entry points, under the names dso.c looks up for the driver "cued".
#define CUED_EXPORT __attribute__((visibility("default")))
CUED_EXPORT int cued_driver_open(ca_context *c);
CUED_EXPORT int cued_driver_destroy(ca_context *c);
CUED_EXPORT int cued_driver_change_device(ca_context *c, const char *device);
CUED_EXPORT int cued_driver_change_props(ca_context *c, ca_proplist *changed, ca_proplist *merged);
CUED_EXPORT int cued_driver_play(ca_context *c, uint32_t id, ca_proplist *p, ca_finish_callback_t cb, void *userdata);
CUED_EXPORT int cued_driver_cancel(ca_context *c, uint32_t id);
CUED_EXPORT int cued_driver_cache(ca_context *c, ca_proplist *p);
CUED_EXPORT int cued_driver_playing(ca_context *c, uint32_t id, int *playing);

#endif
