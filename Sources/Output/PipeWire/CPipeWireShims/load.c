// cued_pw_load: libpipewire-0.3 into the table of syms.h, once (see include/CPipeWireShims.h).
#define CUED_PW_NO_REDIRECTS
#include "CPipeWireShims.h"
#include <pipewire/pipewire.h>
#include "syms.h"
#include "CLibraryLoading.h"

struct cued_pw_symbols cued_pw_syms;

static const cued_library_symbol symbols[] = {
#define CUED_PW_ENTRY(name) {#name, (void **)&cued_pw_syms.name},
  CUED_PW_SYMBOLS(CUED_PW_ENTRY)
#undef CUED_PW_ENTRY
};
static cued_library library = CUED_LIBRARY_INIT(CUED_PW_LIBRARY, symbols);

int cued_pw_load(char *error, size_t error_capacity) { return cued_library_load(&library, error, error_capacity); }
