#!/usr/bin/env python3
"""A carousel in the terminal that makes cued play its paging sounds (standard library and the
`cued` package only; without the package installed it imports it from this checkout).

    carousel.py [--pages N] [--no-loop] [--carousel NAME] [--auto SECONDS] [--socket PATH]

Drag the cards with the mouse: they follow the pointer, and on release they snap back, go on a
page, or (flicked) coast across several. ←/→ (or h/l) and the mouse wheel turn the page; f and b
send a scripted flick two pages on or back; q quits. Every scroll goes to cued as carousel
messages in UIScrollView's order (docs/PROTOCOL.md, 4b), as cued-carousel sends them: a drag is
drag-began, page-changed as the middle crosses into each page (reason drag), will-end-dragging
(velocity, target page), page-changed to the target, drag-ended (decelerate), and when it coasts
will-begin-decelerating and deceleration-ended; past the ends of a bounded pager (--no-loop) the
cards stretch like a rubber band and edge is sent; a key is page-changed (reason key) and
scroll-animation-ended when its slide ends; a looping pager that goes round sends wrapped. The
bottom line shows what cued decided (the paging events of this carousel).
"""
from __future__ import annotations

import argparse
import curses
import os
import sys
import time
from typing import Any, List, Optional, Tuple

try:
    import cued
except ImportError:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))
    import cued

from cued import carousel as messages

STILL_VELOCITY = 0.5  # pages per second under which a release stands still
STILL_SECONDS = 0.1  # a pointer that stood this long before the release had no velocity
PROJECTION_SECONDS = 0.3  # a flick's target: where it would coast in this time
EDGE_THRESHOLD = 0.05  # how far past an end (pages) counts as pushing past it
SLIDE_SECONDS = 0.12
MAX_FLICK_PAGES = 5


