// canberra-play: drives the real libcanberra, as an application would, and prints what it answers.
// The end-to-end tests run it (Tests/EndToEndTests/CanberraDriverTests.swift); `make canberra-play`
// builds it (it needs libcanberra-dev). The driver is libcanberra's choice: CANBERRA_DRIVER=cued.
//
//   canberra-play COMMAND...
//
//   name NAME             application.name (before open: the name a driver gives the sound server)
//   open                  ca_context_open                 prints "open: RESULT"
//   play ID KEY=VALUE...  ca_context_play_full, with a callback; the properties are the KEY=VALUE
//                         arguments that follow          prints "play ID: RESULT", and later, from the
//                         callback's thread, "finished ID: RESULT"
//   wait ID               until play ID's callback came (at most 10 s; else prints "wait ID: timed out")
//   cancel ID             ca_context_cancel               prints "cancel ID: RESULT"
//   playing ID            ca_context_playing              prints "playing ID: 0" or "playing ID: 1"
//   cache KEY=VALUE...    ca_context_cache_full           prints "cache: RESULT"
//   sleep MS
//   until PATH            until the file PATH exists (at most 30 s): the test's go-ahead
//
// RESULT is ca_strerror's text ("Success", "Canceled", "Sound disabled", …). At the end the context
// is destroyed (sounds still playing then finish with "Destroyed").
#define _POSIX_C_SOURCE 200809L
#include <canberra.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

enum { kMaxID = 1024 };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static int finished[kMaxID];

static void say(const char *format, const char *what, unsigned id, const char *result) {
  pthread_mutex_lock(&lock);
  printf(format, what, id, result);
  fflush(stdout);
  pthread_mutex_unlock(&lock);
}

static void callback(ca_context *c, uint32_t id, int error, void *userdata) {
  (void)c;
  (void)userdata;
  say("%s %u: %s\n", "finished", id, ca_strerror(error));
  pthread_mutex_lock(&lock);
  if (id < kMaxID) finished[id] = 1;
  pthread_cond_broadcast(&changed);
  pthread_mutex_unlock(&lock);
}

static int usage(const char *why) {
  fprintf(stderr, "canberra-play: %s (see Tests/Canberra/canberra-play.c)\n", why);
  return 2;
}

// The KEY=VALUE arguments from argv[*at] on, into a new proplist.
static ca_proplist *properties(int argc, char **argv, int *at) {
  ca_proplist *list = NULL;
  if (ca_proplist_create(&list) < 0) return NULL;
  for (; *at < argc && strchr(argv[*at], '='); (*at)++) {
    char *key = strdup(argv[*at]);
    char *equals = strchr(key, '=');
    *equals = 0;
    ca_proplist_sets(list, key, equals + 1);
    free(key);
  }
  return list;
}

int main(int argc, char **argv) {
  ca_context *context = NULL;
  int ret = ca_context_create(&context);
  if (ret < 0) {
    fprintf(stderr, "canberra-play: ca_context_create: %s\n", ca_strerror(ret));
    return 1;
  }
  for (int at = 1; at < argc;) {
    const char *command = argv[at++];
    unsigned id = 0;
    if (!strcmp(command, "play") || !strcmp(command, "wait") || !strcmp(command, "cancel") || !strcmp(command, "playing")) {
      if (at >= argc || sscanf(argv[at], "%u", &id) != 1 || id >= kMaxID) return usage("an id from 0 to 1023 must follow");
      at++;
    }
    if (!strcmp(command, "name")) {
      if (at >= argc) return usage("name needs a name");
      ret = ca_context_change_props(context, CA_PROP_APPLICATION_NAME, argv[at++], NULL);
      if (ret < 0) say("%s%u: %s\n", "name", 0, ca_strerror(ret));
    } else if (!strcmp(command, "open")) {
      say("%s%.0u: %s\n", "open", 0, ca_strerror(ca_context_open(context)));
    } else if (!strcmp(command, "play")) {
      ca_proplist *list = properties(argc, argv, &at);
      pthread_mutex_lock(&lock);
      finished[id] = 0;
      pthread_mutex_unlock(&lock);
      ret = ca_context_play_full(context, id, list, callback, NULL);
      say("%s %u: %s\n", "play", id, ca_strerror(ret));
      ca_proplist_destroy(list);
    } else if (!strcmp(command, "wait")) {
      struct timespec deadline;
      clock_gettime(CLOCK_REALTIME, &deadline);
      deadline.tv_sec += 10;
      int timed_out = 0;
      pthread_mutex_lock(&lock);
      while (!finished[id] && !timed_out) timed_out = pthread_cond_timedwait(&changed, &lock, &deadline) != 0;
      pthread_mutex_unlock(&lock);
      if (timed_out) say("%s %u: %s\n", "wait", id, "timed out");
    } else if (!strcmp(command, "cancel")) {
      say("%s %u: %s\n", "cancel", id, ca_strerror(ca_context_cancel(context, id)));
    } else if (!strcmp(command, "playing")) {
      int playing = -1;
      ret = ca_context_playing(context, id, &playing);
      say("%s %u: %s\n", "playing", id, ret < 0 ? ca_strerror(ret) : playing ? "1" : "0");
    } else if (!strcmp(command, "cache")) {
      ca_proplist *list = properties(argc, argv, &at);
      say("%s%.0u: %s\n", "cache", 0, ca_strerror(ca_context_cache_full(context, list)));
      ca_proplist_destroy(list);
    } else if (!strcmp(command, "sleep")) {
      if (at >= argc) return usage("sleep needs milliseconds");
      long ms = strtol(argv[at++], NULL, 10);
      struct timespec pause = {ms / 1000, (ms % 1000) * 1000000L};
      nanosleep(&pause, NULL);
    } else if (!strcmp(command, "until")) {
      if (at >= argc) return usage("until needs a path");
      struct stat status;
      struct timespec pause = {0, 10000000L};
      for (int tries = 0; tries < 3000 && stat(argv[at], &status) != 0; tries++) nanosleep(&pause, NULL);
      at++;
    } else {
      return usage("unknown command");
    }
  }
  ca_context_destroy(context);
  return 0;
}
