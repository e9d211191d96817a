// The C face of libpipewire for Swift (see include/CPipeWireShims.h for why each piece is C).
//
// Real-time rule: on_process runs on PipeWire's data thread. It only dequeues a buffer, reads the
// stream's time (pw_stream_get_time_n reads shared memory, no lock), calls the Swift callback and
// queues the buffer: no allocation, no lock, no log. Everything else runs on the control thread
// under the thread-loop lock, or on the thread loop itself.
#include "CPipeWireShims.h"
#include <errno.h>
#include <pthread.h>
#include <sched.h>
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
  _Atomic uint64_t cycles, missed, xruns;
  _Atomic uint32_t last_requested;
  _Atomic int failed;              // a negative errno once the stream or the server failed; 0 after connect
  _Atomic int thread_policy;       // the data thread's policy, read by its first callback after connect; -1 before
  _Atomic int thread_priority;
  int realtime_priority;           // SCHED_FIFO priority for the data thread when it has none; 0: leave it
  uint64_t next_ticks;             // data thread only: where the next cycle should start (0: unknown)
  _Atomic int resumed;             // set by set_active(1): the graph moved on while paused, not an xrun
  char error[256];                 // written on the loop thread or under the lock
  // Adaptive node.latency (cued_pw_stream_adapt_latency): an xrun doubles what the stream asks for,
  // up to latency_max; each decay_ns without one halves it again, down to quantum_frames. The data
  // thread only signals raise_event; the loop thread changes the property.
  _Atomic uint32_t latency_max;    // 0: fixed at quantum_frames (set on the control side, read on the data thread)
  uint64_t decay_ns;
  _Atomic uint32_t latency_frames; // node.latency asked for now (loop thread writes, anyone reads)
  _Atomic uint64_t latency_raises;
  struct spa_source *raise_event;
  struct spa_source *decay_timer;
};

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static void init_pipewire(void) { pw_init(NULL, NULL); }

// --- the real-time path --------------------------------------------------------------------------

static void fill_timing(struct pw_stream *stream, cued_pw_timing *timing) {
  struct pw_time time;
  memset(&time, 0, sizeof time);
  pw_stream_get_time_n(stream, &time, sizeof time);
  timing->now_ns = time.now;
  timing->rate_num = time.rate.num;
  timing->rate_denom = time.rate.denom;
  timing->ticks = time.ticks;
  timing->delay = time.delay;
  timing->queued_bytes = time.queued;
  timing->buffered_frames = time.buffered;
  timing->queued_buffers = time.queued_buffers;
  timing->avail_buffers = time.avail_buffers;
}

