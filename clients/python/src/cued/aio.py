"""The asyncio client: `AsyncClient`, `AsyncPlayer`, `AsyncSystemSound`, `AsyncEventStream` and
`AsyncCarouselSession`, the same surface as the synchronous client (client.py) with `await`.

One connection; a reader task reads the socket and hands each line on in the order it came: a
reply to the coroutine waiting for it (any number may be in flight), an event to the streams that
want it and to callbacks (a callback that returns an awaitable is run as a task).
"""
from __future__ import annotations

import asyncio
import functools
import inspect
import logging
import sys
from typing import (
    TYPE_CHECKING, Any, Awaitable, Callable, Coroutine, Generic, Iterable, List, Optional, Sequence, Type, TypeVar,
    Union, cast, overload,
)

from . import _ops
from ._core import Core, Sink, Subscription, subscription_call
from ._json import encode_line
from ._ops import Call, describe
from ._paths import default_socket_path
from .carousel import CarouselMessage, ScrollTracker
from .client import event_matches, lost_completion, program_name
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


def _op(op: Callable[P, Call[T]]) -> Callable[Concatenate[AsyncClient, P], Coroutine[Any, Any, T]]:
    async def method(self: AsyncClient, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return await self.call(op(*args, **kwargs))
    describe(method, op)
    return method


def _make(op: Callable[P, Call[T]], make: Callable[[AsyncClient, T], R]
          ) -> Callable[Concatenate[AsyncClient, P], Coroutine[Any, Any, R]]:
    async def method(self: AsyncClient, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return make(self, await self.call(op(*args, **kwargs)))
    describe(method, op)
    return method


def _until_finished(op: Callable[P, Call[Any]]) -> Callable[Concatenate[AsyncClient, P], Coroutine[Any, Any, FinishedEvent]]:
    async def method(self: AsyncClient, /, *args: P.args, **kwargs: P.kwargs) -> FinishedEvent:
        call = op(*args, **kwargs)
        call.fields["notify"] = True
        return cast(FinishedEvent, await self.call_until(call, self._core.finished_hook))
    describe(method, op)
    method.__doc__ = "Plays as `play` does and waits for the voice's `finished` event, which it returns."
    method.__name__ = method.__qualname__ = "play_to_end"
    return method


def _player_op(op: Callable[Concatenate[int, P], Call[T]]
               ) -> Callable[Concatenate[AsyncPlayer, P], Coroutine[Any, Any, T]]:
    async def method(self: AsyncPlayer, /, *args: P.args, **kwargs: P.kwargs) -> T:
        value = await self.client.call(op(self.id, *args, **kwargs))
        if isinstance(value, PlayerProperties):
            self.properties = value
        return value
    describe(method, op, "player_")
    return method


def _sound_op(op: Callable[Concatenate[int, P], Call[T]]
              ) -> Callable[Concatenate[AsyncSystemSound, P], Coroutine[Any, Any, T]]:
    async def method(self: AsyncSystemSound, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return await self.client.call(op(self.id, *args, **kwargs))
    describe(method, op, "sound_")
    return method


def _scroll(step: Callable[Concatenate[ScrollTracker, P], List[CarouselMessage]]
            ) -> Callable[Concatenate[AsyncCarouselSession, P], Coroutine[Any, Any, List[PagingResult]]]:
    async def method(self: AsyncCarouselSession, /, *args: P.args, **kwargs: P.kwargs) -> List[PagingResult]:
        return await self.send(step(self.tracker, *args, **kwargs))
    describe(method, step)
    return method


def _run_callback(callback: Callable[[Any], Any], argument: Any) -> None:
    try:
        result = callback(argument)
        if inspect.isawaitable(result):
            asyncio.ensure_future(result)
    except Exception:
        log.exception("a cued event callback raised")


class AsyncClient:
    """A connection to cued for asyncio programs. Nothing connects until `await connect()`,
    `async with`, or the first call; a call after the connection was lost connects again (sending
    `hello` and the subscription again). Arguments as for `Client`. Use it from one event loop."""

    def __init__(self, socket_path: Optional[str] = None, *, name: Optional[str] = None,
                 timeout: Optional[float] = 30.0) -> None:
        self.socket_path = default_socket_path(socket_path)
        self.name = program_name() if name is None else name
        self.timeout = timeout
        #: The `hello` reply of the connection now (None while not connected).
        self.server: Optional[Hello] = None
        self._core = Core()
        self._writer: Optional[asyncio.StreamWriter] = None
        self._reader_task: Optional[asyncio.Future[None]] = None
        self._connect_lock: Optional[asyncio.Lock] = None
        self._subscription_lock: Optional[asyncio.Lock] = None
        self._streams: List[AsyncEventStream] = []
        self._was_connected = False

    # --- the connection -----------------------------------------------------------------------------

    async def connect(self) -> Hello:
        """Connects (if not connected) and says `hello`; the daemon's reply."""
        if self._connect_lock is None:
            self._connect_lock = asyncio.Lock()
        async with self._connect_lock:
            if self._writer is not None and self.server is not None:
                return self.server
            try:
                reader, writer = await asyncio.open_unix_connection(self.socket_path)
            except OSError as error:
                raise Unreachable(self.socket_path, error.strerror or str(error)) from None
            self._writer = writer
            self._core.refusal = None
            self._reader_task = asyncio.ensure_future(self._read(reader, writer))
            hello = await self._send(_ops.hello(self.name))
            self.server = hello
            self._core.sent = None
            await self._sync_subscription()
            if self._was_connected:
                self._core.dispatch(ReconnectedEvent({"event": "reconnected"}))
            self._was_connected = True
            return hello

    async def close(self) -> None:
        """Closes the connection, as `Client.close` does."""
        streams, self._streams = self._streams, []
        self._core.sinks.clear()
        self._core.base = None
        for stream in streams:
            stream._end()
        writer, task = self._writer, self._reader_task
        if writer is not None:
            writer.close()
        if task is not None and task is not asyncio.current_task():
            try:
                await asyncio.wait_for(task, 5)
            except (asyncio.TimeoutError, asyncio.CancelledError):
                pass

    async def __aenter__(self) -> "AsyncClient":
        await self.connect()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def connected(self) -> bool:
        return self._writer is not None

    async def _read(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        reason = "cued closed the connection"
        try:
            while True:
                data = await reader.read(262144)
                if not data:
                    break
                self._core.feed(data)
        except ProtocolViolation as violation:
            reason = str(violation)
        except OSError as error:
            reason = error.strerror or str(error)
        finally:
            if self._writer is writer:
                self._writer = None
                self.server = None
                self._core.connection_lost(Disconnected(self.socket_path, reason), reason)
            writer.close()

    # --- requests ---------------------------------------------------------------------------------

    async def call(self, call: Call[T]) -> T:
        """Sends a request (a `Call` from cued's ops) and waits for its reply; connects first if
        needed. Raises the `RequestError` subclass of an error reply."""
        if self._writer is None or self.server is None:
            await self.connect()
        return await self._send(call)

    async def _send(self, call: Call[T]) -> T:
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

        def settle(value: Any, error: Optional[BaseException]) -> None:
            if future.done():
                return
            if error is None:
                future.set_result(value)
            else:
                future.set_exception(error)

        writer = self._writer
        if writer is None:
            raise self._core.refusal or Disconnected(self.socket_path, "not connected")
        request_id, line = self._core.begin(call, settle)
        try:
            writer.write(line)
            await writer.drain()
        except OSError as error:
            self._core.cancel(request_id)
            task = self._reader_task
            if task is not None:  # a daemon at its client limit answers and closes at once
                await asyncio.wait([task], timeout=1)
            raise self._core.refusal or Disconnected(self.socket_path, error.strerror or str(error)) from None
        try:
            return cast(T, await asyncio.wait_for(future, self.timeout))
        except asyncio.TimeoutError:
            self._core.cancel(request_id)
            raise RequestTimeout(call.op, self.timeout or 0) from None

    async def call_until(
        self, call: Call[Any],
        hook: Callable[[Callable[[Event], None], Callable[[BaseException], None]], Callable[[Any], None]],
        timeout: Optional[float] = None,
    ) -> Event:
        """Sends `call` and waits for the event its reply hook waits for (`play_to_end`)."""
        future: asyncio.Future[Event] = asyncio.get_running_loop().create_future()

        def deliver(event: Event) -> None:
            if not future.done():
                future.set_result(event)

        def lost(error: BaseException) -> None:
            if not future.done():
                future.set_exception(error)

        call.hook = hook(deliver, lost)
        await self.call(call)
        try:
            return await asyncio.wait_for(future, timeout)
        except asyncio.TimeoutError:
            raise RequestTimeout(call.op, timeout or 0) from None

    async def post(self, call: Call[Any]) -> None:
        """Sends a request without an id and does not wait for a reply (carousel lines)."""
        if self._writer is None or self.server is None:
            await self.connect()
        writer = self._writer
        if writer is None:
            raise Disconnected(self.socket_path, "not connected")
        try:
            writer.write(encode_line(call.message(None)))
            await writer.drain()
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
    create_player = _make(_ops.player_create, lambda client, properties: AsyncPlayer(client, properties))
    create_sound = _make(_ops.sound_create, lambda client, sound: AsyncSystemSound(client, sound))

    def player(self, player_id: int) -> "AsyncPlayer":
        """A player made elsewhere (a detached one, or another connection's), by its id."""
        return AsyncPlayer(self, player_id=player_id)

    def sound(self, sound_id: int) -> "AsyncSystemSound":
        """A system sound made elsewhere, by its id."""
        return AsyncSystemSound(self, sound_id)

    def carousel(self, name: str = "default", page_count: int = 7, *, page: int = 0, loops: bool = True,
                 page_width: float = 1.0, replies: bool = False) -> "AsyncCarouselSession":
        """A carousel's messages, as `Client.carousel`."""
        return AsyncCarouselSession(self, name, ScrollTracker(page_count, page_width, page, loops), replies)

    # --- events -----------------------------------------------------------------------------------

    @_ops.sends(_ops.subscribe)
    async def subscribe(self, kinds: Optional[Sequence[str]] = None, ids: Optional[Sequence[int]] = None) -> List[str]:
        """As `Client.subscribe`."""
        self._core.base = (None if kinds is None else tuple(kinds), None if ids is None else tuple(ids))
        return await self._sync_subscription(force=True)

    @_ops.sends(_ops.unsubscribe)
    async def unsubscribe(self) -> None:
        """As `Client.unsubscribe`."""
        self._core.base = None
        await self._sync_subscription(force=True)

    async def events(self, kinds: Optional[Sequence[str]] = None, ids: Optional[Sequence[int]] = None,
                     subscribe: bool = True) -> "AsyncEventStream":
        """An async iterator of events, as `Client.events` (subscribed when this returns)."""
        return await self._open(AsyncEventStream(self, kinds, ids, subscribe))

    async def on_event(self, callback: Callable[[Event], Any], kinds: Optional[Sequence[str]] = None,
                       ids: Optional[Sequence[int]] = None, subscribe: bool = True) -> "AsyncEventStream":
        """Calls `callback` with each event (in the reader task; an awaitable it returns runs as a
        task) until the returned stream is closed."""
        return await self._open(AsyncEventStream(self, kinds, ids, subscribe, callback))

    async def _open(self, stream: "AsyncEventStream") -> "AsyncEventStream":
        self._streams.append(stream)
        self._core.sinks.append(stream._sink)
        if stream._sink.subscribe:
            await self._sync_subscription()
        return stream

    async def _closed_stream(self, stream: "AsyncEventStream") -> None:
        if stream in self._streams:
            self._streams.remove(stream)
        if stream._sink in self._core.sinks:
            self._core.sinks.remove(stream._sink)
        if stream._sink.subscribe and self._writer is not None:
            await self._sync_subscription()

    async def _sync_subscription(self, force: bool = False) -> List[str]:
        if self._writer is None or self.server is None:
            await self.connect()  # which sends it
            if not force:
                return []
        if self._subscription_lock is None:
            self._subscription_lock = asyncio.Lock()
        async with self._subscription_lock:
            wanted: Subscription = self._core.wanted()
            if wanted == self._core.sent and not force:
                return []
            admitted = await self._send(subscription_call(wanted))
            self._core.sent = wanted
        return list(admitted or [])


class AsyncEventStream:
    """Events from the daemon, in the order they came: `async for`, or `get` with a timeout, or
    `wait_for` one. Close it with `aclose()` (or `async with`); the client's `close()` ends it."""

    def __init__(self, client: AsyncClient, kinds: Optional[Iterable[str]], ids: Optional[Iterable[int]],
                 subscribe: bool, callback: Optional[Callable[[Event], Any]] = None) -> None:
        self.client = client
        self._queue: asyncio.Queue[Optional[Event]] = asyncio.Queue()
        push: Callable[[Event], None] = self._queue.put_nowait
        if callback is not None:
            push = functools.partial(_run_callback, callback)
        self._sink = Sink(push, kinds, ids, subscribe)
        self.closed = False

    def __aiter__(self) -> "AsyncEventStream":
        return self

    async def __anext__(self) -> Event:
        event = await self._queue.get()
        if event is None:
            self._queue.put_nowait(None)
            raise StopAsyncIteration
        return event

    async def get(self, timeout: Optional[float] = None) -> Optional[Event]:
        """The next event, waiting at most `timeout` seconds; None when none came or it ended."""
        try:
            event = await asyncio.wait_for(self._queue.get(), timeout)
        except asyncio.TimeoutError:
            return None
        if event is None:
            self._queue.put_nowait(None)
        return event

    async def wait_for(self, kind: Optional[str] = None, timeout: float = 5.0,
                       where: Optional[Callable[[Event], bool]] = None, **fields: Any) -> Event:
        """As `EventStream.wait_for`."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            left = deadline - loop.time()
            event = await self.get(left) if left > 0 else None
            if event is None:
                raise TimeoutError("no %s event %r within %g s" % (kind or "", fields, timeout))
            if event_matches(event, kind, where, fields):
                return event

    async def aclose(self) -> None:
        """Stops the stream (and narrows the subscription)."""
        if not self.closed:
            self._end()
            await self.client._closed_stream(self)

    def _end(self) -> None:
        self.closed = True
        self._queue.put_nowait(None)

    async def __aenter__(self) -> "AsyncEventStream":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class _AsyncProperty(Generic[T]):
    """A player property read with `player.get`: `await player.current_time`."""

    def __init__(self, attribute: str) -> None:
        self.attribute = attribute

    @overload
    def __get__(self, player: None, owner: Type[Any]) -> "_AsyncProperty[T]": ...

    @overload
    def __get__(self, player: "AsyncPlayer", owner: Type[Any]) -> Awaitable[T]: ...

    def __get__(self, player: Optional["AsyncPlayer"], owner: Type[Any]) -> Union[Awaitable[T], "_AsyncProperty[T]"]:
        if player is None:
            return self
        return self._read(player)

    async def _read(self, player: "AsyncPlayer") -> T:
        return cast(T, getattr(await player.get(), self.attribute))


class AsyncPlayer:
    """`Player` for asyncio: the same methods, awaited; properties read as `await player.volume`
    and change with `set_volume` and the like (or `set`)."""

    def __init__(self, client: AsyncClient, properties: Optional[PlayerProperties] = None,
                 player_id: Optional[int] = None) -> None:
        self.client = client
        identifier = player_id if player_id is not None else (properties.raw.get("player") if properties else None)
        if not isinstance(identifier, int):
            raise ValueError("an AsyncPlayer needs its id")
        self.id: int = identifier
        self.properties = properties

    def __repr__(self) -> str:
        return "AsyncPlayer(%d)" % self.id

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

    volume: _AsyncProperty[float] = _AsyncProperty("volume")
    pan: _AsyncProperty[float] = _AsyncProperty("pan")
    number_of_loops: _AsyncProperty[int] = _AsyncProperty("number_of_loops")
    current_time: _AsyncProperty[float] = _AsyncProperty("current_time")
    rate: _AsyncProperty[float] = _AsyncProperty("rate")
    duration: _AsyncProperty[float] = _AsyncProperty("duration")
    is_playing: _AsyncProperty[bool] = _AsyncProperty("is_playing")
    number_of_channels: _AsyncProperty[int] = _AsyncProperty("number_of_channels")
    device_current_time: _AsyncProperty[float] = _AsyncProperty("device_current_time")

    @_ops.sends(_ops.player_play)
    async def play_to_end(self, at_time: Optional[float] = None) -> FinishedEvent:
        """As `Player.play_to_end`."""
        player = self.id
        return cast(FinishedEvent, await self.client.call_until(
            _ops.player_play(player, at_time), lambda deliver, lost: self.client._core.player_finished(player, deliver, lost)))

    async def events(self, kinds: Optional[Sequence[str]] = None, subscribe: bool = False) -> AsyncEventStream:
        """As `Player.events`."""
        return await self.client.events(kinds, [self.id], subscribe)


class AsyncSystemSound:
    """`SystemSound` for asyncio. A completion callback may be a coroutine function."""

    def __init__(self, client: AsyncClient, sound_id: int) -> None:
        self.client = client
        self.id = sound_id
        self._completion_enabled = False

    def __repr__(self) -> str:
        return "AsyncSystemSound(%d)" % self.id

    set_completion = _sound_op(_ops.sound_completion)
    dispose = _sound_op(_ops.sound_dispose)

    async def _enable_completion(self) -> None:
        if not self._completion_enabled:
            await self.set_completion(True)
            self._completion_enabled = True

    @_ops.sends(_ops.sound_play)
    async def play(self, completion: Optional[Callable[[CompletionEvent], Any]] = None) -> PlayResult:
        """As `SystemSound.play`."""
        call = _ops.sound_play(self.id)
        if completion is not None:
            await self._enable_completion()
            sound = self.id
            call.hook = self.client._core.completion_hook(
                sound, lambda event: _run_callback(completion, event),
                lambda error: _run_callback(completion, lost_completion(sound, error)))
        return await self.client.call(call)

    @_ops.sends(_ops.sound_play)
    async def play_and_wait(self, timeout: Optional[float] = None) -> CompletionEvent:
        """As `SystemSound.play_and_wait`."""
        await self._enable_completion()
        sound = self.id
        return cast(CompletionEvent, await self.client.call_until(
            _ops.sound_play(sound), lambda deliver, lost: self.client._core.completion_hook(sound, deliver, lost), timeout))


class AsyncCarouselSession:
    """`CarouselSession` for asyncio."""

    def __init__(self, client: AsyncClient, name: str, tracker: ScrollTracker, replies: bool = False) -> None:
        self.client = client
        self.name = name
        self.tracker = tracker
        self.replies = replies

    async def send(self, messages: Sequence[CarouselMessage]) -> List[PagingResult]:
        """As `CarouselSession.send`."""
        calls = [_ops.carousel(self.name, message.event, message.fields) for message in messages]
        if self.replies:
            return list(await asyncio.gather(*(self.client.call(call) for call in calls)))
        for call in calls:
            await self.client.post(call)
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


async def connect_async(socket_path: Optional[str] = None, *, name: Optional[str] = None,
                        timeout: Optional[float] = 30.0) -> AsyncClient:
    """A connected `AsyncClient` (raises `Unreachable` when no daemon answers)."""
    client = AsyncClient(socket_path, name=name, timeout=timeout)
    await client.connect()
    return client
