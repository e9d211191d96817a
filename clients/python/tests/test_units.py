"""What needs no real daemon: the socket path rules, every error code's class, events of kinds a
client must pass through, the codes a real daemon cannot be made to send (a stand-in daemon sends
them, as docs/PROTOCOL.md section 5 suggests), and ScrollTracker's arithmetic."""
from __future__ import annotations

import asyncio
import json
import os
import threading
import time
import unittest
from typing import Any, Dict, List
from unittest import mock

import cued
from cued import carousel
from support import FakeDaemon


class SocketPathTests(unittest.TestCase):
    def path(self, **environment: str) -> str:
        with mock.patch.dict(os.environ, environment, clear=True):
            return cued.default_socket_path()

    def test_the_rules_of_cued_and_cuectl(self) -> None:
        self.assertEqual(self.path(CUED_SOCKET="/x/s.sock", XDG_RUNTIME_DIR="/run/user/7"), "/x/s.sock")
        self.assertEqual(self.path(CUED_SOCKET="", XDG_RUNTIME_DIR="/run/user/7"), "/run/user/7/cued/cued.sock")
        self.assertEqual(self.path(XDG_RUNTIME_DIR="relative"), "/tmp/cued-%d/cued.sock" % os.getuid())
        self.assertEqual(self.path(), "/tmp/cued-%d/cued.sock" % os.getuid())
        with mock.patch.dict(os.environ, {"CUED_SOCKET": "/x/s.sock"}):
            self.assertEqual(cued.default_socket_path("/given"), "/given")
            self.assertEqual(cued.Client().socket_path, "/x/s.sock")


class ErrorCodeTests(unittest.TestCase):
    def test_every_documented_code_has_its_class(self) -> None:
        for code in cued.ErrorCode:
            error = cued.errors.error_from_reply({"id": 1, "ok": False, "error": {"code": code.value, "message": "m"}})
            self.assertIs(type(error).CODE, code)
            self.assertEqual((error.code, error.message, error.error_code), (code.value, "m", code))
        self.assertEqual(len(cued.ErrorCode), 20)

    def test_an_unknown_code_is_a_plain_request_error(self) -> None:
        error = cued.errors.error_from_reply({"id": 1, "ok": False, "error": {"code": "too-loud", "message": "m"}})
        self.assertIs(type(error), cued.RequestError)
        self.assertEqual((error.code, error.error_code), ("too-loud", None))


class EventParsingTests(unittest.TestCase):
    def test_unknown_kinds_and_unreadable_fields_pass_through(self) -> None:
        future = cued.parse_event({"event": "sparkle", "voice": 3})
        self.assertIsInstance(future, cued.GenericEvent)
        self.assertEqual((future.kind, future.ids, future.raw["voice"]), ("sparkle", (3,), 3))
        odd = cued.parse_event({"event": "finished", "reason": 5})
        self.assertIsInstance(odd, cued.GenericEvent)

    def test_new_fields_and_reasons_are_kept(self) -> None:
        finished = cued.parse_event({"event": "finished", "voice": 1, "cue": "x", "reason": "vanished", "extra": True})
        assert isinstance(finished, cued.FinishedEvent)
        self.assertFalse(finished.successfully, "an unknown reason is an unsuccessful end")
        self.assertTrue(finished.raw["extra"])
        dropped = cued.parse_event({"event": "events-dropped", "count": 24703})
        assert isinstance(dropped, cued.EventsDroppedEvent)
        self.assertEqual(dropped.count, 24703)

    def test_meters_read_the_mix_and_each_voice(self) -> None:
        # The line of docs/PROTOCOL.md's meters transcript.
        meters = cued.parse_event(
            {"event": "meters", "mix": {"peak": 0.33633, "rms": 0.05447}, "voices": [{"voice": 1, "peak": 0.33633, "rms": 0.05447}]})
        assert isinstance(meters, cued.MetersEvent)
        self.assertEqual(meters.mix, cued.Meter(0.33633, 0.05447))
        self.assertEqual(meters.voices, {1: cued.Meter(0.33633, 0.05447)})
        self.assertNotIn("meters", cued.events.SUBSCRIBABLE_KINDS, "no subscription brings meters")
        self.assertIsInstance(cued.parse_event({"event": "meters", "mix": 1, "voices": []}), cued.GenericEvent)