static void on_process(void *data) {
  struct cued_pw_stream *s = data;
  atomic_fetch_add_explicit(&s->cycles, 1, memory_order_relaxed);
  struct pw_buffer *buffer = pw_stream_dequeue_buffer(s->stream);
  if (buffer == NULL) {
    atomic_fetch_add_explicit(&s->missed, 1, memory_order_relaxed);
    return;
  }
  struct spa_data *d = &buffer->buffer->datas[0];
  const uint32_t stride = (uint32_t)sizeof(float) * s->channels;
  if (d->data == NULL || d->chunk == NULL) {
    atomic_fetch_add_explicit(&s->missed, 1, memory_order_relaxed);
    pw_stream_queue_buffer(s->stream, buffer);
    return;
  }
  if (atomic_load_explicit(&s->thread_policy, memory_order_relaxed) < 0) {
    // Once per connection, before the first mix: what the thread that runs the mix was granted.
    // client-rt.conf's module-rt makes it real-time where it may (SCHED_FIFO 88 with the rights, else
    // through RTKit); if it could not, cued asks for SCHED_FIFO at its own --realtime-priority (which
    // fails the same way without rights). The kernel is asked, not pthread_getschedparam: glibc caches
    // the policy it set itself and misses what module-rt or RTKit set (it said SCHED_OTHER here).
    // sched_getscheduler/sched_setscheduler/sched_getparam(0) are plain system calls: no lock.
    struct sched_param param = {0};
    int policy = sched_getscheduler(0);
    if (policy == SCHED_OTHER && s->realtime_priority > 0) {
      param.sched_priority = s->realtime_priority;
      if (sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &param) == 0) policy = SCHED_FIFO;
    }
    if (policy >= 0 && sched_getparam(0, &param) == 0) {
      atomic_store_explicit(&s->thread_priority, param.sched_priority, memory_order_relaxed);
      atomic_store_explicit(&s->thread_policy, policy & ~SCHED_RESET_ON_FORK, memory_order_release);
    }
  }
  cued_pw_timing timing;
  fill_timing(s->stream, &timing);
  timing.frames_requested = (uint32_t)buffer->requested;
  atomic_store_explicit(&s->last_requested, timing.frames_requested, memory_order_relaxed);
  // A cycle that does not start where the last one ended means the graph skipped (an xrun): the
  // documented way to find them with pw_stream (pw_time has no xrun counter in 0.3.65).
  if (timing.rate_num != 0 && timing.rate_denom != 0 && timing.frames_requested != 0) {
    uint64_t length = (uint64_t)timing.frames_requested * timing.rate_denom / ((uint64_t)timing.rate_num * s->rate);
    if (atomic_exchange_explicit(&s->resumed, 0, memory_order_relaxed)) s->next_ticks = 0;
    if (s->next_ticks != 0 && timing.ticks > s->next_ticks + length / 2) {
      atomic_fetch_add_explicit(&s->xruns, 1, memory_order_relaxed);
      // Ask the loop thread for a larger quantum: an eventfd write, no lock (pw_loop_signal_event).
      if (s->raise_event != NULL && atomic_load_explicit(&s->latency_frames, memory_order_relaxed) < s->latency_max)
        pw_loop_signal_event(pw_thread_loop_get_loop(s->loop), s->raise_event);
    }
    s->next_ticks = timing.ticks + length;
  }

  if (s->direction == SPA_DIRECTION_OUTPUT) {
    uint32_t capacity = d->maxsize / stride;
    uint32_t frames = buffer->requested ? (uint32_t)SPA_MIN(buffer->requested, (uint64_t)capacity)
                                        : SPA_MIN(s->quantum_frames, capacity);
    s->fn(s->user, (float *)d->data, frames, &timing);
    d->chunk->offset = 0;
    d->chunk->stride = (int32_t)stride;
    d->chunk->size = frames * stride;
  } else {
    uint32_t offset = SPA_MIN(d->chunk->offset, d->maxsize);
    uint32_t size = SPA_MIN(d->chunk->size, d->maxsize - offset);
    s->fn(s->user, SPA_PTROFF(d->data, offset, float), size / stride, &timing);
  }
  pw_stream_queue_buffer(s->stream, buffer);
}

// --- events on the thread loop -------------------------------------------------------------------

static void on_state_changed(void *data, enum pw_stream_state old, enum pw_stream_state state, const char *error) {
  (void)old;
  struct cued_pw_stream *s = data;
  if (state == PW_STREAM_STATE_ERROR) {
    snprintf(s->error, sizeof s->error, "%s", error ? error : "stream error");
    atomic_store_explicit(&s->failed, -EIO, memory_order_release);
  }
  pw_thread_loop_signal(s->loop, false);
}

static const struct pw_stream_events stream_events = {
  PW_VERSION_STREAM_EVENTS,
  .state_changed = on_state_changed,
  .process = on_process,
};

static void on_core_error(void *data, uint32_t id, int seq, int res, const char *message) {
  (void)seq;
  struct cued_pw_stream *s = data;
  if (id != PW_ID_CORE) return;
  s->core_dead = 1;
  snprintf(s->error, sizeof s->error, "server: %s (%s)", message ? message : "error", spa_strerror(res));
  atomic_store_explicit(&s->failed, res < 0 ? res : -EPIPE, memory_order_release);
  pw_thread_loop_signal(s->loop, false);
}

static const struct pw_core_events core_events = {
  PW_VERSION_CORE_EVENTS,
  .error = on_core_error,
};

// node.latency as the stream asks for it now, in its properties and (when connected) on the server,
// which recalculates the graph's quantum. Loop thread or lock held.
static void apply_latency_locked(cued_pw_stream *s, uint32_t frames) {
  atomic_store_explicit(&s->latency_frames, frames, memory_order_relaxed);
  char value[32];
  snprintf(value, sizeof value, "%u/%u", frames, s->rate);
  pw_properties_set(s->props, PW_KEY_NODE_LATENCY, value);
  if (s->stream != NULL) {
    struct spa_dict_item items[] = {SPA_DICT_ITEM_INIT(PW_KEY_NODE_LATENCY, value)};
    pw_stream_update_properties(s->stream, &SPA_DICT_INIT_ARRAY(items));
  }
}

