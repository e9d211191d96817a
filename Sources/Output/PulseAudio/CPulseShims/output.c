// The C face of libpulse for Swift (see include/CPulseShims.h for why each piece is C).
//
// Real-time rule: on_write runs on the mainloop thread with the mainloop lock held. Our code there
// reads the stream's latency (pa_stream_get_latency: arithmetic on the last timing update), takes a
// block with pa_stream_begin_write, calls the Swift callback and hands the block back with
// pa_stream_write: no allocation, no lock of ours, no log. libpulse's own pool and queue are noted
// in the header. Everything else runs on the control thread under the mainloop lock.
#include "internal.h"


// --- the control side ----------------------------------------------------------------------------

cued_pa_output *cued_pa_output_new(const char *app_name, const char *media_role, const char *sink_or_null,
                                   const char *server_or_null, uint32_t rate, uint32_t channels,
                                   uint32_t target_frames, uint32_t minreq_frames, cued_pa_fill_fn fn, void *user) {
  if (cued_pa_load(NULL, 0) != 0) return NULL;
  if (fn == NULL || rate == 0 || channels == 0 || channels > PA_CHANNELS_MAX || target_frames == 0) return NULL;
  cued_pa_output *s = calloc(1, sizeof *s);
  if (s == NULL) return NULL;
  snprintf(s->app_name, sizeof s->app_name, "%s", app_name ? app_name : "cued");
  snprintf(s->media_role, sizeof s->media_role, "%s", media_role ? media_role : "event");
  if (sink_or_null) {
    s->has_sink = 1;
    snprintf(s->sink, sizeof s->sink, "%s", sink_or_null);
  }
  if (server_or_null) {
    s->has_server = 1;
    snprintf(s->server, sizeof s->server, "%s", server_or_null);
  }
  s->rate = rate;
  s->channels = channels;
  s->target_frames = target_frames;
  s->latency_frames = target_frames;
  s->minreq_frames = minreq_frames;
  s->fn = fn;
  s->user = user;
  s->wake_fd = -1;
  s->loop = pa_threaded_mainloop_new();
  if (s->loop == NULL) {
    free(s);
    return NULL;
  }
  pa_threaded_mainloop_set_name(s->loop, "cued-pulse");
  s->api = pa_threaded_mainloop_get_api(s->loop);
  if (pa_threaded_mainloop_start(s->loop) < 0) {
    pa_threaded_mainloop_free(s->loop);
    free(s);
    return NULL;
  }
  return s;
}

// All of these with the mainloop lock held.
static void drop_stream_locked(cued_pa_output *s, int timeout_ms) {
  if (s->stream == NULL) return;
  pa_stream_set_write_callback(s->stream, NULL, NULL);
  pa_stream_set_underflow_callback(s->stream, NULL, NULL);
  if (pa_stream_get_state(s->stream) == PA_STREAM_READY || pa_stream_get_state(s->stream) == PA_STREAM_CREATING) {
    s->disconnecting = 1;
    s->timed_out = 0;
    pa_time_event *timer = pa_context_rttime_new(s->context, pa_rtclock_now() + (pa_usec_t)(timeout_ms > 0 ? timeout_ms : 1) * PA_USEC_PER_MSEC,
                                              cued_pa__on_timeout, s);
    // The server confirms the delete (the stream goes TERMINATED): its sink input is gone by then.
    if (pa_stream_disconnect(s->stream) == 0) {
      while (!s->timed_out && PA_STREAM_IS_GOOD(pa_stream_get_state(s->stream))) pa_threaded_mainloop_wait(s->loop);
    }
    if (timer != NULL) s->api->time_free(timer);
    s->disconnecting = 0;
  }
  pa_stream_set_state_callback(s->stream, NULL, NULL);
  pa_stream_unref(s->stream);
  s->stream = NULL;
}

static void drop_context_locked(cued_pa_output *s, int timeout_ms) {
  drop_stream_locked(s, timeout_ms);
  if (s->context == NULL) return;
  if (s->timing_event != NULL) s->api->time_free(s->timing_event);
  s->timing_event = NULL;
  pa_context_set_state_callback(s->context, NULL, NULL);
  pa_context_disconnect(s->context);
  pa_context_unref(s->context);
  s->context = NULL;
}

// Waits (lock held) until `done` says so, an error shows, or the deadline (pa_rtclock_now's
// microseconds) passes. pa_threaded_mainloop has no timed wait: a one-shot timer event wakes it.
static int wait_for_locked(cued_pa_output *s, pa_usec_t deadline, int (*done)(cued_pa_output *)) {
  s->timed_out = 0;
  pa_time_event *timer = pa_context_rttime_new(s->context, deadline, cued_pa__on_timeout, s);
  int result = 0;
  for (;;) {
    int state = done(s);
    if (state != 0) {
      result = state > 0 ? 0 : -1;
      break;
    }
    if (s->timed_out) {
      result = -2;
      break;
    }
    pa_threaded_mainloop_wait(s->loop);
  }
  if (timer != NULL) s->api->time_free(timer);
  return result;
}

