"""The daemon's replies (docs/PROTOCOL.md, section 3), each a typed dataclass. Every one keeps the
whole reply object as `raw`, for fields this version does not know."""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional

from ._json import (
    float_list, object_list, opt_bool, opt_float, opt_int, opt_str, req_bool, req_float, req_int, req_object,
    req_str, str_list,
)


def _raw() -> Any:
    return field(default_factory=dict, repr=False, compare=False)


class Reason(str, enum.Enum):
    """Why a play was silent or a voice ended (docs/PROTOCOL.md, "Silent plays" and `finished`):
    the `reason` of a silent `play`, `player.play` or `sound.play` reply, of `finished` and
    `completion` events, and a carousel decision's `silenced`. The fields keep the string, for a
    reason a newer daemon may add; compare them with these (`Reason.COOLDOWN == "cooldown"`)."""

    #: It played to the end of its last loop.
    END = "end"
    #: A client stopped it.
    STOPPED = "stopped"
    #: The voice limit was reached and a newer voice took its place.
    STOLEN = "stolen"
    #: Its system sound was disposed of with `now=True`.
    DISPOSED = "disposed"
    #: The output device went away and the voice grew too old to be played late.
    DEVICE_LOST = "device-lost"
    #: It could not be played (a player's file failed to decode).
    ERROR = "error"
    #: Silent: within the cue's cooldown after its last start.
    COOLDOWN = "cooldown"
    #: Silent: the cue's `max-instances` refuses more, or every voice plays a cue of higher priority.
    CAP = "cap"
    #: Silent: the level (or the client's ceiling) does not allow it, or a level change faded it out.
    LEVEL = "level"
    #: Silent: the cue is muted, or (system sounds) the system-sound switch.
    MUTED = "muted"
    #: Silent: its group is muted.
    GROUP_MUTED = "group-muted"
    #: Silent: it could not start before its deadline (a paging binding's `deadline`).
    TOO_LATE = "too-late"
    #: Silent: a sound-theme event while the desktop's event sounds are off.
    EVENT_SOUNDS_OFF = "event-sounds-off"


@dataclass(frozen=True)
class Capabilities:
    """What the daemon can do (hello's `capabilities`): detect features here rather than by version."""

    ops: List[str]
    events: List[str]
    carousel: List[str]
    features: List[str]
    limits: Dict[str, int]

    @classmethod
    def from_json(cls, o: Mapping[str, Any]) -> "Capabilities":
        limits = o.get("limits")
        return cls(
            str_list(o, "ops"), str_list(o, "events"), str_list(o, "carousel"), str_list(o, "features"),
            {k: v for k, v in limits.items() if isinstance(v, int)} if isinstance(limits, dict) else {})


@dataclass(frozen=True)
class Hello:
    """Who answered: `server` ("cued"), its `version`, the `protocol` (1) and its capabilities
    (None from a daemon older than that field)."""

    server: str
    version: str
    protocol: int
    capabilities: Optional[Capabilities]
    raw: Dict[str, Any] = _raw()

    @classmethod
    def from_json(cls, o: Mapping[str, Any]) -> "Hello":
        capabilities = o.get("capabilities")
        return cls(
            req_str(o, "server"), req_str(o, "version"), req_int(o, "protocol"),
            Capabilities.from_json(capabilities) if isinstance(capabilities, dict) else None, dict(o))


@dataclass(frozen=True)
class PlayResult:
    """The reply to `play` and `sound.play`: the voice (None for a silent `sound.play`), whether
    it sounds (`played`) and if not why (`reason`), the voice it stole, the variation and the
    theme's file."""

    voice: Optional[int]
    played: bool
    reason: Optional[str] = None
    stole: Optional[int] = None
    variation: Optional[str] = None
    file: Optional[str] = None
    raw: Dict[str, Any] = _raw()

    @classmethod
    def from_json(cls, o: Mapping[str, Any]) -> "PlayResult":
        played = opt_bool(o, "played")
        return cls(
            opt_int(o, "voice"), played if played is not None else True, opt_str(o, "reason"), opt_int(o, "stole"),
            opt_str(o, "variation"), opt_str(o, "file"), dict(o))


