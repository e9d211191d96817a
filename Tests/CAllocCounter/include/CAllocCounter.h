#ifndef CUED_ALLOC_COUNTER_H
#define CUED_ALLOC_COUNTER_H
// Counts heap operations made by the calling thread, for tests that prove a code path allocates
// nothing. The test binary defines malloc & co. itself (symbol interposition), forwarding to glibc's
// __libc_* entry points, so every allocation in the process passes through here. Counting is
// per thread, so tests running in parallel on other threads do not disturb a measurement.

/// Starts counting on this thread from zero.
void cued_alloc_counter_start(void);
/// Stops counting on this thread and returns the number of malloc/calloc/realloc/free/memalign calls seen.
long cued_alloc_counter_stop(void);
/// True when the interposer is linked in (a counting call of our own malloc was seen), so a 0 result means something.
int cued_alloc_counter_is_active(void);
/// Why the counter is not built into this binary (it is left out under AddressSanitizer and
/// ThreadSanitizer, whose runtimes own malloc), or NULL when it is.
const char *cued_alloc_counter_unavailable_reason(void);

#endif
