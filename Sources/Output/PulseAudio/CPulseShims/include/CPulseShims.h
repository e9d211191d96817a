#ifndef CUED_PULSE_SHIMS_H
#define CUED_PULSE_SHIMS_H
// A small C face of libpulse for Swift: one playback stream on its own pa_threaded_mainloop, with
// plain types only.
//
// Why C: libpulse's callbacks are C function pointers called with the mainloop lock held, the
// "wait until ready" dance needs pa_threaded_mainloop_wait/signal around state callbacks, timeouts
// are mainloop time events, `pa_buffer_attr` uses (uint32_t)-1 for "server default", and the
// proplist setters are printf-style. Keeping that here leaves the Swift side one opaque pointer and
// a fill callback. No libpulse type crosses this header. The library is loaded at run time
// (`cued_pa_load`), not linked.
//
// Threads: `new`, `connect`, `disconnect`, `free`, `state` and `attr` are for one control thread.
// The fill callback runs on the mainloop thread ("cued-pulse"), with the mainloop lock held: it must
// not allocate, lock, log or block. The shim's own code on that path does none of those;
// libpulse itself may take a block from its memory pool in pa_stream_begin_write and posts the
// block to the server in pa_stream_write (pool memory, and a malloc'd queue item when the pool is
// exhausted): that is libpulse's, as libasound's mutex is on the ALSA path.

#include <stddef.h>
#include <stdint.h>

/// The client library this face loads (dlopen) when the PulseAudio backend is chosen or probed.
#define CUED_PA_LIBRARY "libpulse.so.0"

/// Loads libpulse and looks up every function the face calls; the first call does it, later calls
/// (from any thread) return its result. Call it before anything else here: the other calls need the
/// library (`cued_pa_output_new` returns NULL and `cued_pa_server_answers` 0 without it).
///
/// Stands in for linking the library: dlopen(CUED_PA_LIBRARY, RTLD_NOW | RTLD_LOCAL) and dlsym into
/// a table of function pointers, so a process that never chooses PulseAudio never maps it (nor what
/// it pulls in: libpulsecommon, libX11, libxcb, libdbus…). Returns 0, or -1 with the reason
/// (dlerror's words, naming the file or the missing function) copied into `error` when it is not NULL.
int cued_pa_load(char *error, size_t error_capacity);

/// What libpulse said about the stream when it asked for audio.
typedef struct cued_pa_timing {
  /// Microseconds from a frame written now to its playback by the sink, as pa_stream_get_latency
  /// reports it (the stream's queue, write index minus read index, plus the sink's latency),
  /// interpolated (PA_STREAM_INTERPOLATE_TIMING); 0 before the first timing update.
  uint64_t latency_us;
  /// Bytes the server asked for in this write callback (all the chunks of one request together).
  uint32_t bytes_requested;
  /// For a rewrite, from pa_stream_get_timing_info: the sink's latency and the transport's, in
  /// microseconds (0 in a write callback).
  uint64_t sink_usec;
  uint64_t transport_usec;
} cued_pa_timing;

/// The callback the mainloop thread calls to fill part of a server request: write `frames` frames of
/// interleaved float (the stream's channels) at `interleaved`. Mainloop thread, lock held; no
/// allocation, lock, log or wait.
typedef void (*cued_pa_fill_fn)(void *user, float *interleaved, uint32_t frames, const cued_pa_timing *timing);

/// The callback the mainloop thread calls after `cued_pa_output_poke`, with fresh timing, to replace
/// what the stream has queued but the server has not yet handed to the sink: it decides how much
/// that is (from `timing`: `latency_us` is what the stream holds unheard from its write position,
/// `sink_usec` and `transport_usec` what of it the sink already took and what a write needs to get
/// there), writes that many frames (at most `max_frames`, the block lent) at `interleaved` and
/// returns how many (0: leave the queue alone). Mainloop thread, lock held; no allocation, lock,
/// log or wait.
typedef uint32_t (*cued_pa_rewrite_fn)(void *user, float *interleaved, uint32_t max_frames, const cued_pa_timing *timing);

