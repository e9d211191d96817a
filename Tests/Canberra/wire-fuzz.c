// wire-fuzz.c: libFuzzer on the libcanberra driver's JSON lines (Sources/Plugins/CanberraCued/wire.c),
// built from the driver's own source with -fsanitize=fuzzer,address,undefined by scripts/fuzz.sh
// (FUZZ_TARGET=canberra, `make fuzz-canberra`); corpus Fuzz/canberra-corpus, dictionary
// Fuzz/canberra.dict. Each input is read three ways:
//   1. as a line from cued, exactly as the reader thread hands it to cued_parse (not NUL-ended, in a
//      buffer of its own length, so AddressSanitizer sees any read past it): whatever it holds, the
//      parse returns, and a parsed message's strings end inside their buffers;
//   2. as text (up to its first NUL) written by the driver's JSON writer into an error reply, which the
//      reader must take back: the code it reads is the text, cut to the code's buffer;
//   3. its first 8 bytes as a double given to the writer's 0…1 fraction, which must come out as 0, 1
//      or "0." and one to six digits.
// A property that does not hold aborts, which libFuzzer reports as a crash with the input.
#define _POSIX_C_SOURCE 200809L
#include "../../Sources/Plugins/CanberraCued/wire.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void check(int holds, const char *what) {
  if (holds) return;
  fprintf(stderr, "wire-fuzz: %s\n", what);
  abort();
}

static int ends_inside(const char *buffer, size_t capacity) { return memchr(buffer, 0, capacity) != NULL; }

static void read_line(const uint8_t *data, size_t size) {
  char *line = malloc(size ? size : 1);
  check(line != NULL, "out of memory");
  if (size) memcpy(line, data, size);
  cued_message m;
  if (cued_parse(line, size, &m) == 0) {
    check(ends_inside(m.event, sizeof m.event) && ends_inside(m.reason, sizeof m.reason) && ends_inside(m.code, sizeof m.code),
          "a parsed string does not end inside its buffer");
    check(m.played >= -1 && m.played <= 1, "played is not -1, 0 or 1");
  }
  free(line);
}

static void round_trip(const uint8_t *data, size_t size) {
  char *text = strndup((const char *)data, size);
  check(text != NULL, "out of memory");
  (void)cued_utf8_valid(text);
  (void)cued_role_valid(text);
  cued_line line;
  cued_line_init(&line);
  cued_line_raw(&line, "{\"id\":7,\"ok\":false,\"error\":{\"code\":");
  cued_line_string(&line, text);
  cued_line_raw(&line, ",\"message\":\"m\"}}");
  check(!line.failed, "out of memory");
  cued_message m;
  check(cued_parse(line.data, line.length, &m) == 0, "the reader refuses a line the writer wrote");
  check(m.has_id && m.id == 7 && !m.ok && !m.is_event, "the written reply reads back as something else");
  size_t kept = strlen(text) < sizeof m.code - 1 ? strlen(text) : sizeof m.code - 1;
  check(strlen(m.code) == kept && memcmp(m.code, text, kept) == 0, "the written string reads back changed");
  cued_line_free(&line);
  free(text);
}

static void fraction(const uint8_t *data, size_t size) {
  if (size < sizeof(double)) return;
  double value;
  memcpy(&value, data, sizeof value);
  cued_line line;
  cued_line_init(&line);
  cued_line_fraction(&line, value);
  check(!line.failed, "out of memory");
  int ok = strcmp(line.data, "0") == 0 || strcmp(line.data, "1") == 0;
  if (!ok && line.length >= 3 && line.length <= 8 && memcmp(line.data, "0.", 2) == 0) {
    ok = line.data[line.length - 1] != '0';
    for (size_t i = 2; i < line.length; i++) ok = ok && line.data[i] >= '0' && line.data[i] <= '9';
  }
  check(ok, "a fraction is not written as 0, 1 or 0.DDDDDD");
  cued_line_free(&line);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  read_line(data, size);
  round_trip(data, size);
  fraction(data, size);
  return 0;
}
