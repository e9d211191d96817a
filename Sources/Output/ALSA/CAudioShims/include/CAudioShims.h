#ifndef CUED_AUDIO_SHIMS_H
#define CUED_AUDIO_SHIMS_H
// Small C stand-ins for the parts of libasound that Swift cannot call. Each says what it replaces.

/// Routes libasound's own diagnostics ("ALSA lib ... cannot find card '0'") away from stderr.
///
/// Stands in for `snd_lib_error_set_handler`, whose handler is variadic (`snd_lib_error_handler_t`
/// takes `...`), which Swift cannot implement. The last message is kept (per thread) so that
/// Swift can put it into a clear error instead of letting the library print to the terminal.
void cued_alsa_silence_errors(void);

/// Copies the last libasound diagnostic seen on this thread into `buffer` (NUL-terminated); returns its length.
int cued_alsa_last_error(char *buffer, int capacity);

#endif