/// What the mainloop thread calls when the stream or the server fails (`cued_pa_output_failed` turned
/// non-zero). Mainloop thread, lock held: it must not block or call back into this face.
typedef void (*cued_pa_notify_fn)(void *user);

/// The states of the stream, from `pa_stream_state_t`, plus `unconnected` (no stream on the server).
typedef enum cued_pa_state {
  CUED_PA_STATE_ERROR = -1,
  CUED_PA_STATE_UNCONNECTED = 0,
  CUED_PA_STATE_CONNECTING = 1,
  CUED_PA_STATE_READY = 2,
} cued_pa_state;

/// One playback stream, its context and the threaded mainloop that serves them. Opaque.
typedef struct cued_pa_output cued_pa_output;

/// Makes a playback stream (not yet connected): float32le interleaved, `channels` at `rate`, asking
/// the server to keep `target_frames` queued (tlength) and to ask for at least `minreq_frames` at a
/// time (minreq).
///
/// Stands in for pa_threaded_mainloop_new + pa_threaded_mainloop_start and the proplist of the
/// context (`application.name`) and stream (`media.role`, `media.name`), set with pa_proplist_sets.
/// `sink_or_null` names a sink (NULL: the server's default); `server_or_null` a server address
/// (NULL: PULSE_SERVER, then the usual places). The thread runs here and stays blocked in poll
/// until `connect`. Returns NULL when the mainloop cannot be made.
cued_pa_output *cued_pa_output_new(const char *app_name, const char *media_role, const char *sink_or_null,
                                   const char *server_or_null, uint32_t rate, uint32_t channels,
                                   uint32_t target_frames, uint32_t minreq_frames, cued_pa_fill_fn fn, void *user);

/// Turns on rewriting queued audio: after `cued_pa_output_poke`, the mainloop thread asks the server
/// for fresh timing (pa_stream_update_timing_info), then takes a block (pa_stream_begin_write, the
/// size libpulse chooses), gives `fn` the timing (pa_stream_get_latency, and the sink's and the
/// transport's latency from pa_stream_get_timing_info) to fill what it decides, and writes what it
/// filled `margin_frames` past the read index as the server stands when the write arrives
/// (pa_stream_write, PA_SEEK_RELATIVE_ON_READ). The wake-up is an eventfd watched by a mainloop io
/// event (pa_mainloop_api io_new), made here. Call once, before the first `connect`. Returns 0 or
/// a negative errno.
int cued_pa_output_set_rewrite(cued_pa_output *output, cued_pa_rewrite_fn fn, uint32_t margin_frames);

/// The kernel thread id (gettid) of the mainloop thread, which runs the write callback and so the
/// mix, as its first write callback after the last `connect` recorded it (one system call and an
/// atomic store, once per connect); 0 before that callback. Any thread. libpulse's thread is an
/// ordinary one; the Swift side makes it real-time by this id (CueOutput's RealtimePolicy).
int cued_pa_output_callback_thread(cued_pa_output *output);

/// Wakes the mainloop thread to run the rewrite callback (one eventfd write: no lock, no allocation).
/// Any thread. Does nothing before `cued_pa_output_set_rewrite`.
void cued_pa_output_poke(cued_pa_output *output);

/// Connects to the server (again, after it went away) and creates the stream's sink input; waits up
/// to `timeout_ms` for the stream to be ready. A stream already ready is left alone.
///
/// Stands in for pa_context_new_with_proplist + pa_context_connect (PA_CONTEXT_NOAUTOSPAWN: cued
/// never starts a server) + pa_stream_new_with_proplist + pa_stream_connect_playback with
/// PA_STREAM_ADJUST_LATENCY | PA_STREAM_INTERPOLATE_TIMING (timing updates: `set_timing_updates`) and the
/// buffer attributes, each waited for with pa_threaded_mainloop_wait and a timer. Waiting (a few ms
/// on a live server) makes a missing server or sink an error of the open, with the server's words,
/// as an ALSA open is, instead of a stall noticed seconds later. Returns 0, or a negative errno
/// (-ECONNREFUSED: no server, -ENOENT: no such sink, -ETIMEDOUT) with the reason in
/// `cued_pa_output_state`'s text.
int cued_pa_output_connect(cued_pa_output *output, int timeout_ms);