@dataclass(frozen=True)
class PrepareResult:
    """The reply to `prepare`: the file decoded (the theme's file for an event, or the file's real
    path) and the memory its decode takes, in bytes."""

    file: str
    bytes: int
    raw: Dict[str, Any] = _raw()

    @classmethod
    def from_json(cls, o: Mapping[str, Any]) -> "PrepareResult":
        return cls(req_str(o, "file"), req_int(o, "bytes"), dict(o))


@dataclass(frozen=True)
class CueInfo:
    """One cue of `list`."""

    name: str
    duration: float
    frames: int
    source_rate: int
    channels: int
    bytes: int
    gapless: bool
    path: str
    format: Optional[str] = None
    loudness: Optional[float] = None
    peak: Optional[float] = None
    set: Optional[str] = None
    raw: Dict[str, Any] = _raw()

    @classmethod
    def from_json(cls, o: Mapping[str, Any]) -> "CueInfo":
        return cls(
            req_str(o, "name"), req_float(o, "duration"), req_int(o, "frames"), req_int(o, "sourceRate"),
            req_int(o, "channels"), req_int(o, "bytes"), req_bool(o, "gapless"), req_str(o, "path"),
            opt_str(o, "format"), opt_float(o, "loudness"), opt_float(o, "peak"), opt_str(o, "set"), dict(o))


@dataclass(frozen=True)
class VoiceInfo:
    """One sounding voice of `voices`."""

    voice: int
    cue: str
    loops: int
    seconds: float
    stopping: bool
    player: Optional[int] = None
    sound: Optional[int] = None
    raw: Dict[str, Any] = _raw()

    @classmethod
    def from_json(cls, o: Mapping[str, Any]) -> "VoiceInfo":
        return cls(
            req_int(o, "voice"), req_str(o, "cue"), req_int(o, "loops"), req_float(o, "seconds"),
            req_bool(o, "stopping"), opt_int(o, "player"), opt_int(o, "sound"), dict(o))


@dataclass(frozen=True)
class Status:
    """The reply to `status`: the common fields typed; `device`, `paging`, `silenced`,
    `triggerLatency`, `scheduling` and anything newer are in `raw` (and `device` as a dict)."""

    version: str
    pid: int
    uptime: float
    device: Dict[str, Any]
    voices: int
    voice_limit: int
    plays: int
    cues: int
    clients: int
    players: int
    sounds: int
    system_volume: float
    system_muted: bool
    device_current_time: float
    events_dropped: int
    socket: Optional[str]
    raw: Dict[str, Any] = _raw()

    @property
    def device_state(self) -> str:
        """"closed", "open" or "lost"."""
        return str(self.device.get("state", ""))

    @classmethod
    def from_json(cls, o: Mapping[str, Any]) -> "Status":
        return cls(
            req_str(o, "version"), req_int(o, "pid"), req_float(o, "uptime"), req_object(o, "device"),
            req_int(o, "voices"), req_int(o, "voiceLimit"), req_int(o, "plays"), req_int(o, "cues"),
            req_int(o, "clients"), req_int(o, "players"), req_int(o, "sounds"), req_float(o, "systemVolume"),
            req_bool(o, "systemMuted"), req_float(o, "deviceCurrentTime"), opt_int(o, "eventsDropped") or 0,
            opt_str(o, "socket"), dict(o))


@dataclass(frozen=True)
class ClientInfo:
    """One connection of `clients`: the daemon's number for it (never reused), the name it gave in
    `hello`, whether it has a subscription, its `meters` rate (None: it asked for none), and
    whether it is the connection that asked."""

    connection: int
    subscribed: bool
    asking: bool
    name: Optional[str] = None
    meters: Optional[float] = None
    raw: Dict[str, Any] = _raw()

    @classmethod
    def from_json(cls, o: Mapping[str, Any]) -> "ClientInfo":
        return cls(req_int(o, "connection"), req_bool(o, "subscribed"), req_bool(o, "asking"), opt_str(o, "name"),
                   opt_float(o, "meters"), dict(o))