static void arm_decay_locked(cued_pw_stream *s) {
  struct timespec value = {(time_t)(s->decay_ns / SPA_NSEC_PER_SEC), (long)(s->decay_ns % SPA_NSEC_PER_SEC)};
  struct timespec none = {0, 0};
  pw_loop_update_timer(pw_thread_loop_get_loop(s->loop), s->decay_timer, &value, &none, false);
}

// An xrun: this machine could not keep up with the quantum. Twice the quantum, as PulseAudio raises
// its watermark; the decay timer starts again.
static void on_raise(void *data, uint64_t count) {
  (void)count;
  cued_pw_stream *s = data;
  uint32_t now = atomic_load_explicit(&s->latency_frames, memory_order_relaxed);
  if (s->latency_max == 0) return;
  if (now < s->latency_max) {
    apply_latency_locked(s, SPA_MIN(s->latency_max, now * 2));
    atomic_fetch_add_explicit(&s->latency_raises, 1, memory_order_relaxed);
  }
  arm_decay_locked(s);
}

// A decay window without an xrun: half the quantum again, down to what was configured.
static void on_decay(void *data, uint64_t expirations) {
  (void)expirations;
  cued_pw_stream *s = data;
  uint32_t now = atomic_load_explicit(&s->latency_frames, memory_order_relaxed);
  if (now <= s->quantum_frames) return;
  apply_latency_locked(s, SPA_MAX(s->quantum_frames, now / 2));
  if (atomic_load_explicit(&s->latency_frames, memory_order_relaxed) > s->quantum_frames) arm_decay_locked(s);
}

// --- the control side ----------------------------------------------------------------------------

static cued_pw_stream *stream_new(enum spa_direction direction, const char *app_name, const char *node_name,
                                  uint32_t rate, uint32_t channels, uint32_t quantum_frames,
                                  cued_pw_process_fn fn, void *user, struct pw_properties *props) {
  pthread_once(&init_once, init_pipewire);
  if (props == NULL || fn == NULL || rate == 0 || channels == 0 || channels > SPA_AUDIO_MAX_CHANNELS) {
    pw_properties_free(props);
    return NULL;
  }
  cued_pw_stream *s = calloc(1, sizeof *s);
  if (s == NULL) {
    pw_properties_free(props);
    return NULL;
  }
  s->props = props;
  s->thread_policy = -1;
  s->direction = direction;
  s->rate = rate;
  s->channels = channels;
  s->quantum_frames = quantum_frames;
  s->fn = fn;
  s->user = user;
  snprintf(s->node_name, sizeof s->node_name, "%s", node_name ? node_name : "cued");
  pw_properties_set(props, PW_KEY_MEDIA_TYPE, "Audio");
  pw_properties_set(props, PW_KEY_APP_NAME, app_name ? app_name : "cued");
  pw_properties_set(props, PW_KEY_NODE_NAME, s->node_name);
  if (quantum_frames > 0) pw_properties_setf(props, PW_KEY_NODE_LATENCY, "%u/%u", quantum_frames, rate);
  s->latency_frames = quantum_frames;

  s->loop = pw_thread_loop_new("cued-pipewire", NULL);
  if (s->loop != NULL) {
    // Before the loop runs, so no lock is needed; destroyed in cued_pw_stream_free after it stops.
    s->raise_event = pw_loop_add_event(pw_thread_loop_get_loop(s->loop), on_raise, s);
    s->decay_timer = pw_loop_add_timer(pw_thread_loop_get_loop(s->loop), on_decay, s);
  }
  // client-rt.conf: the data thread asks for real-time priority (module-rt: SCHED_FIFO or RTKit), as pw-cat does.
  if (s->loop != NULL)
    s->context = pw_context_new(pw_thread_loop_get_loop(s->loop),
                                pw_properties_new(PW_KEY_CONFIG_NAME, "client-rt.conf", NULL), 0);
  if (s->loop == NULL || s->context == NULL || pw_thread_loop_start(s->loop) < 0) {
    cued_pw_stream_free(s);
    return NULL;
  }
  return s;
}

