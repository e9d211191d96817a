#ifndef CUED_LIBRARY_LOADING_H
#define CUED_LIBRARY_LOADING_H
// Loads a library when it is first needed (a sound server's when its backend is chosen,
// libsystemd's sd-bus when RTKit is first asked, libsndfile and libFLAC at the first file of theirs,
// GLib's GSettings when the desktop's sound settings are followed), as SDL and miniaudio load
// theirs: dlopen by soname, then dlsym of each function the C face calls, into that face's table
// of function pointers. For the faces (CPipeWireShims, CPulseShims, CSDBus, CSndfile, CFLAC,
// CGSettings), which each keep a `cued_library` per library and call `cued_library_load` from
// their own loader; Swift never calls it.

#include <pthread.h>
#include <stddef.h>

/// One function to look up: its exported name, and the table slot that receives its address.
typedef struct cued_library_symbol {
  const char *name;
  /// The slot, written as POSIX's dlsym example writes a function pointer (`*(void **)&fn = ...`).
  void **slot;
} cued_library_symbol;

/// A library and the functions wanted from it, and what loading it gave (kept: it is done once).
typedef struct cued_library {
  const char *soname;
  const cued_library_symbol *symbols;
  size_t count;
  pthread_mutex_t lock;
  int tried, result;
  int loaded;  // 1 once every slot is filled; read with cued_library_ready
  char error[512];
} cued_library;

/// A `cued_library` for `soname` and the array `symbols`, not yet loaded (a static initializer).
#define CUED_LIBRARY_INIT(soname, symbols) \
  {(soname), (symbols), sizeof(symbols) / sizeof((symbols)[0]), PTHREAD_MUTEX_INITIALIZER, 0, -1, 0, ""}

/// Loads `library` the first time: dlopen(soname, RTLD_NOW | RTLD_LOCAL), then dlsym of every
/// symbol into its slot. Later calls, from any thread, return the first one's result.
///
/// Returns 0 with every slot filled, or -1 with the reason copied into `error` (when not NULL):
/// dlerror's words, which name the file, or "SONAME has no function NAME"; then every slot is NULL
/// and the library closed again. A loaded library stays loaded (never dlclose'd: its threads and
/// atexit handlers may still run its code). Control side only: it takes a mutex.
int cued_library_load(cued_library *library, char *error, size_t error_capacity);

/// 1 once `cued_library_load` has filled every slot of `library`, else 0: what a face checks before
/// calling through its table, so that a call before a successful load fails instead of jumping to
/// NULL. Any thread; lock-free (an acquire load, paired with the load's release store).
int cued_library_ready(const cued_library *library);

#endif
