// See include/CLibraryLoading.h.
#include "CLibraryLoading.h"
#include <dlfcn.h>
#include <stdio.h>

static int load_locked(cued_library *library) {
  void *handle = dlopen(library->soname, RTLD_NOW | RTLD_LOCAL);
  if (handle == NULL) {
    const char *reason = dlerror();
    snprintf(library->error, sizeof library->error, "%s", reason ? reason : library->soname);
    return -1;
  }
  for (size_t i = 0; i < library->count; i++) {
    const cued_library_symbol *symbol = &library->symbols[i];
    *symbol->slot = dlsym(handle, symbol->name);
    if (*symbol->slot == NULL) {
      snprintf(library->error, sizeof library->error, "%s has no function %s (older than the version cued was built for?)",
               library->soname, symbol->name);
      for (size_t j = 0; j < i; j++) *library->symbols[j].slot = NULL;  // a half-filled table must not look loaded
      dlclose(handle);
      return -1;
    }
  }
  return 0;
}

int cued_library_load(cued_library *library, char *error, size_t error_capacity) {
  pthread_mutex_lock(&library->lock);
  if (!library->tried) {
    library->result = load_locked(library);
    library->tried = 1;
    if (library->result == 0) __atomic_store_n(&library->loaded, 1, __ATOMIC_RELEASE);
  }
  int result = library->result;
  if (error != NULL && error_capacity > 0) snprintf(error, error_capacity, "%s", result == 0 ? "" : library->error);
  pthread_mutex_unlock(&library->lock);
  return result;
}

int cued_library_ready(const cued_library *library) { return __atomic_load_n(&library->loaded, __ATOMIC_ACQUIRE); }
