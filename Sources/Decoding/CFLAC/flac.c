// The C face of libFLAC's stream decoder (see include/CFLAC.h for why it is loaded, not linked, and
// declared here rather than included).
#include "CFLAC.h"
#include "syms.h"
#include "CLibraryLoading.h"

static struct cued_flac_symbols flac;

static const cued_library_symbol symbols[] = {
#define CUED_FLAC_ENTRY(name) {"FLAC__stream_decoder_" #name, (void **)&flac.name},
  CUED_FLAC_SYMBOLS(CUED_FLAC_ENTRY)
#undef CUED_FLAC_ENTRY
};
static cued_library library = CUED_LIBRARY_INIT("libFLAC.so.12", symbols);

int cued_flac_load(char *error, size_t capacity) { return cued_library_load(&library, error, capacity); }

static int ready(void) { return cued_library_ready(&library); }

cued_flac_decoder *cued_flac_decoder_new(void) { return ready() ? flac.new() : NULL; }

void cued_flac_decoder_delete(cued_flac_decoder *decoder) {
  if (ready() && decoder != NULL) flac.delete(decoder);
}

cued_flac_init_status cued_flac_decoder_init_stream(
  cued_flac_decoder *decoder, cued_flac_read_callback read, cued_flac_seek_callback seek, cued_flac_tell_callback tell,
  cued_flac_length_callback length, cued_flac_eof_callback eof, cued_flac_write_callback write,
  cued_flac_metadata_callback metadata, cued_flac_error_callback error, void *client) {
  if (!ready()) return CUED_FLAC_INIT_NOT_LOADED;
  return flac.init_stream(decoder, read, seek, tell, length, eof, write, metadata, error, client);
}

int cued_flac_decoder_process_until_end_of_stream(cued_flac_decoder *decoder) {
  return ready() ? flac.process_until_end_of_stream(decoder) : 0;
}

int cued_flac_decoder_finish(cued_flac_decoder *decoder) { return ready() ? flac.finish(decoder) : 0; }

cued_flac_decoder_state cued_flac_decoder_get_state(const cued_flac_decoder *decoder) {
  return ready() ? flac.get_state(decoder) : CUED_FLAC_STATE_UNINITIALIZED;
}

// Where libFLAC's own headers are installed (Debian: libflac-dev), the declarations of CFLAC.h are
// held to them at compile time: every enumeration value, and the offset of every field Swift reads.
// Building needs no header; a machine with one proves the face still matches it.
#if __has_include(<FLAC/stream_decoder.h>)
#include <FLAC/stream_decoder.h>
#include <stddef.h>

#define CUED_SAME_VALUE(ours, theirs) _Static_assert((int)(ours) == (int)(theirs), #ours " is not " #theirs)
CUED_SAME_VALUE(CUED_FLAC_STATE_SEARCH_FOR_METADATA, FLAC__STREAM_DECODER_SEARCH_FOR_METADATA);
CUED_SAME_VALUE(CUED_FLAC_STATE_READ_METADATA, FLAC__STREAM_DECODER_READ_METADATA);
CUED_SAME_VALUE(CUED_FLAC_STATE_SEARCH_FOR_FRAME_SYNC, FLAC__STREAM_DECODER_SEARCH_FOR_FRAME_SYNC);
CUED_SAME_VALUE(CUED_FLAC_STATE_READ_FRAME, FLAC__STREAM_DECODER_READ_FRAME);
CUED_SAME_VALUE(CUED_FLAC_STATE_END_OF_STREAM, FLAC__STREAM_DECODER_END_OF_STREAM);
CUED_SAME_VALUE(CUED_FLAC_STATE_OGG_ERROR, FLAC__STREAM_DECODER_OGG_ERROR);
CUED_SAME_VALUE(CUED_FLAC_STATE_SEEK_ERROR, FLAC__STREAM_DECODER_SEEK_ERROR);
CUED_SAME_VALUE(CUED_FLAC_STATE_ABORTED, FLAC__STREAM_DECODER_ABORTED);
CUED_SAME_VALUE(CUED_FLAC_STATE_MEMORY_ALLOCATION_ERROR, FLAC__STREAM_DECODER_MEMORY_ALLOCATION_ERROR);
CUED_SAME_VALUE(CUED_FLAC_STATE_UNINITIALIZED, FLAC__STREAM_DECODER_UNINITIALIZED);
CUED_SAME_VALUE(CUED_FLAC_INIT_OK, FLAC__STREAM_DECODER_INIT_STATUS_OK);
CUED_SAME_VALUE(CUED_FLAC_INIT_UNSUPPORTED_CONTAINER, FLAC__STREAM_DECODER_INIT_STATUS_UNSUPPORTED_CONTAINER);
CUED_SAME_VALUE(CUED_FLAC_INIT_INVALID_CALLBACKS, FLAC__STREAM_DECODER_INIT_STATUS_INVALID_CALLBACKS);
CUED_SAME_VALUE(CUED_FLAC_INIT_MEMORY_ALLOCATION_ERROR, FLAC__STREAM_DECODER_INIT_STATUS_MEMORY_ALLOCATION_ERROR);
CUED_SAME_VALUE(CUED_FLAC_INIT_ERROR_OPENING_FILE, FLAC__STREAM_DECODER_INIT_STATUS_ERROR_OPENING_FILE);
CUED_SAME_VALUE(CUED_FLAC_INIT_ALREADY_INITIALIZED, FLAC__STREAM_DECODER_INIT_STATUS_ALREADY_INITIALIZED);
CUED_SAME_VALUE(CUED_FLAC_READ_CONTINUE, FLAC__STREAM_DECODER_READ_STATUS_CONTINUE);
CUED_SAME_VALUE(CUED_FLAC_READ_END_OF_STREAM, FLAC__STREAM_DECODER_READ_STATUS_END_OF_STREAM);
CUED_SAME_VALUE(CUED_FLAC_READ_ABORT, FLAC__STREAM_DECODER_READ_STATUS_ABORT);
CUED_SAME_VALUE(CUED_FLAC_WRITE_CONTINUE, FLAC__STREAM_DECODER_WRITE_STATUS_CONTINUE);
CUED_SAME_VALUE(CUED_FLAC_WRITE_ABORT, FLAC__STREAM_DECODER_WRITE_STATUS_ABORT);
CUED_SAME_VALUE(CUED_FLAC_ERROR_LOST_SYNC, FLAC__STREAM_DECODER_ERROR_STATUS_LOST_SYNC);
CUED_SAME_VALUE(CUED_FLAC_ERROR_BAD_HEADER, FLAC__STREAM_DECODER_ERROR_STATUS_BAD_HEADER);
CUED_SAME_VALUE(CUED_FLAC_ERROR_FRAME_CRC_MISMATCH, FLAC__STREAM_DECODER_ERROR_STATUS_FRAME_CRC_MISMATCH);
CUED_SAME_VALUE(CUED_FLAC_ERROR_UNPARSEABLE_STREAM, FLAC__STREAM_DECODER_ERROR_STATUS_UNPARSEABLE_STREAM);
CUED_SAME_VALUE(CUED_FLAC_ERROR_BAD_METADATA, FLAC__STREAM_DECODER_ERROR_STATUS_BAD_METADATA);
CUED_SAME_VALUE(CUED_FLAC_METADATA_STREAMINFO, FLAC__METADATA_TYPE_STREAMINFO);
#undef CUED_SAME_VALUE

