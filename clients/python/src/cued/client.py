"""The synchronous client: `Client`, its players (`Player`, AVAudioPlayer's model), system sounds
(`SystemSound`, System Sound Services' model), event streams and carousel sessions.

One connection; a reader thread reads the socket and hands each line on in the order it came: a
reply to the call waiting for it (any number of threads may have calls in flight), an event to
the streams that want it. Callbacks run on one more thread of their own, in order, so they may
make calls themselves.
"""
from __future__ import annotations

import concurrent.futures
import functools
import logging
import os
import queue
import socket
import sys
import threading
import time
from typing import (
    TYPE_CHECKING, Any, Callable, Dict, Generic, Iterable, List, Optional, Sequence, Tuple, Type, TypeVar, Union, cast, overload,
)

from . import _ops
from ._core import Core, Sink, Subscription, subscription_call
from ._json import encode_line
from ._ops import Call, describe
from ._paths import default_socket_path
from .carousel import CarouselMessage, ScrollTracker
from .errors import Disconnected, ProtocolViolation, RequestTimeout, Unreachable
from .events import CompletionEvent, Event, FinishedEvent, ReconnectedEvent
from .replies import Hello, PagingResult, PlayerProperties, PlayResult

if TYPE_CHECKING:
    if sys.version_info >= (3, 10):
        from typing import Concatenate, ParamSpec
    else:
        from typing_extensions import Concatenate, ParamSpec
    P = ParamSpec("P")

T = TypeVar("T")
R = TypeVar("R")
log = logging.getLogger("cued")


def program_name() -> str:
    """The name a client gives in `hello` unless told otherwise: the program's file name."""
    name = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    return name if name and name != "-c" else "python"


def event_matches(event: Event, kind: Optional[str], where: Optional[Callable[[Event], bool]],
                  fields: Any) -> bool:
    """Whether `event` is of `kind` (None: any), passes `where` and has the attribute values `fields`."""
    missing = object()
    return ((kind is None or event.kind == kind) and (where is None or where(event))
            and all(getattr(event, key, missing) == value for key, value in fields.items()))


def lost_completion(sound: int, error: BaseException) -> CompletionEvent:
    """What a completion handler gets when the connection went before the play's completion."""
    return CompletionEvent(sound, None, False, "disconnected", {"event": "completion", "error": str(error)})


# --- methods made from the ops (cued._ops), so that both clients have the same surface ---------------


