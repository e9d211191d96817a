#ifndef CUED_PIPEWIRE_SHIMS_H
#define CUED_PIPEWIRE_SHIMS_H
// A small C face of libpipewire for Swift: one playback stream on its own
// pw_thread_loop, with plain types only.
//
// Why C: libpipewire and SPA are built from macros and inline functions (SPA_POD_BUILDER_INIT,
// spa_format_audio_raw_build, SPA_AUDIO_INFO_RAW_INIT), the property calls are variadic
// (pw_properties_new, pw_properties_setf), the event tables are structs of function pointers with a
// version field (pw_stream_events, pw_core_events), and struct pw_time grows between versions.
// None of that is callable or safely declarable from Swift. No libpipewire type crosses this header.
// The library is loaded at run time (`cued_pw_load`), not linked.
//
// Threads: `new`, `connect`, `disconnect`, `free`, `state` and `time` are for one control thread.
// The process callback runs on PipeWire's real-time data thread (RT_PROCESS): it must not allocate,
// lock, log or block; the shim itself does none of those on that path.

#include <stddef.h>
#include <stdint.h>

/// The client library this face loads (dlopen) when the PipeWire backend is chosen or probed.
#define CUED_PW_LIBRARY "libpipewire-0.3.so.0"

/// Loads libpipewire-0.3 and looks up every function the face calls; the first call does it, later
/// calls (from any thread) return its result. Call it before anything else here: the other calls
/// need the library (those that make something return NULL or 0 without it).
///
/// Stands in for linking the library: dlopen(CUED_PW_LIBRARY, RTLD_NOW | RTLD_LOCAL) and dlsym into
/// a table of function pointers, so a process that never chooses PipeWire never maps it (nor what it
/// pulls in). Returns 0, or -1 with the reason (dlerror's words, naming the file or the missing
/// function) copied into `error` when it is not NULL.
int cued_pw_load(char *error, size_t error_capacity);

/// What PipeWire reported about a stream's position in the graph, as `pw_stream_get_time_n` gives it.
///
/// Stands in for `struct pw_time` (whose size changes between PipeWire versions; the shim asks for
/// the size it was compiled with). `delay` and `ticks` count in `rate_num/rate_denom` seconds
/// (usually 1/48000). For playback, a frame written in the cycle reported at `now_ns` is heard at
/// about `now_ns + (delay + queued + buffered) / rate` (queued converted from bytes to frames).
typedef struct cued_pw_timing {
  /// CLOCK_MONOTONIC nanoseconds when this report was made (the start of the graph cycle).
  int64_t now_ns;
  /// The unit of `ticks` and `delay`: `rate_num / rate_denom` seconds.
  uint32_t rate_num;
  uint32_t rate_denom;
  /// The graph position at `now_ns`, monotonically increasing.
  uint64_t ticks;
  /// Time from the stream to the device (playback) or from the device (capture), in rate units,
  /// without the stream's own queued buffers.
  int64_t delay;
  /// Bytes queued in the stream's buffers that PipeWire has not consumed yet.
  uint64_t queued_bytes;
  /// Frames held in the resampler (0 without resampling).
  uint64_t buffered_frames;
  /// Buffers queued, and buffers available to dequeue.
  uint32_t queued_buffers;
  uint32_t avail_buffers;
  /// The frames PipeWire asked for in this cycle (`pw_buffer.requested`): the graph quantum in the
  /// stream's rate. 0 outside a process callback or when the server did not say.
  uint32_t frames_requested;
} cued_pw_timing;

/// The callback PipeWire's real-time thread calls once per graph cycle.
///
/// Playback: fill `interleaved` with `frames` frames (float, interleaved, the stream's channels).
/// Capture: read `frames` frames from it. Runs on the data thread: no allocation, lock, log or wait.
typedef void (*cued_pw_process_fn)(void *user, float *interleaved, uint32_t frames, const cued_pw_timing *timing);

/// What the thread loop calls when the stream or the server fails (`cued_pw_stream_failed` turned
/// non-zero). Thread loop, lock held: it must not block or call back into this face.
typedef void (*cued_pw_notify_fn)(void *user);

/// The states of a stream, from `enum pw_stream_state`, plus `unconnected` for a stream that
/// has no PipeWire node (before `connect`, after `disconnect`).
typedef enum cued_pw_state {
  CUED_PW_STATE_ERROR = -1,
  CUED_PW_STATE_UNCONNECTED = 0,
  CUED_PW_STATE_CONNECTING = 1,
  CUED_PW_STATE_PAUSED = 2,
  CUED_PW_STATE_STREAMING = 3,
} cued_pw_state;

/// One stream and the thread loop that serves it. Opaque.
typedef struct cued_pw_stream cued_pw_stream;

/// Makes a playback stream (not yet connected): F32 interleaved, `channels` at `rate`, asking the
/// graph for `quantum_frames` per cycle (`node.latency = quantum_frames/rate`).
///
/// Stands in for pw_init + pw_thread_loop_new + pw_context_new + the variadic pw_properties_new of
/// `media.type=Audio`, `media.category=Playback`, `media.role`, `node.name`, `application.name`,
/// `node.latency` and, when `target_or_null` is not NULL, `target.object` (a node name or serial;
/// NULL lets the session manager choose, usually the default sink). The thread loop starts here and
/// stays idle (blocked in poll) until `connect`. Returns NULL when PipeWire cannot be set up.
cued_pw_stream *cued_pw_output_new(const char *app_name, const char *node_name, const char *media_role,
                                   const char *target_or_null, uint32_t rate, uint32_t channels,
                                   uint32_t quantum_frames, cued_pw_process_fn fn, void *user);

