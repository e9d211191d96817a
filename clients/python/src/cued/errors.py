"""The errors a client sees: the daemon's refusals (one class per documented code, docs/PROTOCOL.md
section 5) and the connection's own failures."""
from __future__ import annotations

import enum
from typing import Any, Dict, Mapping, Optional, Type


class ErrorCode(str, enum.Enum):
    """The stable error codes of docs/PROTOCOL.md, section 5. A daemon may send codes this list
    does not have yet: `RequestError.error_code` is None for those, and `code` has the string."""

    PARSE_ERROR = "parse-error"
    INVALID_REQUEST = "invalid-request"
    UNKNOWN_OP = "unknown-op"
    OUT_OF_RANGE = "out-of-range"
    UNKNOWN_CUE = "unknown-cue"
    UNKNOWN_EVENT = "unknown-event"
    EVENT_DISABLED = "event-disabled"
    UNKNOWN_VOICE = "unknown-voice"
    UNKNOWN_PLAYER = "unknown-player"
    UNKNOWN_SOUND = "unknown-sound"
    UNKNOWN_GROUP = "unknown-group"
    BAD_PATH = "bad-path"
    NOT_ENABLED = "not-enabled"
    LINE_TOO_LONG = "line-too-long"
    BUSY = "busy"
    DEVICE_UNAVAILABLE = "device-unavailable"
    LIMIT_REACHED = "limit-reached"
    ACCESS_DENIED = "access-denied"
    CONFIG_ERROR = "config-error"
    INTERNAL = "internal"


class CuedError(Exception):
    """Every error this package raises."""


class RequestError(CuedError):
    """The daemon refused a request. Branch on `code` (or the subclass); show `message` to people,
    its wording may change between releases. `reply` is the whole error reply."""

    #: The code this class stands for (None: the base class, for codes this package does not know).
    CODE: Optional[ErrorCode] = None

    def __init__(self, code: str, message: str, reply: Optional[Mapping[str, Any]] = None) -> None:
        super().__init__("%s: %s" % (code, message))
        self.code = code
        self.message = message
        self.reply: Dict[str, Any] = dict(reply or {})

    @property
    def error_code(self) -> Optional[ErrorCode]:
        """The code as an `ErrorCode`, or None for one this package does not know."""
        try:
            return ErrorCode(self.code)
        except ValueError:
            return None


class ParseError(RequestError):
    """The line was not valid JSON (a bug in the encoder: do not resend it)."""

    CODE = ErrorCode.PARSE_ERROR


class InvalidRequest(RequestError):
    """Valid JSON of the wrong shape: a missing, unknown or wrongly typed field."""

    CODE = ErrorCode.INVALID_REQUEST


class UnknownOp(RequestError):
    """The daemon does not know the op (it may be older than this client)."""

    CODE = ErrorCode.UNKNOWN_OP


class OutOfRange(RequestError):
    """A number is outside its range."""

    CODE = ErrorCode.OUT_OF_RANGE


class UnknownCue(RequestError):
    """No cue has that name (`list` shows them; `reload` after adding files)."""

    CODE = ErrorCode.UNKNOWN_CUE


class UnknownEvent(RequestError):
    """No file of the sound theme answers that event name."""

    CODE = ErrorCode.UNKNOWN_EVENT


class EventDisabled(RequestError):
    """The sound theme silences that event name."""

    CODE = ErrorCode.EVENT_DISABLED


class UnknownVoice(RequestError):
    """No sounding voice has that id (it ended, was stolen, or is fading out)."""

    CODE = ErrorCode.UNKNOWN_VOICE


class UnknownPlayer(RequestError):
    """No player has that id (never made, destroyed, or gone with its connection)."""

    CODE = ErrorCode.UNKNOWN_PLAYER


class UnknownSound(RequestError):
    """No system sound has that id, or it was disposed of."""

    CODE = ErrorCode.UNKNOWN_SOUND


class UnknownGroup(RequestError):
    """No group has that name."""

    CODE = ErrorCode.UNKNOWN_GROUP


class BadPath(RequestError):
    """A path is missing, outside the sound directories, not a file, or not decodable."""

    CODE = ErrorCode.BAD_PATH


class NotEnabled(RequestError):
    """`rate` on a player made without `enable_rate=True`."""

    CODE = ErrorCode.NOT_ENABLED


class LineTooLong(RequestError):
    """The request line was longer than the daemon's limit (65536 bytes)."""

    CODE = ErrorCode.LINE_TOO_LONG


class Busy(RequestError):
    """A queue inside the daemon is full; nothing changed: retry after a few milliseconds."""

    CODE = ErrorCode.BUSY


class DeviceUnavailable(RequestError):
    """The audio device cannot be opened (or is in its retry backoff)."""

    CODE = ErrorCode.DEVICE_UNAVAILABLE


class LimitReached(RequestError):
    """A configured limit was reached (clients, players, system sounds)."""

    CODE = ErrorCode.LIMIT_REACHED


class AccessDenied(RequestError):
    """The daemon runs as another user and does not admit this one."""

    CODE = ErrorCode.ACCESS_DENIED


class ConfigError(RequestError):
    """`reload` found a problem in the config file; nothing was reloaded."""

    CODE = ErrorCode.CONFIG_ERROR


class InternalError(RequestError):
    """The daemon failed in a way it did not expect."""

    CODE = ErrorCode.INTERNAL


#: The class for each documented code.
ERROR_CLASSES: Dict[str, Type[RequestError]] = {
    cls.CODE.value: cls
    for cls in (
        ParseError, InvalidRequest, UnknownOp, OutOfRange, UnknownCue, UnknownEvent, EventDisabled, UnknownVoice,
        UnknownPlayer, UnknownSound, UnknownGroup, BadPath, NotEnabled, LineTooLong, Busy, DeviceUnavailable,
        LimitReached, AccessDenied, ConfigError, InternalError,
    )
    if cls.CODE is not None
}


def error_from_reply(reply: Mapping[str, Any]) -> RequestError:
    """The exception for an error reply: the class of its code, or `RequestError` for a code this
    package does not know."""
    error = reply.get("error")
    if not isinstance(error, Mapping):
        return RequestError("internal", "an error reply without an error object: %r" % (dict(reply),), reply)
    code = error.get("code")
    message = error.get("message")
    code = code if isinstance(code, str) else "internal"
    message = message if isinstance(message, str) else ""
    return ERROR_CLASSES.get(code, RequestError)(code, message, reply)


class Unreachable(CuedError, ConnectionError):
    """No daemon answers at the socket path: it is not running, or the path is wrong."""

    def __init__(self, socket_path: str, reason: str) -> None:
        super().__init__(
            "cued is not reachable at %s: %s (start it with `cued`, or `systemctl --user start cued`; "
            "$CUED_SOCKET or socket_path= names another socket)" % (socket_path, reason))
        self.socket_path = socket_path
        self.reason = reason


class Disconnected(CuedError, ConnectionError):
    """The connection closed before the reply came (the request may or may not have been carried
    out). The next call connects again."""

    def __init__(self, socket_path: str, reason: str = "the daemon closed the connection") -> None:
        super().__init__("the connection to cued at %s was lost: %s" % (socket_path, reason))
        self.socket_path = socket_path
        self.reason = reason


class ProtocolViolation(CuedError):
    """The daemon sent something that is not the protocol."""


class RequestTimeout(CuedError, TimeoutError):
    """No reply came within the client's timeout."""

    def __init__(self, op: str, seconds: float) -> None:
        super().__init__("no reply to %s within %g s" % (op, seconds))
        self.op = op
        self.seconds = seconds
