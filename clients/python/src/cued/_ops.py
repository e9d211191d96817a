"""Every op once, without I/O: each function builds a `Call` (the request's fields and how to read
its reply), and the synchronous and asyncio clients both send them (client.py, aio.py), so the two
have the same surface, signatures and documentation."""
from __future__ import annotations

import functools
from typing import Any, Callable, Dict, Generic, List, Mapping, Optional, Sequence, TypeVar

from ._json import JSONObject, fields, object_list, req_bool, req_float, req_int, str_list
from .replies import (
    ClientInfo, CueInfo, GroupState, Hello, LevelState, PagingResult, PlayerPlayResult, PlayerProperties,
    PlayResult, PrepareResult, ReloadResult, Status, SystemSettings, VoiceInfo,
)

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])


class Call(Generic[T]):
    """One request: `op` and its fields, how its reply reads, and whether its reply may be deferred
    (answered after later requests: docs/PROTOCOL.md, "Connections and ordering")."""

    __slots__ = ("op", "fields", "parse", "deferrable", "hook", "carousel")

    def __init__(
        self, op: str, fields: JSONObject, parse: Callable[[Mapping[str, Any]], T], deferrable: bool = False,
        carousel: Optional[str] = None,
    ) -> None:
        self.op = op
        self.fields = fields
        self.parse = parse
        self.deferrable = deferrable
        #: Run with the reply object, on the thread or task that reads the socket, before anything
        #: read after it: where a caller registers for the events its request causes.
        self.hook: Optional[Callable[[Mapping[str, Any]], None]] = None
        #: Set for a carousel line (it has "carousel" and "event" and no "op").
        self.carousel = carousel

    def message(self, request_id: Optional[int]) -> JSONObject:
        """The request object, with `request_id` (None: no id, fire-and-forget)."""
        head: JSONObject = {} if request_id is None else {"id": request_id}
        if self.carousel is not None:
            return {**head, "carousel": self.carousel, **self.fields}
        return {**head, "op": self.op, **self.fields}


def describe(method: Callable[..., Any], op: Callable[..., Any], prefix: str = "") -> None:
    """Gives a generated method its op's name (less `prefix`), documentation and signature."""
    functools.update_wrapper(method, op)
    method.__name__ = op.__name__[len(prefix):] if op.__name__.startswith(prefix) else op.__name__
    method.__qualname__ = method.__name__


def sends(op: Callable[..., Call[Any]]) -> Callable[[F], F]:
    """Marks a method written by hand (not made from an op by `describe`) as one that sends the
    request `op` builds: tests/test_protocol.py finds every op's methods by this mark, and by
    `__wrapped__` on the generated ones."""
    def mark(method: F) -> F:
        setattr(method, "sends", op)
        return method
    return mark


def _nothing(reply: Mapping[str, Any]) -> None:
    return None


def request(op: str, **request_fields: Any) -> Call[Dict[str, Any]]:
    """Any op, with its fields as the wire spells them; the reply object as it came. For what the
    typed methods do not cover (an op newer than this package)."""
    deferrable = op in ("reload", "prepare", "player.prepare", "player.pause", "player.stop", "sound.create") or (
        op == "play" and "event" in request_fields)
    return Call(op, fields(**request_fields), dict, deferrable)


def hello(client: Optional[str] = None) -> Call[Hello]:
    """Says who this client is (`client`, logged by the daemon at debug level and matched against
    `[clients.NAME]` tables) and reads what the daemon is and can do."""
    return Call("hello", fields(client=client), Hello.from_json)


def ping() -> Call[bool]:
    """Checks that the daemon is alive and answering."""
    return Call("ping", {}, lambda reply: req_bool(reply, "pong"))


def play(
    cue: Optional[str] = None, *, event: Optional[str] = None, file: Optional[str] = None,
    volume: Optional[float] = None, pan: Optional[float] = None, loops: Optional[int] = None,
    notify: Optional[bool] = None, role: Optional[str] = None,
) -> Call[PlayResult]:
    """Starts a voice: of a cue, of the sound theme's sound for an `event` name (as libcanberra's
    `event.id`), or of a sound `file` (a daemon that takes `file`). Give exactly one of them.
    `volume` 0…1, `pan` -1…1, `loops` as AVAudioPlayer's numberOfLoops (0 once, n: n+1 times,
    negative: until stopped), `notify`: a `finished` event for this connection when it ends,
    `role`: what the sound is for, as libcanberra's `media.role` (a daemon with the feature
    `play-role`; the config's `[groups.NAME] roles` choose its group)."""
    return Call(
        "play", fields(cue=cue, event=event, file=file, volume=volume, pan=pan, loops=loops, notify=notify, role=role),
        PlayResult.from_json, deferrable=event is not None or file is not None)


