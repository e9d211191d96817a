// The C face of libpipewire for Swift (see include/CPipeWireShims.h for why each piece is C).
//
// Real-time rule: on_process runs on PipeWire's data thread. It only dequeues a buffer, reads the
// stream's time (pw_stream_get_time_n reads shared memory, no lock), calls the Swift callback and
// queues the buffer: no allocation, no lock, no log. Everything else runs on the control thread
// under the thread-loop lock, or on the thread loop itself.
#include "internal.h"

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static void init_pipewire(void) { pw_init(NULL, NULL); }

// --- the control side ----------------------------------------------------------------------------

cued_pw_stream *cued_pw__stream_new(enum spa_direction direction, const char *app_name, const char *node_name,
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

int cued_pw_stream_loop_thread(cued_pw_stream *s) { return atomic_load_explicit(&s->loop_thread_id, memory_order_acquire); }

cued_pw_stream *cued_pw_output_new(const char *app_name, const char *node_name, const char *media_role,
                                   const char *target_or_null, uint32_t rate, uint32_t channels,
                                   uint32_t quantum_frames, cued_pw_process_fn fn, void *user) {
  if (cued_pw_load(NULL, 0) != 0) return NULL;
  struct pw_properties *props = pw_properties_new(PW_KEY_MEDIA_CATEGORY, "Playback", NULL);
  if (props != NULL) {
    if (media_role) pw_properties_set(props, PW_KEY_MEDIA_ROLE, media_role);
    if (target_or_null) pw_properties_set(props, PW_KEY_TARGET_OBJECT, target_or_null);
  }
  return cued_pw__stream_new(SPA_DIRECTION_OUTPUT, app_name, node_name, rate, channels, quantum_frames, fn, user, props);
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
  if (s->core == NULL) {
    errno = 0;
    s->core = connect_core(s->context, s->remote);
    if (s->core == NULL) {
      result = errno ? -errno : -EHOSTDOWN;
      snprintf(s->error, sizeof s->error, "no PipeWire server: %s", strerror(-result));
      goto done;
    }
    pw_core_add_listener(s->core, &s->core_listener, &cued_pw__core_events, s);
  }
  s->stream = pw_stream_new(s->core, s->node_name, pw_properties_copy(s->props));
  if (s->stream == NULL) {
    result = errno ? -errno : -ENOMEM;
    snprintf(s->error, sizeof s->error, "pw_stream_new: %s", strerror(-result));
    goto done;
  }
  pw_stream_add_listener(s->stream, &s->stream_listener, &cued_pw__stream_events, s);

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
    cued_pw__fill_timing(s->stream, timing);
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


void cued_pw_stream_set_latency(cued_pw_stream *s, uint32_t frames) {
  pw_thread_loop_lock(s->loop);
  atomic_store_explicit(&s->latency_frames, frames, memory_order_relaxed);
  char value[32];
  snprintf(value, sizeof value, "%u/%u", frames, s->rate);
  pw_properties_set(s->props, PW_KEY_NODE_LATENCY, value);
  if (s->stream != NULL) {
    struct spa_dict_item items[] = {SPA_DICT_ITEM_INIT(PW_KEY_NODE_LATENCY, value)};
    pw_stream_update_properties(s->stream, &SPA_DICT_INIT_ARRAY(items));
  }
  pw_thread_loop_unlock(s->loop);
}

uint32_t cued_pw_stream_latency(cued_pw_stream *s) { return atomic_load_explicit(&s->latency_frames, memory_order_relaxed); }

int cued_pw_stream_callback_thread(cued_pw_stream *s, int *policy, int *priority) {
  int seen = atomic_load_explicit(&s->thread_policy, memory_order_acquire);
  if (seen < 0) return 0;
  if (policy) *policy = seen;
  if (priority) *priority = atomic_load_explicit(&s->thread_priority, memory_order_relaxed);
  return atomic_load_explicit(&s->thread_id, memory_order_relaxed);
}

int cued_pw_stream_set_active(cued_pw_stream *s, int active) {
  pw_thread_loop_lock(s->loop);
  int result = s->stream != NULL ? pw_stream_set_active(s->stream, active != 0) : -ENOTCONN;
  pw_thread_loop_unlock(s->loop);
  return result;
}

void cued_pw_stream_set_failure_callback(cued_pw_stream *s, cued_pw_notify_fn fn, void *user) {
  pw_thread_loop_lock(s->loop);
  s->on_failure = fn;
  s->failure_user = user;
  pw_thread_loop_unlock(s->loop);
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
  if (cued_pw_load(NULL, 0) != 0) return 0;
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
