// cued's JSON lines: writing requests, reading replies and events (wire.h).
#include "wire.h"
#include "cued-protocol.h"
#include <stdlib.h>
#include <string.h>

// MARK: - Writing

void cued_line_init(cued_line *line) { memset(line, 0, sizeof *line); }

void cued_line_free(cued_line *line) {
  free(line->data);
  cued_line_init(line);
}

static void append(cued_line *line, const char *bytes, size_t count) {
  if (line->failed) return;
  if (line->length + count + 1 > line->capacity) {
    size_t capacity = line->capacity ? line->capacity : 256;
    while (line->length + count + 1 > capacity) capacity *= 2;
    char *grown = realloc(line->data, capacity);
    if (!grown) {
      line->failed = 1;
      return;
    }
    line->data = grown;
    line->capacity = capacity;
  }
  memcpy(line->data + line->length, bytes, count);
  line->length += count;
  line->data[line->length] = 0;
}

void cued_line_raw(cued_line *line, const char *text) { append(line, text, strlen(text)); }

void cued_line_string(cued_line *line, const char *text) {
  static const char hex[] = "0123456789abcdef";
  append(line, "\"", 1);
  const char *run = text;
  for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
    if (*p >= 0x20 && *p != '"' && *p != '\\') continue;
    append(line, run, (size_t)((const char *)p - run));
    if (*p == '"' || *p == '\\') {
      char escaped[2] = {'\\', (char)*p};
      append(line, escaped, 2);
    } else {
      char escaped[6] = {'\\', 'u', '0', '0', hex[*p >> 4], hex[*p & 15]};
      append(line, escaped, 6);
    }
    run = (const char *)p + 1;
  }
  append(line, run, strlen(run));
  append(line, "\"", 1);
}

void cued_line_unsigned(cued_line *line, uint64_t value) {
  char digits[24];
  size_t at = sizeof digits;
  do {
    digits[--at] = (char)('0' + value % 10);
    value /= 10;
  } while (value);
  append(line, digits + at, sizeof digits - at);
}

void cued_line_fraction(cued_line *line, double value) {
  if (!(value > 0)) value = 0;  // NaN too
  unsigned long millionths = value >= 1 ? 1000000 : (unsigned long)(value * 1e6 + 0.5);
  if (millionths >= 1000000) {
    cued_line_raw(line, "1");
    return;
  }
  if (millionths == 0) {
    cued_line_raw(line, "0");
    return;
  }
  char text[9] = "0.";
  for (int i = 7; i >= 2; i--) {
    text[i] = (char)('0' + millionths % 10);
    millionths /= 10;
  }
  size_t length = 8;
  while (text[length - 1] == '0') length--;
  append(line, text, length);
}

int cued_role_valid(const char *text) {
  size_t length = 0;
  for (const char *c = text; *c; c++, length++) {
    int ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || strchr(CUED_ROLE_MARKS, *c);
    if (!ok || length >= CUED_ROLE_MAX_BYTES) return 0;
  }
  return length > 0;
}

int cued_utf8_valid(const char *text) {
  const unsigned char *p = (const unsigned char *)text;
  while (*p) {
    unsigned char c = *p;
    size_t count;
    uint32_t point;
    if (c < 0x80) {
      p++;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      count = 1, point = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      count = 2, point = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      count = 3, point = c & 0x07;
    } else {
      return 0;
    }
    for (size_t i = 1; i <= count; i++) {
      if ((p[i] & 0xC0) != 0x80) return 0;
      point = point << 6 | (p[i] & 0x3F);
    }
    static const uint32_t smallest[] = {0, 0x80, 0x800, 0x10000};
    if (point < smallest[count] || point > 0x10FFFF || (point >= 0xD800 && point <= 0xDFFF)) return 0;
    p += count + 1;
  }
  return 1;
}

// MARK: - Reading

typedef struct {
  const char *p, *end;
} scanner;

static void skip_space(scanner *s) {
  while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\r' || *s->p == '\n')) s->p++;
}

static int take(scanner *s, char c) {
  skip_space(s);
  if (s->p < s->end && *s->p == c) {
    s->p++;
    return 1;
  }
  return 0;
}

static int peek(scanner *s) {
  skip_space(s);
  return s->p < s->end ? (unsigned char)*s->p : -1;
}

// A string token into `out` (cut to `capacity`, NUL-ended; NULL: skipped). Escapes are decoded;
// a \u escape of a character beyond ASCII becomes '?' (no value the driver compares has one).
static int read_string(scanner *s, char *out, size_t capacity) {
  if (!take(s, '"')) return -1;
  size_t length = 0;
  while (s->p < s->end) {
    char c = *s->p++;
    if (c == '"') {
      if (out) out[length] = 0;
      return 0;
    }
    if (c == '\\') {
      if (s->p >= s->end) return -1;
      char e = *s->p++;
      switch (e) {
      case 'b': c = '\b'; break;
      case 'f': c = '\f'; break;
      case 'n': c = '\n'; break;
      case 'r': c = '\r'; break;
      case 't': c = '\t'; break;
      case 'u': {
        if (s->end - s->p < 4) return -1;
        unsigned point = 0;
        for (int i = 0; i < 4; i++) {
          char h = *s->p++;
          unsigned digit = h >= '0' && h <= '9' ? (unsigned)(h - '0')
            : h >= 'a' && h <= 'f' ? (unsigned)(h - 'a' + 10)
            : h >= 'A' && h <= 'F' ? (unsigned)(h - 'A' + 10) : 16u;
          if (digit > 15) return -1;
          point = point << 4 | digit;
        }
        c = point < 0x80 ? (char)point : '?';
        break;
      }
      default: c = e; break;  // '"', '\\', '/'
      }
    }
    if (out && length + 1 < capacity) out[length++] = c;
  }
  return -1;
}

