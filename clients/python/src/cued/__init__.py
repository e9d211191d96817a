"""A client for cued, the audio cue daemon (docs/PROTOCOL.md, docs/CLIENT.md).

    import cued

    with cued.Client(name="my-app") as client:
        client.play("pico", pan=-0.5)                      # fire-and-forget
        player = client.create_player("wrap", number_of_loops=-1)
        player.play()
        player.set_volume(0.2, fade=1.5)

`Client` is synchronous (a reader thread matches replies to requests; any number in flight);
`AsyncClient` is the same for asyncio. Standard library only.
"""
from . import carousel
from ._paths import default_socket_path
from .aio import AsyncCarouselSession, AsyncClient, AsyncEventStream, AsyncPlayer, AsyncSystemSound, connect_async
from .carousel import CarouselMessage, ScrollTracker
from .client import CarouselSession, Client, EventStream, Player, SystemSound, connect
from .errors import (
    AccessDenied, BadPath, Busy, ConfigError, CuedError, DeviceUnavailable, Disconnected, ErrorCode, EventDisabled,
    InternalError, InvalidRequest, LimitReached, LineTooLong, NotEnabled, OutOfRange, ParseError, ProtocolViolation,
    RequestError, RequestTimeout, UnknownCue, UnknownEvent, UnknownGroup, UnknownOp, UnknownPlayer, UnknownSound,
    UnknownVoice, Unreachable,
)
from .events import (
    EVENT_KINDS, CompletionEvent, DecodeErrorEvent, DeviceEvent, DisconnectedEvent, Event, EventsDroppedEvent,
    FinishedEvent, GenericEvent, LevelEvent, Meter, MetersEvent, PagingEvent, ReconnectedEvent, ReloadedEvent,
    StartedEvent, parse_event,
)
from .replies import (
    Capabilities, ClientInfo, CueInfo, GroupState, Hello, LevelState, PagingResult, PlayerPlayResult,
    PlayerProperties, PlayResult, PrepareResult, Reason, ReloadResult, Status, SystemSettings, VoiceInfo,
)

__version__ = "0.2.0"
#: The protocol version this package speaks.
PROTOCOL = 1

__all__ = [
    "AccessDenied", "AsyncCarouselSession", "AsyncClient", "AsyncEventStream", "AsyncPlayer", "AsyncSystemSound",
    "BadPath", "Busy", "Capabilities", "CarouselMessage", "CarouselSession", "Client", "ClientInfo", "CompletionEvent",
    "ConfigError", "CueInfo", "CuedError", "DecodeErrorEvent", "DeviceEvent", "DeviceUnavailable", "Disconnected",
    "DisconnectedEvent", "EVENT_KINDS", "ErrorCode", "Event", "EventDisabled", "EventStream", "EventsDroppedEvent",
    "FinishedEvent", "GenericEvent", "GroupState", "Hello", "InternalError", "InvalidRequest", "LevelEvent",
    "LevelState", "LimitReached", "LineTooLong", "Meter", "MetersEvent", "NotEnabled", "OutOfRange", "PROTOCOL", "PagingEvent", "PagingResult",
    "ParseError", "PlayResult", "Player", "PlayerPlayResult", "PlayerProperties", "PrepareResult", "ProtocolViolation",
    "Reason", "ReconnectedEvent", "ReloadResult", "ReloadedEvent", "RequestError", "RequestTimeout", "ScrollTracker",
    "StartedEvent", "Status", "SystemSettings", "SystemSound", "UnknownCue", "UnknownEvent", "UnknownGroup",
    "UnknownOp", "UnknownPlayer", "UnknownSound", "UnknownVoice", "Unreachable", "VoiceInfo", "carousel", "connect",
    "connect_async", "default_socket_path", "parse_event",
]