/// Removes the stream from the server (pa_stream_disconnect, waited for until the server confirms
/// or `timeout_ms` pass); the connection to the server stays. After it returns the fill callback is
/// not running and will not run. Idempotent.
void cued_pa_output_disconnect(cued_pa_output *output, int timeout_ms);

/// Disconnects (waiting as `disconnect` does), closes the server connection, stops the mainloop
/// thread and frees everything. NULL is fine.
void cued_pa_output_free(cued_pa_output *output, int timeout_ms);

/// The stream's state now; when `error_text` is not NULL, copies the error (or "") into it.
/// Stands in for pa_stream_get_state and pa_context_get_state, read under the mainloop lock.
cued_pa_state cued_pa_output_state(cued_pa_output *output, char *error_text, size_t error_capacity);

/// The buffer attributes the server granted (pa_stream_get_buffer_attr), in frames. Returns 0, or
/// -1 when no stream is ready.
int cued_pa_output_attr(cued_pa_output *output, uint32_t *target_frames, uint32_t *minreq_frames);

/// Underflows the server reported (pa_stream_set_underflow_callback). Any thread; an atomic read.
uint64_t cued_pa_output_underflows(cued_pa_output *output);

/// Asks for a queue (tlength) of `target_frames` and requests of at least `minreq_frames` (0: the
/// server's default), on the server at once when a stream is ready (pa_stream_set_buffer_attr, not
/// waited for) and for the next connection. Control side, under the mainloop lock. When and how
/// much is decided in Swift (CueCore's LatencyAdapter, PulseSink).
void cued_pa_output_set_latency(cued_pa_output *output, uint32_t target_frames, uint32_t minreq_frames);

/// The tlength the stream asks for now (frames). Any thread; an atomic read.
uint32_t cued_pa_output_latency(cued_pa_output *output);

/// 0 while the stream and its server connection are healthy; a negative errno once the context
/// failed (the server went away: -EPIPE) or the stream failed or was removed by the server (-EIO).
/// Cleared by the next `connect`. Any thread: an atomic read.
int cued_pa_output_failed(cued_pa_output *output);

/// Registers `fn` (NULL: none) to be called with `user` on the mainloop thread each time the stream
/// or the server fails. Control side.
void cued_pa_output_set_failure_callback(cued_pa_output *output, cued_pa_notify_fn fn, void *user);

/// Corks (1) or uncorks (0) a ready stream: a corked stream keeps its sink input but the server
/// neither plays it nor asks it for audio (pa_stream_cork, not waited for). Returns 0, or a negative
/// errno (-ENOTCONN without a ready stream).
int cued_pa_output_cork(cued_pa_output *output, int cork);

/// Asks the server for the stream's timing (pa_stream_update_timing_info) now and then every
/// `period_us` microseconds, from a timer on the mainloop (pa_context_rttime_new/_restart); 0 stops
/// the timer. What PA_STREAM_AUTO_TIMING_UPDATE does, but stoppable: libpulse's own timer runs for
/// a corked stream too. Control side, under the mainloop lock; kept across a reconnect of the stream.
void cued_pa_output_set_timing_updates(cued_pa_output *output, uint64_t period_us);

/// Whether a PulseAudio server answers within `timeout_ms`: connects a context on a private
/// pa_mainloop (PA_CONTEXT_NOAUTOSPAWN) and waits for it to be ready. `server_or_null` as in
/// `cued_pa_output_new`. For `--device auto`. Returns 1 or 0.
int cued_pa_server_answers(const char *server_or_null, int timeout_ms);

#endif
