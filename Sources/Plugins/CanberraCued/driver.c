// libcanberra-cued.so: a libcanberra 0.30 driver that plays through cued (docs/CLIENT.md, "libcanberra").
//
// One connection to cued per context, opened with a `hello` that names the application (its
// application.name, else application.id, else the program), so cued's [clients.NAME] ceilings
// apply. A reader thread matches each reply to its request by id and turns each `finished` event
// into the play's callback. When cued cannot be reached (at open, or when the connection dies),
// the driver opens the next driver in a context of its own, as libcanberra's multi driver does, and
// forwards to it: an application's sounds never vanish with cued.
//
// Locking: libcanberra holds the context's mutex around every entry point, so they never overlap.
// `lock` guards what the reader thread shares with them (the waiters, the voices, the connection's
// state); `write_lock` only the socket's writing side, so a write that blocks never stops the reader.
// Callbacks are called with neither held.
#define _GNU_SOURCE
#include "canberra-abi.h"
#include "wire.h"

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

enum {
  kReadBuffer = 65536,        // the longest line read whole; a longer one (none is sent to us) is skipped
  kHelloSeconds = 2,          // a daemon that takes longer to say hello counts as not running
  kRequestSeconds = 5,        // a play's reply waits at most this (a theme file's first decode is in it)
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

static void debug(const char *format, ...) __attribute__((format(printf, 1, 2)));

// With CANBERRA_DEBUG set (libcanberra's own switch), what the driver decides goes to stderr.
static void debug(const char *format, ...) {
  if (!ca_debug()) return;
  va_list arguments;
  va_start(arguments, format);
  fputs("libcanberra-cued: ", stderr);
  vfprintf(stderr, format, arguments);
  fputc('\n', stderr);
  va_end(arguments);
}

static struct timespec monotonic_after(int seconds) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  t.tv_sec += seconds;
  return t;
}

// A daemon that refused us or did not answer in time is left alone for a while by every context
// of the process (a context whose open failed is made afresh at the next play).
static pthread_mutex_t hold_lock = PTHREAD_MUTEX_INITIALIZER;
static struct timespec hold_until;

static void hold_off(void) {
  struct timespec until = monotonic_after(kRetrySeconds);
  pthread_mutex_lock(&hold_lock);
  hold_until = until;
  pthread_mutex_unlock(&hold_lock);
}

static int held_off(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  pthread_mutex_lock(&hold_lock);
  int held = now.tv_sec < hold_until.tv_sec || (now.tv_sec == hold_until.tv_sec && now.tv_nsec < hold_until.tv_nsec);
  pthread_mutex_unlock(&hold_lock);
  return held;
}

// MARK: - Properties

// The value of `key` in the play's properties, else the context's, copied (NULL: neither has it, or
// no memory). Each list is read under its own mutex, one at a time.
static char *property(ca_proplist *play, ca_proplist *context, const char *key) {
  ca_proplist *lists[2] = {play, context};
  for (int i = 0; i < 2; i++) {
    if (!lists[i]) continue;
    ca_mutex *mutex = ((struct ca_proplist_head *)lists[i])->mutex;
    ca_mutex_lock(mutex);
    const char *value = ca_proplist_gets_unlocked(lists[i], key);
    char *copy = value ? strdup(value) : NULL;
    ca_mutex_unlock(mutex);
    if (value) return copy;
  }
  return NULL;
}

// canberra.volume, in dB, as a factor for cued's 0…1: 0 dB and louder are 1. The application wrote
// the number in its own locale or in C's; both are read. -1: not a number.
static double volume_from_decibels(const char *text) {
  char *end = NULL;
  errno = 0;
  double decibels = strtod(text, &end);
  if (errno || end == text || *end) {
    locale_t c = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    if (!c) return -1;
    errno = 0;
    decibels = strtod_l(text, &end, c);
    freelocale(c);
    if (errno || end == text || *end) return -1;
  }
  if (isnan(decibels)) return -1;
  if (decibels >= 0) return 1;
  return pow(10, decibels / 20);
}

// The name cued knows the application by.
static char *client_name(ca_proplist *props) {
  char *name = property(NULL, props, "application.name");
  if (!name || !*name) {
    free(name);
    name = property(NULL, props, "application.id");
  }
  if (!name || !*name) {
    free(name);
    name = strdup(program_invocation_short_name);
  }
  if (name && !cued_utf8_valid(name)) {
    for (unsigned char *p = (unsigned char *)name; *p; p++)
      if (*p >= 0x80) *p = '?';
  }
  return name;
}

// MARK: - The connection