cued_pw_stream *cued_pw_output_new(const char *app_name, const char *node_name, const char *media_role,
                                   const char *target_or_null, uint32_t rate, uint32_t channels,
                                   uint32_t quantum_frames, cued_pw_process_fn fn, void *user) {
  struct pw_properties *props = pw_properties_new(PW_KEY_MEDIA_CATEGORY, "Playback", NULL);
  if (props != NULL) {
    if (media_role) pw_properties_set(props, PW_KEY_MEDIA_ROLE, media_role);
    if (target_or_null) pw_properties_set(props, PW_KEY_TARGET_OBJECT, target_or_null);
  }
  return stream_new(SPA_DIRECTION_OUTPUT, app_name, node_name, rate, channels, quantum_frames, fn, user, props);
}

cued_pw_stream *cued_pw_capture_new(const char *app_name, const char *node_name, const char *sink_name,
                                    uint32_t rate, uint32_t channels, uint32_t quantum_frames,
                                    cued_pw_process_fn fn, void *user) {
  struct pw_properties *props =
    pw_properties_new(PW_KEY_MEDIA_CATEGORY, "Capture", PW_KEY_STREAM_CAPTURE_SINK, "true",
                      PW_KEY_NODE_PASSIVE, "true", NULL);
  if (props != NULL && sink_name) pw_properties_set(props, PW_KEY_TARGET_OBJECT, sink_name);
  return stream_new(SPA_DIRECTION_INPUT, app_name, node_name, rate, channels, quantum_frames, fn, user, props);
}

// Both called with the thread-loop lock held.
static void destroy_stream_locked(cued_pw_stream *s) {
  if (s->stream == NULL) return;
  spa_hook_remove(&s->stream_listener);
  pw_stream_destroy(s->stream);
  s->stream = NULL;
}

static void disconnect_core_locked(cued_pw_stream *s) {
  destroy_stream_locked(s);
  if (s->core == NULL) return;
  spa_hook_remove(&s->core_listener);
  pw_core_disconnect(s->core);
  s->core = NULL;
  s->core_dead = 0;
}

// A pw_context_connect with PW_KEY_REMOTE_NAME when a remote is named.
static struct pw_core *connect_core(struct pw_context *context, const char *remote) {
  struct pw_properties *props = NULL;
  if (remote != NULL && remote[0] != 0) props = pw_properties_new(PW_KEY_REMOTE_NAME, remote, NULL);
  return pw_context_connect(context, props, 0);
}

void cued_pw_stream_set_remote(cued_pw_stream *s, const char *remote_or_null) {
  pw_thread_loop_lock(s->loop);
  snprintf(s->remote, sizeof s->remote, "%s", remote_or_null ? remote_or_null : "");
  pw_thread_loop_unlock(s->loop);
}

int cued_pw_stream_connect(cued_pw_stream *s) {
  int result = 0;
  pw_thread_loop_lock(s->loop);
  // A server that went away leaves a dead core: start over with a new connection. A stream that
  // failed on a live server (its node was destroyed, the format refused) is made again.
  if (s->core_dead)
    disconnect_core_locked(s);
  else if (s->stream != NULL && pw_stream_get_state(s->stream, NULL) == PW_STREAM_STATE_ERROR)
    destroy_stream_locked(s);
  if (s->stream != NULL) goto done;
  s->error[0] = 0;
  atomic_store_explicit(&s->failed, 0, memory_order_release);
  atomic_store_explicit(&s->thread_policy, -1, memory_order_relaxed);
  s->next_ticks = 0;  // no callback runs: there is no stream
  if (s->core == NULL) {
    errno = 0;
    s->core = connect_core(s->context, s->remote);
    if (s->core == NULL) {
      result = errno ? -errno : -EHOSTDOWN;
      snprintf(s->error, sizeof s->error, "no PipeWire server: %s", strerror(-result));
      goto done;
    }
    pw_core_add_listener(s->core, &s->core_listener, &core_events, s);
  }
  s->stream = pw_stream_new(s->core, s->node_name, pw_properties_copy(s->props));
  if (s->stream == NULL) {
    result = errno ? -errno : -ENOMEM;
    snprintf(s->error, sizeof s->error, "pw_stream_new: %s", strerror(-result));
    goto done;
  }
  pw_stream_add_listener(s->stream, &s->stream_listener, &stream_events, s);

  uint8_t pod_buffer[1024];
  struct spa_pod_builder builder = SPA_POD_BUILDER_INIT(pod_buffer, sizeof pod_buffer);
  struct spa_audio_info_raw info = SPA_AUDIO_INFO_RAW_INIT(.format = SPA_AUDIO_FORMAT_F32, .rate = s->rate,
                                                           .channels = s->channels);
  if (s->channels == 1) {
    info.position[0] = SPA_AUDIO_CHANNEL_MONO;
  } else if (s->channels == 2) {
    info.position[0] = SPA_AUDIO_CHANNEL_FL;
    info.position[1] = SPA_AUDIO_CHANNEL_FR;
  } else {
    info.flags |= SPA_AUDIO_FLAG_UNPOSITIONED;
  }
  const struct spa_pod *params[1] = {spa_format_audio_raw_build(&builder, SPA_PARAM_EnumFormat, &info)};
  int rc = pw_stream_connect(s->stream, s->direction, PW_ID_ANY,
                             PW_STREAM_FLAG_AUTOCONNECT | PW_STREAM_FLAG_MAP_BUFFERS | PW_STREAM_FLAG_RT_PROCESS,
                             params, 1);
  if (rc < 0) {
    snprintf(s->error, sizeof s->error, "pw_stream_connect: %s", spa_strerror(rc));
    destroy_stream_locked(s);
    result = rc;
  }
done:
  pw_thread_loop_unlock(s->loop);
  return result;
}

