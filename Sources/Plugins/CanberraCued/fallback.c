// The next driver (driver.h): when cued cannot be reached (at open, or when the connection dies),
// the driver opens the next driver in a context of its own, as libcanberra's multi driver does, and
// forwards to it: an application's sounds never vanish with cued.
#define _GNU_SOURCE
#include "driver.h"

#include <stdlib.h>
#include <string.h>

struct forwarded {
  ca_context *context;
  ca_finish_callback_t callback;
  void *userdata;
};

static void forward_callback(ca_context *inner, uint32_t id, int error, void *userdata) {
  (void)inner;
  struct forwarded *f = userdata;
  f->callback(f->context, id, error, f->userdata);
  free(f);
}

// The drivers to fall over to: 1, those after "cued:" (or "cued,") in the driver string, copied
// into `named`; 2, libcanberra's built-in order, when the string is just "cued"; 0, none, when
// libcanberra itself chose this driver from its order (driver NULL): it goes on down it itself.
static int next_drivers(const ca_context *c, char **named) {
  *named = NULL;
  if (!c->driver) return 0;
  size_t n = strcspn(c->driver, ",:");
  if (!c->driver[n]) return 2;
  *named = strdup(c->driver + n + 1);
  return *named ? 1 : -1;
}

static int try_driver(struct cued *p, const char *name) {
  if (!*name || strcmp(name, "cued") == 0 || strncmp(name, "multi", 5) == 0) return CA_ERROR_NODRIVER;
  ca_context *inner = NULL;
  int ret = ca_context_create(&inner);
  if (ret == CA_SUCCESS) ret = ca_context_set_driver(inner, name);
  if (ret == CA_SUCCESS && p->context->device) ret = ca_context_change_device(inner, p->context->device);
  if (ret == CA_SUCCESS) ret = ca_context_change_props_full(inner, p->context->props);
  if (ret == CA_SUCCESS) ret = ca_context_open(inner);
  if (ret != CA_SUCCESS) {
    debug("the fallback driver '%s' did not open (error %d)", name, ret);
    if (inner) ca_context_destroy(inner);
    return ret;
  }
  debug("cued is not reachable: playing through the '%s' driver", name);
  p->fallback = inner;
  return CA_SUCCESS;
}

// Opens the first next driver that opens: CA_SUCCESS, or CA_ERROR_NOTAVAILABLE when none does.
int open_fallback(struct cued *p) {
  if (p->fallback) return CA_SUCCESS;
  char *named;
  int kind = next_drivers(p->context, &named);
  if (kind < 0) return CA_ERROR_OOM;
  if (kind == 1) {
    char *rest = NULL;
    for (char *name = strtok_r(named, ",:", &rest); name && !p->fallback; name = strtok_r(NULL, ",:", &rest)) try_driver(p, name);
  } else if (kind == 2) {
    static const char *const usual[] = {"pulse", "alsa", NULL};
    for (const char *const *order = ca_driver_order ? ca_driver_order : usual; *order && !p->fallback; order++) try_driver(p, *order);
  }
  free(named);
  return p->fallback ? CA_SUCCESS : CA_ERROR_NOTAVAILABLE;
}

int play_through_fallback(struct cued *p, uint32_t id, ca_proplist *props, ca_finish_callback_t cb, void *userdata) {
  int opened = open_fallback(p);
  if (opened != CA_SUCCESS) return opened;
  struct forwarded *f = NULL;
  if (cb) {
    if (!(f = malloc(sizeof *f))) return CA_ERROR_OOM;
    *f = (struct forwarded){p->context, cb, userdata};
  }
  int ret = ca_context_play_full(p->fallback, id, props, f ? forward_callback : NULL, f);
  if (ret != CA_SUCCESS) free(f);  // the callback comes exactly when the play succeeded
  return ret;
}
