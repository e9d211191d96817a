// The libpipewire-0.3 functions this face calls, reached through a table that cued_pw_load fills
// with dlsym (load.c): cued links no sound-server library, and maps this one only when the PipeWire
// backend is chosen or probed. Included after the PipeWire headers (by internal.h and load.c).
//
// Adding a call: list it in CUED_PW_SYMBOLS and give it a redirect below. The toolchain keeps the
// two lists in step: a call without a redirect is an undefined reference when cued links (no
// -lpipewire-0.3), a redirect without an entry a compile error. Inline helpers and macros of the
// headers (pw_loop_*, pw_core_add_listener, spa_pod_builder_*, spa_hook_remove) call no exported
// function; `nm -u` on the built objects shows no pw_ symbol left undefined.
#ifndef CUED_PW_SYMS_H
#define CUED_PW_SYMS_H

#define CUED_PW_SYMBOLS(X) \
  X(pw_init) \
  X(pw_properties_new) \
  X(pw_properties_copy) \
  X(pw_properties_free) \
  X(pw_properties_set) \
  X(pw_properties_setf) \
  X(pw_thread_loop_new) \
  X(pw_thread_loop_destroy) \
  X(pw_thread_loop_start) \
  X(pw_thread_loop_stop) \
  X(pw_thread_loop_lock) \
  X(pw_thread_loop_unlock) \
  X(pw_thread_loop_signal) \
  X(pw_thread_loop_get_loop) \
  X(pw_thread_loop_get_time) \
  X(pw_thread_loop_timed_wait_full) \
  X(pw_thread_loop_in_thread) \
  X(pw_loop_new) \
  X(pw_loop_destroy) \
  X(pw_context_new) \
  X(pw_context_destroy) \
  X(pw_context_connect) \
  X(pw_core_disconnect) \
  X(pw_stream_new) \
  X(pw_stream_destroy) \
  X(pw_stream_add_listener) \
  X(pw_stream_connect) \
  X(pw_stream_get_state) \
  X(pw_stream_set_active) \
  X(pw_stream_update_properties) \
  X(pw_stream_get_time_n) \
  X(pw_stream_dequeue_buffer) \
  X(pw_stream_queue_buffer)

/// One function pointer per symbol, each of the function's own type.
struct cued_pw_symbols {
#define CUED_PW_FIELD(name) __typeof__(name) *name;
  CUED_PW_SYMBOLS(CUED_PW_FIELD)
#undef CUED_PW_FIELD
};

/// Filled once by cued_pw_load; read-only after.
extern struct cued_pw_symbols cued_pw_syms;

#endif

// The redirects: every call below the point a file includes this goes through the table. load.c
// defines CUED_PW_NO_REDIRECTS to fill the table under the functions' own names.
#ifndef CUED_PW_NO_REDIRECTS
#define pw_init (cued_pw_syms.pw_init)
#define pw_properties_new (cued_pw_syms.pw_properties_new)
#define pw_properties_copy (cued_pw_syms.pw_properties_copy)
#define pw_properties_free (cued_pw_syms.pw_properties_free)
#define pw_properties_set (cued_pw_syms.pw_properties_set)
#define pw_properties_setf (cued_pw_syms.pw_properties_setf)
#define pw_thread_loop_new (cued_pw_syms.pw_thread_loop_new)
#define pw_thread_loop_destroy (cued_pw_syms.pw_thread_loop_destroy)
#define pw_thread_loop_start (cued_pw_syms.pw_thread_loop_start)
#define pw_thread_loop_stop (cued_pw_syms.pw_thread_loop_stop)
#define pw_thread_loop_lock (cued_pw_syms.pw_thread_loop_lock)
#define pw_thread_loop_unlock (cued_pw_syms.pw_thread_loop_unlock)
#define pw_thread_loop_signal (cued_pw_syms.pw_thread_loop_signal)
#define pw_thread_loop_get_loop (cued_pw_syms.pw_thread_loop_get_loop)
#define pw_thread_loop_get_time (cued_pw_syms.pw_thread_loop_get_time)
#define pw_thread_loop_timed_wait_full (cued_pw_syms.pw_thread_loop_timed_wait_full)
#define pw_thread_loop_in_thread (cued_pw_syms.pw_thread_loop_in_thread)
#define pw_loop_new (cued_pw_syms.pw_loop_new)
#define pw_loop_destroy (cued_pw_syms.pw_loop_destroy)
#define pw_context_new (cued_pw_syms.pw_context_new)
#define pw_context_destroy (cued_pw_syms.pw_context_destroy)
#define pw_context_connect (cued_pw_syms.pw_context_connect)
#define pw_core_disconnect (cued_pw_syms.pw_core_disconnect)
#define pw_stream_new (cued_pw_syms.pw_stream_new)
#define pw_stream_destroy (cued_pw_syms.pw_stream_destroy)
#define pw_stream_add_listener (cued_pw_syms.pw_stream_add_listener)
#define pw_stream_connect (cued_pw_syms.pw_stream_connect)
#define pw_stream_get_state (cued_pw_syms.pw_stream_get_state)
#define pw_stream_set_active (cued_pw_syms.pw_stream_set_active)
#define pw_stream_update_properties (cued_pw_syms.pw_stream_update_properties)
#define pw_stream_get_time_n (cued_pw_syms.pw_stream_get_time_n)
#define pw_stream_dequeue_buffer (cued_pw_syms.pw_stream_dequeue_buffer)
#define pw_stream_queue_buffer (cued_pw_syms.pw_stream_queue_buffer)
#endif