static int is_connected(struct cued *p) {
  pthread_mutex_lock(&p->lock);
  int connected = p->connected;
  pthread_mutex_unlock(&p->lock);
  return connected;
}

// Every waiter answered "disconnected" and every voice taken off: the connection is gone. The
// caller calls the voices' callbacks (unless destroy does) once it has let go of `lock`.
static struct voice *disconnected_locked(struct cued *p) {
  p->connected = 0;
  for (struct waiter *w = p->waiters; w; w = w->next) {
    w->done = 1;
    memset(&w->reply, 0, sizeof w->reply);
    strcpy(w->reply.code, "disconnected");
  }
  p->waiters = NULL;
  pthread_cond_broadcast(&p->answered);
  if (p->closing) return NULL;
  struct voice *voices = p->voices;
  p->voices = NULL;
  return voices;
}

static void finish_voices(struct cued *p, struct voice *voices, int error) {
  while (voices) {
    struct voice *next = voices->next;
    if (voices->callback) voices->callback(p->context, voices->id, error, voices->userdata);
    free(voices);
    voices = next;
  }
}

// A finished event's reason, as libcanberra's callback says it.
static int finished_error(const char *reason) {
  if (strcmp(reason, "end") == 0) return CA_SUCCESS;
  if (strcmp(reason, "device-lost") == 0) return CA_ERROR_IO;
  if (strcmp(reason, "error") == 0) return CA_ERROR_INTERNAL;
  // stopped, stolen, disposed, a level change's fade (level), and reasons newer than this driver
  return CA_ERROR_CANCELED;
}

static void handle_line(struct cued *p, const char *line, size_t length) {
  cued_message m;
  if (cued_parse(line, length, &m) < 0) return;
  if (m.is_event) {
    if (strcmp(m.event, "finished") != 0 || !m.has_voice) return;
    pthread_mutex_lock(&p->lock);
    struct voice **link = &p->voices;
    while (*link && (*link)->voice != m.voice) link = &(*link)->next;
    struct voice *v = *link;
    if (v) *link = v->next;
    pthread_mutex_unlock(&p->lock);
    if (!v) return;  // canceled already, or not a play of ours
    if (v->callback) v->callback(p->context, v->id, finished_error(m.reason), v->userdata);
    free(v);
    return;
  }
  // A reply: to the request of its id, or without one (a line cued could not read, a refusal sent
  // on connecting) to the oldest waiting.
  pthread_mutex_lock(&p->lock);
  struct waiter **link = &p->waiters;
  if (m.has_id)
    while (*link && (*link)->request != m.id) link = &(*link)->next;
  struct waiter *w = *link;
  if (w) {
    *link = w->next;
    w->reply = m;
    w->done = 1;
    if (w->records && m.ok && m.played == 1 && m.has_voice) {
      w->voice->voice = m.voice;
      w->voice->next = p->voices;
      p->voices = w->voice;
      w->voice = NULL;  // the list owns it now
    }
    pthread_cond_broadcast(&p->answered);
  }
  pthread_mutex_unlock(&p->lock);
}

struct reader_start {
  struct cued *p;
  int fd;
};

