// The capture stream of the tools: the shim's stream (internal.h) with capture properties.
#include "CPipeWireCapture.h"
#include "internal.h"

cued_pw_stream *cued_pw_capture_new(const char *app_name, const char *node_name, const char *sink_name,
                                    uint32_t rate, uint32_t channels, uint32_t quantum_frames,
                                    cued_pw_process_fn fn, void *user) {
  if (cued_pw_load(NULL, 0) != 0) return NULL;
  struct pw_properties *props =
    pw_properties_new(PW_KEY_MEDIA_CATEGORY, "Capture", PW_KEY_STREAM_CAPTURE_SINK, "true",
                      PW_KEY_NODE_PASSIVE, "true", NULL);
  if (props != NULL && sink_name) pw_properties_set(props, PW_KEY_TARGET_OBJECT, sink_name);
  return cued_pw__stream_new(SPA_DIRECTION_INPUT, app_name, node_name, rate, channels, quantum_frames, fn, user, props);
}
