// libcanberra-cued.so: a libcanberra 0.30 driver that plays through cued (docs/CLIENT.md, "libcanberra").
//
// One connection to cued per context, opened with a `hello` that names the application (its
// application.name, else application.id, else the program), so cued's [clients.NAME] ceilings
// apply. A reader thread matches each reply to its request by id and turns each `finished` event
// into the play's callback. When cued cannot be reached (at open, or when the connection dies),
// the driver opens the next driver in a context of its own, as libcanberra's multi driver does, and
// forwards to it: an application's sounds never vanish with cued.
//
// The driver's parts: connection.c (the socket, the reader thread, hello), voices.c (play requests
// and their voices), properties.c (what the properties say), fallback.c (the next driver);
// driver.h is what they share.
#define _GNU_SOURCE
#include "driver.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

// MARK: - The entry points

int cued_driver_open(ca_context *c) {
  if (!c || c->private) return c ? CA_ERROR_STATE : CA_ERROR_INVALID;
  if (c->driver && (strncmp(c->driver, "cued", 4) != 0 || (c->driver[4] && !strchr(",:", c->driver[4])))) return CA_ERROR_NODRIVER;
  struct cued *p = calloc(1, sizeof *p);
  if (!p) return CA_ERROR_OOM;
  p->context = c;
  p->fd = -1;
  pthread_condattr_t attributes;
  pthread_condattr_init(&attributes);
  pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC);
  pthread_cond_init(&p->answered, &attributes);
  pthread_condattr_destroy(&attributes);
  pthread_mutex_init(&p->lock, NULL);
  pthread_mutex_init(&p->write_lock, NULL);
  c->private = p;
  if (!(p->client = client_name(c->props))) {
    cued_driver_destroy(c);
    return CA_ERROR_OOM;
  }
  int ret = connect_to_cued(p);
  if (ret == CA_ERROR_NOTAVAILABLE) ret = open_fallback(p);
  if (ret != CA_SUCCESS) cued_driver_destroy(c);
  return ret;
}

int cued_driver_destroy(ca_context *c) {
  if (!c || !c->private) return c ? CA_ERROR_STATE : CA_ERROR_INVALID;
  struct cued *p = PRIVATE(c);
  pthread_mutex_lock(&p->lock);
  p->closing = 1;
  pthread_mutex_unlock(&p->lock);
  release_connection(p);
  struct voice *voices = p->voices;
  p->voices = NULL;
  finish_voices(p, voices, CA_ERROR_DESTROYED);
  if (p->fallback) ca_context_destroy(p->fallback);
  pthread_cond_destroy(&p->answered);
  pthread_mutex_destroy(&p->lock);
  pthread_mutex_destroy(&p->write_lock);
  free(p->client);
  free(p);
  c->private = NULL;
  return CA_SUCCESS;
}

int cued_driver_change_device(ca_context *c, const char *device) {
  if (!c || !c->private) return c ? CA_ERROR_STATE : CA_ERROR_INVALID;
  // cued plays on its own device; the next driver, if one is open, takes the change.
  if (PRIVATE(c)->fallback) ca_context_change_device(PRIVATE(c)->fallback, device);
  return CA_SUCCESS;
}

int cued_driver_change_props(ca_context *c, ca_proplist *changed, ca_proplist *merged) {
  if (!c || !c->private || !changed || !merged) return c && !c->private ? CA_ERROR_STATE : CA_ERROR_INVALID;
  struct cued *p = PRIVATE(c);
  if (p->fallback) ca_context_change_props_full(p->fallback, changed);
  // A new application name is said again, so the right [clients.NAME] applies from the next play.
  char *name = client_name(merged);
  if (!name) return CA_ERROR_OOM;
  if (strcmp(name, p->client) != 0) {
    free(p->client);
    p->client = name;
    if (is_connected(p)) say_hello(p, name);
  } else {
    free(name);
  }
  return CA_SUCCESS;
}

// A file for cued, which wants its absolute path: NOTFOUND and ACCESS as opening it would say.
static int absolute_file(const char *name, char **path) {
  *path = realpath(name, NULL);
  if (*path) return CA_SUCCESS;
  if (errno == ENOENT || errno == ENOTDIR) return CA_ERROR_NOTFOUND;
  if (errno == EACCES) return CA_ERROR_ACCESS;
  return errno == ENOMEM ? CA_ERROR_OOM : CA_ERROR_IO;
}

