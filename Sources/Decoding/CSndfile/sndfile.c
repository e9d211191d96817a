// The C face of libsndfile (see include/CSndfile.h for why it is loaded, not linked).
#include "CSndfile.h"
#include "CLibraryLoading.h"

static SNDFILE *(*open_virtual)(SF_VIRTUAL_IO *, int, SF_INFO *, void *);
static sf_count_t (*readf_float)(SNDFILE *, float *, sf_count_t);
static int (*close_file)(SNDFILE *);
static int (*error_of)(SNDFILE *);
static const char *(*strerror_of)(SNDFILE *);

static const cued_library_symbol symbols[] = {
  {"sf_open_virtual", (void **)&open_virtual},
  {"sf_readf_float", (void **)&readf_float},
  {"sf_close", (void **)&close_file},
  {"sf_error", (void **)&error_of},
  {"sf_strerror", (void **)&strerror_of},
};
static cued_library sndfile = CUED_LIBRARY_INIT("libsndfile.so.1", symbols);

int cued_sf_load(char *error, size_t capacity) { return cued_library_load(&sndfile, error, capacity); }

static int ready(void) { return cued_library_ready(&sndfile); }

SNDFILE *cued_sf_open_virtual(SF_VIRTUAL_IO *io, int mode, SF_INFO *info, void *user) {
  return ready() ? open_virtual(io, mode, info, user) : NULL;
}

sf_count_t cued_sf_readf_float(SNDFILE *file, float *frames, sf_count_t count) {
  return ready() ? readf_float(file, frames, count) : 0;
}

int cued_sf_close(SNDFILE *file) { return ready() ? close_file(file) : 0; }

int cued_sf_error(SNDFILE *file) { return ready() ? error_of(file) : SF_ERR_UNRECOGNISED_FORMAT; }

const char *cued_sf_strerror(SNDFILE *file) { return ready() ? strerror_of(file) : "libsndfile is not loaded"; }
