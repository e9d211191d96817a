#ifndef CUED_FLAC_H
#define CUED_FLAC_H
// A plain-C face of libFLAC's stream decoder, for FLAC files: Only CueDecoding imports it
// (FLACDecoder.swift, which makes every decision: formats, rates, channels, limits, errors).
//
// Why libFLAC and not libsndfile, which reads FLAC through libFLAC too: libsndfile 1.2 refuses
// 32-bit FLAC ("unimplemented format") and fails the whole file on any error libFLAC reports and
// recovers from; libFLAC itself decodes 4- to 32-bit streams and says what it skipped.
//
// libFLAC is loaded (dlopen, `cued_flac_load`) the first time a FLAC file is decoded, never linked,
// as libsndfile is (CSndfile.h): a daemon whose cues are MP3 maps neither. libflac12 is already on
// every machine with libsndfile1, which depends on it.
//
// Why no <FLAC/stream_decoder.h>: nothing links libFLAC, so its -dev package would be needed only
// for these declarations. The types below are libFLAC 1.4's (FLAC/format.h, FLAC/stream_decoder.h),
// under this face's names, down to the fields Swift reads: the frame header and STREAMINFO keep
// libFLAC's layout up to the last field declared here, the enumerations its values. libFLAC.so.12
// is the ABI they belong to; flac.c checks each against the real header when one is installed.
//
// Each function is the libFLAC function of the same name (`FLAC__stream_decoder_…` for
// `cued_flac_decoder_…`), called through the table `cued_flac_load` fills; before a successful load
// they fail (NULL, CUED_FLAC_INIT_NOT_LOADED, 0, CUED_FLAC_STATE_UNINITIALIZED). The callbacks are
// the caller's: libFLAC reads the file through `read`, hands each decoded frame to `write`, STREAMINFO
// to `metadata`, and what it skipped to `error`, all on the thread that called process.

#include <stddef.h>
#include <stdint.h>

/// A `FLAC__StreamDecoder` (opaque).
typedef struct cued_flac_decoder cued_flac_decoder;

/// `FLAC__StreamDecoderState`.
typedef enum cued_flac_decoder_state {
  CUED_FLAC_STATE_SEARCH_FOR_METADATA = 0,
  CUED_FLAC_STATE_READ_METADATA = 1,
  CUED_FLAC_STATE_SEARCH_FOR_FRAME_SYNC = 2,
  CUED_FLAC_STATE_READ_FRAME = 3,
  CUED_FLAC_STATE_END_OF_STREAM = 4,
  CUED_FLAC_STATE_OGG_ERROR = 5,
  CUED_FLAC_STATE_SEEK_ERROR = 6,
  CUED_FLAC_STATE_ABORTED = 7,
  CUED_FLAC_STATE_MEMORY_ALLOCATION_ERROR = 8,
  CUED_FLAC_STATE_UNINITIALIZED = 9,
} cued_flac_decoder_state;

/// `FLAC__StreamDecoderInitStatus`, and one value of this face's: libFLAC is not loaded.
typedef enum cued_flac_init_status {
  CUED_FLAC_INIT_OK = 0,
  CUED_FLAC_INIT_UNSUPPORTED_CONTAINER = 1,
  CUED_FLAC_INIT_INVALID_CALLBACKS = 2,
  CUED_FLAC_INIT_MEMORY_ALLOCATION_ERROR = 3,
  CUED_FLAC_INIT_ERROR_OPENING_FILE = 4,
  CUED_FLAC_INIT_ALREADY_INITIALIZED = 5,
  CUED_FLAC_INIT_NOT_LOADED = 1000,
} cued_flac_init_status;

/// `FLAC__StreamDecoderReadStatus`.
typedef enum cued_flac_read_status {
  CUED_FLAC_READ_CONTINUE = 0,
  CUED_FLAC_READ_END_OF_STREAM = 1,
  CUED_FLAC_READ_ABORT = 2,
} cued_flac_read_status;

/// `FLAC__StreamDecoderWriteStatus`.
typedef enum cued_flac_write_status {
  CUED_FLAC_WRITE_CONTINUE = 0,
  CUED_FLAC_WRITE_ABORT = 1,
} cued_flac_write_status;

/// `FLAC__StreamDecoderErrorStatus`: what libFLAC skipped. Later libFLAC versions add values
/// (5, out of bounds; 6, missing frame): a callback may see any number.
typedef enum cued_flac_error_status {
  CUED_FLAC_ERROR_LOST_SYNC = 0,
  CUED_FLAC_ERROR_BAD_HEADER = 1,
  CUED_FLAC_ERROR_FRAME_CRC_MISMATCH = 2,
  CUED_FLAC_ERROR_UNPARSEABLE_STREAM = 3,
  CUED_FLAC_ERROR_BAD_METADATA = 4,
} cued_flac_error_status;

/// `FLAC__MetadataType`: only STREAMINFO is asked for (libFLAC's default).
typedef enum cued_flac_metadata_type {
  CUED_FLAC_METADATA_STREAMINFO = 0,
} cued_flac_metadata_type;

