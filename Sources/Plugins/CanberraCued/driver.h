#ifndef CUED_CANBERRA_DRIVER_H
#define CUED_CANBERRA_DRIVER_H
// What the driver's files share (driver.c, the entry points; connection.c; voices.c; properties.c;
// fallback.c): one context's state, and the calls between them. None of it is exported: only the
// eight entry points of canberra-abi.h are.
//
// Locking: libcanberra holds the context's mutex around every entry point, so they never overlap.
// `lock` guards what the reader thread shares with them (the waiters, the voices, the connection's
// state); `write_lock` only the socket's writing side, so a write that blocks never stops the reader.
// Callbacks are called with neither held.
#include "canberra-abi.h"
#include "wire.h"

#include <pthread.h>
#include <stdint.h>
#include <time.h>

enum {
  kReadBuffer = 65536,        // the longest line read whole; a longer one (none is sent to us) is skipped
  kHelloSeconds = 2,          // a daemon that takes longer to say hello counts as not running
  kRequestSeconds = 5,        // a play's or prepare's reply waits at most this (a first decode is in it)
  kRetrySeconds = 30,         // a daemon that refused or did not answer is not asked again before this
  kBusyTries = 3,             // a play refused `busy` is sent again this often, 5 ms apart
};

// A play that sounds in cued: its voice, and what libcanberra gave for it.
struct voice {
  struct voice *next;
  uint64_t voice;
  uint32_t id;
  ca_finish_callback_t callback;
  void *userdata;
};

// A request waiting for its reply. A play's waiter also carries the voice to record, which the
// reader records when it reads the reply, before any later line (the voice's `finished` may follow at once).
struct waiter {
  struct waiter *next;
  uint64_t request;
  int done;
  cued_message reply;
  int records;
  struct voice *voice;
};

struct cued {
  ca_context *context;
  pthread_mutex_t lock;
  pthread_cond_t answered;
  pthread_mutex_t write_lock;
  int fd;                 // the connection (-1: none); closed only once its reader has been joined
  int connected;          // the reader runs and requests may be sent
  int closing;            // destroy is ending the connection: the reader leaves the voices to it
  int has_reader;
  pthread_t reader;
  uint64_t next_request;
  struct waiter *waiters; // oldest first
  struct voice *voices;
  int file_play;          // the daemon's play takes "file"
  int play_role;          // the daemon's play takes "role"
  char *client;           // the name the last hello gave
  ca_context *fallback;   // the next driver's context, once one was opened
};

#define PRIVATE(c) ((struct cued *)(c)->private)

// With CANBERRA_DEBUG set (libcanberra's own switch), what the driver decides goes to stderr.
void debug(const char *format, ...) __attribute__((format(printf, 1, 2)));

// properties.c: what the application's and the play's properties say.
char *property(ca_proplist *play, ca_proplist *context, const char *key);
double volume_from_decibels(const char *text);
char *client_name(ca_proplist *props);

// connection.c: the connection to cued and its reader thread.
int is_connected(struct cued *p);
int connect_to_cued(struct cued *p);
void release_connection(struct cued *p);
int say_hello(struct cued *p, const char *name);
int request(struct cued *p, const char *body, struct waiter *w, int seconds);

// voices.c: the plays cued sounds for the context, and their ends.
void finish_voices(struct cued *p, struct voice *voices, int error);
int finished_error(const char *reason);
int reply_error(const char *code);
// A play as the driver asks it of cued: its volume (0…1), its role (NULL: none), and libcanberra's id and callback.
struct play_request {
  double volume;
  const char *role;
  uint32_t id;
  ca_finish_callback_t callback;
  void *userdata;
};
// One request about one sound: `what` is "event" or "file", `value` its name or absolute path.
typedef int (*sound_request)(struct cued *p, const char *what, const char *value, const struct play_request *play);
int play_one(struct cued *p, const char *what, const char *value, const struct play_request *play);
int prepare_one(struct cued *p, const char *what, const char *value, const struct play_request *unused);
void cancel_voices(struct cued *p, uint32_t id);
int voice_playing(struct cued *p, uint32_t id);

// fallback.c: the next driver, when cued cannot be reached.
int open_fallback(struct cued *p);
int play_through_fallback(struct cued *p, uint32_t id, ca_proplist *props, ca_finish_callback_t cb, void *userdata);

#endif
