// The cued protocol's words and the play role rule, for the libcanberra driver. Generated from
// CueProtocol (ErrorCode, FinishReason, SilenceReason, ProtocolFeature, PlayParameters) by
// `make protocol-docs` (Tools/CueProtocolDocs/CHeader.swift); do not edit: a test fails when it differs.
#ifndef CUED_PROTOCOL_H
#define CUED_PROTOCOL_H

// Error codes: an error reply's error.code.
#define CUED_CODE_PARSE_ERROR "parse-error"
#define CUED_CODE_INVALID_REQUEST "invalid-request"
#define CUED_CODE_UNKNOWN_OP "unknown-op"
#define CUED_CODE_OUT_OF_RANGE "out-of-range"
#define CUED_CODE_UNKNOWN_CUE "unknown-cue"
#define CUED_CODE_UNKNOWN_EVENT "unknown-event"
#define CUED_CODE_EVENT_DISABLED "event-disabled"
#define CUED_CODE_UNKNOWN_VOICE "unknown-voice"
#define CUED_CODE_UNKNOWN_PLAYER "unknown-player"
#define CUED_CODE_UNKNOWN_SOUND "unknown-sound"
#define CUED_CODE_UNKNOWN_GROUP "unknown-group"
#define CUED_CODE_BAD_PATH "bad-path"
#define CUED_CODE_NOT_ENABLED "not-enabled"
#define CUED_CODE_LINE_TOO_LONG "line-too-long"
#define CUED_CODE_BUSY "busy"
#define CUED_CODE_DEVICE_UNAVAILABLE "device-unavailable"
#define CUED_CODE_LIMIT_REACHED "limit-reached"
#define CUED_CODE_ACCESS_DENIED "access-denied"
#define CUED_CODE_CONFIG_ERROR "config-error"
#define CUED_CODE_INTERNAL "internal"

// Why a voice finished: a finished event's reason.
#define CUED_FINISHED_END "end"
#define CUED_FINISHED_STOPPED "stopped"
#define CUED_FINISHED_STOLEN "stolen"
#define CUED_FINISHED_DISPOSED "disposed"
#define CUED_FINISHED_DEVICE_LOST "device-lost"
#define CUED_FINISHED_ERROR "error"
#define CUED_FINISHED_COOLDOWN "cooldown"
#define CUED_FINISHED_CAP "cap"
#define CUED_FINISHED_LEVEL "level"
#define CUED_FINISHED_MUTED "muted"
#define CUED_FINISHED_GROUP_MUTED "group-muted"
#define CUED_FINISHED_TOO_LATE "too-late"
#define CUED_FINISHED_EVENT_SOUNDS_OFF "event-sounds-off"

// Why a play was silent: a play reply's reason when played is false.
#define CUED_SILENT_UNKNOWN "unknown"
#define CUED_SILENT_COOLDOWN "cooldown"
#define CUED_SILENT_CAP "cap"
#define CUED_SILENT_LEVEL "level"
#define CUED_SILENT_MUTED "muted"
#define CUED_SILENT_GROUP_MUTED "group-muted"
#define CUED_SILENT_TOO_LATE "too-late"
#define CUED_SILENT_EVENT_SOUNDS_OFF "event-sounds-off"

// Features of hello's capabilities.features.
#define CUED_FEATURE_SCHEDULED_PLAY "scheduled-play"
#define CUED_FEATURE_PLAYER_RATE "player-rate"
#define CUED_FEATURE_DETACHED "detached"
#define CUED_FEATURE_SUBSCRIBE_IDS "subscribe-ids"
#define CUED_FEATURE_CAROUSEL_REPLIES "carousel-replies"
#define CUED_FEATURE_DEFERRED_REPLIES "deferred-replies"
#define CUED_FEATURE_REPLY_BEFORE_EVENTS "reply-before-events"
#define CUED_FEATURE_SILENT_PLAYS "silent-plays"
#define CUED_FEATURE_VARIATIONS "variations"
#define CUED_FEATURE_FILE_PLAY "file-play"
#define CUED_FEATURE_PLAY_ROLE "play-role"

// play's role: 1 to CUED_ROLE_MAX_BYTES bytes of ASCII letters, digits and CUED_ROLE_MARKS.
#define CUED_ROLE_MAX_BYTES 64
#define CUED_ROLE_MARKS "-_."

#endif
