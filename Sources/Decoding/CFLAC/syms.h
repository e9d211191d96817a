// The libFLAC functions this face calls, reached through a table that cued_flac_load fills with
// dlsym (flac.c): cued links no libFLAC, and maps it only at the first FLAC file.
//
// Adding a call: list it in CUED_FLAC_SYMBOLS (the name after `FLAC__stream_decoder_`) and give it
// a field of its type below; the toolchain keeps the two in step (an entry without a field is a
// compile error). The types are written with the face's own declarations (include/CFLAC.h says why).
#ifndef CUED_FLAC_SYMS_H
#define CUED_FLAC_SYMS_H
#include "CFLAC.h"

#define CUED_FLAC_SYMBOLS(X) \
  X(new) \
  X(delete) \
  X(init_stream) \
  X(process_until_end_of_stream) \
  X(finish) \
  X(get_state)

/// One function pointer per symbol, each of its libFLAC type (FLAC__bool is int).
struct cued_flac_symbols {
  cued_flac_decoder *(*new)(void);
  void (*delete)(cued_flac_decoder *decoder);
  cued_flac_init_status (*init_stream)(
    cued_flac_decoder *decoder, cued_flac_read_callback read, cued_flac_seek_callback seek, cued_flac_tell_callback tell,
    cued_flac_length_callback length, cued_flac_eof_callback eof, cued_flac_write_callback write,
    cued_flac_metadata_callback metadata, cued_flac_error_callback error, void *client);
  int (*process_until_end_of_stream)(cued_flac_decoder *decoder);
  int (*finish)(cued_flac_decoder *decoder);
  cued_flac_decoder_state (*get_state)(const cued_flac_decoder *decoder);
};

#endif