static int context_ready(cued_pa_output *s) {
  pa_context_state_t state = pa_context_get_state(s->context);
  if (state == PA_CONTEXT_READY) return 1;
  return PA_CONTEXT_IS_GOOD(state) ? 0 : -1;
}

static int stream_ready(cued_pa_output *s) {
  pa_stream_state_t state = pa_stream_get_state(s->stream);
  if (state == PA_STREAM_READY) return 1;
  return PA_STREAM_IS_GOOD(state) ? 0 : -1;
}

static int fail_locked(cued_pa_output *s, const char *step, int result) {
  int error = s->context ? pa_context_errno(s->context) : PA_ERR_UNKNOWN;
  if (result == -2) {
    snprintf(s->error, sizeof s->error, "%s: no answer in time", step);
    return -ETIMEDOUT;
  }
  snprintf(s->error, sizeof s->error, "%s: %s", step, pa_strerror(error));
  return cued_pa__errno_of(error);
}

int cued_pa_output_connect(cued_pa_output *s, int timeout_ms) {
  int result = 0;
  pa_threaded_mainloop_lock(s->loop);
  pa_usec_t deadline = pa_rtclock_now() + (pa_usec_t)(timeout_ms > 0 ? timeout_ms : 1) * PA_USEC_PER_MSEC;
  // A server that went away leaves a failed context: start over with a new connection. A stream
  // that failed on a live server (its sink was unloaded) is made again.
  if (s->context != NULL && !PA_CONTEXT_IS_GOOD(pa_context_get_state(s->context)))
    drop_context_locked(s, timeout_ms);
  else if (s->stream != NULL && pa_stream_get_state(s->stream) != PA_STREAM_READY)
    drop_stream_locked(s, timeout_ms);
  if (s->stream != NULL) goto done;
  s->error[0] = 0;
  atomic_store_explicit(&s->callback_tid, 0, memory_order_relaxed);
  atomic_store_explicit(&s->failed, 0, memory_order_release);
  if (s->context == NULL) {
    pa_proplist *props = pa_proplist_new();
    pa_proplist_sets(props, PA_PROP_APPLICATION_NAME, s->app_name);
    pa_proplist_sets(props, PA_PROP_APPLICATION_ID, "cued");
    s->context = pa_context_new_with_proplist(s->api, s->app_name, props);
    pa_proplist_free(props);
    if (s->context == NULL) {
      snprintf(s->error, sizeof s->error, "pa_context_new failed");
      result = -ENOMEM;
      goto done;
    }
    pa_context_set_state_callback(s->context, cued_pa__on_context_state, s);
    if (pa_context_connect(s->context, s->has_server ? s->server : NULL, PA_CONTEXT_NOAUTOSPAWN, NULL) < 0) {
      result = fail_locked(s, "no PulseAudio server", -1);
      drop_context_locked(s, timeout_ms);
      goto done;
    }
  }
  int waited = wait_for_locked(s, deadline, context_ready);
  if (waited != 0) {
    result = fail_locked(s, "no PulseAudio server", waited);
    drop_context_locked(s, timeout_ms);
    goto done;
  }

  pa_sample_spec spec = {.format = PA_SAMPLE_FLOAT32LE, .rate = s->rate, .channels = (uint8_t)s->channels};
  pa_channel_map map;
  pa_channel_map_init_auto(&map, s->channels, PA_CHANNEL_MAP_DEFAULT);
  pa_proplist *props = pa_proplist_new();
  pa_proplist_sets(props, PA_PROP_MEDIA_ROLE, s->media_role);
  pa_proplist_sets(props, PA_PROP_MEDIA_NAME, s->app_name);
  s->stream = pa_stream_new_with_proplist(s->context, s->app_name, &spec, &map, props);
  pa_proplist_free(props);
  if (s->stream == NULL) {
    result = fail_locked(s, "pa_stream_new", -1);
    goto done;
  }
  pa_stream_set_state_callback(s->stream, cued_pa__on_stream_state, s);
  pa_stream_set_write_callback(s->stream, cued_pa__on_write, s);
  pa_stream_set_underflow_callback(s->stream, cued_pa__on_underflow, s);
  const uint32_t stride = (uint32_t)(sizeof(float) * s->channels);
  pa_buffer_attr attr = {
    .maxlength = (uint32_t)-1,
    .tlength = s->target_frames * stride,
    .prebuf = (uint32_t)-1,
    .minreq = s->minreq_frames ? s->minreq_frames * stride : (uint32_t)-1,
    .fragsize = (uint32_t)-1,
  };
  // No PA_STREAM_AUTO_TIMING_UPDATE: libpulse's timer keeps asking a corked stream's timing every
  // second, and on a server whose sink never suspends the answers wake us while quiet. Swift asks
  // for updates while the stream plays (cued_pa_output_set_timing_updates).
  pa_stream_flags_t flags = PA_STREAM_ADJUST_LATENCY | PA_STREAM_INTERPOLATE_TIMING;
  if (pa_stream_connect_playback(s->stream, s->has_sink ? s->sink : NULL, &attr, flags, NULL, NULL) < 0) {
    result = fail_locked(s, "pa_stream_connect_playback", -1);
    drop_stream_locked(s, timeout_ms);
    goto done;
  }
  waited = wait_for_locked(s, deadline, stream_ready);
  if (waited != 0) {
    result = fail_locked(s, s->has_sink ? "connect to the sink" : "connect a playback stream", waited);
    drop_stream_locked(s, timeout_ms);
  }
done:
  pa_threaded_mainloop_unlock(s->loop);
  return result;
}

