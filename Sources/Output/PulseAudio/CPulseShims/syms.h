// The libpulse functions this face calls, reached through a table that cued_pa_load fills with
// dlsym (load.c): cued links no sound-server library, and maps this one only when the PulseAudio
// backend is chosen or probed. Included after the PulseAudio headers (by internal.h and load.c).
//
// Adding a call: list it in CUED_PA_SYMBOLS and give it a redirect below. The toolchain keeps the
// two lists in step: a call without a redirect is an undefined reference when cued links (no
// -lpulse), a redirect without an entry a compile error. The headers' inline helpers
// (PA_CONTEXT_IS_GOOD, PA_STREAM_IS_GOOD) and the mainloop API's function pointers (api->io_new,
// time_free) call no exported function; `nm -u` on the built objects shows no pa_ symbol undefined.
#ifndef CUED_PA_SYMS_H
#define CUED_PA_SYMS_H

#define CUED_PA_SYMBOLS(X) \
  X(pa_threaded_mainloop_new) \
  X(pa_threaded_mainloop_free) \
  X(pa_threaded_mainloop_start) \
  X(pa_threaded_mainloop_stop) \
  X(pa_threaded_mainloop_lock) \
  X(pa_threaded_mainloop_unlock) \
  X(pa_threaded_mainloop_wait) \
  X(pa_threaded_mainloop_signal) \
  X(pa_threaded_mainloop_get_api) \
  X(pa_threaded_mainloop_set_name) \
  X(pa_mainloop_new) \
  X(pa_mainloop_free) \
  X(pa_mainloop_get_api) \
  X(pa_mainloop_prepare) \
  X(pa_mainloop_poll) \
  X(pa_mainloop_dispatch) \
  X(pa_context_new) \
  X(pa_context_new_with_proplist) \
  X(pa_context_connect) \
  X(pa_context_disconnect) \
  X(pa_context_unref) \
  X(pa_context_get_state) \
  X(pa_context_errno) \
  X(pa_context_set_state_callback) \
  X(pa_context_rttime_new) \
  X(pa_context_rttime_restart) \
  X(pa_proplist_new) \
  X(pa_proplist_free) \
  X(pa_proplist_sets) \
  X(pa_channel_map_init_auto) \
  X(pa_stream_new_with_proplist) \
  X(pa_stream_connect_playback) \
  X(pa_stream_disconnect) \
  X(pa_stream_unref) \
  X(pa_stream_get_state) \
  X(pa_stream_set_state_callback) \
  X(pa_stream_set_write_callback) \
  X(pa_stream_set_underflow_callback) \
  X(pa_stream_get_buffer_attr) \
  X(pa_stream_set_buffer_attr) \
  X(pa_stream_cork) \
  X(pa_stream_get_latency) \
  X(pa_stream_get_timing_info) \
  X(pa_stream_update_timing_info) \
  X(pa_stream_begin_write) \
  X(pa_stream_cancel_write) \
  X(pa_stream_write) \
  X(pa_operation_unref) \
  X(pa_rtclock_now) \
  X(pa_strerror)

/// One function pointer per symbol, each of the function's own type.
struct cued_pa_symbols {
#define CUED_PA_FIELD(name) __typeof__(name) *name;
  CUED_PA_SYMBOLS(CUED_PA_FIELD)
#undef CUED_PA_FIELD
};

/// Filled once by cued_pa_load; read-only after.
extern struct cued_pa_symbols cued_pa_syms;

#endif