#define CUED_SAME_FIELD(ours, theirs, field, theirField)                                                             \
  _Static_assert(offsetof(ours, field) == offsetof(theirs, theirField) && sizeof(((ours *)0)->field) == sizeof(((theirs *)0)->theirField), \
                 #ours "." #field " is not where " #theirs "." #theirField " is")
CUED_SAME_FIELD(cued_flac_frame, FLAC__Frame, header.blocksize, header.blocksize);
CUED_SAME_FIELD(cued_flac_frame, FLAC__Frame, header.sample_rate, header.sample_rate);
CUED_SAME_FIELD(cued_flac_frame, FLAC__Frame, header.channels, header.channels);
CUED_SAME_FIELD(cued_flac_frame, FLAC__Frame, header.channel_assignment, header.channel_assignment);
CUED_SAME_FIELD(cued_flac_frame, FLAC__Frame, header.bits_per_sample, header.bits_per_sample);
CUED_SAME_FIELD(cued_flac_metadata, FLAC__StreamMetadata, type, type);
CUED_SAME_FIELD(cued_flac_metadata, FLAC__StreamMetadata, is_last, is_last);
CUED_SAME_FIELD(cued_flac_metadata, FLAC__StreamMetadata, length, length);
CUED_SAME_FIELD(cued_flac_metadata, FLAC__StreamMetadata, stream_info.min_blocksize, data.stream_info.min_blocksize);
CUED_SAME_FIELD(cued_flac_metadata, FLAC__StreamMetadata, stream_info.max_blocksize, data.stream_info.max_blocksize);
CUED_SAME_FIELD(cued_flac_metadata, FLAC__StreamMetadata, stream_info.min_framesize, data.stream_info.min_framesize);
CUED_SAME_FIELD(cued_flac_metadata, FLAC__StreamMetadata, stream_info.max_framesize, data.stream_info.max_framesize);
CUED_SAME_FIELD(cued_flac_metadata, FLAC__StreamMetadata, stream_info.sample_rate, data.stream_info.sample_rate);
CUED_SAME_FIELD(cued_flac_metadata, FLAC__StreamMetadata, stream_info.channels, data.stream_info.channels);
CUED_SAME_FIELD(cued_flac_metadata, FLAC__StreamMetadata, stream_info.bits_per_sample, data.stream_info.bits_per_sample);
CUED_SAME_FIELD(cued_flac_metadata, FLAC__StreamMetadata, stream_info.total_samples, data.stream_info.total_samples);
#undef CUED_SAME_FIELD
_Static_assert(sizeof(FLAC__bool) == sizeof(int) && sizeof(FLAC__StreamDecoderState) == sizeof(cued_flac_decoder_state),
               "libFLAC's bool and enumerations are not int-sized");
#endif
