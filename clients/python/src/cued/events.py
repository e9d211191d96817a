"""The daemon's events (docs/PROTOCOL.md, sections 4 and 4b), each a typed dataclass.

Every event has `kind` (the wire's `"event"` value), `raw` (the whole JSON object, for fields
this version does not know) and `ids` (the voice, player and sound ids it is about). A kind this
version does not know arrives as a `GenericEvent`; the client adds two kinds of its own,
`DisconnectedEvent` and `ReconnectedEvent`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Dict, List, Mapping, Optional, Tuple, Union

from ._json import (
    opt_bool, opt_float, opt_int, opt_str, req_bool, req_float, req_int, req_str, str_list,
)
from .errors import ProtocolViolation

#: Every event kind the daemon documents, in the order of PROTOCOL.md's table.
EVENT_KINDS: Tuple[str, ...] = (
    "started", "finished", "completion", "device", "reloaded", "decode-error", "events-dropped", "paging", "level",
    "meters",
)
#: The kinds `subscribe` takes (`events-dropped` cannot be subscribed to: every connection may get
#: it; `meters` comes only to a connection that asked with the `meters` op, at its rate).
SUBSCRIBABLE_KINDS: Tuple[str, ...] = tuple(kind for kind in EVENT_KINDS if kind not in ("events-dropped", "meters"))


def _raw() -> Any:
    return field(default_factory=dict, repr=False, compare=False)


class _EventBase:
    raw: Dict[str, Any]

    @property
    def ids(self) -> Tuple[int, ...]:
        """The ids the event is about: its `voice`, `player` and `sound` fields, as the daemon's
        `ids` filter reads them."""
        return tuple(
            value for key in ("voice", "player", "sound")
            if isinstance(value := self.raw.get(key), int) and not isinstance(value, bool))


@dataclass(frozen=True)
class StartedEvent(_EventBase):
    """A voice's first frame was mixed (to subscribers only)."""

    kind: ClassVar[str] = "started"
    voice: int
    cue: str
    player: Optional[int]
    sound: Optional[int]
    device_time: float
    heard_in: float
    raw: Dict[str, Any] = _raw()


@dataclass(frozen=True)
class FinishedEvent(_EventBase):
    """A voice ended. `successfully` is True exactly when `reason` is "end"; an unknown reason
    counts as unsuccessful."""

    kind: ClassVar[str] = "finished"
    voice: Optional[int]
    cue: Optional[str]
    player: Optional[int]
    sound: Optional[int]
    reason: str
    successfully: bool
    raw: Dict[str, Any] = _raw()


@dataclass(frozen=True)
class CompletionEvent(_EventBase):
    """A play of a system sound ended, or did not happen (muted, or kept silent)."""

    kind: ClassVar[str] = "completion"
    sound: int
    voice: Optional[int]
    played: bool
    reason: str
    raw: Dict[str, Any] = _raw()


@dataclass(frozen=True)
class DeviceEvent(_EventBase):
    """The audio device opened, closed after idling, was lost, or came back."""

    kind: ClassVar[str] = "device"
    state: str
    device: str
    error: Optional[str]
    raw: Dict[str, Any] = _raw()


@dataclass(frozen=True)
class ReloadedEvent(_EventBase):
    """A rescan of the sound directories finished."""

    kind: ClassVar[str] = "reloaded"
    cues: int
    added: List[str]
    changed: List[str]
    removed: List[str]
    raw: Dict[str, Any] = _raw()


@dataclass(frozen=True)
class DecodeErrorEvent(_EventBase):
    """The file of a player made from a path could not be decoded."""

    kind: ClassVar[str] = "decode-error"
    player: int
    path: str
    reason: str
    raw: Dict[str, Any] = _raw()


@dataclass(frozen=True)
class EventsDroppedEvent(_EventBase):
    """The daemon dropped this many events for this connection because it did not read them."""

    kind: ClassVar[str] = "events-dropped"
    count: int
    raw: Dict[str, Any] = _raw()


@dataclass(frozen=True)
class PagingEvent(_EventBase):
    """A carousel message was handled: what cued decided and played (`message` is the carousel
    event's name, or "settled" for the moment the scroll came to rest)."""

    kind: ClassVar[str] = "paging"
    carousel: str
    message: str
    decision: str
    from_page: Optional[int] = None
    to_page: Optional[int] = None
    reason: Optional[str] = None
    direction: Optional[str] = None
    velocity: Optional[float] = None
    target_page: Optional[int] = None
    decelerate: Optional[bool] = None
    edge: Optional[str] = None
    cue: Optional[str] = None
    voice: Optional[int] = None
    pages: Optional[int] = None
    silenced: Optional[str] = None
    out_of_order: bool = False
    settled: bool = False
    raw: Dict[str, Any] = _raw()


@dataclass(frozen=True)
class LevelEvent(_EventBase):
    """The level changed (a `level` request, or quiet hours)."""

    kind: ClassVar[str] = "level"
    level: str
    previous: str
    set_by: str
    raw: Dict[str, Any] = _raw()


@dataclass(frozen=True)
class Meter:
    """One peak and RMS (linear, 0...1) over the time since the last `meters` event."""

    peak: float
    rms: float


