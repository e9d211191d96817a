// The application's and the play's properties, as the driver reads them (driver.h).
#define _GNU_SOURCE
#include "driver.h"

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

// The value of `key` in the play's properties, else the context's, copied (NULL: neither has it, or
// no memory). Each list is read under its own mutex, one at a time.
char *property(ca_proplist *play, ca_proplist *context, const char *key) {
  ca_proplist *lists[2] = {play, context};
  for (int i = 0; i < 2; i++) {
    if (!lists[i]) continue;
    ca_mutex *mutex = ((struct ca_proplist_head *)lists[i])->mutex;
    ca_mutex_lock(mutex);
    const char *value = ca_proplist_gets_unlocked(lists[i], key);
    char *copy = value ? strdup(value) : NULL;
    ca_mutex_unlock(mutex);
    if (value) return copy;
  }
  return NULL;
}

// canberra.volume, in dB, as a factor for cued's 0…1: 0 dB and louder are 1. The application wrote
// the number in its own locale or in C's; both are read. -1: not a number.
double volume_from_decibels(const char *text) {
  char *end = NULL;
  errno = 0;
  double decibels = strtod(text, &end);
  if (errno || end == text || *end) {
    locale_t c = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    if (!c) return -1;
    errno = 0;
    decibels = strtod_l(text, &end, c);
    freelocale(c);
    if (errno || end == text || *end) return -1;
  }
  if (isnan(decibels)) return -1;
  if (decibels >= 0) return 1;
  return pow(10, decibels / 20);
}

// The name cued knows the application by.
char *client_name(ca_proplist *props) {
  char *name = property(NULL, props, "application.name");
  if (!name || !*name) {
    free(name);
    name = property(NULL, props, "application.id");
  }
  if (!name || !*name) {
    free(name);
    name = strdup(program_invocation_short_name);
  }
  if (name && !cued_utf8_valid(name)) {
    for (unsigned char *p = (unsigned char *)name; *p; p++)
      if (*p >= 0x80) *p = '?';
  }
  return name;
}