def answering(replies: Dict[str, Dict[str, Any]]) -> Any:
    """A stand-in's answer: for each request, the canned reply of its op (with its id)."""
    def answer(line: bytes) -> List[bytes]:
        request = json.loads(line)
        reply = dict(replies.get(request.get("op"), {"ok": True}))
        lines = []
        for event in reply.pop("events", []):
            lines.append(json.dumps(event).encode() + b"\n")
        return [json.dumps({"id": request.get("id"), **reply}).encode() + b"\n"] + lines
    return answer


HELLO = {"ok": True, "server": "cued", "version": "9.9.9", "protocol": 1}


class StandInDaemonTests(unittest.TestCase):
    def stand_in(self, replies: Dict[str, Dict[str, Any]], greeting: bytes = b"") -> FakeDaemon:
        fake = FakeDaemon(answering(dict({"hello": HELLO, "ping": {"ok": True, "pong": True}}, **replies)), greeting)
        self.addCleanup(fake.stop)
        return fake

    def test_busy_internal_and_parse_errors_raise_their_classes(self) -> None:
        fake = self.stand_in({
            "play": {"ok": False, "error": {"code": "busy", "message": "the queue is full"}},
            "status": {"ok": False, "error": {"code": "internal", "message": "oops"}},
            "ping": {"ok": False, "error": {"code": "parse-error", "message": "bad"}},
        })
        with cued.Client(fake.socket) as client:
            self.assertEqual(client.server.version if client.server else None, "9.9.9")
            with self.assertRaises(cued.Busy) as busy:
                client.play("pico")
            self.assertEqual(busy.exception.message, "the queue is full")
            with self.assertRaises(cued.InternalError):
                client.status()
            with self.assertRaises(cued.ParseError):
                client.ping()

    def test_access_denied_arrives_unprompted_and_fails_the_connection(self) -> None:
        refusal = b'{"id":null,"ok":false,"error":{"code":"access-denied","message":"not yours"}}\n'
        fake = self.stand_in({}, greeting=refusal)
        with self.assertRaises(cued.AccessDenied):
            cued.connect(fake.socket)

    def test_events_of_a_kind_this_version_does_not_know_reach_the_streams(self) -> None:
        fake = self.stand_in({"ping": {"ok": True, "pong": True, "events": [
            {"event": "sparkle", "voice": 9}, {"event": "events-dropped", "count": 2}]}})
        with cued.Client(fake.socket) as client:
            with client.events(subscribe=False) as stream:
                client.ping()
                self.assertEqual(stream.wait_for().kind, "sparkle")
                self.assertEqual(stream.wait_for("events-dropped").raw["count"], 2)

    def test_a_reply_that_is_not_the_protocol_is_a_violation(self) -> None:
        fake = self.stand_in({"voices": {"ok": True, "voices": "none"}})
        with cued.Client(fake.socket) as client:
            with self.assertRaises(cued.ProtocolViolation):
                client.voices()
            self.assertTrue(client.ping(), "the connection carries on")


def deferring() -> Any:
    """A stand-in that answers a `reload` only after the request that follows it, as cued may."""
    held: List[bytes] = []

    def answer(line: bytes) -> List[bytes]:
        request = json.loads(line)
        if request["op"] == "hello":
            return [json.dumps({"id": request["id"], **HELLO}).encode() + b"\n"]
        if request["op"] == "reload":
            held.append(json.dumps({"id": request["id"], "ok": True, "cues": 1, "added": [], "changed": [],
                                    "removed": [], "failed": []}).encode() + b"\n")
            return []
        lines = [json.dumps({"id": request["id"], "ok": True, "pong": True}).encode() + b"\n"] + held
        held.clear()
        return lines
    return answer


