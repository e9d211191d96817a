"""The connection's bookkeeping without I/O, shared by the synchronous and the asyncio client: ids,
the requests waiting for replies, routing each line read (a reply to its request, an event to the
streams and waiters that want it), and the subscription the open streams add up to."""
from __future__ import annotations

from typing import (
    Any, Callable, Dict, FrozenSet, Iterable, List, Mapping, Optional, Tuple, TypeVar,
)

from ._json import JSONObject, decode_line, encode_line
from ._ops import Call
from .errors import CuedError, ProtocolViolation, RequestError, error_from_reply
from .events import (
    SUBSCRIBABLE_KINDS, CompletionEvent, DisconnectedEvent, Event, FinishedEvent, ReconnectedEvent, parse_event,
)

T = TypeVar("T")
#: How a request's outcome is handed back: (value, None) or (None, error).
Settle = Callable[[Any, Optional[BaseException]], None]
#: A subscription: (kinds or None for all, ids or None for any); None: no subscription.
Subscription = Optional[Tuple[Optional[Tuple[str, ...]], Optional[Tuple[int, ...]]]]

#: The client's own kinds, which reach every stream whatever its filter.
CLIENT_KINDS = frozenset((DisconnectedEvent.kind, ReconnectedEvent.kind))


class Sink:
    """Where a stream's or a callback's events go: a filter, and `push`."""

    def __init__(
        self, push: Callable[[Event], None], kinds: Optional[Iterable[str]] = None, ids: Optional[Iterable[int]] = None,
        subscribe: bool = True,
    ) -> None:
        self.push = push
        self.kinds: Optional[FrozenSet[str]] = None if kinds is None else frozenset(kinds)
        self.ids: Optional[FrozenSet[int]] = None if ids is None else frozenset(ids)
        self.subscribe = subscribe

    def accepts(self, event: Event) -> bool:
        if event.kind in CLIENT_KINDS:
            return True
        if self.kinds is not None and event.kind not in self.kinds:
            return False
        return self.ids is None or not self.ids.isdisjoint(event.ids)


class _Waiter:
    __slots__ = ("matches", "deliver", "lost")

    def __init__(self, matches: Callable[[Event], bool], deliver: Callable[[Event], None],
                 lost: Callable[[BaseException], None]) -> None:
        self.matches = matches
        self.deliver = deliver
        self.lost = lost


class _Pending:
    __slots__ = ("call", "settle")

    def __init__(self, call: Call[Any], settle: Settle) -> None:
        self.call = call
        self.settle = settle


