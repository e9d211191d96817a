"""The examples, run as a user runs them: examples/cued_client.py, and the terminal carousel in a
pseudo-terminal, driven by keys and a mouse drag, heard by a connection subscribed to `paging`."""
from __future__ import annotations

import fcntl
import os
import pty
import select
import signal
import struct
import subprocess
import sys
import termios
import threading
import time
import unittest
from typing import List

import cued
from support import REPOSITORY, Daemon

EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples")


class ExampleTests(unittest.TestCase):
    def test_the_repositorys_python_example(self) -> None:
        daemon = Daemon()
        self.addCleanup(daemon.stop)
        result = subprocess.run(
            [sys.executable, os.path.join(REPOSITORY, "examples", "cued_client.py"), "--socket", daemon.socket],
            capture_output=True, text=True, timeout=60)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertIn("paused at", result.stdout)
        self.assertTrue(result.stdout.endswith("ok\n"), result.stdout)


class TerminalCarouselTests(unittest.TestCase):
    def setUp(self) -> None:
        self.daemon = Daemon()
        self.addCleanup(self.daemon.stop)
        self.client = cued.Client(self.daemon.socket)
        self.addCleanup(self.client.close)
        self.paging = self.client.events(["paging"])
        self.output = b""

    def start(self, *arguments: str) -> None:
        pid, fd = pty.fork()
        if pid == 0:
            os.environ["TERM"] = "xterm"
            os.execv(sys.executable, [sys.executable, os.path.join(EXAMPLES, "carousel.py"),
                                      "--socket", self.daemon.socket] + list(arguments))
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
        self.pid, self.fd = pid, fd
        self.addCleanup(self.stop)
        self.reader = threading.Thread(target=self.drain, daemon=True)
        self.reader.start()
        self.read_until(b"drag the cards")

    def drain(self) -> None:
        """Reads the screen as it is drawn (a program whose terminal is not read stops drawing)."""
        while True:
            try:
                ready, _, _ = select.select([self.fd], [], [], 0.1)
                if ready:
                    chunk = os.read(self.fd, 65536)
                    if not chunk:
                        return
                    self.output += chunk
            except (OSError, ValueError):
                return

    def read_until(self, text: bytes, timeout: float = 10) -> None:
        deadline = time.monotonic() + timeout
        while text not in self.output:
            self.assertGreater(deadline - time.monotonic(), 0,
                               "the carousel never showed %r: %r" % (text, self.output[-400:]))
            time.sleep(0.02)

    def type(self, keys: bytes, pause: float = 0.05) -> None:
        os.write(self.fd, keys)
        time.sleep(pause)

    def stop(self) -> None:
        try:
            os.write(self.fd, b"q")
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline:
                done, _ = os.waitpid(self.pid, os.WNOHANG)
                if done:
                    break
                time.sleep(0.02)
            else:
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
        finally:
            self.reader.join(2)
            os.close(self.fd)

    def messages(self, until: str, carousel: str = "demo") -> List[cued.PagingEvent]:
        """The paging events of the carousel up to the first `until` message."""
        seen: List[cued.PagingEvent] = []
        while not seen or seen[-1].message != until:
            try:
                event = self.paging.wait_for("paging", timeout=10, carousel=carousel)
            except TimeoutError:
                raise AssertionError("no %s after %r; the screen: %r" % (until, seen, self.output[-300:])) from None
            assert isinstance(event, cued.PagingEvent)
            seen.append(event)
        return seen

    def test_keys_turn_the_page_and_end_each_slide(self) -> None:
        self.start("--pages", "5")
        self.type(b"\x1bOC")  # → in xterm's application mode
        events = self.messages("settled")
        self.assertEqual([(e.message, e.reason) for e in events],
                         [("page-changed", "key"), ("scroll-animation-ended", None), ("settled", None)])
        self.assertEqual((events[0].from_page, events[0].to_page, events[0].cue), (0, 1, "page-next"))
        self.type(b"h")
        self.type(b"h")
        back = self.messages("wrapped")
        self.assertIn(("page-changed", 1, 0), [(e.message, e.from_page, e.to_page) for e in back])
        self.assertEqual((back[-2].message, back[-2].to_page, back[-2].cue), ("page-changed", 4, "wrap"))

    def test_a_mouse_drag_sends_the_whole_lifecycle(self) -> None:
        self.start("--pages", "7")
        # xterm's SGR mouse reports: press at column 60, drag left quickly, release at column 10.
        self.type(b"\x1b[<0;60;12M", 0.02)
        for column in (50, 40, 30, 20, 10):
            self.type(b"\x1b[<32;%d;12M" % column, 0.01)
        self.type(b"\x1b[<0;10;12m", 0.02)
        events = self.messages("settled")
        names = [e.message for e in events]
        self.assertEqual(names[0], "drag-began")
        self.assertIn("will-end-dragging", names)
        release = names.index("will-end-dragging")
        tail = names[release + 1:]
        if tail[0] == "page-changed":  # the page it coasts to
            tail = tail[1:]
        self.assertEqual(tail, ["drag-ended", "will-begin-decelerating", "deceleration-ended", "settled"])
        dragged = [e for e in events if e.message == "page-changed"]
        self.assertTrue(dragged and all(e.reason == "drag" and e.direction == "next" for e in dragged), events)
        ending = events[release]
        self.assertGreater(ending.velocity or 0, 0.5, "a flick")
        self.assertEqual(ending.target_page, dragged[-1].to_page)

    def test_a_bounded_pager_sends_edge(self) -> None:
        self.start("--pages", "3", "--no-loop")
        self.type(b"\x1bOD")
        edge = self.paging.wait_for("paging", timeout=10, message="edge")
        assert isinstance(edge, cued.PagingEvent)
        self.assertEqual(edge.edge, "start")


if __name__ == "__main__":
    unittest.main()
