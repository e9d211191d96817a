// What realtime.c and output.c share: the stream's state and the functions of the
// real-time path and the mainloop's events that the control side registers or calls. Not part of the module's face (include/).
#ifndef CUED_CUED_PA_INTERNAL_H
#define CUED_CUED_PA_INTERNAL_H
#include "CPulseShims.h"
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <pulse/pulseaudio.h>
#include "syms.h"  // last: every libpulse call below goes through the table cued_pa_load fills

struct cued_pa_output {
  pa_threaded_mainloop *loop;
  pa_mainloop_api *api;
  pa_context *context;           // NULL until the first connect; remade after the server went away
  pa_stream *stream;             // NULL while disconnected: then no sink input is on the server
  char app_name[128], media_role[64], sink[256], server[512];
  int has_sink, has_server;
  uint32_t rate, channels, target_frames, minreq_frames;
  cued_pa_fill_fn fn;
  void *user;
  cued_pa_rewrite_fn rewrite;    // NULL: no rewriting
  uint32_t margin_frames;
  int wake_fd;                   // eventfd poked by the control side; -1 without rewriting
  pa_io_event *wake_event;
  _Atomic int callback_tid;      // the write callback's thread (gettid), recorded once per connect; 0 before
  int disconnecting;             // our own disconnect: a TERMINATED stream is not a failure
  int timed_out;                 // set by the connect timer
  _Atomic int failed;            // a negative errno once the context or stream failed; 0 after connect
  _Atomic uint64_t underflows;
  cued_pa_notify_fn on_failure;  // called (mainloop thread) when `failed` is set; NULL: nobody to tell
  void *failure_user;
  char error[256];               // written on the mainloop thread or under the lock
  // The queue asked for now (cued_pa_output_set_latency: the control side decides, LatencyAdapter).
  _Atomic uint32_t latency_frames;  // the tlength asked for now
  // Timing updates asked for (cued_pa_output_set_timing_updates): every `timing_period` µs, 0: none.
  pa_usec_t timing_period;
  pa_time_event *timing_event;   // on `context`; freed with it
};

int cued_pa__errno_of(int pa_error);
void cued_pa__set_failed(cued_pa_output *s, int code);
void cued_pa__ask_latency_locked(cued_pa_output *s, uint32_t frames, uint32_t minreq_frames);
void cued_pa__on_context_state(pa_context *context, void *data);
void cued_pa__on_stream_state(pa_stream *stream, void *data);
void cued_pa__on_timing_period(pa_mainloop_api *api, pa_time_event *event, const struct timeval *tv, void *data);
void cued_pa__on_timeout(pa_mainloop_api *api, pa_time_event *event, const struct timeval *tv, void *data);
void cued_pa__on_underflow(pa_stream *stream, void *data);
void cued_pa__on_wake(pa_mainloop_api *api, pa_io_event *event, int fd, pa_io_event_flags_t flags, void *data);
void cued_pa__on_write(pa_stream *stream, size_t nbytes, void *data);

#endif
