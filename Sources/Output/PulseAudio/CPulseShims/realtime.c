// The C face of libpulse for Swift (see include/CPulseShims.h for why each piece is C).
//
// Real-time rule: on_write runs on the mainloop thread with the mainloop lock held. Our code there
// reads the stream's latency (pa_stream_get_latency: arithmetic on the last timing update), takes a
// block with pa_stream_begin_write, calls the Swift callback and hands the block back with
// pa_stream_write: no allocation, no lock of ours, no log. libpulse's own pool and queue are noted
// in the header. Everything else runs on the control thread under the mainloop lock.
#include "internal.h"

// --- the real-time path --------------------------------------------------------------------------

// On the mainloop thread: once per connect, say which thread mixes (one system call, an atomic
// store), so the control side can make it real-time by its id (cued_pa_output_callback_thread).
static void record_thread_once(cued_pa_output *s) {
  if (atomic_load_explicit(&s->callback_tid, memory_order_relaxed) != 0) return;
  atomic_store_explicit(&s->callback_tid, (int)syscall(SYS_gettid), memory_order_release);
}

void cued_pa__on_write(pa_stream *stream, size_t nbytes, void *data) {
  cued_pa_output *s = data;
  record_thread_once(s);
  const size_t stride = sizeof(float) * s->channels;
  cued_pa_timing timing = {0};
  pa_usec_t usec = 0;
  int negative = 0;
  if (pa_stream_get_latency(stream, &usec, &negative) == 0 && !negative) timing.latency_us = usec;
  timing.bytes_requested = (uint32_t)nbytes;
  size_t left = nbytes - nbytes % stride;
  while (left >= stride) {
    void *buffer = NULL;
    size_t bytes = left;
    // The server's own block, filled in place: no copy (pa_stream_write then takes it as it is).
    if (pa_stream_begin_write(stream, &buffer, &bytes) < 0 || buffer == NULL) break;
    if (bytes > left) bytes = left;
    bytes -= bytes % stride;
    if (bytes == 0) {
      pa_stream_cancel_write(stream);
      break;
    }
    s->fn(s->user, buffer, (uint32_t)(bytes / stride), &timing);
    if (pa_stream_write(stream, buffer, bytes, NULL, 0, PA_SEEK_RELATIVE) < 0) break;
    left -= bytes;
    timing.latency_us += (uint64_t)(bytes / stride) * 1000000u / s->rate;  // the next chunk plays after this one
  }
}

// Fresh timing from the server: Swift replaces the queue's tail the server has not handed to the sink yet.
static void on_timing(pa_stream *stream, int success, void *data) {
  cued_pa_output *s = data;
  if (!success || stream != s->stream || pa_stream_get_state(stream) != PA_STREAM_READY) return;
  const pa_timing_info *info = pa_stream_get_timing_info(stream);
  pa_usec_t latency = 0;
  int negative = 0;
  if (info == NULL || pa_stream_get_latency(stream, &latency, &negative) < 0 || negative) return;
  const size_t stride = sizeof(float) * s->channels;
  void *buffer = NULL;
  size_t bytes = (size_t)-1;  // libpulse's choice: a whole pool block
  if (pa_stream_begin_write(stream, &buffer, &bytes) < 0 || buffer == NULL) return;
  bytes -= bytes % stride;
  cued_pa_timing timing = {.latency_us = latency, .sink_usec = info->sink_usec, .transport_usec = info->transport_usec};
  uint32_t written = bytes == 0 ? 0 : s->rewrite(s->user, buffer, (uint32_t)(bytes / stride), &timing);
  if (written == 0 || written > bytes / stride) {
    pa_stream_cancel_write(stream);
    return;
  }
  bytes = (size_t)written * stride;
  // Placed relative to the read index as the server stands when the write arrives, not to the write
  // index: if the sink took another block while this was on its way (the null sink takes several ms
  // at once), the cue lands that much later, whole, instead of losing its head behind the read
  // index (seen with a write-index offset under stress-ng). The write index ends up past the old one
  // by what the sink took meanwhile: the queue is that much longer, no hole, nothing overwritten twice.
  // A write the server refuses leaves the queued silence as it was: nothing to undo.
  (void)pa_stream_write(stream, buffer, bytes, NULL, (int64_t)s->margin_frames * (int64_t)stride, PA_SEEK_RELATIVE_ON_READ);
}

// The eventfd fired (a start was queued): ask the server where its read index and the sink are now.
// The timing of the last automatic update can be stale by a whole sink render (the read index jumps
// by what the sink takes at once), which would put the rewrite behind the read index and lose the
// cue's first frames on a sink that cannot rewind; a fresh one costs one round trip (~0.1 ms here).
// libpulse allocates the operation and its message; that is libpulse's, as in pa_stream_write.
void cued_pa__on_wake(pa_mainloop_api *api, pa_io_event *event, int fd, pa_io_event_flags_t flags, void *data) {
  (void)api; (void)event; (void)flags;
  cued_pa_output *s = data;
  uint64_t count;
  if (read(fd, &count, sizeof count) < 0) { /* EAGAIN: already drained */ }
  if (s->stream == NULL || pa_stream_get_state(s->stream) != PA_STREAM_READY) return;
  pa_operation *operation = pa_stream_update_timing_info(s->stream, on_timing, s);
  if (operation != NULL) pa_operation_unref(operation);
}