class Core:
    """Not thread-safe: the synchronous client holds its lock around every use."""

    def __init__(self) -> None:
        self._next_id = 1
        self._pending: Dict[int, _Pending] = {}
        self._buffer = b""
        self.sinks: List[Sink] = []
        self._waiters: List[_Waiter] = []
        #: What `subscribe()` asked for, besides what the streams want.
        self.base: Subscription = None
        #: The subscription the daemon has for this connection now.
        self.sent: Subscription = None
        #: A refusal that came with "id": null before any request (limit-reached, access-denied):
        #: every request of this connection fails with it.
        self.refusal: Optional[RequestError] = None

    # --- requests ---------------------------------------------------------------------------------

    def begin(self, call: Call[Any], settle: Settle) -> Tuple[int, bytes]:
        """Registers a request; its id and its line, to be written next. Raises the connection's
        refusal, if the daemon refused it."""
        if self.refusal is not None:
            raise self.refusal
        request_id = self._next_id
        self._next_id += 1
        line = encode_line(call.message(request_id))
        self._pending[request_id] = _Pending(call, settle)
        return request_id, line

    def cancel(self, request_id: int) -> None:
        """Forgets a request (timed out, or its write failed): a late reply is ignored."""
        self._pending.pop(request_id, None)

    def connection_lost(self, error: CuedError, reason: str) -> None:
        """Fails every waiting request and waiter, forgets what was read, and tells the streams."""
        pending, self._pending = self._pending, {}
        waiters, self._waiters = self._waiters, []
        self._buffer = b""
        self.sent = None
        for entry in pending.values():
            entry.settle(None, self.refusal or error)
        for waiter in waiters:
            waiter.lost(error)
        self.dispatch(DisconnectedEvent(reason, {"event": "disconnected", "reason": reason}))

    # --- lines read -------------------------------------------------------------------------------

    def feed(self, data: bytes) -> None:
        """Takes bytes read from the socket; handles every complete line."""
        self._buffer += data
        while True:
            end = self._buffer.find(b"\n")
            if end < 0:
                return
            line, self._buffer = self._buffer[:end], self._buffer[end + 1:]
            if line.strip():
                self.handle(decode_line(line))

    def handle(self, message: JSONObject) -> None:
        if "event" in message:
            self.dispatch(parse_event(message))
            return
        entry = self._take(message.get("id"))
        if entry is None:
            if message.get("id") is None and message.get("ok") is False:
                self.refusal = error_from_reply(message)  # the connection's: nobody asked yet
            return  # else a reply to a request that timed out
        if message.get("ok") is not True:
            entry.settle(None, error_from_reply(message))
            return
        try:
            value = entry.call.parse(message)
        except ProtocolViolation as violation:
            entry.settle(None, violation)
            return
        if entry.call.hook is not None:
            entry.call.hook(message)
        entry.settle(value, None)

    def _take(self, request_id: Any) -> Optional[_Pending]:
        if isinstance(request_id, int) and not isinstance(request_id, bool):
            return self._pending.pop(request_id, None)
        if request_id is not None or not self._pending:
            return None
        # "id": null answers the oldest request not answered yet, deferred ones aside (a
        # line-too-long, or a refusal that arrived as the connection was made).
        oldest = next((key for key, entry in self._pending.items() if not entry.call.deferrable), None)
        return self._pending.pop(oldest if oldest is not None else next(iter(self._pending)))

    def dispatch(self, event: Event) -> None:
        """Hands an event to the waiters it satisfies and to the sinks that accept it."""
        if self._waiters:
            keep: List[_Waiter] = []
            for waiter in self._waiters:
                if waiter.matches(event):
                    waiter.deliver(event)
                else:
                    keep.append(waiter)
            self._waiters = keep
        for sink in list(self.sinks):
            if sink.accepts(event):
                sink.push(event)

    # --- waiting for the events a request causes ----------------------------------------------------

    def watch(self, matches: Callable[[Event], bool], deliver: Callable[[Event], None],
              lost: Callable[[BaseException], None]) -> None:
        """Delivers the next event that `matches` (once), or calls `lost` if the connection goes first."""
        self._waiters.append(_Waiter(matches, deliver, lost))

    def finished_hook(self, deliver: Callable[[Event], None],
                      lost: Callable[[BaseException], None]) -> Callable[[Mapping[str, Any]], None]:
        """A reply hook for `play`: waits for the `finished` of the voice the reply names."""
        def hook(reply: Mapping[str, Any]) -> None:
            voice = reply.get("voice")
            self.watch(lambda e: isinstance(e, FinishedEvent) and e.voice == voice, deliver, lost)
        return hook

    def player_finished(self, player: int, deliver: Callable[[Event], None],
                        lost: Callable[[BaseException], None]) -> Callable[[Mapping[str, Any]], None]:
        """A reply hook for `player.play`: waits for that player's next `finished`."""
        def hook(reply: Mapping[str, Any]) -> None:
            self.watch(lambda e: isinstance(e, FinishedEvent) and e.player == player, deliver, lost)
        return hook

    def completion_hook(self, sound: int, deliver: Callable[[Event], None],
                        lost: Callable[[BaseException], None]) -> Callable[[Mapping[str, Any]], None]:
        """A reply hook for `sound.play`: waits for the `completion` of that play (of its voice, or
        the voiceless one of a silent play, which follows its reply)."""
        def hook(reply: Mapping[str, Any]) -> None:
            voice = reply.get("voice")
            self.watch(lambda e: isinstance(e, CompletionEvent) and e.sound == sound and e.voice == voice, deliver, lost)
        return hook

    # --- the subscription ----------------------------------------------------------------------------

    def wanted(self) -> Subscription:
        """What the daemon should send besides what it owes: `subscribe()`'s wish and every open
        stream's filter, added up (None: nothing, so unsubscribe)."""
        wishes: List[Tuple[Optional[FrozenSet[str]], Optional[FrozenSet[int]]]] = [
            (sink.kinds, sink.ids) for sink in self.sinks if sink.subscribe]
        if self.base is not None:
            kinds, ids = self.base
            wishes.append((None if kinds is None else frozenset(kinds), None if ids is None else frozenset(ids)))
        if not wishes:
            return None
        all_kinds = any(kinds is None for kinds, _ in wishes)
        any_ids = any(ids is None for _, ids in wishes)
        kinds_union = sorted({kind for kinds, _ in wishes if kinds is not None for kind in kinds} & set(SUBSCRIBABLE_KINDS))
        ids_union = sorted({i for _, ids in wishes if ids is not None for i in ids})
        return (None if all_kinds else tuple(kinds_union), None if any_ids else tuple(ids_union))


def subscription_call(wanted: Subscription) -> Call[Any]:
    """The request that gives the daemon `wanted`."""
    from . import _ops
    if wanted is None:
        return _ops.unsubscribe()
    kinds, ids = wanted
    return _ops.subscribe(kinds, ids)