void cued_pw_stream_disconnect(cued_pw_stream *s) {
  pw_thread_loop_lock(s->loop);
  destroy_stream_locked(s);
  pw_thread_loop_unlock(s->loop);
}

void cued_pw_stream_free(cued_pw_stream *s) {
  if (s == NULL) return;
  if (s->loop != NULL) {
    pw_thread_loop_lock(s->loop);
    disconnect_core_locked(s);
    pw_thread_loop_unlock(s->loop);
    pw_thread_loop_stop(s->loop);
    if (s->raise_event != NULL) pw_loop_destroy_source(pw_thread_loop_get_loop(s->loop), s->raise_event);
    if (s->decay_timer != NULL) pw_loop_destroy_source(pw_thread_loop_get_loop(s->loop), s->decay_timer);
  }
  if (s->context != NULL) pw_context_destroy(s->context);
  if (s->loop != NULL) pw_thread_loop_destroy(s->loop);
  pw_properties_free(s->props);
  free(s);
}

static cued_pw_state state_locked(cued_pw_stream *s) {
  if (s->core_dead) return CUED_PW_STATE_ERROR;
  if (s->stream == NULL) return s->error[0] ? CUED_PW_STATE_ERROR : CUED_PW_STATE_UNCONNECTED;
  switch (pw_stream_get_state(s->stream, NULL)) {
  case PW_STREAM_STATE_ERROR: return CUED_PW_STATE_ERROR;
  case PW_STREAM_STATE_UNCONNECTED: return CUED_PW_STATE_UNCONNECTED;
  case PW_STREAM_STATE_CONNECTING: return CUED_PW_STATE_CONNECTING;
  case PW_STREAM_STATE_PAUSED: return CUED_PW_STATE_PAUSED;
  case PW_STREAM_STATE_STREAMING: return CUED_PW_STATE_STREAMING;
  }
  return CUED_PW_STATE_ERROR;
}

cued_pw_state cued_pw_stream_state(cued_pw_stream *s, char *error_text, size_t error_capacity) {
  pw_thread_loop_lock(s->loop);
  cued_pw_state state = state_locked(s);
  if (error_text != NULL && error_capacity > 0)
    snprintf(error_text, error_capacity, "%s", state == CUED_PW_STATE_ERROR ? s->error : "");
  pw_thread_loop_unlock(s->loop);
  return state;
}

cued_pw_state cued_pw_stream_wait(cued_pw_stream *s, cued_pw_state target, int timeout_ms) {
  struct timespec deadline;
  pw_thread_loop_lock(s->loop);
  pw_thread_loop_get_time(s->loop, &deadline, (int64_t)timeout_ms * SPA_NSEC_PER_MSEC);
  cued_pw_state state = state_locked(s);
  while (state != target && state != CUED_PW_STATE_ERROR) {
    if (pw_thread_loop_timed_wait_full(s->loop, &deadline) != 0) break;
    state = state_locked(s);
  }
  pw_thread_loop_unlock(s->loop);
  return state;
}

int cued_pw_stream_time(cued_pw_stream *s, cued_pw_timing *timing) {
  memset(timing, 0, sizeof *timing);
  pw_thread_loop_lock(s->loop);
  int result = -1;
  if (s->stream != NULL) {
    fill_timing(s->stream, timing);
    timing->frames_requested = atomic_load_explicit(&s->last_requested, memory_order_relaxed);
    result = 0;
  }
  pw_thread_loop_unlock(s->loop);
  return result;
}