// Asks cued to play or prepare (`send`: play_one or prepare_one, with `play`) the sound the
// properties name: event.id, and media.filename instead when the theme has no sound for it, as
// libcanberra does. CA_ERROR_DISCONNECTED when cued did not take it: it is not running, the
// connection ended, or it cannot play the file (a daemon older than file-play, a path that is not
// UTF-8, which JSON cannot say): the next driver is for that.
static int through_cued(struct cued *p, const char *event, const char *file, sound_request send, const struct play_request *play) {
  connect_to_cued(p);  // again, if the connection ended
  int ret = CA_ERROR_DISCONNECTED;
  if (is_connected(p) && event) {
    ret = send(p, "event", event, play);
    // A name cued does not take as one (`../bell`) is one the theme has no sound for, as in libcanberra.
    if (ret == CA_ERROR_INVALID) ret = CA_ERROR_NOTFOUND;
    if (ret == CA_ERROR_NOTFOUND && file) ret = CA_ERROR_DISCONNECTED;
  }
  if (ret == CA_ERROR_DISCONNECTED && file && is_connected(p) && p->file_play) {
    char *path = NULL;
    ret = absolute_file(file, &path);
    if (ret == CA_SUCCESS) ret = cued_utf8_valid(path) ? send(p, "file", path, play) : CA_ERROR_DISCONNECTED;
    free(path);
  }
  return ret;
}

int cued_driver_play(ca_context *c, uint32_t id, ca_proplist *props, ca_finish_callback_t cb, void *userdata) {
  if (!c || !props || (userdata && !cb)) return CA_ERROR_INVALID;
  if (!c->private) return CA_ERROR_STATE;
  struct cued *p = PRIVATE(c);

  char *enable = property(props, c->props, "canberra.enable");
  int disabled = enable && strcmp(enable, "0") == 0;
  free(enable);
  if (disabled) return CA_ERROR_DISABLED;

  char *event = property(props, c->props, "event.id");
  char *file = property(props, c->props, "media.filename");
  char *decibels = property(props, c->props, "canberra.volume");
  char *role = property(props, c->props, "media.role");
  struct play_request play = {.volume = 1, .id = id, .callback = cb, .userdata = userdata};
  int ret = CA_SUCCESS;
  if (decibels && (play.volume = volume_from_decibels(decibels)) < 0) ret = CA_ERROR_INVALID;
  if (ret == CA_SUCCESS && !event && !file) ret = CA_ERROR_INVALID;
  if (ret == CA_SUCCESS && event && !cued_utf8_valid(event)) ret = CA_ERROR_INVALID;
  if (ret == CA_SUCCESS) {
    debug("play %u: event.id=%s media.filename=%s volume=%g media.role=%s", id, event ? event : "-", file ? file : "-",
          play.volume, role ? role : "-");
    // media.role goes to a cued that takes it (play-role), as its role: the user's [groups.NAME]
    // roles choose the group. A role cued would refuse as one (not a plain name) is left out, not fatal.
    play.role = role && p->play_role && cued_role_valid(role) ? role : NULL;
    ret = through_cued(p, event, file, play_one, &play);
    if (ret == CA_ERROR_DISCONNECTED) ret = play_through_fallback(p, id, props, cb, userdata);
  }
  free(event);
  free(file);
  free(decibels);
  free(role);
  return ret;
}

int cued_driver_cancel(ca_context *c, uint32_t id) {
  if (!c) return CA_ERROR_INVALID;
  if (!c->private) return CA_ERROR_STATE;
  struct cued *p = PRIVATE(c);
  cancel_voices(p, id);
  if (p->fallback) ca_context_cancel(p->fallback, id);
  return CA_SUCCESS;
}

// Decodes the sound ahead and keeps it (cued's `prepare`), so that its first play starts as fast
// as the next, as libcanberra's pulse driver uploads it to the server's sample cache.
int cued_driver_cache(ca_context *c, ca_proplist *props) {
  if (!c || !props) return CA_ERROR_INVALID;
  if (!c->private) return CA_ERROR_STATE;
  struct cued *p = PRIVATE(c);
  char *event = property(props, c->props, "event.id");
  char *file = property(props, c->props, "media.filename");
  int ret = CA_ERROR_INVALID;
  if ((event || file) && (!event || cued_utf8_valid(event))) ret = through_cued(p, event, file, prepare_one, NULL);
  free(event);
  free(file);
  if (ret != CA_ERROR_DISCONNECTED) return ret;
  if (open_fallback(p) != CA_SUCCESS) return CA_ERROR_NOTSUPPORTED;
  return ca_context_cache_full(p->fallback, props);
}

int cued_driver_playing(ca_context *c, uint32_t id, int *playing) {
  if (!c || !playing) return CA_ERROR_INVALID;
  if (!c->private) return CA_ERROR_STATE;
  struct cued *p = PRIVATE(c);
  *playing = voice_playing(p, id);
  int elsewhere = 0;
  if (!*playing && p->fallback && ca_context_playing(p->fallback, id, &elsewhere) == CA_SUCCESS) *playing = elsewhere != 0;
  return CA_SUCCESS;
}