// --- events on the mainloop thread ---------------------------------------------------------------

int cued_pa__errno_of(int pa_error) {
  switch (pa_error) {
  case PA_ERR_CONNECTIONREFUSED: return -ECONNREFUSED;
  case PA_ERR_NOENTITY: return -ENOENT;
  case PA_ERR_TIMEOUT: return -ETIMEDOUT;
  case PA_ERR_CONNECTIONTERMINATED: return -EPIPE;
  case PA_ERR_ACCESS: return -EACCES;
  case PA_ERR_INVALID: return -EINVAL;
  default: return -EIO;
  }
}

void cued_pa__set_failed(cued_pa_output *s, int code) {
  atomic_store_explicit(&s->failed, code, memory_order_release);
  if (s->on_failure != NULL) s->on_failure(s->failure_user);
}

void cued_pa__on_context_state(pa_context *context, void *data) {
  cued_pa_output *s = data;
  pa_context_state_t state = pa_context_get_state(context);
  if (state == PA_CONTEXT_FAILED || state == PA_CONTEXT_TERMINATED) {
    int error = pa_context_errno(context);
    if (s->error[0] == 0) snprintf(s->error, sizeof s->error, "server: %s", pa_strerror(error));
    int code = cued_pa__errno_of(error);
    cued_pa__set_failed(s, code == -EIO ? -EPIPE : code);
  }
  pa_threaded_mainloop_signal(s->loop, 0);
}

void cued_pa__on_stream_state(pa_stream *stream, void *data) {
  cued_pa_output *s = data;
  pa_stream_state_t state = pa_stream_get_state(stream);
  if (state == PA_STREAM_FAILED || (state == PA_STREAM_TERMINATED && !s->disconnecting)) {
    int error = pa_context_errno(s->context);
    if (s->error[0] == 0)
      snprintf(s->error, sizeof s->error, "stream: %s", state == PA_STREAM_FAILED ? pa_strerror(error) : "removed by the server");
    cued_pa__set_failed(s, cued_pa__errno_of(error));
  }
  pa_threaded_mainloop_signal(s->loop, 0);
}

// The queue (tlength) and request size (minreq, 0: the server's) the stream asks for now, as Swift
// decided. Lock held; the server answers asynchronously (the operation is not waited for).
void cued_pa__ask_latency_locked(cued_pa_output *s, uint32_t frames, uint32_t minreq_frames) {
  s->target_frames = frames;
  atomic_store_explicit(&s->latency_frames, frames, memory_order_relaxed);
  s->minreq_frames = minreq_frames;
  if (s->stream == NULL || pa_stream_get_state(s->stream) != PA_STREAM_READY) return;
  const uint32_t stride = (uint32_t)(sizeof(float) * s->channels);
  pa_buffer_attr attr = {
    .maxlength = (uint32_t)-1,
    .tlength = frames * stride,
    .prebuf = (uint32_t)-1,
    .minreq = s->minreq_frames ? s->minreq_frames * stride : (uint32_t)-1,
    .fragsize = (uint32_t)-1,
  };
  pa_operation *operation = pa_stream_set_buffer_attr(s->stream, &attr, NULL, NULL);
  if (operation != NULL) pa_operation_unref(operation);
}

// The server ran out of our audio: the machine did not answer its requests in time. Counted; the
// control side reads the count and decides about the queue (LatencyAdapter).
void cued_pa__on_underflow(pa_stream *stream, void *data) {
  (void)stream;
  cued_pa_output *s = data;
  atomic_fetch_add_explicit(&s->underflows, 1, memory_order_relaxed);
}

// The period of cued_pa_output_set_timing_updates came round: ask for timing again and re-arm.
void cued_pa__on_timing_period(pa_mainloop_api *api, pa_time_event *event, const struct timeval *tv, void *data) {
  (void)api; (void)tv;
  cued_pa_output *s = data;
  if (s->timing_period == 0 || s->context == NULL) return;
  if (s->stream != NULL && pa_stream_get_state(s->stream) == PA_STREAM_READY) {
    pa_operation *operation = pa_stream_update_timing_info(s->stream, NULL, NULL);
    if (operation != NULL) pa_operation_unref(operation);
  }
  pa_context_rttime_restart(s->context, event, pa_rtclock_now() + s->timing_period);
}

void cued_pa__on_timeout(pa_mainloop_api *api, pa_time_event *event, const struct timeval *tv, void *data) {
  (void)api; (void)event; (void)tv;
  cued_pa_output *s = data;
  s->timed_out = 1;
  pa_threaded_mainloop_signal(s->loop, 0);
}