void cued_pa_output_disconnect(cued_pa_output *s, int timeout_ms) {
  pa_threaded_mainloop_lock(s->loop);
  drop_stream_locked(s, timeout_ms);
  pa_threaded_mainloop_unlock(s->loop);
}

void cued_pa_output_free(cued_pa_output *s, int timeout_ms) {
  if (s == NULL) return;
  pa_threaded_mainloop_lock(s->loop);
  drop_context_locked(s, timeout_ms);
  if (s->wake_event != NULL) s->api->io_free(s->wake_event);
  pa_threaded_mainloop_unlock(s->loop);
  pa_threaded_mainloop_stop(s->loop);
  pa_threaded_mainloop_free(s->loop);
  if (s->wake_fd >= 0) close(s->wake_fd);
  free(s);
}

int cued_pa_output_set_rewrite(cued_pa_output *s, cued_pa_rewrite_fn fn, uint32_t margin_frames) {
  if (fn == NULL || s->wake_fd >= 0) return -EINVAL;
  int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (fd < 0) return -errno;
  pa_threaded_mainloop_lock(s->loop);
  s->rewrite = fn;
  s->margin_frames = margin_frames;
  s->wake_fd = fd;
  s->wake_event = s->api->io_new(s->api, fd, PA_IO_EVENT_INPUT, cued_pa__on_wake, s);
  pa_threaded_mainloop_unlock(s->loop);
  return s->wake_event != NULL ? 0 : -ENOMEM;
}

int cued_pa_output_callback_thread(cued_pa_output *s) {
  return atomic_load_explicit(&s->callback_tid, memory_order_acquire);
}

void cued_pa_output_poke(cued_pa_output *s) {
  if (s->wake_fd < 0) return;
  uint64_t one = 1;
  if (write(s->wake_fd, &one, sizeof one) < 0) { /* EAGAIN: a wake-up is already pending */ }
}

cued_pa_state cued_pa_output_state(cued_pa_output *s, char *error_text, size_t error_capacity) {
  pa_threaded_mainloop_lock(s->loop);
  cued_pa_state state = CUED_PA_STATE_UNCONNECTED;
  if (s->context != NULL && !PA_CONTEXT_IS_GOOD(pa_context_get_state(s->context))) {
    state = CUED_PA_STATE_ERROR;
  } else if (s->stream != NULL) {
    pa_stream_state_t stream_state = pa_stream_get_state(s->stream);
    state = stream_state == PA_STREAM_READY ? CUED_PA_STATE_READY
          : PA_STREAM_IS_GOOD(stream_state) ? CUED_PA_STATE_CONNECTING : CUED_PA_STATE_ERROR;
  } else if (s->error[0] != 0) {
    state = CUED_PA_STATE_ERROR;
  }
  if (error_text != NULL && error_capacity > 0)
    snprintf(error_text, error_capacity, "%s", state == CUED_PA_STATE_ERROR ? s->error : "");
  pa_threaded_mainloop_unlock(s->loop);
  return state;
}

int cued_pa_output_attr(cued_pa_output *s, uint32_t *target_frames, uint32_t *minreq_frames) {
  int result = -1;
  pa_threaded_mainloop_lock(s->loop);
  if (s->stream != NULL && pa_stream_get_state(s->stream) == PA_STREAM_READY) {
    const pa_buffer_attr *attr = pa_stream_get_buffer_attr(s->stream);
    if (attr != NULL) {
      const uint32_t stride = (uint32_t)(sizeof(float) * s->channels);
      if (target_frames) *target_frames = attr->tlength / stride;
      if (minreq_frames) *minreq_frames = attr->minreq / stride;
      result = 0;
    }
  }
  pa_threaded_mainloop_unlock(s->loop);
  return result;
}

