// The plays cued sounds for a context (driver.h): each play request, the voices it starts, and
// their ends as libcanberra's callbacks say them.
#define _GNU_SOURCE
#include "cued-protocol.h"
#include "driver.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>


void finish_voices(struct cued *p, struct voice *voices, int error) {
  while (voices) {
    struct voice *next = voices->next;
    if (voices->callback) voices->callback(p->context, voices->id, error, voices->userdata);
    free(voices);
    voices = next;
  }
}

// A finished event's reason, as libcanberra's callback says it.
int finished_error(const char *reason) {
  if (strcmp(reason, CUED_FINISHED_END) == 0) return CA_SUCCESS;
  if (strcmp(reason, CUED_FINISHED_DEVICE_LOST) == 0) return CA_ERROR_IO;
  if (strcmp(reason, CUED_FINISHED_ERROR) == 0) return CA_ERROR_INTERNAL;
  // stopped, stolen, disposed, a level change's fade (level), and reasons newer than this driver
  return CA_ERROR_CANCELED;
}

// An error reply to a play, as libcanberra's error.
int reply_error(const char *code) {
  if (strcmp(code, CUED_CODE_UNKNOWN_EVENT) == 0) return CA_ERROR_NOTFOUND;
  if (strcmp(code, CUED_CODE_EVENT_DISABLED) == 0) return CA_ERROR_DISABLED;
  if (strcmp(code, CUED_CODE_BAD_PATH) == 0) return CA_ERROR_CORRUPT;
  if (strcmp(code, CUED_CODE_INVALID_REQUEST) == 0 || strcmp(code, CUED_CODE_OUT_OF_RANGE) == 0) return CA_ERROR_INVALID;
  if (strcmp(code, CUED_CODE_DEVICE_UNAVAILABLE) == 0 || strcmp(code, CUED_CODE_BUSY) == 0) return CA_ERROR_NOTAVAILABLE;
  if (strcmp(code, CUED_CODE_UNKNOWN_OP) == 0) return CA_ERROR_NOTSUPPORTED;
  return CA_ERROR_INTERNAL;
}

// A silent play's reason: the user's settings (the level, a client ceiling, a mute) disable it;
// cued's repeat rules and voice limit leave no room for it now.
static int silent_error(const char *reason) {
  if (strcmp(reason, CUED_SILENT_LEVEL) == 0 || strcmp(reason, CUED_SILENT_MUTED) == 0 || strcmp(reason, CUED_SILENT_GROUP_MUTED) == 0)
    return CA_ERROR_DISABLED;
  return CA_ERROR_NOTAVAILABLE;
}

// The start of a request about one sound: `{"id":N` comes before it, its other members after.
static void sound_body(cued_line *body, const char *op, const char *what, const char *value) {
  cued_line_init(body);
  cued_line_raw(body, ",\"op\":\"");
  cued_line_raw(body, op);
  cued_line_raw(body, "\",\"");
  cued_line_raw(body, what);
  cued_line_raw(body, "\":");
  cued_line_string(body, value);
}

// One play request, with media.role as its role when cued takes one (`role`: NULL for none).
// CA_ERROR_DISCONNECTED when cued did not answer.
int play_one(struct cued *p, const char *what, const char *value, const struct play_request *play) {
  cued_line body;
  sound_body(&body, "play", what, value);
  if (play->volume < 1) {
    cued_line_raw(&body, ",\"volume\":");
    cued_line_fraction(&body, play->volume);
  }
  if (play->role) {
    cued_line_raw(&body, ",\"role\":");
    cued_line_string(&body, play->role);
  }
  cued_line_raw(&body, ",\"notify\":true}");
  if (body.failed) {
    cued_line_free(&body);
    return CA_ERROR_OOM;
  }
  int ret = CA_ERROR_NOTAVAILABLE;
  for (int attempt = 0; attempt < kBusyTries; attempt++) {
    struct waiter w = {.records = 1, .voice = malloc(sizeof(struct voice))};
    if (!w.voice) {
      ret = CA_ERROR_OOM;
      break;
    }
    *w.voice = (struct voice){.id = play->id, .callback = play->callback, .userdata = play->userdata};
    ret = request(p, body.data, &w, kRequestSeconds);
    int recorded = w.voice == NULL;  // the reader took it into the list of voices
    free(w.voice);
    if (ret < 0 || recorded) break;
    if (w.reply.ok) {
      debug("cued kept %s '%s' silent: %s", what, value, w.reply.reason);
      ret = silent_error(w.reply.reason);
      break;
    }
    ret = reply_error(w.reply.code);
    if (strcmp(w.reply.code, CUED_CODE_BUSY) != 0) {
      debug("cued refused %s '%s': %s", what, value, w.reply.code);
      break;
    }
    usleep(5000);
  }
  cued_line_free(&body);
  return ret;
}


// One prepare request: cued decodes the sound and keeps it, and answers once it has (CA_SUCCESS).
// A daemon older than `prepare` says unknown-op: CA_ERROR_NOTSUPPORTED, as before it.
int prepare_one(struct cued *p, const char *what, const char *value, const struct play_request *unused) {
  (void)unused;
  cued_line body;
  sound_body(&body, "prepare", what, value);
  cued_line_raw(&body, "}");
  struct waiter w = {0};
  int ret = body.failed ? CA_ERROR_OOM : request(p, body.data, &w, kRequestSeconds);
  cued_line_free(&body);
  if (ret < 0) return ret;
  if (w.reply.ok) return CA_SUCCESS;
  debug("cued did not prepare %s '%s': %s", what, value, w.reply.code);
  return reply_error(w.reply.code);
}

// Cancels every voice of play `id`: taken off the list (from here on its finished event finds
// nothing), stopped in cued, and reported CA_ERROR_CANCELED before this returns, as the pulse driver does.
void cancel_voices(struct cued *p, uint32_t id) {
  pthread_mutex_lock(&p->lock);
  struct voice *taken = NULL, **link = &p->voices;
  while (*link) {
    struct voice *v = *link;
    if (v->id == id) {
      *link = v->next;
      v->next = taken;
      taken = v;
    } else {
      link = &v->next;
    }
  }
  pthread_mutex_unlock(&p->lock);
  for (struct voice *v = taken; v; v = v->next) {
    cued_line body;
    cued_line_init(&body);
    cued_line_raw(&body, ",\"op\":\"stop\",\"voice\":");
    cued_line_unsigned(&body, v->voice);
    cued_line_raw(&body, "}");
    struct waiter w = {0};
    // unknown-voice: it ended meanwhile. Either way the play was canceled for the application.
    if (!body.failed) request(p, body.data, &w, kRequestSeconds);
    cued_line_free(&body);
  }
  finish_voices(p, taken, CA_ERROR_CANCELED);
}

// Whether a voice of play `id` sounds in cued.
int voice_playing(struct cued *p, uint32_t id) {
  int playing = 0;
  pthread_mutex_lock(&p->lock);
  for (struct voice *v = p->voices; v; v = v->next)
    if (v->id == id) playing = 1;
  pthread_mutex_unlock(&p->lock);
  return playing;
}
