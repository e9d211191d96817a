// libebur128 (EBU R128 / ITU-R BS.1770 loudness and sample peak), to measure each cue's
// loudness at load. Only CueAudio imports it. No shim code: every call takes plain pointers and
// integers; the mode flags are a C enum, which Swift imports as `mode` with a raw value.
#include <ebur128.h>