@dataclass(frozen=True)
class MetersEvent(_EventBase):
    """The mix's and each sounding voice's levels, sent at the rate the `meters` op asked for."""

    kind: ClassVar[str] = "meters"
    mix: Meter
    voices: Dict[int, Meter]
    raw: Dict[str, Any] = _raw()


@dataclass(frozen=True)
class GenericEvent(_EventBase):
    """An event of a kind this version does not know (or a known kind whose fields did not read):
    `kind` and `raw` say what it was."""

    kind: str
    raw: Dict[str, Any] = _raw()


@dataclass(frozen=True)
class DisconnectedEvent(_EventBase):
    """The client's own: the connection to the daemon was lost. Events are missed until
    `ReconnectedEvent` (the next call, or `Client.reconnect`, connects again)."""

    kind: ClassVar[str] = "disconnected"
    reason: str
    raw: Dict[str, Any] = _raw()


@dataclass(frozen=True)
class ReconnectedEvent(_EventBase):
    """The client's own: connected again, with the subscription sent again. The daemon may be
    another process: players, sounds and voices of the old connection may be gone."""

    kind: ClassVar[str] = "reconnected"
    raw: Dict[str, Any] = _raw()


Event = Union[
    StartedEvent, FinishedEvent, CompletionEvent, DeviceEvent, ReloadedEvent, DecodeErrorEvent, EventsDroppedEvent,
    PagingEvent, LevelEvent, MetersEvent, GenericEvent, DisconnectedEvent, ReconnectedEvent,
]


def _started(o: Mapping[str, Any], raw: Dict[str, Any]) -> Event:
    return StartedEvent(
        req_int(o, "voice"), req_str(o, "cue"), opt_int(o, "player"), opt_int(o, "sound"), req_float(o, "deviceTime"),
        req_float(o, "heardIn"), raw)


def _finished(o: Mapping[str, Any], raw: Dict[str, Any]) -> Event:
    reason = req_str(o, "reason")
    successfully = opt_bool(o, "successfully")
    return FinishedEvent(
        opt_int(o, "voice"), opt_str(o, "cue"), opt_int(o, "player"), opt_int(o, "sound"), reason,
        successfully if successfully is not None else reason == "end", raw)


def _completion(o: Mapping[str, Any], raw: Dict[str, Any]) -> Event:
    return CompletionEvent(req_int(o, "sound"), opt_int(o, "voice"), req_bool(o, "played"), req_str(o, "reason"), raw)


def _paging(o: Mapping[str, Any], raw: Dict[str, Any]) -> Event:
    return PagingEvent(
        req_str(o, "carousel"), req_str(o, "message"), req_str(o, "decision"), opt_int(o, "from"), opt_int(o, "to"),
        opt_str(o, "reason"), opt_str(o, "direction"), opt_float(o, "velocity"), opt_int(o, "targetPage"),
        opt_bool(o, "decelerate"), opt_str(o, "edge"), opt_str(o, "cue"), opt_int(o, "voice"), opt_int(o, "pages"),
        opt_str(o, "silenced"), opt_bool(o, "outOfOrder") is True, opt_bool(o, "settled") is True, raw)


def _meter(o: Mapping[str, Any]) -> Meter:
    return Meter(req_float(o, "peak"), req_float(o, "rms"))


def _meters(o: Mapping[str, Any], raw: Dict[str, Any]) -> Event:
    mix, voices = o.get("mix"), o.get("voices")
    if not isinstance(mix, dict) or not isinstance(voices, list) or not all(isinstance(v, dict) for v in voices):
        raise ProtocolViolation("a meters event needs mix (an object) and voices (a list of objects)")
    return MetersEvent(_meter(mix), {req_int(v, "voice"): _meter(v) for v in voices}, raw)


_PARSERS: Dict[str, Callable[[Mapping[str, Any], Dict[str, Any]], Event]] = {
    "started": _started,
    "finished": _finished,
    "completion": _completion,
    "device": lambda o, raw: DeviceEvent(req_str(o, "state"), req_str(o, "device"), opt_str(o, "error"), raw),
    "reloaded": lambda o, raw: ReloadedEvent(
        req_int(o, "cues"), str_list(o, "added"), str_list(o, "changed"), str_list(o, "removed"), raw),
    "decode-error": lambda o, raw: DecodeErrorEvent(req_int(o, "player"), req_str(o, "path"), req_str(o, "reason"), raw),
    "events-dropped": lambda o, raw: EventsDroppedEvent(req_int(o, "count"), raw),
    "paging": _paging,
    "level": lambda o, raw: LevelEvent(req_str(o, "level"), req_str(o, "previous"), req_str(o, "setBy"), raw),
    "meters": _meters,
}


def parse_event(obj: Mapping[str, Any]) -> Event:
    """The typed event for a line with an `"event"` member. Unknown kinds, and known kinds whose
    fields do not read, become a `GenericEvent` (a client must not fail on them)."""
    raw = dict(obj)
    kind = obj.get("event")
    kind = kind if isinstance(kind, str) else ""
    parser = _PARSERS.get(kind)
    if parser is None:
        return GenericEvent(kind, raw)
    try:
        return parser(obj, raw)
    except ProtocolViolation:
        return GenericEvent(kind, raw)