static void *reader_main(void *argument) {
  struct reader_start start = *(struct reader_start *)argument;
  free(argument);
  struct cued *p = start.p;
  char *buffer = malloc(kReadBuffer);
  size_t used = 0;
  int skipping = 0;  // inside a line too long for the buffer
  while (buffer) {
    ssize_t n = recv(start.fd, buffer + used, kReadBuffer - used, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    used += (size_t)n;
    size_t begin = 0;
    for (size_t i = used - (size_t)n; i < used; i++) {
      if (buffer[i] != '\n') continue;
      if (!skipping) handle_line(p, buffer + begin, i - begin);
      skipping = 0;
      begin = i + 1;
    }
    memmove(buffer, buffer + begin, used - begin);
    used -= begin;
    if (used == kReadBuffer) {
      skipping = 1;
      used = 0;
    }
  }
  free(buffer);
  pthread_mutex_lock(&p->lock);
  struct voice *orphans = disconnected_locked(p);
  pthread_mutex_unlock(&p->lock);
  if (orphans) debug("the connection to cued ended; its sounds end with CA_ERROR_DISCONNECTED");
  finish_voices(p, orphans, CA_ERROR_DISCONNECTED);
  return NULL;
}

// Joins the reader of a connection that ended (or is being ended) and closes it.
static void release_connection(struct cued *p) {
  if (p->fd >= 0) shutdown(p->fd, SHUT_RDWR);
  if (p->has_reader) pthread_join(p->reader, NULL);
  p->has_reader = 0;
  if (p->fd >= 0) close(p->fd);
  p->fd = -1;
}

static const char *socket_path(char *buffer, size_t capacity) {
  const char *explicit = secure_getenv("CUED_SOCKET");
  if (explicit && *explicit) return explicit;
  const char *runtime = secure_getenv("XDG_RUNTIME_DIR");
  if (runtime && runtime[0] == '/') {
    snprintf(buffer, capacity, "%s/cued/cued.sock", runtime);
  } else {
    snprintf(buffer, capacity, "/tmp/cued-%u/cued.sock", (unsigned)getuid());
  }
  return buffer;
}

static int write_line(struct cued *p, cued_line *line) {
  if (line->failed) return CA_ERROR_OOM;
  cued_line_raw(line, "\n");
  if (line->failed) return CA_ERROR_OOM;
  pthread_mutex_lock(&p->write_lock);
  size_t sent = 0;
  int ret = CA_SUCCESS;
  while (sent < line->length) {
    ssize_t n = send(p->fd, line->data + sent, line->length - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      // The daemon is gone or stopped reading us (the send timeout): end the connection; the
      // reader sees it and answers every waiter.
      shutdown(p->fd, SHUT_RDWR);
      ret = CA_ERROR_DISCONNECTED;
      break;
    }
    sent += (size_t)n;
  }
  pthread_mutex_unlock(&p->write_lock);
  return ret;
}

// Sends a request with a new id, `body` being its members after the id (",\"op\":…}"), and waits for
// the reply in `w` (at most `seconds`). CA_ERROR_DISCONNECTED: no reply will come.
static int request(struct cued *p, const char *body, struct waiter *w, int seconds) {
  pthread_mutex_lock(&p->lock);
  if (!p->connected) {
    pthread_mutex_unlock(&p->lock);
    return CA_ERROR_DISCONNECTED;
  }
  w->request = ++p->next_request;
  w->done = 0;
  w->next = NULL;
  struct waiter **tail = &p->waiters;
  while (*tail) tail = &(*tail)->next;
  *tail = w;
  pthread_mutex_unlock(&p->lock);

  cued_line line;
  cued_line_init(&line);
  cued_line_raw(&line, "{\"id\":");
  cued_line_unsigned(&line, w->request);
  cued_line_raw(&line, body);
  int ret = write_line(p, &line);
  cued_line_free(&line);

  struct timespec deadline = monotonic_after(seconds);
  int timed_out = 0;
  pthread_mutex_lock(&p->lock);
  while (ret == CA_SUCCESS && !w->done) {
    if (pthread_cond_timedwait(&p->answered, &p->lock, &deadline) == ETIMEDOUT) {
      timed_out = 1;
      ret = CA_ERROR_DISCONNECTED;
    }
  }
  if (!w->done) {  // not sent, or no answer in time: take it back
    struct waiter **link = &p->waiters;
    while (*link && *link != w) link = &(*link)->next;
    if (*link) *link = w->next;
  }
  pthread_mutex_unlock(&p->lock);
  if (timed_out) {
    // A daemon that does not answer is treated as gone: the reader ends, its sounds are reported.
    debug("cued did not answer within %d s; using the next driver", seconds);
    hold_off();
    shutdown(p->fd, SHUT_RDWR);
  }
  if (ret == CA_SUCCESS && strcmp(w->reply.code, "disconnected") == 0) ret = CA_ERROR_DISCONNECTED;
  return ret;
}

// hello with the application's name; 0 once the daemon answered.
static int say_hello(struct cued *p, const char *name) {
  cued_line body;
  cued_line_init(&body);
  cued_line_raw(&body, ",\"op\":\"hello\",\"client\":");
  cued_line_string(&body, name);
  cued_line_raw(&body, "}");
  if (body.failed) {
    cued_line_free(&body);
    return CA_ERROR_OOM;
  }
  struct waiter w = {0};
  int ret = request(p, body.data, &w, kHelloSeconds);
  cued_line_free(&body);
  if (ret < 0) return ret;
  if (!w.reply.ok) {
    debug("cued refused hello: %s", w.reply.code);
    return CA_ERROR_NOTAVAILABLE;  // limit-reached, access-denied: as if it were not running
  }
  p->file_play = w.reply.file_play;
  p->play_role = w.reply.play_role;
  return CA_SUCCESS;
}

// Connects and says hello; CA_SUCCESS with `connected` set, or why not.
static int connect_to_cued(struct cued *p) {
  if (is_connected(p)) return CA_SUCCESS;
  if (held_off()) return CA_ERROR_NOTAVAILABLE;
  release_connection(p);  // a previous connection's reader has ended: join it
  char buffer[sizeof(((struct sockaddr_un *)0)->sun_path) + 64];
  const char *path = socket_path(buffer, sizeof buffer);
  struct sockaddr_un address = {.sun_family = AF_UNIX};
  if (strlen(path) >= sizeof address.sun_path) return CA_ERROR_NOTAVAILABLE;
  strcpy(address.sun_path, path);

  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return CA_ERROR_SYSTEM;
  // A connect to a full backlog, and a write to a daemon that stopped reading, give up after this.
  struct timeval timeout = {.tv_sec = kHelloSeconds};
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
  if (connect(fd, (struct sockaddr *)&address, sizeof address) < 0) {
    debug("cued is not running (%s: %s)", path, strerror(errno));
    close(fd);
    return CA_ERROR_NOTAVAILABLE;
  }

  struct reader_start *start = malloc(sizeof *start);
  if (!start) {
    close(fd);
    return CA_ERROR_OOM;
  }
  *start = (struct reader_start){p, fd};
  p->fd = fd;
  pthread_mutex_lock(&p->lock);
  p->connected = 1;
  pthread_mutex_unlock(&p->lock);
  // The reader takes no signal of the application's: it is created with every signal blocked.
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  int created = pthread_create(&p->reader, NULL, reader_main, start);
  pthread_sigmask(SIG_SETMASK, &previous, NULL);
  if (created != 0) {
    free(start);
    pthread_mutex_lock(&p->lock);
    p->connected = 0;
    pthread_mutex_unlock(&p->lock);
    release_connection(p);
    return CA_ERROR_SYSTEM;
  }
  p->has_reader = 1;
  pthread_setname_np(p->reader, "cued-canberra");

  int ret = say_hello(p, p->client);
  if (ret < 0) {
    // Refused (limit-reached, access-denied) or not answered: not tried again for a while.
    release_connection(p);
    hold_off();
    return ret == CA_ERROR_OOM ? ret : CA_ERROR_NOTAVAILABLE;
  }
  debug("connected to cued at %s as '%s'", path, p->client);
  return CA_SUCCESS;
}

// MARK: - The next driver

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
static int open_fallback(struct cued *p) {
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

// An error reply to a play, as libcanberra's error.
static int reply_error(const char *code) {
  if (strcmp(code, "unknown-event") == 0) return CA_ERROR_NOTFOUND;
  if (strcmp(code, "event-disabled") == 0) return CA_ERROR_DISABLED;
  if (strcmp(code, "bad-path") == 0) return CA_ERROR_CORRUPT;
  if (strcmp(code, "invalid-request") == 0 || strcmp(code, "out-of-range") == 0) return CA_ERROR_INVALID;
  if (strcmp(code, "device-unavailable") == 0 || strcmp(code, "busy") == 0) return CA_ERROR_NOTAVAILABLE;
  if (strcmp(code, "unknown-op") == 0) return CA_ERROR_NOTSUPPORTED;
  return CA_ERROR_INTERNAL;
}

// A silent play's reason: the user's settings (the level, a client ceiling, a mute) disable it;
// cued's repeat rules and voice limit leave no room for it now.
static int silent_error(const char *reason) {
  if (strcmp(reason, "level") == 0 || strcmp(reason, "muted") == 0 || strcmp(reason, "group-muted") == 0)
    return CA_ERROR_DISABLED;
  return CA_ERROR_NOTAVAILABLE;
}

// One play request: `what` is "event" or "file", with media.role as its role when cued takes one
// (`role`: NULL for none). CA_ERROR_DISCONNECTED when cued did not answer.
static int play_one(struct cued *p, const char *what, const char *value, double volume, const char *role, uint32_t id,
                    ca_finish_callback_t cb, void *userdata) {
  cued_line body;
  cued_line_init(&body);
  cued_line_raw(&body, ",\"op\":\"play\",\"");
  cued_line_raw(&body, what);
  cued_line_raw(&body, "\":");
  cued_line_string(&body, value);
  if (volume < 1) {
    cued_line_raw(&body, ",\"volume\":");
    cued_line_fraction(&body, volume);
  }
  if (role) {
    cued_line_raw(&body, ",\"role\":");
    cued_line_string(&body, role);
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
    *w.voice = (struct voice){.id = id, .callback = cb, .userdata = userdata};
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
    if (strcmp(w.reply.code, "busy") != 0) {
      debug("cued refused %s '%s': %s", what, value, w.reply.code);
      break;
    }
    usleep(5000);
  }
  cued_line_free(&body);
  return ret;
}

// A file for cued, which wants its absolute path: NOTFOUND and ACCESS as opening it would say.
static int absolute_file(const char *name, char **path) {
  *path = realpath(name, NULL);
  if (*path) return CA_SUCCESS;
  if (errno == ENOENT || errno == ENOTDIR) return CA_ERROR_NOTFOUND;
  if (errno == EACCES) return CA_ERROR_ACCESS;
  return errno == ENOMEM ? CA_ERROR_OOM : CA_ERROR_IO;
}

static int play_through_fallback(struct cued *p, uint32_t id, ca_proplist *props, ca_finish_callback_t cb, void *userdata) {
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
  char *path = NULL;
  double volume = 1;
  int ret = CA_SUCCESS;
  if (decibels && (volume = volume_from_decibels(decibels)) < 0) ret = CA_ERROR_INVALID;
  if (ret == CA_SUCCESS && !event && !file) ret = CA_ERROR_INVALID;
  if (ret == CA_SUCCESS && event && !cued_utf8_valid(event)) ret = CA_ERROR_INVALID;
  if (ret != CA_SUCCESS) goto done;
  debug("play %u: event.id=%s media.filename=%s volume=%g media.role=%s", id, event ? event : "-", file ? file : "-", volume,
        role ? role : "-");

  connect_to_cued(p);  // again, if the connection ended
  // media.role goes to a cued that takes it (play-role), as its role: the user's [groups.NAME] roles
  // choose the group. A role cued would refuse as one (not a plain name) is left out, not fatal.
  const char *sent_role = role && p->play_role && cued_role_valid(role) ? role : NULL;
  ret = CA_ERROR_DISCONNECTED;  // not played by cued (yet)
  if (is_connected(p) && event) {
    ret = play_one(p, "event", event, volume, sent_role, id, cb, userdata);
    // A name cued does not take as one (`../bell`) is one the theme has no sound for, as in libcanberra.
    if (ret == CA_ERROR_INVALID) ret = CA_ERROR_NOTFOUND;
    // libcanberra plays media.filename when the theme has no sound for event.id.
    if (ret == CA_ERROR_NOTFOUND && file) ret = CA_ERROR_DISCONNECTED;
  }
  if (ret == CA_ERROR_DISCONNECTED && file && is_connected(p) && p->file_play) {
    ret = absolute_file(file, &path);
    // A path that is not UTF-8 cannot be said in JSON: the next driver opens it itself.
    if (ret == CA_SUCCESS) ret = cued_utf8_valid(path) ? play_one(p, "file", path, volume, sent_role, id, cb, userdata) : CA_ERROR_DISCONNECTED;
  }
  // cued is not running, the connection ended, or it cannot play the file (a daemon older than
  // file-play, a path that is not UTF-8).
  if (ret == CA_ERROR_DISCONNECTED) ret = play_through_fallback(p, id, props, cb, userdata);
done:
  free(event);
  free(file);
  free(decibels);
  free(role);
  free(path);
  return ret;
}

int cued_driver_cancel(ca_context *c, uint32_t id) {
  if (!c) return CA_ERROR_INVALID;
  if (!c->private) return CA_ERROR_STATE;
  struct cued *p = PRIVATE(c);
  // Take every voice of this id off the list: from here on its finished event finds nothing.
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
  if (p->fallback) ca_context_cancel(p->fallback, id);
  return CA_SUCCESS;
}

int cued_driver_cache(ca_context *c, ca_proplist *props) {
  if (!c || !props) return CA_ERROR_INVALID;
  if (!c->private) return CA_ERROR_STATE;
  struct cued *p = PRIVATE(c);
  connect_to_cued(p);
  // cued has no play-less warm-up: a theme file is decoded at its first play and kept.
  if (is_connected(p)) return CA_ERROR_NOTSUPPORTED;
  if (!p->fallback && open_fallback(p) != CA_SUCCESS) return CA_ERROR_NOTSUPPORTED;
  return ca_context_cache_full(p->fallback, props);
}

int cued_driver_playing(ca_context *c, uint32_t id, int *playing) {
  if (!c || !playing) return CA_ERROR_INVALID;
  if (!c->private) return CA_ERROR_STATE;
  struct cued *p = PRIVATE(c);
  *playing = 0;
  pthread_mutex_lock(&p->lock);
  for (struct voice *v = p->voices; v; v = v->next)
    if (v->id == id) *playing = 1;
  pthread_mutex_unlock(&p->lock);
  int elsewhere = 0;
  if (!*playing && p->fallback && ca_context_playing(p->fallback, id, &elsewhere) == CA_SUCCESS) *playing = elsewhere != 0;
  return CA_SUCCESS;
}