static int is_number_char(char c) { return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'; }

// An unsigned integer; -1 for anything else (a fraction, a negative number, one past 2^64).
static int read_unsigned(scanner *s, uint64_t *value) {
  skip_space(s);
  const char *start = s->p;
  while (s->p < s->end && is_number_char(*s->p)) s->p++;
  if (s->p == start) return -1;
  uint64_t v = 0;
  for (const char *d = start; d < s->p; d++) {
    if (*d < '0' || *d > '9' || v > (UINT64_MAX - 9) / 10) return -1;
    v = v * 10 + (uint64_t)(*d - '0');
  }
  *value = v;
  return 0;
}

static int read_literal(scanner *s, const char *word) {
  size_t length = strlen(word);
  skip_space(s);
  if ((size_t)(s->end - s->p) < length || memcmp(s->p, word, length) != 0) return -1;
  s->p += length;
  return 0;
}

// true or false: 1 or 0; -1 for anything else (which is then not consumed whole).
static int read_bool(scanner *s) {
  if (read_literal(s, "true") == 0) return 1;
  if (read_literal(s, "false") == 0) return 0;
  return -1;
}

static int skip_value(scanner *s, int depth) {
  if (depth > 64) return -1;
  switch (peek(s)) {
  case '"': return read_string(s, NULL, 0);
  case '{':
    s->p++;
    if (take(s, '}')) return 0;
    do {
      if (read_string(s, NULL, 0) < 0 || !take(s, ':') || skip_value(s, depth + 1) < 0) return -1;
    } while (take(s, ','));
    return take(s, '}') ? 0 : -1;
  case '[':
    s->p++;
    if (take(s, ']')) return 0;
    do {
      if (skip_value(s, depth + 1) < 0) return -1;
    } while (take(s, ','));
    return take(s, ']') ? 0 : -1;
  case 't': return read_literal(s, "true");
  case 'f': return read_literal(s, "false");
  case 'n': return read_literal(s, "null");
  default: {
    uint64_t ignored;
    const char *start = s->p;
    if (read_unsigned(s, &ignored) < 0 && s->p == start) return -1;
    return 0;
  }
  }
}

// The members of an object, each handed to `member` with the scanner at its value (which it reads
// or skips); -1 when the text is not an object or `member` fails.
typedef int (*member_reader)(scanner *s, const char *key, cued_message *message, int depth);

static int read_object(scanner *s, member_reader member, cued_message *message, int depth) {
  if (depth > 64 || !take(s, '{')) return -1;
  if (take(s, '}')) return 0;
  do {
    char key[32];
    if (read_string(s, key, sizeof key) < 0 || !take(s, ':') || member(s, key, message, depth) < 0) return -1;
  } while (take(s, ','));
  return take(s, '}') ? 0 : -1;
}

static int error_member(scanner *s, const char *key, cued_message *m, int depth) {
  if (strcmp(key, "code") == 0 && peek(s) == '"') return read_string(s, m->code, sizeof m->code);
  return skip_value(s, depth + 1);
}

static int capabilities_member(scanner *s, const char *key, cued_message *m, int depth) {
  if (strcmp(key, "features") != 0 || peek(s) != '[') return skip_value(s, depth + 1);
  s->p++;
  if (take(s, ']')) return 0;
  do {
    char feature[32];
    if (peek(s) != '"') {
      if (skip_value(s, depth + 2) < 0) return -1;
      continue;
    }
    if (read_string(s, feature, sizeof feature) < 0) return -1;
    if (strcmp(feature, CUED_FEATURE_FILE_PLAY) == 0) m->file_play = 1;
    if (strcmp(feature, CUED_FEATURE_PLAY_ROLE) == 0) m->play_role = 1;
  } while (take(s, ','));
  return take(s, ']') ? 0 : -1;
}

static int top_member(scanner *s, const char *key, cued_message *m, int depth) {
  int next = peek(s);
  if (strcmp(key, "event") == 0 && next == '"') {
    m->is_event = 1;
    return read_string(s, m->event, sizeof m->event);
  }
  if (strcmp(key, "id") == 0 && next != 'n' && next != '"') {
    m->has_id = read_unsigned(s, &m->id) == 0;
    return 0;
  }
  if (strcmp(key, "voice") == 0 && next != '"') {
    m->has_voice = read_unsigned(s, &m->voice) == 0;
    return 0;
  }
  if (strcmp(key, "ok") == 0 && (next == 't' || next == 'f')) {
    int value = read_bool(s);
    m->ok = value == 1;
    return value < 0 ? -1 : 0;
  }
  if (strcmp(key, "played") == 0 && (next == 't' || next == 'f')) {
    m->played = read_bool(s);
    return m->played < 0 ? -1 : 0;
  }
  if (strcmp(key, "reason") == 0 && next == '"') return read_string(s, m->reason, sizeof m->reason);
  if (strcmp(key, "error") == 0 && next == '{') return read_object(s, error_member, m, depth + 1);
  if (strcmp(key, "capabilities") == 0 && next == '{') return read_object(s, capabilities_member, m, depth + 1);
  return skip_value(s, depth + 1);
}

int cued_parse(const char *line, size_t length, cued_message *message) {
  memset(message, 0, sizeof *message);
  message->played = -1;
  scanner s = {line, line + length};
  if (read_object(&s, top_member, message, 0) < 0) return -1;
  skip_space(&s);
  return s.p == s.end ? 0 : -1;
}