class DeferredReplyTests(unittest.IsolatedAsyncioTestCase):
    """A deferred reply that comes after the reply to a later request still reaches its caller."""

    def setUp(self) -> None:
        self.fake = FakeDaemon(deferring())
        self.addCleanup(self.fake.stop)

    def test_sync(self) -> None:
        with cued.Client(self.fake.socket) as client:
            order: List[str] = []
            reloading = threading.Thread(target=lambda: order.append("reload %d" % client.reload().cues))
            reloading.start()
            while not client._core._pending:  # the reload is on its way
                time.sleep(0.001)
            order.append("ping %s" % client.ping())
            reloading.join(5)
            # The stand-in answered the ping first and then the reload, in one write: each still
            # got its own reply (crossed, the ping would have read no "pong").
            self.assertEqual(sorted(order), ["ping True", "reload 1"])

    async def test_async(self) -> None:
        client = await cued.connect_async(self.fake.socket)
        reload = asyncio.ensure_future(client.reload())
        await asyncio.sleep(0)
        self.assertTrue(await client.ping())
        self.assertEqual((await reload).cues, 1)
        await client.close()


class ScrollTrackerTests(unittest.TestCase):
    def events(self, messages: List[cued.CarouselMessage]) -> List[Any]:
        return [(m.event, m.fields.get("from"), m.fields.get("to")) if m.event in ("page-changed", "wrapped") else m.event
                for m in messages]

    def test_a_flick_sends_the_whole_lifecycle_in_uikits_order(self) -> None:
        tracker = cued.ScrollTracker(7, loops=True)
        messages = tracker.flick(3, velocity=12.5)
        self.assertEqual(self.events(messages), [
            "drag-began", ("page-changed", 0, 1), "will-end-dragging", ("page-changed", 1, 3), "drag-ended",
            "will-begin-decelerating", "deceleration-ended"])
        self.assertEqual(messages[2].fields, {"velocity": 12.5, "targetPage": 3})
        self.assertEqual(messages[4].fields, {"decelerate": True})
        self.assertEqual(tracker.page, 3)

    def test_going_round_a_looping_pager_sends_wrapped(self) -> None:
        tracker = cued.ScrollTracker(5, loops=True, page=4)
        self.assertEqual(self.events(tracker.key(1)), [("page-changed", 4, 0), ("wrapped", 4, 0), "scroll-animation-ended"])
        self.assertEqual(self.events(tracker.key(-1)), [("page-changed", 0, 4), ("wrapped", 0, 4), "scroll-animation-ended"])

    def test_a_bounded_pager_has_edges(self) -> None:
        tracker = cued.ScrollTracker(4, page=0)
        self.assertEqual(self.events(tracker.key(-1)), ["edge"])
        self.assertEqual(self.events(tracker.push_edge("start")), [
            "drag-began", "edge", "will-end-dragging", "drag-ended", "will-begin-decelerating", "deceleration-ended"])
        self.assertEqual(self.events(tracker.drag(9)), [
            "drag-began", ("page-changed", 0, 1), ("page-changed", 1, 2), ("page-changed", 2, 3), "will-end-dragging",
            "drag-ended"])
        self.assertEqual(tracker.jump(0)[0].fields, {"from": 3, "to": 0, "count": 4, "reason": "programmatic",
                                                     "direction": "previous", "animated": False})

    def test_an_auto_scroll_sends_reason_auto_and_settles_once(self) -> None:
        # As the Swift ScrollTracker (docs/PROTOCOL.md, "Auto-scroll"): page changes as the crawl
        # crosses pages, one scroll-animation-ended when it stops, none when none is under way.
        tracker = cued.ScrollTracker(4, page_width=100)
        self.assertEqual(tracker.auto_scroll(30), [])
        crossed = tracker.auto_scroll(60) + tracker.auto_scroll(160)
        self.assertEqual([(m.fields["from"], m.fields["to"], m.fields["reason"]) for m in crossed],
                         [(0, 1, "auto"), (1, 2, "auto")])
        self.assertNotIn("animated", crossed[0].fields, "animated, the default: nothing settles while it moves")
        self.assertEqual(self.events(tracker.did_scroll(260)), [("page-changed", 2, 3)], "its timer's did_scroll too")
        self.assertEqual(tracker.did_scroll(260), [])
        self.assertEqual(self.events(tracker.stop_auto_scroll()), ["scroll-animation-ended"])
        self.assertEqual(tracker.stop_auto_scroll(), [])

    def test_the_user_taking_over_ends_an_auto_scroll_first(self) -> None:
        tracker = cued.ScrollTracker(5, loops=True)
        tracker.auto_scroll(1)
        self.assertEqual(self.events(tracker.will_begin_dragging()), ["scroll-animation-ended", "drag-began"])
        self.assertEqual(tracker.did_scroll(2)[0].fields["reason"], "drag")
        tracker.did_end_dragging(False)
        tracker.auto_scroll(3)
        self.assertEqual(self.events(tracker.key(1)),
                         ["scroll-animation-ended", ("page-changed", 3, 4), "scroll-animation-ended"])
        tracker.auto_scroll(5)
        self.assertEqual(self.events(tracker.set_content_offset(7, animated=True)), ["scroll-animation-ended"])
        self.assertEqual(tracker.did_scroll(7)[0].fields["reason"], "programmatic")

    def test_did_scroll_past_a_bounded_pagers_end_sends_edge_once_per_scroll(self) -> None:
        tracker = cued.ScrollTracker(3, page_width=100)
        tracker.will_begin_dragging()
        self.assertEqual(tracker.did_scroll(-5), [], "within the threshold, 0.05 of a page")
        self.assertEqual(tracker.did_scroll(-6), [carousel.edge("start")])
        self.assertEqual(tracker.did_scroll(-40), [], "once per scroll")
        tracker.did_end_dragging(False)
        tracker.will_begin_dragging()
        self.assertEqual(self.events(tracker.did_scroll(180) + tracker.did_scroll(206)), [("page-changed", 0, 2), "edge"])
        self.assertEqual(tracker.did_scroll(206)[-1:], [])
        tracker.did_end_dragging(False)
        tracker.set_content_offset(300, animated=True)
        self.assertEqual(tracker.did_scroll(300), [], "the program's scroll is no push past the end")
        looping = cued.ScrollTracker(3, page_width=100, loops=True)
        looping.will_begin_dragging()
        self.assertEqual(self.events(looping.did_scroll(-60)), [("page-changed", 0, 2), ("wrapped", 0, 2)])

    def test_the_guides_bounded_pager_with_auto_scroll_sends_what_the_swift_tracker_sends(self) -> None:
        # docs/CLIENT.md's boundedPagerWithAutoScroll, step for step, and the messages the guide
        # lists for it (DocumentedExampleTests holds the Swift tracker to the same list).
        tracker = cued.ScrollTracker(3, page_width=390)
        sent: List[cued.CarouselMessage] = []
        for x in range(1, 501):
            sent += tracker.auto_scroll(x)
        sent += tracker.will_begin_dragging()
        for x in (700, 780, 820, 850):
            sent += tracker.did_scroll(x)
        sent += tracker.will_end_dragging(0, 780)
        sent += tracker.did_end_dragging(True)
        sent += tracker.did_scroll(780)
        sent += tracker.did_end_decelerating()
        self.assertEqual(sent, [
            carousel.page_changed(0, 1, 3, "auto", "next"), carousel.scroll_animation_ended(), carousel.drag_began(),
            carousel.page_changed(1, 2, 3, "drag", "next"), carousel.edge("end"), carousel.will_end_dragging(0, 2),
            carousel.drag_ended(True), carousel.deceleration_ended()])

    def test_uikits_units(self) -> None:
        tracker = cued.ScrollTracker(5, page_width=400)
        self.assertEqual(tracker.will_end_dragging(2.0, 1190)[0].fields, {"velocity": 5.0, "targetPage": 3})
        self.assertEqual(tracker.did_scroll(210)[0].fields["to"], 1)
        self.assertEqual(tracker.did_scroll(190), [carousel.page_changed(1, 0, 5, "drag", "previous")])
        with self.assertRaises(ValueError):
            carousel.edge("middle")
        # Half way is the next page, as Swift's rounded() has it (not Python's round half to even).
        self.assertEqual([tracker.page_at(x) for x in (200, 600, -200, float("nan"))], [1, 2, 0, 0])
        self.assertEqual(cued.ScrollTracker(5, page_width=400, loops=True).index_at(-200), -1)


if __name__ == "__main__":
    unittest.main()
