#ifndef CUED_SNDFILE_H
#define CUED_SNDFILE_H
// A plain-C face of libsndfile (Ogg Vorbis and Opus, WAV, FLAC) for the sound files that are not
// MP3: desktop sound themes ship .oga/.ogg/.wav. Only CueDecoding imports it.
//
// libsndfile is loaded (dlopen, `cued_sf_load`) the first time a file that is not an MP3 is
// decoded, not linked: it brings libFLAC, libvorbis, libvorbisenc, libopus, libogg and libmp3lame
// (encoders cued never uses), about 0.7 MiB of a daemon's RSS, and a daemon whose cues are MP3
// never needs any of it. Each function below is the libsndfile function of the same name without
// `cued_`, called through the table `cued_sf_load` fills; before a successful load they fail
// (NULL, SF_ERR_UNRECOGNISED_FORMAT, 0).

#include <sndfile.h>
#include <stddef.h>

/// Loads libsndfile.so.1 the first time (later calls return the first one's result): 0, or -1 with
/// the reason (dlerror's words) in `error`. Any thread; takes a mutex.
int cued_sf_load(char *error, size_t capacity);

SNDFILE *cued_sf_open_virtual(SF_VIRTUAL_IO *io, int mode, SF_INFO *info, void *user);
sf_count_t cued_sf_readf_float(SNDFILE *file, float *frames, sf_count_t count);
int cued_sf_close(SNDFILE *file);
int cued_sf_error(SNDFILE *file);
const char *cued_sf_strerror(SNDFILE *file);

#endif