/// `FLAC__FrameHeader`, up to `bits_per_sample`: one decoded frame's block size (samples per
/// channel), rate in Hz, channel count and sample size in bits.
typedef struct cued_flac_frame_header {
  uint32_t blocksize;
  uint32_t sample_rate;
  uint32_t channels;
  int channel_assignment;
  uint32_t bits_per_sample;
} cued_flac_frame_header;

/// `FLAC__Frame`, up to its header (the subframes that follow are not read).
typedef struct cued_flac_frame {
  cued_flac_frame_header header;
} cued_flac_frame;

/// `FLAC__StreamMetadata_StreamInfo`, up to `total_samples` (0: unknown).
typedef struct cued_flac_stream_info {
  uint32_t min_blocksize, max_blocksize;
  uint32_t min_framesize, max_framesize;
  uint32_t sample_rate;
  uint32_t channels;
  uint32_t bits_per_sample;
  uint64_t total_samples;
} cued_flac_stream_info;

/// `FLAC__StreamMetadata`, with its `data` union down to `stream_info`, the member for STREAMINFO.
typedef struct cued_flac_metadata {
  cued_flac_metadata_type type;
  int is_last;
  uint32_t length;
  cued_flac_stream_info stream_info;
} cued_flac_metadata;

/// `FLAC__StreamDecoderReadCallback`: fill `buffer` with up to `*bytes` bytes, set `*bytes` to the count.
typedef cued_flac_read_status (*cued_flac_read_callback)(const cued_flac_decoder *decoder, uint8_t *buffer, size_t *bytes, void *client);
/// `FLAC__StreamDecoderSeekCallback` (the status: 0 ok, 1 error, 2 unsupported).
typedef int (*cued_flac_seek_callback)(const cued_flac_decoder *decoder, uint64_t offset, void *client);
/// `FLAC__StreamDecoderTellCallback` (the status: 0 ok, 1 error, 2 unsupported).
typedef int (*cued_flac_tell_callback)(const cued_flac_decoder *decoder, uint64_t *offset, void *client);
/// `FLAC__StreamDecoderLengthCallback` (the status: 0 ok, 1 error, 2 unsupported).
typedef int (*cued_flac_length_callback)(const cued_flac_decoder *decoder, uint64_t *length, void *client);
/// `FLAC__StreamDecoderEofCallback`: nonzero at the end of the input.
typedef int (*cued_flac_eof_callback)(const cued_flac_decoder *decoder, void *client);
/// `FLAC__StreamDecoderWriteCallback`: one frame, `buffer[channel][sample]`, `frame->header.blocksize`
/// samples a channel, signed, `frame->header.bits_per_sample` bits each. Valid during the call only.
typedef cued_flac_write_status (*cued_flac_write_callback)(
  const cued_flac_decoder *decoder, const cued_flac_frame *frame, const int32_t *const *buffer, void *client);
/// `FLAC__StreamDecoderMetadataCallback`: a metadata block (STREAMINFO only, unless asked for more).
typedef void (*cued_flac_metadata_callback)(const cued_flac_decoder *decoder, const cued_flac_metadata *metadata, void *client);
/// `FLAC__StreamDecoderErrorCallback`: libFLAC skipped something (and goes on, searching for the next frame).
typedef void (*cued_flac_error_callback)(const cued_flac_decoder *decoder, cued_flac_error_status status, void *client);

/// Loads libFLAC.so.12 the first time (later calls return the first one's result): 0, or -1 with
/// the reason (dlerror's words) in `error`. Any thread; takes a mutex.
int cued_flac_load(char *error, size_t capacity);

/// `FLAC__stream_decoder_new`: a decoder with libFLAC's defaults, or NULL (no memory, or not loaded).
cued_flac_decoder *cued_flac_decoder_new(void);
/// `FLAC__stream_decoder_delete` (finishes it first). NULL is fine.
void cued_flac_decoder_delete(cued_flac_decoder *decoder);
/// `FLAC__stream_decoder_init_stream`: read, write and error are required; seek, tell, length, eof
/// and metadata may be NULL (without seek, libFLAC reads the stream once, front to back).
cued_flac_init_status cued_flac_decoder_init_stream(
  cued_flac_decoder *decoder, cued_flac_read_callback read, cued_flac_seek_callback seek, cued_flac_tell_callback tell,
  cued_flac_length_callback length, cued_flac_eof_callback eof, cued_flac_write_callback write,
  cued_flac_metadata_callback metadata, cued_flac_error_callback error, void *client);
/// `FLAC__stream_decoder_process_until_end_of_stream`: nonzero unless a fatal error (the state says which).
int cued_flac_decoder_process_until_end_of_stream(cued_flac_decoder *decoder);
/// `FLAC__stream_decoder_finish`: frees the stream's buffers; the decoder may be initialised again.
int cued_flac_decoder_finish(cued_flac_decoder *decoder);
/// `FLAC__stream_decoder_get_state`.
cued_flac_decoder_state cued_flac_decoder_get_state(const cued_flac_decoder *decoder);

#endif
