// cued_pa_load: libpulse into the table of syms.h, once (see include/CPulseShims.h).
#define CUED_PA_NO_REDIRECTS
#include "CPulseShims.h"
#include <pulse/pulseaudio.h>
#include "syms.h"
#include "CLibraryLoading.h"

struct cued_pa_symbols cued_pa_syms;

static const cued_library_symbol symbols[] = {
#define CUED_PA_ENTRY(name) {#name, (void **)&cued_pa_syms.name},
  CUED_PA_SYMBOLS(CUED_PA_ENTRY)
#undef CUED_PA_ENTRY
};
static cued_library library = CUED_LIBRARY_INIT(CUED_PA_LIBRARY, symbols);

int cued_pa_load(char *error, size_t error_capacity) { return cued_library_load(&library, error, error_capacity); }
