#include "CAllocCounter.h"
#include <stddef.h>
#include <errno.h>

// Under AddressSanitizer or ThreadSanitizer (scripts/sanitize.sh) the sanitizer's runtime owns
// malloc & co.: it hands out its own blocks and tracks every one. An interposer forwarding to glibc
// would take that over (ours is the stronger definition) and mix the two heaps, so under a sanitizer
// the counter is not built and the allocation tests are skipped with the reason below. SwiftPM
// compiles C targets with the same -fsanitize flag as the Swift code.
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CUED_SANITIZER "AddressSanitizer"
#elif __has_feature(thread_sanitizer)
#define CUED_SANITIZER "ThreadSanitizer"
#endif
#endif
#if !defined(CUED_SANITIZER) && defined(__SANITIZE_ADDRESS__)
#define CUED_SANITIZER "AddressSanitizer"
#endif
#if !defined(CUED_SANITIZER) && defined(__SANITIZE_THREAD__)
#define CUED_SANITIZER "ThreadSanitizer"
#endif

#ifdef CUED_SANITIZER

void cued_alloc_counter_start(void) {}
long cued_alloc_counter_stop(void) { return -1; }
int cued_alloc_counter_is_active(void) { return 0; }
const char *cued_alloc_counter_unavailable_reason(void) {
  return "built with " CUED_SANITIZER ", whose allocator replaces malloc: the counting interposer is left out";
}

#else

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

const char *cued_alloc_counter_unavailable_reason(void) { return NULL; }

#endif
