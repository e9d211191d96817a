#include "CAudioShims.h"
#include <alsa/asoundlib.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static __thread char last_error[256];

static void cued_alsa_error_handler(const char *file, int line, const char *function, int err, const char *fmt, ...) {
  (void)file; (void)line; (void)err;
  va_list ap;
  va_start(ap, fmt);
  int n = snprintf(last_error, sizeof last_error, "%s: ", function ? function : "alsa");
  if (n < 0 || n >= (int)sizeof last_error) n = 0;
  vsnprintf(last_error + n, sizeof last_error - (size_t)n, fmt, ap);
  va_end(ap);
}

void cued_alsa_silence_errors(void) {
  snd_lib_error_set_handler(cued_alsa_error_handler);
}

int cued_alsa_last_error(char *buffer, int capacity) {
  if (capacity <= 0) return 0;
  size_t len = strnlen(last_error, sizeof last_error);
  if ((int)len >= capacity) len = (size_t)capacity - 1;
  memcpy(buffer, last_error, len);
  buffer[len] = 0;
  return (int)len;
}