class Carousel:
    """The pages and their motion; `session` sends each step to cued."""

    def __init__(self, session: cued.CarouselSession, loops: bool, auto_seconds: float) -> None:
        self.session = session
        self.tracker = session.tracker
        self.count = self.tracker.page_count
        self.loops = loops
        self.anchor = self.tracker.index  # the page the view rests on (counted on past the ends)
        self.offset = 0.0  # how far the view is from the anchor, in pages
        self.drag: Optional[dict[str, Any]] = None
        self.animation: Optional[Tuple[str, float, float, float]] = None  # kind, from offset, start, duration
        self.auto_seconds = auto_seconds
        self.auto_due = time.monotonic() + auto_seconds if auto_seconds > 0 else None
        self.status = "connecting to cued…"

    def send(self, sent: List[cued.PagingResult]) -> None:
        del sent  # fire-and-forget: what cued decided arrives as paging events

    def safely(self, step: Any, *args: Any) -> None:
        try:
            self.send(step(*args))
        except cued.CuedError as error:
            self.status = "cued: %s" % error

    # --- where things are -----------------------------------------------------------------------

    def position(self, now: float) -> float:
        if self.animation is not None:
            kind, start_offset, start, duration = self.animation
            t = min(1.0, max(0.0, (now - start) / duration)) if duration > 0 else 1.0
            if kind == "bump":
                return self.anchor + start_offset * 4 * t * (1 - t)
            return self.anchor + start_offset * (1 - t) ** 3
        return self.anchor + self.offset

    def displayed(self, raw: float) -> float:
        """Past the ends of a bounded pager the cards go only part of the way (a rubber band)."""
        if self.loops:
            return raw
        last = float(self.count - 1)
        if raw < 0:
            return -(1 - 1 / (-raw * 0.55 + 1))
        if raw > last:
            return last + (1 - 1 / ((raw - last) * 0.55 + 1))
        return raw

    def clamped(self, index: int) -> int:
        return index if self.loops else min(max(0, index), self.count - 1)

    # --- the pointer ------------------------------------------------------------------------------

    def press(self, x: float, now: float) -> None:
        self.auto_due = None
        position = self.position(now)
        grabbed = self.animation is not None
        if grabbed:  # touching a moving carousel stops it where it is: a new drag begins
            self.animation = None
            self.anchor = self.clamped(int(round(position)))
            self.offset = position - self.anchor
            self.safely(self.session.rest, float(self.anchor))
            self.safely(self.session.will_begin_dragging)
        self.drag = {"x": x, "position": position, "start": self.anchor, "began": grabbed, "raw": position,
                     "edge": False, "samples": [(now, position)]}

    def move(self, x: float, now: float) -> None:
        drag = self.drag
        if drag is None:
            return
        raw = drag["position"] + (drag["x"] - x)
        if not drag["began"]:
            if raw == drag["raw"]:
                return
            drag["began"] = True
            self.safely(self.session.will_begin_dragging)
        drag["raw"] = raw
        drag["samples"] = (drag["samples"] + [(now, raw)])[-16:]
        if not self.loops and not drag["edge"] and (raw < -EDGE_THRESHOLD or raw > self.count - 1 + EDGE_THRESHOLD):
            drag["edge"] = True
            self.safely(self.session.edge, "start" if raw < 0 else "end")
        shown = self.displayed(raw)
        self.offset = shown - self.anchor
        under = self.clamped(int(round(shown)))
        if under != self.anchor:
            self.safely(self.session.did_scroll, float(under))
            self.anchor = under
            self.offset = shown - under

    def release(self, x: float, now: float) -> None:
        self.move(x, now)
        drag, self.drag = self.drag, None
        if drag is None or not drag["began"]:
            self.settled(now)
            return
        velocity = max(-1000.0, min(1000.0, self.velocity(drag["samples"], now)))
        shown = self.displayed(drag["raw"])
        target = self.target(drag, shown, velocity)
        remaining = shown - target
        decelerate = abs(velocity) >= STILL_VELOCITY or abs(remaining) > 0.02
        self.safely(self.session.send, [messages.will_end_dragging(round(velocity, 2), target % self.count)])
        if target != self.anchor:
            self.safely(self.session.did_scroll, float(target))
        self.anchor, self.offset = target, 0.0
        self.safely(self.session.did_end_dragging, decelerate)
        if not decelerate:
            self.settled(now)
            return
        self.safely(self.session.will_begin_decelerating)
        seconds = 3 * abs(remaining) / abs(velocity) if abs(velocity) >= STILL_VELOCITY else 0.25
        self.animation = ("deceleration", remaining, now, min(0.6, max(0.15, seconds)))

    def target(self, drag: dict[str, Any], shown: float, velocity: float) -> int:
        if not self.loops and not 0 <= drag["raw"] <= self.count - 1:
            return self.clamped(int(round(shown)))  # springs back from the rubber band
        if abs(velocity) < STILL_VELOCITY:
            return self.clamped(int(round(shown)))
        target = int(round(drag["raw"] + velocity * PROJECTION_SECONDS))
        if velocity > 0 and target <= shown:
            target = int(shown // 1) + 1
        if velocity < 0 and target >= shown:
            target = -int(-shown // 1) - 1
        lowest, highest = drag["start"] - MAX_FLICK_PAGES, drag["start"] + MAX_FLICK_PAGES
        return self.clamped(min(highest, max(lowest, target)))

    @staticmethod
    def velocity(samples: List[Tuple[float, float]], now: float) -> float:
        """Pages per second over the pointer's last tenth of a second (0 if it stood still)."""
        if len(samples) < 2 or now - samples[-1][0] > STILL_SECONDS:
            return 0.0
        first = samples[-2]
        for sample in reversed(samples[:-2]):
            if samples[-1][0] - sample[0] <= STILL_SECONDS:
                first = sample
        seconds = max(0.008, samples[-1][0] - first[0])
        return (samples[-1][1] - first[1]) / seconds

    # --- keys, the wheel, flicks, auto-advance ----------------------------------------------------

    def step(self, step: int, reason: str, now: float) -> None:
        if self.drag is not None:
            return
        self.finish(now)
        self.auto_due = None
        target = self.anchor + step
        if not self.loops and not 0 <= target < self.count:
            self.safely(self.session.edge, "end" if step > 0 else "start")
            self.animation = ("bump", 0.06 * step, now, SLIDE_SECONDS)
            return
        self.safely(self.session.move, float(target), reason)
        self.anchor, self.offset = target, 0.0
        self.animation = ("slide", -float(step), now, SLIDE_SECONDS)

    def scripted_flick(self, pages: int, now: float) -> None:
        """The whole lifecycle of a flick at once (the package's `flick`), then its coasting drawn."""
        if self.drag is not None:
            return
        self.finish(now)
        start = self.anchor
        self.safely(self.session.flick, pages)
        self.anchor = self.tracker.index
        self.animation = ("flick", float(start - self.anchor), now, 0.4)
        self.settled(now)

    def finish(self, now: float) -> None:
        """Ends the animation under way (and sends its end)."""
        if self.animation is None:
            return
        kind = self.animation[0]
        self.animation = None
        if kind == "slide":
            self.safely(self.session.did_end_scrolling_animation)
        elif kind == "deceleration":
            self.safely(self.session.did_end_decelerating)
        self.settled(now)

    def settled(self, now: float) -> None:
        if self.auto_seconds > 0:
            self.auto_due = now + 3.0

    def tick(self, now: float) -> None:
        if self.animation is not None and now >= self.animation[2] + self.animation[3]:
            self.finish(now)
        if self.animation is None and self.drag is None and self.auto_due is not None and now >= self.auto_due:
            target = self.anchor + 1 if self.loops or self.anchor + 1 < self.count else 0
            self.safely(self.session.move, float(target), "auto")
            self.animation = ("slide", float(self.anchor - target), now, SLIDE_SECONDS)
            self.anchor, self.offset = target, 0.0
            self.auto_due = now + self.auto_seconds


def draw(screen: Any, view: Carousel, now: float) -> None:
    height, width = screen.getmaxyx()
    screen.erase()
    card = max(9, min(30, width * 3 // 5))
    stride = card + 3
    middle = width // 2
    top, card_height = max(1, height // 2 - 5), min(9, max(3, height - 6))
    position = view.position(now)
    base = int(position // 1)
    for k in range(base - 3, base + 4):
        if not view.loops and not 0 <= k < view.count:
            continue
        page = k % view.count
        left = middle + int(round((k - position) * stride)) - card // 2
        attribute = curses.color_pair(1 + page % 6) if curses.has_colors() else curses.A_REVERSE
        for row in range(card_height):
            text = " " * card
            if row == card_height // 2:
                text = ("page %d of %d" % (page + 1, view.count)).center(card)
            for column, character in enumerate(text):
                x = left + column
                if 0 <= x < width - 1 and 0 <= top + row < height:
                    screen.addstr(top + row, x, character, attribute)
    dots = " ".join("●" if page == view.anchor % view.count else "·" for page in range(view.count))
    if height > top + card_height + 2:
        screen.addstr(top + card_height + 1, max(0, (width - len(dots)) // 2), dots[: width - 1])
    help_line = "drag · ←/→ · wheel · f/b flick · q quit"
    screen.addstr(0, 0, help_line[: width - 1], curses.A_DIM)
    screen.addstr(height - 1, 0, view.status[: width - 1])
    screen.refresh()


def run(screen: Any, options: argparse.Namespace) -> None:
    curses.curs_set(0)
    curses.mousemask(curses.ALL_MOUSE_EVENTS | curses.REPORT_MOUSE_POSITION)
    curses.mouseinterval(0)
    # Report motion while a button is held (xterm's mode 1002), so that the cards follow a drag.
    sys.stdout.write("\033[?1002h")
    sys.stdout.flush()
    if curses.has_colors():
        curses.start_color()
        curses.use_default_colors()
        for index, colour in enumerate((curses.COLOR_BLUE, curses.COLOR_MAGENTA, curses.COLOR_CYAN, curses.COLOR_GREEN,
                                        curses.COLOR_YELLOW, curses.COLOR_RED)):
            curses.init_pair(index + 1, curses.COLOR_BLACK, colour)
    client = cued.Client(options.socket, name="carousel.py")
    session = client.carousel(options.carousel, options.pages, loops=not options.no_loop)
    view = Carousel(session, not options.no_loop, options.auto)

    def show(event: cued.Event) -> None:
        if isinstance(event, cued.PagingEvent) and event.carousel == options.carousel:
            played = " %s (voice %s)" % (event.cue, event.voice) if event.decision == "played" else ""
            view.status = "%s: %s%s" % (event.message, event.decision, played)

    try:
        client.on_event(show, kinds=["paging"])
        view.status = "cued %s: drag the cards" % (client.server.version if client.server else "?")
    except cued.CuedError as error:
        view.status = "cued: %s" % error
    stride = max(9, min(30, screen.getmaxyx()[1] * 3 // 5)) + 3
    wheel_up, wheel_down = curses.BUTTON4_PRESSED, getattr(curses, "BUTTON5_PRESSED", 0x200000)
    try:
        while True:
            now = time.monotonic()
            view.tick(now)
            draw(screen, view, now)
            screen.timeout(20 if view.animation or view.drag else 200)
            key = screen.getch()
            now = time.monotonic()
            if key == ord("q"):
                break
            if key in (curses.KEY_RIGHT, ord("l")):
                view.step(1, "key", now)
            elif key in (curses.KEY_LEFT, ord("h")):
                view.step(-1, "key", now)
            elif key in (ord("f"), ord("b")):
                view.scripted_flick(2 if key == ord("f") else -2, now)
            elif key == curses.KEY_MOUSE:
                try:
                    _, x, _, _, state = curses.getmouse()
                except curses.error:
                    continue
                pages = x / stride
                if state & wheel_up:
                    view.step(-1, "programmatic", now)
                elif state & wheel_down:
                    view.step(1, "programmatic", now)
                elif state & curses.BUTTON1_PRESSED:
                    view.press(pages, now)
                elif state & curses.BUTTON1_RELEASED:
                    view.release(pages, now)
                elif view.drag is not None:
                    view.move(pages, now)
    finally:
        sys.stdout.write("\033[?1002l")
        sys.stdout.flush()
        client.close()


def main() -> None:
    parser = argparse.ArgumentParser(description="A terminal carousel that makes cued play its paging sounds.")
    parser.add_argument("--pages", type=int, default=7, help="how many pages (cards); default 7")
    parser.add_argument("--no-loop", action="store_true", help="stop at the first and last page (a bounded pager)")
    parser.add_argument("--carousel", default="demo", help="the carousel's name: whose bindings cued uses")
    parser.add_argument("--auto", type=float, default=0, help="seconds between automatic page turns (0: off)")
    parser.add_argument("--socket", help="cued's socket (default: $CUED_SOCKET, else $XDG_RUNTIME_DIR/cued/cued.sock)")
    options = parser.parse_args()
    if not 1 <= options.pages <= 1000:
        parser.error("--pages must be 1 to 1000")
    curses.wrapper(run, options)


if __name__ == "__main__":
    main()
