// What realtime.c and stream.c share: the stream's state and the functions of the
// real-time path and the thread loop's events that the control side registers or calls. Not part of the module's face (include/).
#ifndef CUED_CUED_PW_INTERNAL_H
#define CUED_CUED_PW_INTERNAL_H
#include "CPipeWireShims.h"
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>
#ifndef SCHED_RESET_ON_FORK
#define SCHED_RESET_ON_FORK 0x40000000  // <linux/sched.h>; glibc shows it only under _GNU_SOURCE
#endif
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <pipewire/pipewire.h>
#include <spa/param/audio/format-utils.h>
#include <spa/utils/result.h>
#include "syms.h"  // last: every libpipewire call below goes through the table cued_pw_load fills

struct cued_pw_stream {
  struct pw_thread_loop *loop;
  struct pw_context *context;
  struct pw_core *core;
  struct spa_hook core_listener;
  int core_dead;                   // the server sent a core error (it went away): reconnect on connect
  struct pw_stream *stream;        // NULL while disconnected: then no node is in the graph
  struct spa_hook stream_listener;
  struct pw_properties *props;     // the stream's properties; a copy goes to each pw_stream_new
  char node_name[128];
  char remote[256];                // PW_KEY_REMOTE_NAME for pw_context_connect; "" lets the environment decide
  enum spa_direction direction;
  uint32_t rate, channels, quantum_frames;
  cued_pw_process_fn fn;
  void *user;
  _Atomic uint64_t cycles, missed;
  _Atomic uint32_t last_requested;
  _Atomic int failed;              // a negative errno once the stream or the server failed; 0 after connect
  _Atomic int thread_policy;       // the data thread's policy, read by its first callback after connect; -1 before
  _Atomic int thread_priority;
  _Atomic int thread_id;           // the data thread (gettid), recorded with its policy; 0 before
  _Atomic int loop_thread_id;      // the thread loop's thread (gettid), recorded once it started
  char error[256];                 // written on the loop thread or under the lock
  cued_pw_notify_fn on_failure;    // called (thread loop) when `failed` is set; NULL: nobody to tell
  void *failure_user;
  // node.latency asked for now (cued_pw_stream_set_latency: the control side decides, LatencyAdapter).
  _Atomic uint32_t latency_frames;
};

extern const struct pw_core_events cued_pw__core_events;
// A stream of `direction` with `props` (taken over, freed on failure); cued_pw_output_new makes the
// playback one. The capture stream of the tools (Tools/CPipeWireCapture) is made here too, with its
// own properties: a test's recorder is not part of the face cued ships.
cued_pw_stream *cued_pw__stream_new(enum spa_direction direction, const char *app_name, const char *node_name,
                                    uint32_t rate, uint32_t channels, uint32_t quantum_frames,
                                    cued_pw_process_fn fn, void *user, struct pw_properties *props);
void cued_pw__set_failed(cued_pw_stream *s, int code);
void cued_pw__fill_timing(struct pw_stream *stream, cued_pw_timing *timing);
extern const struct pw_stream_events cued_pw__stream_events;

#endif