@dataclass(frozen=True)
class ReloadResult:
    """The reply to `reload`: the cues now, the names added, changed and removed, and every file
    that did not load (`{"path": …, "reason": …}`)."""

    cues: int
    added: List[str]
    changed: List[str]
    removed: List[str]
    failed: List[Dict[str, Any]]
    raw: Dict[str, Any] = _raw()

    @classmethod
    def from_json(cls, o: Mapping[str, Any]) -> "ReloadResult":
        return cls(
            req_int(o, "cues"), str_list(o, "added"), str_list(o, "changed"), str_list(o, "removed"),
            object_list(o, "failed"), dict(o))


@dataclass(frozen=True)
class PlayerProperties:
    """A player's properties, AVAudioPlayer's names in Python's spelling (the reply of every
    player op but `player.play` and `player.destroy`). `average_power` and `peak_power` are present
    with metering enabled; `cue` is None until a path player's file is decoded."""

    volume: float
    pan: float
    number_of_loops: int
    current_time: float
    duration: float
    is_playing: bool
    number_of_channels: int
    device_current_time: float
    enable_rate: bool
    rate: float
    metering_enabled: bool
    detached: bool
    cue: Optional[str] = None
    average_power: Optional[List[float]] = None
    peak_power: Optional[List[float]] = None
    raw: Dict[str, Any] = _raw()

    @classmethod
    def from_json(cls, o: Mapping[str, Any]) -> "PlayerProperties":
        return cls(
            req_float(o, "volume"), req_float(o, "pan"), req_int(o, "numberOfLoops"), req_float(o, "currentTime"),
            req_float(o, "duration"), req_bool(o, "isPlaying"), req_int(o, "numberOfChannels"),
            req_float(o, "deviceCurrentTime"), req_bool(o, "enableRate"), req_float(o, "rate"),
            req_bool(o, "meteringEnabled"), req_bool(o, "detached"), opt_str(o, "cue"), float_list(o, "averagePower"),
            float_list(o, "peakPower"), dict(o))


@dataclass(frozen=True)
class PlayerPlayResult:
    """The reply to `player.play`: `playing` (False: the gate keeps it silent, for `reason`)."""

    playing: bool
    reason: Optional[str] = None
    raw: Dict[str, Any] = _raw()

    @classmethod
    def from_json(cls, o: Mapping[str, Any]) -> "PlayerPlayResult":
        return cls(req_bool(o, "playing"), opt_str(o, "reason"), dict(o))


@dataclass(frozen=True)
class SystemSettings:
    """The system-sound switch: the `system` group's volume and mute."""

    volume: float
    muted: bool

    @classmethod
    def from_json(cls, o: Mapping[str, Any]) -> "SystemSettings":
        return cls(req_float(o, "volume"), req_bool(o, "muted"))


@dataclass(frozen=True)
class LevelState:
    """The level ("full", "quiet", "silent"), what set it, and the quiet hours if configured."""

    level: str
    set_by: str
    quiet_hours: Optional[str] = None
    in_quiet_hours: Optional[bool] = None

    @classmethod
    def from_json(cls, o: Mapping[str, Any]) -> "LevelState":
        return cls(req_str(o, "level"), req_str(o, "setBy"), opt_str(o, "quietHours"), opt_bool(o, "inQuietHours"))


@dataclass(frozen=True)
class GroupState:
    """One group: its volume, mute, the ducking in force (a linear factor) and whether it plays
    at the quiet level."""

    name: str
    volume: float
    muted: bool
    ducked: float
    at_quiet: Optional[bool] = None

    @classmethod
    def from_json(cls, o: Mapping[str, Any]) -> "GroupState":
        return cls(req_str(o, "name"), req_float(o, "volume"), req_bool(o, "muted"), req_float(o, "ducked"),
                   opt_bool(o, "atQuiet"))


@dataclass(frozen=True)
class PagingResult:
    """The reply to a carousel message sent with an id: the decision and what it played."""

    decision: str
    cue: Optional[str] = None
    voice: Optional[int] = None
    silenced: Optional[str] = None
    pages: Optional[int] = None
    out_of_order: bool = False
    settled: bool = False
    raw: Dict[str, Any] = _raw()

    @classmethod
    def from_json(cls, o: Mapping[str, Any]) -> "PagingResult":
        return cls(
            req_str(o, "decision"), opt_str(o, "cue"), opt_int(o, "voice"), opt_str(o, "silenced"), opt_int(o, "pages"),
            opt_bool(o, "outOfOrder") is True, opt_bool(o, "settled") is True, dict(o))