void cued_pw_stream_counters(cued_pw_stream *s, uint64_t *cycles, uint64_t *missed) {
  if (cycles) *cycles = atomic_load_explicit(&s->cycles, memory_order_relaxed);
  if (missed) *missed = atomic_load_explicit(&s->missed, memory_order_relaxed);
}

uint64_t cued_pw_stream_xruns(cued_pw_stream *s) { return atomic_load_explicit(&s->xruns, memory_order_relaxed); }

void cued_pw_stream_adapt_latency(cued_pw_stream *s, uint32_t max_frames, uint64_t decay_ms) {
  pw_thread_loop_lock(s->loop);
  s->latency_max = (s->raise_event != NULL && s->decay_timer != NULL && max_frames > s->quantum_frames) ? max_frames : 0;
  s->decay_ns = SPA_MAX(decay_ms, (uint64_t)1) * SPA_NSEC_PER_MSEC;
  pw_thread_loop_unlock(s->loop);
}

uint32_t cued_pw_stream_latency(cued_pw_stream *s, uint64_t *raises) {
  if (raises) *raises = atomic_load_explicit(&s->latency_raises, memory_order_relaxed);
  return atomic_load_explicit(&s->latency_frames, memory_order_relaxed);
}

void cued_pw_stream_set_realtime_priority(cued_pw_stream *s, int priority) {
  pw_thread_loop_lock(s->loop);
  s->realtime_priority = priority;
  pw_thread_loop_unlock(s->loop);
}

int cued_pw_stream_thread_scheduling(cued_pw_stream *s, int *priority) {
  int policy = atomic_load_explicit(&s->thread_policy, memory_order_acquire);
  if (priority) *priority = atomic_load_explicit(&s->thread_priority, memory_order_relaxed);
  return policy;
}

int cued_pw_stream_set_active(cued_pw_stream *s, int active) {
  pw_thread_loop_lock(s->loop);
  if (active) atomic_store_explicit(&s->resumed, 1, memory_order_relaxed);
  int result = s->stream != NULL ? pw_stream_set_active(s->stream, active != 0) : -ENOTCONN;
  pw_thread_loop_unlock(s->loop);
  return result;
}

int cued_pw_stream_failed(cued_pw_stream *s) { return atomic_load_explicit(&s->failed, memory_order_acquire); }

// --- is a server there? --------------------------------------------------------------------------

struct probe {
  int seq, done, failed;
};

static void probe_done(void *data, uint32_t id, int seq) {
  struct probe *p = data;
  if (id == PW_ID_CORE && seq == p->seq) p->done = 1;
}

static void probe_error(void *data, uint32_t id, int seq, int res, const char *message) {
  (void)seq; (void)res; (void)message;
  struct probe *p = data;
  if (id == PW_ID_CORE) p->failed = 1;
}

static const struct pw_core_events probe_events = {
  PW_VERSION_CORE_EVENTS,
  .done = probe_done,
  .error = probe_error,
};

int cued_pw_server_answers(const char *remote_or_null, int timeout_ms) {
  pthread_once(&init_once, init_pipewire);
  struct pw_loop *loop = pw_loop_new(NULL);
  if (loop == NULL) return 0;
  struct pw_context *context = pw_context_new(loop, NULL, 0);
  struct pw_core *core = context ? connect_core(context, remote_or_null) : NULL;
  struct probe probe = {0};
  if (core != NULL) {
    struct spa_hook listener;
    spa_zero(listener);
    pw_core_add_listener(core, &listener, &probe_events, &probe);
    probe.seq = pw_core_sync(core, PW_ID_CORE, 0);
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    pw_loop_enter(loop);
    for (;;) {
      clock_gettime(CLOCK_MONOTONIC, &now);
      int64_t elapsed_ms = (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
      if (probe.done || probe.failed || elapsed_ms >= timeout_ms) break;
      pw_loop_iterate(loop, (int)(timeout_ms - elapsed_ms));
    }
    pw_loop_leave(loop);
    spa_hook_remove(&listener);
    pw_core_disconnect(core);
  }
  if (context != NULL) pw_context_destroy(context);
  pw_loop_destroy(loop);
  return probe.done && !probe.failed;
}
