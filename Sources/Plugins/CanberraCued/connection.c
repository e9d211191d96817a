// The connection to cued (driver.h): one per context, opened with a `hello` that names the
// application (its application.name, else application.id, else the program), so cued's
// [clients.NAME] ceilings apply. A reader thread matches each reply to its request by id and turns
// each `finished` event into the play's callback.
#define _GNU_SOURCE
#include "driver.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

void debug(const char *format, ...) {
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

int is_connected(struct cued *p) {
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
void release_connection(struct cued *p) {
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
int request(struct cued *p, const char *body, struct waiter *w, int seconds) {
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
int say_hello(struct cued *p, const char *name) {
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
int connect_to_cued(struct cued *p) {
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