// The redirects: every call below the point a file includes this goes through the table. load.c
// defines CUED_PA_NO_REDIRECTS to fill the table under the functions' own names.
#ifndef CUED_PA_NO_REDIRECTS
#define pa_threaded_mainloop_new (cued_pa_syms.pa_threaded_mainloop_new)
#define pa_threaded_mainloop_free (cued_pa_syms.pa_threaded_mainloop_free)
#define pa_threaded_mainloop_start (cued_pa_syms.pa_threaded_mainloop_start)
#define pa_threaded_mainloop_stop (cued_pa_syms.pa_threaded_mainloop_stop)
#define pa_threaded_mainloop_lock (cued_pa_syms.pa_threaded_mainloop_lock)
#define pa_threaded_mainloop_unlock (cued_pa_syms.pa_threaded_mainloop_unlock)
#define pa_threaded_mainloop_wait (cued_pa_syms.pa_threaded_mainloop_wait)
#define pa_threaded_mainloop_signal (cued_pa_syms.pa_threaded_mainloop_signal)
#define pa_threaded_mainloop_get_api (cued_pa_syms.pa_threaded_mainloop_get_api)
#define pa_threaded_mainloop_set_name (cued_pa_syms.pa_threaded_mainloop_set_name)
#define pa_mainloop_new (cued_pa_syms.pa_mainloop_new)
#define pa_mainloop_free (cued_pa_syms.pa_mainloop_free)
#define pa_mainloop_get_api (cued_pa_syms.pa_mainloop_get_api)
#define pa_mainloop_prepare (cued_pa_syms.pa_mainloop_prepare)
#define pa_mainloop_poll (cued_pa_syms.pa_mainloop_poll)
#define pa_mainloop_dispatch (cued_pa_syms.pa_mainloop_dispatch)
#define pa_context_new (cued_pa_syms.pa_context_new)
#define pa_context_new_with_proplist (cued_pa_syms.pa_context_new_with_proplist)
#define pa_context_connect (cued_pa_syms.pa_context_connect)
#define pa_context_disconnect (cued_pa_syms.pa_context_disconnect)
#define pa_context_unref (cued_pa_syms.pa_context_unref)
#define pa_context_get_state (cued_pa_syms.pa_context_get_state)
#define pa_context_errno (cued_pa_syms.pa_context_errno)
#define pa_context_set_state_callback (cued_pa_syms.pa_context_set_state_callback)
#define pa_context_rttime_new (cued_pa_syms.pa_context_rttime_new)
#define pa_context_rttime_restart (cued_pa_syms.pa_context_rttime_restart)
#define pa_proplist_new (cued_pa_syms.pa_proplist_new)
#define pa_proplist_free (cued_pa_syms.pa_proplist_free)
#define pa_proplist_sets (cued_pa_syms.pa_proplist_sets)
#define pa_channel_map_init_auto (cued_pa_syms.pa_channel_map_init_auto)
#define pa_stream_new_with_proplist (cued_pa_syms.pa_stream_new_with_proplist)
#define pa_stream_connect_playback (cued_pa_syms.pa_stream_connect_playback)
#define pa_stream_disconnect (cued_pa_syms.pa_stream_disconnect)
#define pa_stream_unref (cued_pa_syms.pa_stream_unref)
#define pa_stream_get_state (cued_pa_syms.pa_stream_get_state)
#define pa_stream_set_state_callback (cued_pa_syms.pa_stream_set_state_callback)
#define pa_stream_set_write_callback (cued_pa_syms.pa_stream_set_write_callback)
#define pa_stream_set_underflow_callback (cued_pa_syms.pa_stream_set_underflow_callback)
#define pa_stream_get_buffer_attr (cued_pa_syms.pa_stream_get_buffer_attr)
#define pa_stream_set_buffer_attr (cued_pa_syms.pa_stream_set_buffer_attr)
#define pa_stream_cork (cued_pa_syms.pa_stream_cork)
#define pa_stream_get_latency (cued_pa_syms.pa_stream_get_latency)
#define pa_stream_get_timing_info (cued_pa_syms.pa_stream_get_timing_info)
#define pa_stream_update_timing_info (cued_pa_syms.pa_stream_update_timing_info)
#define pa_stream_begin_write (cued_pa_syms.pa_stream_begin_write)
#define pa_stream_cancel_write (cued_pa_syms.pa_stream_cancel_write)
#define pa_stream_write (cued_pa_syms.pa_stream_write)
#define pa_operation_unref (cued_pa_syms.pa_operation_unref)
#define pa_rtclock_now (cued_pa_syms.pa_rtclock_now)
#define pa_strerror (cued_pa_syms.pa_strerror)
#endif