def _op(op: Callable[P, Call[T]]) -> Callable[Concatenate[Client, P], T]:
    def method(self: Client, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return self.call(op(*args, **kwargs))
    describe(method, op)
    return method


def _make(op: Callable[P, Call[T]], make: Callable[[Client, T], R]) -> Callable[Concatenate[Client, P], R]:
    def method(self: Client, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return make(self, self.call(op(*args, **kwargs)))
    describe(method, op)
    return method


def _until_finished(op: Callable[P, Call[Any]]) -> Callable[Concatenate[Client, P], FinishedEvent]:
    def method(self: Client, /, *args: P.args, **kwargs: P.kwargs) -> FinishedEvent:
        call = op(*args, **kwargs)
        call.fields["notify"] = True
        return cast(FinishedEvent, self.call_until(call, self._core.finished_hook))
    describe(method, op)
    method.__doc__ = "Plays as `play` does and waits for the voice's `finished` event, which it returns."
    method.__name__ = method.__qualname__ = "play_to_end"
    return method


def _player_op(op: Callable[Concatenate[int, P], Call[T]]) -> Callable[Concatenate[Player, P], T]:
    def method(self: Player, /, *args: P.args, **kwargs: P.kwargs) -> T:
        value = self.client.call(op(self.id, *args, **kwargs))
        if isinstance(value, PlayerProperties):
            self.properties = value
        return value
    describe(method, op, "player_")
    return method


def _sound_op(op: Callable[Concatenate[int, P], Call[T]]) -> Callable[Concatenate[SystemSound, P], T]:
    def method(self: SystemSound, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return self.client.call(op(self.id, *args, **kwargs))
    describe(method, op, "sound_")
    return method


def _scroll(step: Callable[Concatenate[ScrollTracker, P], List[CarouselMessage]]
            ) -> Callable[Concatenate[CarouselSession, P], List[PagingResult]]:
    def method(self: CarouselSession, /, *args: P.args, **kwargs: P.kwargs) -> List[PagingResult]:
        return self.send(step(self.tracker, *args, **kwargs))
    describe(method, step)
    return method


class _Dispatcher:
    """Runs callbacks one after another on a thread of their own."""

    def __init__(self) -> None:
        self._queue: queue.Queue[Optional[Tuple[Callable[[Any], Any], Any]]] = queue.Queue()
        self._thread = threading.Thread(target=self._run, name="cued-callbacks", daemon=True)
        self._thread.start()

    def submit(self, function: Callable[[Any], Any], argument: Any) -> None:
        self._queue.put((function, argument))

    def stop(self) -> None:
        self._queue.put(None)

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            function, argument = item
            try:
                function(argument)
            except Exception:
                log.exception("a cued event callback raised")


class Client:
    """A connection to cued. Nothing connects until `connect()`, `with`, or the first call; a call
    after the connection was lost connects again (sending `hello` and the subscription again).

    `socket_path`: default `$CUED_SOCKET`, else `$XDG_RUNTIME_DIR/cued/cued.sock`, else
    `/tmp/cued-UID/cued.sock`. `name`: the client's name in `hello` (the daemon's `[clients.NAME]`
    tables apply to it); default the program's file name. `timeout`: seconds to wait for a reply
    (None: no limit) before `RequestTimeout`.
    """

    def __init__(self, socket_path: Optional[str] = None, *, name: Optional[str] = None,
                 timeout: Optional[float] = 30.0) -> None:
        self.socket_path = default_socket_path(socket_path)
        self.name = program_name() if name is None else name
        self.timeout = timeout
        #: The `hello` reply of the connection now (None while not connected).
        self.server: Optional[Hello] = None
        self._core = Core()
        self._lock = threading.RLock()  # the core and the connection's state
        self._write_lock = threading.Lock()  # whole lines, in the order of their ids
        self._connect_lock = threading.Lock()
        self._subscription_lock = threading.Lock()
        self._sock: Optional[socket.socket] = None
        self._reader: Optional[threading.Thread] = None
        self._dispatcher: Optional[_Dispatcher] = None
        self._streams: List[EventStream] = []
        self._was_connected = False

    # --- the connection -----------------------------------------------------------------------------

    def connect(self) -> Hello:
        """Connects (if not connected) and says `hello`; the daemon's reply."""
        with self._connect_lock:
            if self._sock is not None and self.server is not None:
                return self.server
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                sock.connect(self.socket_path)
            except OSError as error:
                sock.close()
                raise Unreachable(self.socket_path, error.strerror or str(error)) from None
            with self._lock:
                self._sock = sock
                self._core.refusal = None
            self._reader = threading.Thread(target=self._read, args=(sock,), name="cued-reader", daemon=True)
            self._reader.start()
            hello = self._send(_ops.hello(self.name))
            self.server = hello
            with self._lock:
                self._core.sent = None
            self._sync_subscription()
            if self._was_connected:
                with self._lock:
                    self._core.dispatch(ReconnectedEvent({"event": "reconnected"}))
            self._was_connected = True
            return hello

    def close(self) -> None:
        """Closes the connection: its players are destroyed and its system sounds disposed of (not
        detached ones), waiting calls fail with `Disconnected`, event streams end. A later call
        connects again."""
        with self._lock:
            streams, self._streams = self._streams, []
            self._core.sinks.clear()
            self._core.base = None
            sock = self._sock
        for stream in streams:
            stream._end()
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        reader = self._reader
        if reader is not None and reader is not threading.current_thread():
            reader.join(5)
        if self._dispatcher is not None:
            self._dispatcher.stop()
            self._dispatcher = None

    def __enter__(self) -> "Client":
        self.connect()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def connected(self) -> bool:
        return self._sock is not None

    def _read(self, sock: socket.socket) -> None:
        reason = "cued closed the connection"
        try:
            while True:
                data = sock.recv(262144)
                if not data:
                    break
                with self._lock:
                    self._core.feed(data)
        except ProtocolViolation as violation:
            reason = str(violation)
        except OSError as error:
            reason = error.strerror or str(error)
        with self._lock:
            if self._sock is sock:
                self._sock = None
                self.server = None
                self._core.connection_lost(Disconnected(self.socket_path, reason), reason)
        sock.close()

    # --- requests ---------------------------------------------------------------------------------

    def call(self, call: Call[T]) -> T:
        """Sends a request (a `Call` from cued's ops) and waits for its reply; connects first if
        needed. Raises the `RequestError` subclass of an error reply."""
        if threading.current_thread() is self._reader:
            raise RuntimeError("a cued call cannot wait for its reply on the thread that reads the replies")
        if self._sock is None or self.server is None:
            self.connect()
        return self._send(call)

    def _send(self, call: Call[T]) -> T:
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()

        def settle(value: Any, error: Optional[BaseException]) -> None:
            if error is None:
                future.set_result(value)
            else:
                future.set_exception(error)

        with self._write_lock:
            with self._lock:
                sock = self._sock
                if sock is None:
                    raise self._core.refusal or Disconnected(self.socket_path, "not connected")
                request_id, line = self._core.begin(call, settle)
            try:
                sock.sendall(line)
            except OSError as error:
                with self._lock:
                    self._core.cancel(request_id)
                raise self._refusal_or(Disconnected(self.socket_path, error.strerror or str(error))) from None
        try:
            return cast(T, future.result(self.timeout))
        except concurrent.futures.TimeoutError:
            with self._lock:
                self._core.cancel(request_id)
            raise RequestTimeout(call.op, self.timeout or 0) from None

    def _refusal_or(self, error: Exception) -> Exception:
        """What a failed write means: the daemon's refusal, once the reader has read it (a daemon at
        its client limit answers and closes at once), or `error`."""
        reader = self._reader
        if reader is not None and reader is not threading.current_thread():
            reader.join(1)
        return self._core.refusal or error

    def call_until(
        self, call: Call[Any],
        hook: Callable[[Callable[[Event], None], Callable[[BaseException], None]], Callable[[Any], None]],
        timeout: Optional[float] = None,
    ) -> Event:
        """Sends `call` and waits for the event its reply hook waits for (`play_to_end`)."""
        future: concurrent.futures.Future[Event] = concurrent.futures.Future()
        call.hook = hook(future.set_result, future.set_exception)
        self.call(call)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            raise RequestTimeout(call.op, timeout or 0) from None

    def post(self, call: Call[Any]) -> None:
        """Sends a request without an id and does not wait: fire-and-forget (carousel lines)."""
        if self._sock is None or self.server is None:
            self.connect()
        line = encode_line(call.message(None))
        with self._write_lock:
            sock = self._sock
            if sock is None:
                raise Disconnected(self.socket_path, "not connected")
            try:
                sock.sendall(line)
            except OSError as error:
                raise Disconnected(self.socket_path, error.strerror or str(error)) from None

    # --- the ops ----------------------------------------------------------------------------------

    request = _op(_ops.request)
    hello = _op(_ops.hello)
    ping = _op(_ops.ping)
    play = _op(_ops.play)
    play_to_end = _until_finished(_ops.play)
    prepare = _op(_ops.prepare)
    stop = _op(_ops.stop)
    cues = _op(_ops.cues)
    voices = _op(_ops.voices)
    status = _op(_ops.status)
    reload = _op(_ops.reload)
    system = _op(_ops.system)
    level = _op(_ops.level)
    group = _op(_ops.group)
    meters = _op(_ops.meters)
    stop_meters = _op(_ops.stop_meters)
    clients = _op(_ops.clients)
    create_player = _make(_ops.player_create, lambda client, properties: Player(client, properties))
    create_sound = _make(_ops.sound_create, lambda client, sound: SystemSound(client, sound))

    def player(self, player_id: int) -> "Player":
        """A player made elsewhere (a detached one, or another connection's), by its id."""
        return Player(client=self, player_id=player_id)

    def sound(self, sound_id: int) -> "SystemSound":
        """A system sound made elsewhere, by its id."""
        return SystemSound(self, sound_id)

    def carousel(self, name: str = "default", page_count: int = 7, *, page: int = 0, loops: bool = True,
                 page_width: float = 1.0, replies: bool = False) -> "CarouselSession":
        """A carousel's messages: a `ScrollTracker` of `page_count` pages whose every step is sent
        as carousel `name`'s lines, fire-and-forget (`replies=True`: each with an id, returning the
        daemon's decisions)."""
        return CarouselSession(self, name, ScrollTracker(page_count, page_width, page, loops), replies)

    # --- events -----------------------------------------------------------------------------------

    @_ops.sends(_ops.subscribe)
    def subscribe(self, kinds: Optional[Sequence[str]] = None, ids: Optional[Sequence[int]] = None) -> List[str]:
        """Asks for events of these kinds (None: all) about these ids (None: any), besides what
        the open streams ask for; the kinds the connection's subscription admits now. The events
        go to `events()` streams and `on_event` callbacks."""
        with self._lock:
            self._core.base = (None if kinds is None else tuple(kinds), None if ids is None else tuple(ids))
        return self._sync_subscription(force=True)

    @_ops.sends(_ops.unsubscribe)
    def unsubscribe(self) -> None:
        """Takes back `subscribe()`; the open streams keep what they asked for."""
        with self._lock:
            self._core.base = None
        self._sync_subscription(force=True)

    def events(self, kinds: Optional[Sequence[str]] = None, ids: Optional[Sequence[int]] = None,
               subscribe: bool = True) -> "EventStream":
        """A stream (an iterator) of the events of these kinds about these ids, from now until it
        is closed. With `subscribe`, the client subscribes to them; without, the stream gets the
        events the connection is owed anyway (the `finished` of its `notify` plays and players,
        its completions) and what other streams asked for."""
        return self._open(EventStream(self, kinds, ids, subscribe))

    def on_event(self, callback: Callable[[Event], Any], kinds: Optional[Sequence[str]] = None,
                 ids: Optional[Sequence[int]] = None, subscribe: bool = True) -> "EventStream":
        """Calls `callback` with each event of these kinds about these ids (on the client's callback
        thread, in order) until the returned stream is closed."""
        return self._open(EventStream(self, kinds, ids, subscribe, callback))

    def _open(self, stream: "EventStream") -> "EventStream":
        with self._lock:
            self._streams.append(stream)
            self._core.sinks.append(stream._sink)
        if stream._sink.subscribe:
            self._sync_subscription()
        return stream

    def _closed_stream(self, stream: "EventStream") -> None:
        with self._lock:
            if stream in self._streams:
                self._streams.remove(stream)
            if stream._sink in self._core.sinks:
                self._core.sinks.remove(stream._sink)
            connected = self._sock is not None
        if stream._sink.subscribe and connected:
            self._sync_subscription()

    def _sync_subscription(self, force: bool = False) -> List[str]:
        """Gives the daemon the subscription the streams and `subscribe()` add up to."""
        if self._sock is None or self.server is None:
            self.connect()  # which sends it
            if not force:
                return []
        with self._subscription_lock:
            with self._lock:
                wanted: Subscription = self._core.wanted()
                if wanted == self._core.sent and not force:
                    return []
            admitted = self._send(subscription_call(wanted))
            with self._lock:
                self._core.sent = wanted
        return list(admitted or [])

    def _dispatch(self, callback: Callable[[Any], Any], argument: Any) -> None:
        with self._lock:
            if self._dispatcher is None:
                self._dispatcher = _Dispatcher()
            self._dispatcher.submit(callback, argument)


class EventStream:
    """Events from the daemon, in the order they came: iterate it (blocking), or `get` with a
    timeout, or `wait_for` one. Close it (or use `with`) when done; the client's `close()` ends it."""

    def __init__(self, client: Client, kinds: Optional[Iterable[str]], ids: Optional[Iterable[int]], subscribe: bool,
                 callback: Optional[Callable[[Event], Any]] = None) -> None:
        self.client = client
        self._queue: queue.Queue[Optional[Event]] = queue.Queue()
        push: Callable[[Event], None] = self._queue.put
        if callback is not None:
            push = functools.partial(client._dispatch, callback)
        self._sink = Sink(push, kinds, ids, subscribe)
        self.closed = False

    def __iter__(self) -> "EventStream":
        return self

    def __next__(self) -> Event:
        event = self._queue.get()
        if event is None:
            self._queue.put(None)
            raise StopIteration
        return event

    def get(self, timeout: Optional[float] = None) -> Optional[Event]:
        """The next event, waiting at most `timeout` seconds (None: no limit); None when none came
        or the stream ended."""
        try:
            event = self._queue.get(timeout=timeout)
        except queue.Empty:
            return None
        if event is None:
            self._queue.put(None)
        return event

    def wait_for(self, kind: Optional[str] = None, timeout: float = 5.0, where: Optional[Callable[[Event], bool]] = None,
                 **fields: Any) -> Event:
        """The next event of `kind` whose attributes have the values `fields` (`voice=3`) and that
        passes `where`; the events before it are taken off the stream. Raises TimeoutError."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            event = self.get(max(0.0, left)) if left > 0 else None
            if event is None:
                raise TimeoutError("no %s event %r within %g s" % (kind or "", fields, timeout))
            if event_matches(event, kind, where, fields):
                return event

    def close(self) -> None:
        """Stops the stream (and narrows the subscription)."""
        if not self.closed:
            self._end()
            self.client._closed_stream(self)

    def _end(self) -> None:
        self.closed = True
        self._queue.put(None)

    def __enter__(self) -> "EventStream":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Property(Generic[T]):
    """A player property read with `player.get` (one request) and, if settable, written with
    `player.set`: AVAudioPlayer's properties."""

    def __init__(self, attribute: str, settable: bool = True) -> None:
        self.attribute = attribute
        self.settable = settable

    @overload
    def __get__(self, player: None, owner: Type[Any]) -> "_Property[T]": ...

    @overload
    def __get__(self, player: "Player", owner: Type[Any]) -> T: ...

    def __get__(self, player: Optional["Player"], owner: Type[Any]) -> Union[T, "_Property[T]"]:
        if player is None:
            return self
        return cast(T, getattr(player.get(), self.attribute))

    def __set__(self, player: "Player", value: T) -> None:
        if not self.settable:
            raise AttributeError("%s is read-only" % self.attribute)
        changes: Dict[str, Any] = {self.attribute: value}
        player.set(**changes)


class Player:
    """A player, modelled on AVAudioPlayer: made once (`Client.create_player`), then prepared,
    played, paused, stopped, seeked, looped, faded. Its properties read with one request each
    (`player.volume`), or all at once with `get()`; assigning one sends `player.set`. `properties`
    is the last reply's. It belongs to the connection that made it unless made `detached`."""

    def __init__(self, client: Client, properties: Optional[PlayerProperties] = None,
                 player_id: Optional[int] = None) -> None:
        self.client = client
        identifier = player_id if player_id is not None else (properties.raw.get("player") if properties else None)
        if not isinstance(identifier, int):
            raise ValueError("a Player needs its id")
        self.id: int = identifier
        self.properties = properties

    def __repr__(self) -> str:
        return "Player(%d)" % self.id

    prepare = _player_op(_ops.player_prepare)
    prepare_to_play = prepare
    play = _player_op(_ops.player_play)
    pause = _player_op(_ops.player_pause)
    stop = _player_op(_ops.player_stop)
    set = _player_op(_ops.player_set)
    get = _player_op(_ops.player_get)
    destroy = _player_op(_ops.player_destroy)
    set_volume = _player_op(_ops.player_set_volume)
    set_pan = _player_op(_ops.player_set_pan)
    set_number_of_loops = _player_op(_ops.player_set_number_of_loops)
    set_current_time = _player_op(_ops.player_set_current_time)
    set_rate = _player_op(_ops.player_set_rate)

    volume: _Property[float] = _Property("volume")
    pan: _Property[float] = _Property("pan")
    number_of_loops: _Property[int] = _Property("number_of_loops")
    current_time: _Property[float] = _Property("current_time")
    rate: _Property[float] = _Property("rate")
    duration: _Property[float] = _Property("duration", settable=False)
    is_playing: _Property[bool] = _Property("is_playing", settable=False)
    number_of_channels: _Property[int] = _Property("number_of_channels", settable=False)
    device_current_time: _Property[float] = _Property("device_current_time", settable=False)

    @_ops.sends(_ops.player_play)
    def play_to_end(self, at_time: Optional[float] = None) -> FinishedEvent:
        """Plays and waits for the play's `finished` event (the owner gets it without subscribing);
        `successfully` says whether it played to its end."""
        player = self.id
        return cast(FinishedEvent, self.client.call_until(
            _ops.player_play(player, at_time), lambda deliver, lost: self.client._core.player_finished(player, deliver, lost)))

    def events(self, kinds: Optional[Sequence[str]] = None, subscribe: bool = False) -> EventStream:
        """This player's events: its `finished` and `decode-error` (owed to its owner), and with
        `subscribe` its `started` too."""
        return self.client.events(kinds, [self.id], subscribe)


class SystemSound:
    """A system sound, modelled on System Sound Services: made once (`Client.create_sound`), played
    fire-and-forget at the system-sound volume, with a completion if asked, disposed of."""

    def __init__(self, client: Client, sound_id: int) -> None:
        self.client = client
        self.id = sound_id
        self._completion_enabled = False

    def __repr__(self) -> str:
        return "SystemSound(%d)" % self.id

    set_completion = _sound_op(_ops.sound_completion)
    dispose = _sound_op(_ops.sound_dispose)

    def _enable_completion(self) -> None:
        if not self._completion_enabled:
            self.set_completion(True)
            self._completion_enabled = True

    @_ops.sends(_ops.sound_play)
    def play(self, completion: Optional[Callable[[CompletionEvent], Any]] = None) -> PlayResult:
        """Plays the sound once. `completion` is called (on the callback thread) with the play's
        `completion` event: `played` is True when it was heard to its end (a silent play's comes at
        once; a lost connection gives one with the reason "disconnected")."""
        call = _ops.sound_play(self.id)
        if completion is not None:
            self._enable_completion()
            client, sound = self.client, self.id
            call.hook = client._core.completion_hook(
                sound, lambda event: client._dispatch(completion, event),
                lambda error: client._dispatch(completion, lost_completion(sound, error)))
        return self.client.call(call)

    @_ops.sends(_ops.sound_play)
    def play_and_wait(self, timeout: Optional[float] = None) -> CompletionEvent:
        """Plays the sound once and returns its `completion` event."""
        self._enable_completion()
        sound = self.id
        return cast(CompletionEvent, self.client.call_until(
            _ops.sound_play(sound), lambda deliver, lost: self.client._core.completion_hook(sound, deliver, lost), timeout))


class CarouselSession:
    """A carousel's messages: each method is a `ScrollTracker` step (a delegate call, or a whole
    scroll: `flick`, `drag`, `key`, `jump`, `push_edge`) whose messages are sent at once."""

    def __init__(self, client: Client, name: str, tracker: ScrollTracker, replies: bool = False) -> None:
        self.client = client
        self.name = name
        self.tracker = tracker
        self.replies = replies

    def send(self, messages: Sequence[CarouselMessage]) -> List[PagingResult]:
        """Sends messages in order: fire-and-forget, or with `replies` each with an id (the
        decisions, in order)."""
        calls = [_ops.carousel(self.name, message.event, message.fields) for message in messages]
        if self.replies:
            return [self.client.call(call) for call in calls]
        for call in calls:
            self.client.post(call)
        return []

    will_begin_dragging = _scroll(ScrollTracker.will_begin_dragging)
    did_scroll = _scroll(ScrollTracker.did_scroll)
    move = _scroll(ScrollTracker.move)
    rest = _scroll(ScrollTracker.rest)
    will_end_dragging = _scroll(ScrollTracker.will_end_dragging)
    did_end_dragging = _scroll(ScrollTracker.did_end_dragging)
    will_begin_decelerating = _scroll(ScrollTracker.will_begin_decelerating)
    did_end_decelerating = _scroll(ScrollTracker.did_end_decelerating)
    set_content_offset = _scroll(ScrollTracker.set_content_offset)
    did_end_scrolling_animation = _scroll(ScrollTracker.did_end_scrolling_animation)
    auto_scroll = _scroll(ScrollTracker.auto_scroll)
    stop_auto_scroll = _scroll(ScrollTracker.stop_auto_scroll)
    edge = _scroll(ScrollTracker.edge)
    flick = _scroll(ScrollTracker.flick)
    drag = _scroll(ScrollTracker.drag)
    key = _scroll(ScrollTracker.key)
    jump = _scroll(ScrollTracker.jump)
    push_edge = _scroll(ScrollTracker.push_edge)


def connect(socket_path: Optional[str] = None, *, name: Optional[str] = None, timeout: Optional[float] = 30.0) -> Client:
    """A connected `Client` (raises `Unreachable` when no daemon answers)."""
    client = Client(socket_path, name=name, timeout=timeout)
    client.connect()
    return client
