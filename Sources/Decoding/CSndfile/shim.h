// libsndfile (Ogg Vorbis and Opus, WAV, FLAC) for the sound files that are not MP3: desktop sound
// themes ship .oga/.ogg/.wav. Only CueAudio imports it. No shim code: sf_open_virtual takes plain C
// function pointers, which Swift provides.
#include <sndfile.h>