def prepare(event: Optional[str] = None, *, file: Optional[str] = None) -> Call[PrepareResult]:
    """Decodes what a `play` of this sound-theme `event` or sound `file` would play and keeps it,
    playing nothing, so that the first play starts at once (libcanberra's `ca_context_cache`).
    Give exactly one of them. The reply comes when the decode is done (deferred)."""
    return Call("prepare", fields(event=event, file=file), PrepareResult.from_json, deferrable=True)


def stop(
    voice: Optional[int] = None, *, cue: Optional[str] = None, all: bool = False, fade: Optional[float] = None,
) -> Call[int]:
    """Stops one voice, every voice of a cue, or (`all=True`) every voice, with a fade (seconds,
    default 8 ms); returns how many were told to stop."""
    return Call("stop", fields(voice=voice, cue=cue, all=True if all else None, fade=fade),
                lambda reply: req_int(reply, "stopped"))


def cues() -> Call[List[CueInfo]]:
    """The `list` op: the loaded cues, sorted by name."""
    return Call("list", {}, lambda reply: [CueInfo.from_json(o) for o in object_list(reply, "cues")])


def voices() -> Call[List[VoiceInfo]]:
    """The voices sounding now, oldest first."""
    return Call("voices", {}, lambda reply: [VoiceInfo.from_json(o) for o in object_list(reply, "voices")])


def status() -> Call[Status]:
    """The daemon's state and counters."""
    return Call("status", {}, Status.from_json)


def reload() -> Call[ReloadResult]:
    """Rescans the sound directories; the reply comes when the rescan is done (deferred)."""
    return Call("reload", {}, ReloadResult.from_json, deferrable=True)


def subscribe(kinds: Optional[Sequence[str]] = None, ids: Optional[Sequence[int]] = None) -> Call[List[str]]:
    """The raw `subscribe` op: replaces the connection's subscription; the kinds it admits."""
    return Call("subscribe", fields(kinds=None if kinds is None else list(kinds), ids=None if ids is None else list(ids)),
                lambda reply: str_list(reply, "kinds"))


def unsubscribe() -> Call[None]:
    """The raw `unsubscribe` op."""
    return Call("unsubscribe", {}, _nothing)


def system(volume: Optional[float] = None, muted: Optional[bool] = None) -> Call[SystemSettings]:
    """Reads, and with `volume` or `muted` changes, the system-sound volume and mute switch."""
    return Call("system", fields(volume=volume, muted=muted), SystemSettings.from_json)


def level(level: Optional[str] = None) -> Call[LevelState]:
    """Reads, and with `level` ("full", "quiet", "silent") sets, how much may sound."""
    return Call("level", fields(level=level), LevelState.from_json)


def group(
    group: Optional[str] = None, *, volume: Optional[float] = None, muted: Optional[bool] = None,
) -> Call[List[GroupState]]:
    """Reads every group, or reads and changes one (its `volume` and `muted`)."""
    return Call("group", fields(group=group, volume=volume, muted=muted),
                lambda reply: [GroupState.from_json(o) for o in object_list(reply, "groups")])


def meters(rate: float) -> Call[float]:
    """Asks for `meters` events on this connection, `rate` (0…30) a second: the peak and RMS of the
    mix and of each voice (`MetersEvent`; read them with `events(["meters"], subscribe=False)`).
    0 stops them; so does closing the connection. The rate in force now."""
    return Call("meters", {"rate": rate}, lambda reply: req_float(reply, "rate"))


def stop_meters() -> Call[float]:
    """Stops this connection's `meters` events (the `meters` op with the rate 0)."""
    return meters(0)


def clients() -> Call[List[ClientInfo]]:
    """The connections the daemon serves now, oldest first, this one included (`asking`)."""
    return Call("clients", {}, lambda reply: [ClientInfo.from_json(o) for o in object_list(reply, "clients")])


# --- Players (AVAudioPlayer's model) -------------------------------------------------------------


def player_create(
    cue: Optional[str] = None, *, path: Optional[str] = None, detached: bool = False, enable_rate: bool = False,
    metering_enabled: bool = False, volume: Optional[float] = None, pan: Optional[float] = None,
    number_of_loops: Optional[int] = None, current_time: Optional[float] = None, rate: Optional[float] = None,
    fade: Optional[float] = None,
) -> Call[PlayerProperties]:
    """Makes a player of a cue or of a sound file (`path`, inside a sound directory). Nothing plays
    yet. `detached`: it outlives this connection. `rate` needs `enable_rate=True`."""
    return Call(
        "player.create",
        fields(cue=cue, path=path, detached=detached or None, enableRate=enable_rate or None,
               meteringEnabled=metering_enabled or None, volume=volume, pan=pan, numberOfLoops=number_of_loops,
               currentTime=current_time, rate=rate, fade=fade),
        PlayerProperties.from_json)