uint64_t cued_pa_output_underflows(cued_pa_output *s) {
  return atomic_load_explicit(&s->underflows, memory_order_relaxed);
}

void cued_pa_output_set_latency(cued_pa_output *s, uint32_t target_frames, uint32_t minreq_frames) {
  pa_threaded_mainloop_lock(s->loop);
  cued_pa__ask_latency_locked(s, target_frames, minreq_frames);
  pa_threaded_mainloop_unlock(s->loop);
}

uint32_t cued_pa_output_latency(cued_pa_output *s) { return atomic_load_explicit(&s->latency_frames, memory_order_relaxed); }

void cued_pa_output_set_failure_callback(cued_pa_output *s, cued_pa_notify_fn fn, void *user) {
  pa_threaded_mainloop_lock(s->loop);
  s->on_failure = fn;
  s->failure_user = user;
  pa_threaded_mainloop_unlock(s->loop);
}

int cued_pa_output_cork(cued_pa_output *s, int cork) {
  pa_threaded_mainloop_lock(s->loop);
  int result = -ENOTCONN;
  if (s->stream != NULL && pa_stream_get_state(s->stream) == PA_STREAM_READY) {
    pa_operation *operation = pa_stream_cork(s->stream, cork != 0, NULL, NULL);
    result = operation != NULL ? 0 : cued_pa__errno_of(pa_context_errno(s->context));
    if (operation != NULL) pa_operation_unref(operation);
  }
  pa_threaded_mainloop_unlock(s->loop);
  return result;
}

void cued_pa_output_set_timing_updates(cued_pa_output *s, uint64_t period_us) {
  pa_threaded_mainloop_lock(s->loop);
  s->timing_period = period_us;
  if (s->context != NULL && PA_CONTEXT_IS_GOOD(pa_context_get_state(s->context))) {
    if (period_us == 0) {
      if (s->timing_event != NULL) pa_context_rttime_restart(s->context, s->timing_event, PA_USEC_INVALID);
    } else {
      if (s->stream != NULL && pa_stream_get_state(s->stream) == PA_STREAM_READY) {
        pa_operation *operation = pa_stream_update_timing_info(s->stream, NULL, NULL);
        if (operation != NULL) pa_operation_unref(operation);
      }
      pa_usec_t next = pa_rtclock_now() + period_us;
      if (s->timing_event != NULL) pa_context_rttime_restart(s->context, s->timing_event, next);
      else s->timing_event = pa_context_rttime_new(s->context, next, cued_pa__on_timing_period, s);
    }
  }
  pa_threaded_mainloop_unlock(s->loop);
}

int cued_pa_output_failed(cued_pa_output *s) { return atomic_load_explicit(&s->failed, memory_order_acquire); }

// --- is a server there? --------------------------------------------------------------------------

static void probe_state(pa_context *context, void *data) {
  (void)context;
  (void)data;
}

int cued_pa_server_answers(const char *server_or_null, int timeout_ms) {
  if (cued_pa_load(NULL, 0) != 0) return 0;
  pa_mainloop *loop = pa_mainloop_new();
  if (loop == NULL) return 0;
  pa_context *context = pa_context_new(pa_mainloop_get_api(loop), "cued-probe");
  int answered = 0;
  if (context != NULL) {
    pa_context_set_state_callback(context, probe_state, NULL);
    if (pa_context_connect(context, server_or_null, PA_CONTEXT_NOAUTOSPAWN, NULL) == 0) {
      pa_usec_t deadline = pa_rtclock_now() + (pa_usec_t)(timeout_ms > 0 ? timeout_ms : 1) * PA_USEC_PER_MSEC;
      for (;;) {
        pa_context_state_t state = pa_context_get_state(context);
        if (state == PA_CONTEXT_READY) {
          answered = 1;
          break;
        }
        pa_usec_t now = pa_rtclock_now();
        if (!PA_CONTEXT_IS_GOOD(state) || now >= deadline) break;
        // One poll of at most what is left (pa_mainloop_prepare's timeout is in microseconds).
        if (pa_mainloop_prepare(loop, (int)(deadline - now)) < 0 || pa_mainloop_poll(loop) < 0 ||
            pa_mainloop_dispatch(loop) < 0)
          break;
      }
      pa_context_disconnect(context);
    }
    pa_context_unref(context);
  }
  pa_mainloop_free(loop);
  return answered;
}
