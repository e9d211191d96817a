#include "CAllocCounter.h"
#include <stddef.h>
#include <errno.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *ptr, size_t size);
extern void __libc_free(void *ptr);
extern void *__libc_memalign(size_t alignment, size_t size);

static __thread int counting;
static __thread long count;

static inline void note(void) { if (counting) count++; }

void *malloc(size_t size) { note(); return __libc_malloc(size); }
void *calloc(size_t n, size_t size) { note(); return __libc_calloc(n, size); }
void *realloc(void *ptr, size_t size) { note(); return __libc_realloc(ptr, size); }
void free(void *ptr) { if (ptr) note(); __libc_free(ptr); }
void *memalign(size_t alignment, size_t size) { note(); return __libc_memalign(alignment, size); }
void *aligned_alloc(size_t alignment, size_t size) { note(); return __libc_memalign(alignment, size); }
int posix_memalign(void **out, size_t alignment, size_t size) {
  note();
  void *p = __libc_memalign(alignment, size);
  if (!p) return ENOMEM;
  *out = p;
  return 0;
}

void cued_alloc_counter_start(void) { count = 0; counting = 1; }
long cued_alloc_counter_stop(void) { counting = 0; return count; }

int cued_alloc_counter_is_active(void) {
  // Through volatile pointers, so the compiler cannot fold the pair away as a builtin.
  void *(*volatile allocate)(size_t) = malloc;
  void (*volatile release)(void *) = free;
  cued_alloc_counter_start();
  void *p = allocate(16);
  release(p);
  long seen = cued_alloc_counter_stop();
  return seen == 2;
}