def player_prepare(player: int) -> Call[PlayerProperties]:
    """AVAudioPlayer's prepareToPlay: opens the device (and decodes a path player's file), so that
    `play` starts within one period."""
    return Call("player.prepare", {"player": player}, PlayerProperties.from_json, deferrable=True)


def player_play(player: int, at_time: Optional[float] = None) -> Call[PlayerPlayResult]:
    """Plays from `current_time`, at once or when the device clock reaches `at_time` (seconds on the
    `device_current_time` clock: players given the same time start on the same frame)."""
    return Call("player.play", fields(player=player, atTime=at_time), PlayerPlayResult.from_json)


def player_pause(player: int) -> Call[PlayerProperties]:
    """Pauses at once and exactly; the reply has the paused position. No `finished` event."""
    return Call("player.pause", {"player": player}, PlayerProperties.from_json, deferrable=True)


def player_stop(player: int) -> Call[PlayerProperties]:
    """Stops with a short fade, keeping the position (AVAudioPlayer's stop). No `finished` event."""
    return Call("player.stop", {"player": player}, PlayerProperties.from_json, deferrable=True)


def player_set(
    player: int, *, volume: Optional[float] = None, pan: Optional[float] = None, number_of_loops: Optional[int] = None,
    current_time: Optional[float] = None, rate: Optional[float] = None, fade: Optional[float] = None,
) -> Call[PlayerProperties]:
    """Changes properties together (all or none); `fade` ramps a volume or pan change (seconds)."""
    return Call(
        "player.set",
        fields(player=player, volume=volume, pan=pan, numberOfLoops=number_of_loops, currentTime=current_time,
               rate=rate, fade=fade),
        PlayerProperties.from_json)


def player_set_volume(player: int, volume: float, fade: Optional[float] = None) -> Call[PlayerProperties]:
    """AVAudioPlayer's volume (0…1), ramped over `fade` seconds while it plays
    (setVolume(_:fadeDuration:))."""
    return player_set(player, volume=volume, fade=fade)


def player_set_pan(player: int, pan: float, fade: Optional[float] = None) -> Call[PlayerProperties]:
    """The pan (-1…1), ramped over `fade` seconds while it plays."""
    return player_set(player, pan=pan, fade=fade)


def player_set_number_of_loops(player: int, number_of_loops: int) -> Call[PlayerProperties]:
    """0 plays once, n plays n+1 times, negative loops until paused or stopped."""
    return player_set(player, number_of_loops=number_of_loops)


def player_set_current_time(player: int, current_time: float) -> Call[PlayerProperties]:
    """Seeks (seconds within the current pass; sample-accurate while it plays)."""
    return player_set(player, current_time=current_time)


def player_set_rate(player: int, rate: float) -> Call[PlayerProperties]:
    """The speed, 0.5…2 (needs `enable_rate=True` at creation)."""
    return player_set(player, rate=rate)


def player_get(player: int) -> Call[PlayerProperties]:
    """Reads the player's properties."""
    return Call("player.get", {"player": player}, PlayerProperties.from_json)


def player_destroy(player: int) -> Call[int]:
    """Destroys the player (a sounding one fades out in 8 ms). No `finished` event."""
    return Call("player.destroy", {"player": player}, lambda reply: req_int(reply, "destroyed"))


# --- System sounds (System Sound Services' model) ------------------------------------------------


def sound_create(cue: Optional[str] = None, *, path: Optional[str] = None, detached: bool = False) -> Call[int]:
    """Makes a system sound of a cue or a sound file; its id. With a path the reply waits for the
    decode (deferred)."""
    return Call("sound.create", fields(cue=cue, path=path, detached=detached or None),
                lambda reply: req_int(reply, "sound"), deferrable=path is not None)


def sound_play(sound: int) -> Call[PlayResult]:
    """Plays the sound once, fire-and-forget, at the system-sound volume."""
    return Call("sound.play", {"sound": sound}, PlayResult.from_json)


def sound_completion(sound: int, enabled: bool = True) -> Call[bool]:
    """Asks for (or, `enabled=False`, stops) a `completion` event for every play of the sound."""
    return Call("sound.completion", fields(sound=sound, enabled=None if enabled else False),
                lambda reply: req_bool(reply, "completion"))


def sound_dispose(sound: int, now: bool = False) -> Call[int]:
    """Disposes of the sound: what it plays finishes (`now=True`: fades out). How many plays were
    still sounding."""
    return Call("sound.dispose", fields(sound=sound, now=True if now else None), lambda reply: req_int(reply, "playing"))


# --- Carousel lines ---------------------------------------------------------------------------------


def carousel(name: str, event: str, event_fields: Mapping[str, Any]) -> Call[PagingResult]:
    """A carousel line (docs/PROTOCOL.md, 4b): `event` with its fields, for the carousel `name`."""
    return Call("carousel", {"event": event, **fields(**event_fields)}, PagingResult.from_json, carousel=name)
