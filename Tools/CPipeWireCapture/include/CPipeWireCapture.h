#ifndef CUED_PIPEWIRE_CAPTURE_H
#define CUED_PIPEWIRE_CAPTURE_H
// A recorder of a PipeWire sink's output (its monitor), for cued-pwprobe and the tests that run it:
// the capture side of the shim's stream, kept out of the face cued ships (CPipeWireShims).
#include "CPipeWireShims.h"

/// Makes a capture stream of a sink's output (its monitor) for tests and measurements; connect,
/// wait, disconnect and free it with the shim's `cued_pw_stream_*` calls.
///
/// Like `cued_pw_output_new`, with `stream.capture.sink=true`, `node.passive=true` (it never keeps
/// the graph running nor sets its quantum unless `quantum_frames` is nonzero) and
/// `target.object = sink_name`. `fn` receives each captured block. NULL when libpipewire cannot be
/// loaded or the stream cannot be made.
cued_pw_stream *cued_pw_capture_new(const char *app_name, const char *node_name, const char *sink_name,
                                    uint32_t rate, uint32_t channels, uint32_t quantum_frames,
                                    cued_pw_process_fn fn, void *user);

#endif