/// Names the server `connect` uses: a socket name in the runtime directory or an absolute socket path
/// (PW_KEY_REMOTE_NAME). NULL, the default, lets PIPEWIRE_REMOTE / PIPEWIRE_RUNTIME_DIR /
/// XDG_RUNTIME_DIR decide. Takes effect at the next connection to the server. Copies `remote_or_null`.
/// A PIPEWIRE_REMOTE in the environment wins over it (libpipewire 0.3.65 applies the variable last).
void cued_pw_stream_set_remote(cued_pw_stream *stream, const char *remote_or_null);

/// Connects to the server (again, after it went away) and puts a node for the stream into the graph.
/// A stream already connected and not in error is left alone; one in error is made again.
///
/// Stands in for pw_context_connect + pw_stream_new + pw_stream_connect with the SPA format pod
/// (built with spa_format_audio_raw_build, an inline function) and the flags
/// AUTOCONNECT | MAP_BUFFERS | RT_PROCESS. Returns 0, or a negative errno (-EHOSTDOWN: no server)
/// with the reason in `cued_pw_stream_state`'s text. Returns at once; watch the state for streaming.
int cued_pw_stream_connect(cued_pw_stream *stream);

/// Removes the stream's node from the graph (pw_stream_destroy); the connection to the server stays.
/// After it returns the process callback is not running and will not run. Idempotent.
void cued_pw_stream_disconnect(cued_pw_stream *stream);

/// Disconnects, closes the server connection, stops the thread loop and frees everything. NULL is fine.
void cued_pw_stream_free(cued_pw_stream *stream);

/// The stream's state now; when `error_text` is not NULL, copies the error (or "") into it.
///
/// Stands in for pw_stream_get_state, read under the thread-loop lock, plus the server's core errors
/// (a server that went away shows as CUED_PW_STATE_ERROR, "server disconnected").
cued_pw_state cued_pw_stream_state(cued_pw_stream *stream, char *error_text, size_t error_capacity);

/// Waits up to `timeout_ms` for the stream to reach `state` (or an error); returns the state reached.
/// For the control side and tests; uses pw_thread_loop_timed_wait_full.
cued_pw_state cued_pw_stream_wait(cued_pw_stream *stream, cued_pw_state state, int timeout_ms);

/// The stream's latest timing, as pw_stream_get_time_n reports it. Returns 0, or -1 when there is no
/// connected stream. `frames_requested` is the last value the process callback saw.
int cued_pw_stream_time(cued_pw_stream *stream, cued_pw_timing *timing);

/// How many process cycles ran, and how many found no free buffer (the stream could not deliver).
void cued_pw_stream_counters(cued_pw_stream *stream, uint64_t *cycles, uint64_t *missed);

/// Asks for `frames` as the stream's node.latency (frames at its rate), in its properties and, when
/// connected, on the server (pw_stream_update_properties; the server recalculates the graph's
/// quantum at once). Kept for the next connection. Control side, under the thread-loop lock. When
/// and how much is decided in Swift (CueCore's LatencyAdapter).
void cued_pw_stream_set_latency(cued_pw_stream *stream, uint32_t frames);

/// The node.latency the stream asks for now (frames at its rate). Any thread; an atomic read.
uint32_t cued_pw_stream_latency(cued_pw_stream *stream);

/// 0 while the stream and its server connection are healthy; a negative errno once the stream went
/// into its error state (-EIO) or the server sent a fatal core error or went away (its `res`, or
/// -EPIPE). Cleared by the next `connect`. Any thread, including the real-time one: an atomic read.
/// The reason in words is in `cued_pw_stream_state`'s text.
int cued_pw_stream_failed(cued_pw_stream *stream);

/// Registers `fn` (NULL: none) to be called with `user` on the thread loop each time the stream or
/// the server fails. Control side.
void cued_pw_stream_set_failure_callback(cued_pw_stream *stream, cued_pw_notify_fn fn, void *user);

/// Pauses (0) or resumes (1) a connected stream: a paused stream keeps its node in the graph but is
/// not scheduled, so neither it nor (when nothing else runs) the driver wakes. pw_stream_set_active
/// under the thread-loop lock. Returns 0, or a negative errno (-ENOTCONN without a stream).
int cued_pw_stream_set_active(cued_pw_stream *stream, int active);

/// The kernel thread id (gettid) of PipeWire's data thread, the one that runs the process callback
/// and so the mix, with the scheduling `policy` (SCHED_OTHER 0, SCHED_FIFO 1, SCHED_RR 2) and
/// `priority` it had at its first callback after the last `connect` (sched_getscheduler, the
/// kernel's view: module-rt may already have made it real-time); 0 before that callback. Any
/// thread. The shim decides nothing: the Swift side applies cued's real-time policy by this id.
int cued_pw_stream_callback_thread(cued_pw_stream *stream, int *policy, int *priority);

/// The kernel thread id (gettid) of the thread loop's thread (`cued-pipewire`: it carries the
/// stream's messages to the server, the resume of a paused stream among them), recorded by the
/// thread itself at the stream's first state change; 0 before. Any thread.
int cued_pw_stream_loop_thread(cued_pw_stream *stream);

/// Whether a PipeWire server answers within `timeout_ms`: connects and round-trips one core sync.
/// `remote_or_null` as in `cued_pw_stream_set_remote` (NULL: PIPEWIRE_REMOTE / PIPEWIRE_RUNTIME_DIR /
/// XDG_RUNTIME_DIR decide). For `--device auto`. Returns 1 or 0.
/// Stands in for pw_context_connect + pw_core_sync + the core `done` event on a private pw_loop.
int cued_pw_server_answers(const char *remote_or_null, int timeout_ms);

#endif
