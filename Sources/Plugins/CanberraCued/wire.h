#ifndef CUED_CANBERRA_WIRE_H
#define CUED_CANBERRA_WIRE_H
// cued's JSON lines (docs/PROTOCOL.md), as far as the driver speaks them: it writes hello, play and
// stop requests, and reads replies and the `finished` event. Locale-free (an application may have
// set LC_NUMERIC to a comma), no allocation while reading.
#include <stddef.h>
#include <stdint.h>

// A request line being written; `failed` once an allocation failed (the line is then unusable).
typedef struct {
  char *data;
  size_t length, capacity;
  int failed;
} cued_line;

void cued_line_init(cued_line *line);
void cued_line_free(cued_line *line);
void cued_line_raw(cued_line *line, const char *text);
// `text` as a JSON string: quoted, with '"', '\\' and control characters escaped (UTF-8 passes as is).
void cued_line_string(cued_line *line, const char *text);
void cued_line_unsigned(cued_line *line, uint64_t value);
// A number from 0 to 1, written with at most six decimals ("0.5", "1", "0.000126").
void cued_line_fraction(cued_line *line, double value);

// Whether `text` is valid UTF-8 (JSON strings must be; a file name need not be).
int cued_utf8_valid(const char *text);
// Whether `text` is a role cued's play takes: 1 to 64 bytes of ASCII letters, digits, '-', '_', '.'
// (CUED_ROLE_MAX_BYTES and CUED_ROLE_MARKS of the generated cued-protocol.h).
int cued_role_valid(const char *text);

// What the driver reads of one line from cued. Strings are cut to their buffers, which hold every
// value cued sends in them; a member the line lacks is left as cued_parse set it (0, empty, -1).
typedef struct {
  int is_event;       // the line has "event": an event, not a reply
  char event[24];     // its kind
  int has_id;         // a reply's "id" is an integer (not null)
  uint64_t id;
  int ok;             // a reply's "ok"
  int has_voice;
  uint64_t voice;     // "voice": a play reply's, or a finished event's
  int played;         // a play reply's "played": 1, 0, or -1 when absent
  char reason[24];    // a silent play's or a finished event's "reason"
  char code[32];      // an error reply's "error"."code"
  int file_play;      // a hello reply's capabilities.features holds "file-play" (play takes "file")
  int play_role;      // … and "play-role" (play takes "role")
} cued_message;

// 0, or -1 when `line` (without its '\n') is not one JSON object.
int cued_parse(const char *line, size_t length, cued_message *message);

#endif
