// The C face of libpipewire for Swift (see include/CPipeWireShims.h for why each piece is C).
//
// Real-time rule: on_process runs on PipeWire's data thread. It only dequeues a buffer, reads the
// stream's time (pw_stream_get_time_n reads shared memory, no lock), calls the Swift callback and
// queues the buffer: no allocation, no lock, no log, no decision. Everything else runs on the control thread
// under the thread-loop lock, or on the thread loop itself.
#include "internal.h"

// --- the real-time path --------------------------------------------------------------------------

void cued_pw__fill_timing(struct pw_stream *stream, cued_pw_timing *timing) {
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
    // Once per connection, before the first mix: which thread runs the mix and what it already has
    // (client-rt.conf's module-rt makes it real-time where it may: SCHED_FIFO 88 with the rights,
    // else through RTKit), for the control side, which decides (CueOutput's RealtimePolicy). The
    // kernel is asked, not pthread_getschedparam: glibc caches the policy it set itself and misses
    // what module-rt or RTKit set. gettid/sched_getscheduler/sched_getparam: system calls, no lock.
    struct sched_param param = {0};
    int policy = sched_getscheduler(0);
    if (policy >= 0 && sched_getparam(0, &param) == 0) {
      atomic_store_explicit(&s->thread_priority, param.sched_priority, memory_order_relaxed);
      atomic_store_explicit(&s->thread_id, (int)syscall(SYS_gettid), memory_order_relaxed);
      atomic_store_explicit(&s->thread_policy, policy & ~SCHED_RESET_ON_FORK, memory_order_release);
    }
  }
  cued_pw_timing timing;
  cued_pw__fill_timing(s->stream, &timing);
  timing.frames_requested = (uint32_t)buffer->requested;
  atomic_store_explicit(&s->last_requested, timing.frames_requested, memory_order_relaxed);
  // Whether the graph skipped cycles (an xrun) is decided from this timing by the callback, in
  // Swift (CueOutput's GraphCycles), for cued and for cued-pwprobe alike.

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

void cued_pw__set_failed(cued_pw_stream *s, int code) {
  atomic_store_explicit(&s->failed, code, memory_order_release);
  if (s->on_failure != NULL) s->on_failure(s->failure_user);
}

static void on_state_changed(void *data, enum pw_stream_state old, enum pw_stream_state state, const char *error) {
  (void)old;
  struct cued_pw_stream *s = data;
  // The thread loop's thread runs this (the first change, CONNECTING, may come on the thread that
  // connects): its id, for the Swift side (cued_pw_stream_loop_thread).
  if (atomic_load_explicit(&s->loop_thread_id, memory_order_relaxed) == 0 && pw_thread_loop_in_thread(s->loop))
    atomic_store_explicit(&s->loop_thread_id, (int)syscall(SYS_gettid), memory_order_release);
  if (state == PW_STREAM_STATE_ERROR) {
    snprintf(s->error, sizeof s->error, "%s", error ? error : "stream error");
    cued_pw__set_failed(s, -EIO);
  }
  pw_thread_loop_signal(s->loop, false);
}

const struct pw_stream_events cued_pw__stream_events = {
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
  cued_pw__set_failed(s, res < 0 ? res : -EPIPE);
  pw_thread_loop_signal(s->loop, false);
}

const struct pw_core_events cued_pw__core_events = {
  PW_VERSION_CORE_EVENTS,
  .error = on_core_error,
};
