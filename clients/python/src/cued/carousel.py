"""Carousel messages (docs/PROTOCOL.md, section 4b) and `ScrollTracker`, which turns what a paging
scroll view knows into them in UIScrollView's delegate order, as the Swift library's
ScrollTracker does (docs/CLIENT.md). Pure values: no I/O, no clock. `Client.carousel()` and
`AsyncClient.carousel()` send what these return.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

#: The largest release velocity cued takes, in pages per second.
MAXIMUM_VELOCITY = 1000.0
#: Every carousel message cued 0.2.0 takes.
CAROUSEL_EVENTS = (
    "drag-began", "will-end-dragging", "drag-ended", "will-begin-decelerating", "deceleration-ended",
    "scroll-animation-ended", "page-changed", "wrapped", "edge",
)
#: Why the page changed (a `page-changed` message's `reason`, and a `paging` event's): the user's
#: drag or its deceleration, a key, an auto-scroll's timer, the program.
PAGE_CHANGE_REASONS = ("drag", "key", "auto", "programmatic")
#: How far past an end (in pages) a bounded pager's offset must go to count as a push past it.
EDGE_THRESHOLD = 0.05


@dataclass(frozen=True)
class CarouselMessage:
    """One carousel message: its `event` and the fields that go with it (wire names)."""

    event: str
    fields: Dict[str, Any] = field(default_factory=dict)


def drag_began() -> CarouselMessage:
    """scrollViewWillBeginDragging."""
    return CarouselMessage("drag-began")


def will_end_dragging(velocity: float, target_page: Optional[int] = None) -> CarouselMessage:
    """scrollViewWillEndDragging: the release `velocity` in pages per second (positive towards
    the next page, kept within ±1000) and the page it will come to rest on."""
    bounded = max(-MAXIMUM_VELOCITY, min(MAXIMUM_VELOCITY, velocity))
    values: Dict[str, Any] = {"velocity": bounded}
    if target_page is not None:
        values["targetPage"] = target_page
    return CarouselMessage("will-end-dragging", values)


def drag_ended(decelerate: bool) -> CarouselMessage:
    """scrollViewDidEndDragging(_:willDecelerate:); without deceleration the scroll settles."""
    return CarouselMessage("drag-ended", {"decelerate": decelerate})


def will_begin_decelerating() -> CarouselMessage:
    """scrollViewWillBeginDecelerating."""
    return CarouselMessage("will-begin-decelerating")


def deceleration_ended() -> CarouselMessage:
    """scrollViewDidEndDecelerating: the scroll settles."""
    return CarouselMessage("deceleration-ended")


def scroll_animation_ended() -> CarouselMessage:
    """scrollViewDidEndScrollingAnimation: the scroll settles."""
    return CarouselMessage("scroll-animation-ended")


def page_changed(
    from_page: int, to_page: int, count: int, reason: Optional[str] = None, direction: Optional[str] = None,
    animated: Optional[bool] = None,
) -> CarouselMessage:
    """The page under the middle of the view changed. `reason`: "drag", "key", "auto" or
    "programmatic" (the daemon's default); `direction`: "next" or "previous" (default: the shorter
    way round); `animated=False`: a jump without animation, which settles the scroll."""
    values: Dict[str, Any] = {"from": from_page, "to": to_page, "count": count}
    for key, value in (("reason", reason), ("direction", direction), ("animated", animated)):
        if value is not None:
            values[key] = value
    return CarouselMessage("page-changed", values)


def wrapped(from_page: int, to_page: int, count: int) -> CarouselMessage:
    """A looping carousel went round from the last page to the first, or back."""
    return CarouselMessage("wrapped", {"from": from_page, "to": to_page, "count": count})


def edge(side: str) -> CarouselMessage:
    """The user pushed a bounded pager past its "start" or "end": the rubber band."""
    if side not in ("start", "end"):
        raise ValueError("edge is 'start' or 'end', not %r" % (side,))
    return CarouselMessage("edge", {"edge": side})


def _wrap(index: int, count: int) -> int:
    return index % count


class ScrollTracker:
    """What a paging scroll view knows, turned into carousel messages in UIKit's units and its
    delegate order (docs/PROTOCOL.md, "UIKit's units"). Offsets are content offsets along the
    paging axis, in points; `page_width` is a page in points (1: offsets are in pages). The page
    is the one under the middle of the view, `round(offset / page_width)`, kept within the pages
    (a looping pager's offset runs on past its ends, and going round sends `wrapped` too).

    Each delegate method returns the messages to send, in order. The lifecycle methods below them
    (`flick`, `drag`, `key`, `jump`, `push_edge`) return a whole scroll at once.

    **Auto-scroll** (a timer moves the offset a little at a time; UIKit calls nothing but
    scrollViewDidScroll): `auto_scroll(offset)` on each step sends the pages crossed (reason
    "auto") and nothing that settles; `stop_auto_scroll()` when the timer stops sends
    `scroll-animation-ended`, the crawl's one settle; when the user takes over
    (`will_begin_dragging`, `set_content_offset`, `key`) that end goes out first, by itself.

    **Edges.** A bounded pager whose offset the user's scroll takes more than `EDGE_THRESHOLD` of a
    page past its first or last page (UIKit's rubber band) sends `edge` from `did_scroll`, once per
    scroll."""

    def __init__(self, page_count: int, page_width: float = 1.0, page: int = 0, loops: bool = False) -> None:
        if page_count < 1 or not page_width > 0:
            raise ValueError("a pager has at least one page, and its pages have a width")
        self.page_count = page_count
        self.page_width = float(page_width)
        self.loops = loops
        #: The page under the middle of the view, counted on past the ends of a looping pager.
        self.index = _wrap(page, page_count) if loops else min(max(0, page), page_count - 1)
        self._mover = "none"  # "none", "user" (a drag and its deceleration), "program" or "auto"
        self._edge_sent = False  # this scroll sent `edge`

    @property
    def page(self) -> int:
        """The page under the middle of the view, as last reported (0 … page_count − 1)."""
        return _wrap(self.index, self.page_count)

    def index_at(self, offset: float) -> int:
        """The page index under the middle at `offset`, counted on past the ends when looping (the
        page now for an offset that is not a number)."""
        if not math.isfinite(offset):
            return self.index
        pages = offset / self.page_width
        # Half way rounds away from zero, as Swift's rounded() (Python's round() goes to even).
        nearest = int(math.floor(pages + 0.5)) if pages >= 0 else -int(math.floor(-pages + 0.5))
        return nearest if self.loops else min(max(0, nearest), self.page_count - 1)

    def page_at(self, offset: float) -> int:
        """The page under the middle of a view at `offset`."""
        return _wrap(self.index_at(offset), self.page_count)

    def pages_per_second(self, points_per_millisecond: float) -> float:
        """UIKit's velocity (points per millisecond) in cued's unit, pages per second."""
        return points_per_millisecond * 1000.0 / self.page_width

    # --- the delegate calls -------------------------------------------------------------------

    def will_begin_dragging(self) -> List[CarouselMessage]:
        """scrollViewWillBeginDragging. An auto-scroll under way ends first (`scroll-animation-ended`):
        the user took over."""
        ended = self.stop_auto_scroll()
        self._mover = "user"
        self._edge_sent = False
        return ended + [drag_began()]

    def did_scroll(self, offset: float) -> List[CarouselMessage]:
        """scrollViewDidScroll: a page change when the page under the middle changed, and `edge`
        when the user's scroll took a bounded pager past an end."""
        reason = {"program": "programmatic", "auto": "auto"}.get(self._mover, "drag")
        return self._edge_at(offset) + self.move(offset, reason)

    def _edge_at(self, offset: float) -> List[CarouselMessage]:
        """`edge` when the user's scroll has taken a bounded pager more than `EDGE_THRESHOLD` of a
        page past an end, once per scroll."""
        if self.loops or self._mover != "user" or self._edge_sent or not math.isfinite(offset):
            return []
        pages = offset / self.page_width
        if pages < -EDGE_THRESHOLD:
            return self.edge("start")
        if pages > self.page_count - 1 + EDGE_THRESHOLD:
            return self.edge("end")
        return []

    def auto_scroll(self, offset: float) -> List[CarouselMessage]:
        """An auto-scroll's timer set the offset (seed 003): the page changes it crossed, with the
        reason "auto". Nothing settles while it moves."""
        self._mover = "auto"
        return self.move(offset, "auto")

    def stop_auto_scroll(self) -> List[CarouselMessage]:
        """The auto-scroll stopped (its timer stopped, or it reached the end of a bounded pager):
        `scroll-animation-ended`, which settles it, when one was under way; else nothing."""
        if self._mover != "auto":
            return []
        self._mover = "none"
        return [scroll_animation_ended()]

    def move(self, offset: float, reason: str, animated: bool = True) -> List[CarouselMessage]:
        """The view is now at `offset` for `reason` ("drag", "key", "auto", "programmatic"): the
        page change, and `wrapped` when it went round an end."""
        target = self.index_at(offset)
        if target == self.index:
            return []
        start, self.index = self.index, target
        messages = [page_changed(_wrap(start, self.page_count), self.page, self.page_count, reason,
                                 "next" if target > start else "previous", None if animated else False)]
        if self.loops and start // self.page_count != target // self.page_count:
            messages.append(wrapped(_wrap(start, self.page_count), self.page, self.page_count))
        return messages

    def rest(self, offset: float) -> List[CarouselMessage]:
        """The view rests at `offset` without a page change being sent (a flick caught short of its
        announced target). Sends nothing."""
        self.index = self.index_at(offset)
        return []

    def will_end_dragging(self, velocity_points_per_millisecond: float, target_offset: float) -> List[CarouselMessage]:
        """scrollViewWillEndDragging(_:withVelocity:targetContentOffset:), along the paging axis."""
        velocity = self.pages_per_second(velocity_points_per_millisecond)
        return [will_end_dragging(velocity, self.page_at(target_offset))]

    def did_end_dragging(self, decelerate: bool) -> List[CarouselMessage]:
        """scrollViewDidEndDragging(_:willDecelerate:)."""
        if not decelerate:
            self._mover = "none"
        return [drag_ended(decelerate)]

    def will_begin_decelerating(self) -> List[CarouselMessage]:
        """scrollViewWillBeginDecelerating."""
        return [will_begin_decelerating()]

    def did_end_decelerating(self) -> List[CarouselMessage]:
        """scrollViewDidEndDecelerating."""
        self._mover = "none"
        return [deceleration_ended()]

    def set_content_offset(self, offset: float, animated: bool) -> List[CarouselMessage]:
        """setContentOffset(_:animated:) by the program. Not animated, it is the whole scroll (the
        page change says `"animated": false`); animated, `did_scroll` reports the page changes as it
        moves and `did_end_scrolling_animation` ends it. An auto-scroll under way ends first."""
        ended = self.stop_auto_scroll()
        if animated:
            self._mover = "program"
            return ended
        self._mover = "none"
        return ended + self.move(offset, "programmatic", animated=False)

    def did_end_scrolling_animation(self) -> List[CarouselMessage]:
        """scrollViewDidEndScrollingAnimation."""
        self._mover = "none"
        return [scroll_animation_ended()]

    def edge(self, side: str) -> List[CarouselMessage]:
        """The user pushed past the first ("start") or last ("end") page of a bounded pager (for a
        pager that knows it other than by its offset: `did_scroll` sends it from the offset)."""
        message = edge(side)
        self._edge_sent = True
        return [message]

    # --- whole scrolls --------------------------------------------------------------------------

    def _offset(self, index: int) -> float:
        return index * self.page_width

    def _target(self, pages: int) -> int:
        target = self.index + pages
        return target if self.loops else min(max(0, target), self.page_count - 1)

    def flick(self, pages: int, velocity: Optional[float] = None) -> List[CarouselMessage]:
        """A drag released with a velocity that coasts `pages` pages on (negative: back): the finger
        crosses into the next page, `will-end-dragging` announces the target, the rest of the way
        is the deceleration. `velocity` in pages per second (default: 4 per page to go, its way)."""
        if pages == 0:
            return self.drag(0)
        target = self._target(pages)
        step = 1 if pages > 0 else -1
        if velocity is None:
            velocity = 4.0 * pages
        messages = self.will_begin_dragging()
        if abs(pages) > 1:
            messages += self.did_scroll(self._offset(self.index + step))
        messages.append(will_end_dragging(velocity, _wrap(target, self.page_count)))
        messages += self.did_scroll(self._offset(target))
        messages += self.did_end_dragging(True)
        messages += self.will_begin_decelerating()
        messages += self.did_end_decelerating()
        return messages

    def drag(self, pages: int) -> List[CarouselMessage]:
        """A slow drag `pages` pages on (negative: back), released standing still on the page:
        no deceleration, the scroll settles at the release."""
        target = self._target(pages)
        step = 1 if target > self.index else -1
        messages = self.will_begin_dragging()
        while self.index != target:
            messages += self.did_scroll(self._offset(self.index + step))
        messages.append(will_end_dragging(0.0, self.page))
        messages += self.did_end_dragging(False)
        return messages

    def key(self, step: int, reason: str = "key") -> List[CarouselMessage]:
        """An arrow key: an animated programmatic scroll `step` pages on, ended by
        `scroll-animation-ended`; against an end of a bounded pager, `edge` instead. An auto-scroll
        under way ends first."""
        ended = self.stop_auto_scroll()
        target = self.index + step
        if not self.loops and not 0 <= target < self.page_count:
            return ended + self.edge("end" if step > 0 else "start")
        self._mover = "program"
        messages = self.move(self._offset(target), reason)
        return ended + messages + self.did_end_scrolling_animation()

    def jump(self, page: int) -> List[CarouselMessage]:
        """A jump to `page` without animation: one page change that settles the scroll."""
        base = self.index - self.page
        return self.set_content_offset(self._offset(base + page), animated=False)

    def push_edge(self, side: str) -> List[CarouselMessage]:
        """A drag past the first ("start") or last ("end") page of a bounded pager that springs back
        on release: `drag-began`, `edge`, a release with no velocity, the spring back."""
        messages = self.will_begin_dragging() + self.edge(side)
        messages.append(will_end_dragging(0.0, self.page))
        messages += self.did_end_dragging(True)
        messages += self.will_begin_decelerating()
        return messages + self.did_end_decelerating()
