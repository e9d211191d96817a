"""The synchronous client against a real cued: every op, the errors with their codes, the events,
a player session, system sounds with completions, requests in flight from many threads, and a
daemon restart."""
from __future__ import annotations

import os
import threading
import time
import unittest
from typing import Any, List

import cued
from support import Daemon, SharedDaemon

shared = SharedDaemon()
setUpModule = shared.start
tearDownModule = shared.stop


class ClientTestCase(unittest.TestCase):
    client: cued.Client

    def setUp(self) -> None:
        self.daemon = daemon = shared.daemon
        self.client = cued.Client(daemon.socket, name="py-tests")
        self.addCleanup(self.client.close)


class OpsTests(ClientTestCase):
    def test_hello_reports_the_daemon_and_its_capabilities(self) -> None:
        hello = self.client.connect()
        self.assertEqual((hello.server, hello.protocol), ("cued", cued.PROTOCOL))
        assert hello.capabilities is not None
        for op in ("play", "player.create", "sound.create", "level", "group"):
            self.assertIn(op, hello.capabilities.ops)
        self.assertEqual(hello.capabilities.events, list(cued.EVENT_KINDS))
        self.assertIn("page-changed", hello.capabilities.carousel)
        self.assertEqual(hello.capabilities.limits["lineBytes"], 65536)
        self.assertIs(self.client.server, hello)
        again = self.client.hello("renamed")
        self.assertEqual(again.version, hello.version)

    def test_ping_and_the_raw_request(self) -> None:
        self.assertTrue(self.client.ping())
        reply = self.client.request("ping")
        self.assertEqual((reply["ok"], reply["pong"]), (True, True))
        self.assertIsInstance(reply["id"], int)

    def test_play_stop_cues_voices_status(self) -> None:
        names = [cue.name for cue in self.client.cues()]
        self.assertEqual(names, ["page-next", "page-prev", "pico", "tick", "wrap"])
        pico = next(cue for cue in self.client.cues() if cue.name == "pico")
        self.assertEqual((pico.channels, pico.source_rate, pico.format), (1, 48000, "MP3"))
        self.assertAlmostEqual(pico.duration, 0.1)
        played = self.client.play("pico", volume=0.5, pan=-0.3)
        self.assertTrue(played.played)
        assert played.voice is not None
        loop = self.client.play("tick", loops=-1)
        assert loop.voice is not None
        voices = {voice.voice: voice for voice in self.client.voices()}
        self.assertEqual((voices[loop.voice].cue, voices[loop.voice].loops), ("tick", -1))
        status = self.client.status()
        self.assertEqual(status.device_state, "open")
        self.assertGreaterEqual(status.voices, 1)
        self.assertEqual(status.socket, self.daemon.socket)
        self.assertEqual(self.client.stop(loop.voice, fade=0.01), 1)
        self.assertEqual(self.client.stop(cue="wrap"), 0)
        self.assertGreaterEqual(self.client.stop(all=True), 0)

    def test_play_of_a_sound_theme_event_and_one_the_theme_silences(self) -> None:
        if not os.path.exists("/usr/share/sounds/freedesktop/stereo/message-new-instant.oga"):
            self.skipTest("no freedesktop sound theme (Debian: sound-theme-freedesktop)")
        played = self.client.play(event="message-new-instant", volume=0.5)
        self.assertTrue(played.played)
        self.assertEqual(played.file, "/usr/share/sounds/freedesktop/stereo/message-new-instant.oga")
        # The daemon's XDG_DATA_HOME is its scratch directory's data/: a .disabled file there silences a name.
        theme = os.path.join(self.daemon.directory, "data", "sounds", "freedesktop", "stereo")
        os.makedirs(theme, exist_ok=True)
        open(os.path.join(theme, "py-quiet.disabled"), "w").close()
        with self.assertRaises(cued.EventDisabled) as caught:
            self.client.play(event="py-quiet")
        self.assertEqual(caught.exception.code, "event-disabled")

    def test_play_of_a_file_where_the_daemon_has_it(self) -> None:
        hello = self.client.connect()
        if hello.capabilities is None or "file-play" not in hello.capabilities.features:
            self.skipTest("this cued has no play of a file (the feature file-play)")
        finished = self.client.play_to_end(file=os.path.join(self.daemon.sounds, "tick.mp3"), volume=0.5)
        self.assertEqual((finished.reason, finished.successfully), ("end", True))

    def test_prepare_decodes_a_file_ahead_of_its_play(self) -> None:
        path = os.path.join(self.daemon.sounds, "tick.mp3")
        prepared = self.client.prepare(file=path)
        self.assertEqual((prepared.file, prepared.raw["file"]), (path, path))
        self.assertGreater(prepared.bytes, 0)
        self.assertEqual(self.client.play(file=path).file, path)
        with self.assertRaises(cued.InvalidRequest) as caught:
            self.client.prepare()
        self.assertIn("exactly one", caught.exception.message)
        with self.assertRaises(cued.UnknownEvent):
            self.client.prepare(event="py-no-such-sound")

    def test_meters_come_at_the_rate_asked_for_until_stopped(self) -> None:
        loop = self.client.play("wrap", loops=-1, volume=0.5)
        self.addCleanup(self.client.stop, all=True)
        with self.client.events(["meters"], subscribe=False) as stream:
            self.assertEqual(self.client.meters(10), 10)
            event = stream.wait_for("meters", where=lambda e: isinstance(e, cued.MetersEvent) and loop.voice in e.voices)
            assert isinstance(event, cued.MetersEvent) and loop.voice is not None
            self.assertGreater(event.voices[loop.voice].peak, 0)
            self.assertGreater(event.mix.rms, 0)
            self.assertEqual(self.client.stop_meters(), 0)

    def test_clients_lists_every_connection_and_which_asks(self) -> None:
        self.client.connect()
        with cued.Client(self.daemon.socket, name="py-other") as other:
            other.meters(5)
            with other.events(["finished"]):
                listed = {info.name: info for info in self.client.clients()}
        self.assertEqual((listed["py-tests"].asking, listed["py-tests"].meters), (True, None))
        self.assertEqual((listed["py-other"].asking, listed["py-other"].subscribed, listed["py-other"].meters),
                         (False, True, 5.0))
        self.assertLess(listed["py-tests"].connection, listed["py-other"].connection)

    def test_a_plays_role_goes_to_the_group_the_config_gives_it(self) -> None:
        roles = Daemon(config='[groups.assistive]\nroles = ["a11y"]\nmuted = true\n')
        self.addCleanup(roles.stop)
        with cued.Client(roles.socket) as c:
            silent = c.play("tick", role="a11y")
            self.assertEqual((silent.played, silent.reason), (False, "group-muted"))
            self.assertTrue(c.play("tick", role="phone").played)

    def test_play_to_end_returns_the_voices_finished_event(self) -> None:
        finished = self.client.play_to_end("tick", loops=1)
        self.assertIsInstance(finished, cued.FinishedEvent)
        self.assertEqual((finished.cue, finished.reason, finished.successfully), ("tick", "end", True))

    def test_reload_and_its_event(self) -> None:
        with self.client.events(["reloaded"]) as stream:
            result = self.client.reload()
            self.assertEqual((result.cues, result.added, result.removed), (5, [], []))
            self.assertEqual((result.changed, result.failed), ([], []))
            event = stream.wait_for("reloaded")
            assert isinstance(event, cued.ReloadedEvent)
            self.assertEqual(event.cues, 5)

    def test_system_level_and_group(self) -> None:
        self.assertEqual(self.client.system(), cued.SystemSettings(1.0, False))
        self.assertEqual(self.client.system(volume=0.5, muted=True), cued.SystemSettings(0.5, True))
        self.assertEqual(self.client.system(volume=1, muted=False), cued.SystemSettings(1.0, False))
        with self.client.events(["level"]) as stream:
            self.assertEqual(self.client.level().level, "full")
            quiet = self.client.level("quiet")
            self.assertEqual((quiet.level, quiet.set_by), ("quiet", "client"))
            silent_play = self.client.play("tick")
            self.assertEqual((silent_play.played, silent_play.reason), (False, "level"))
            event = stream.wait_for("level")
            assert isinstance(event, cued.LevelEvent)
            self.assertEqual((event.level, event.previous, event.set_by), ("quiet", "full", "client"))
            self.client.level("full")
        groups = {group.name: group for group in self.client.group()}
        self.assertEqual(sorted(groups), ["default", "system"])
        changed = self.client.group("system", volume=0.25, muted=False)
        self.assertEqual((changed[0].name, changed[0].volume), ("system", 0.25))
        self.assertEqual(self.client.system().volume, 0.25)
        self.client.group("system", volume=1)


class ErrorTests(ClientTestCase):
    def assertRefused(self, error_class: Any, code: str, function: Any, *args: Any, **kwargs: Any) -> cued.RequestError:
        with self.assertRaises(error_class) as caught:
            function(*args, **kwargs)
        error: cued.RequestError = caught.exception
        self.assertIsInstance(error, cued.RequestError)
        self.assertEqual(error.code, code)
        self.assertEqual(error.error_code, cued.ErrorCode(code))
        self.assertTrue(error.message)
        return error

    def test_each_error_the_daemon_sends_raises_its_class_with_its_code(self) -> None:
        c = self.client
        self.assertRefused(cued.InvalidRequest, "invalid-request", c.request, "ping", extra=1)
        self.assertRefused(cued.InvalidRequest, "invalid-request", c.play)
        self.assertRefused(cued.UnknownOp, "unknown-op", c.request, "pause")
        error = self.assertRefused(cued.OutOfRange, "out-of-range", c.play, "pico", volume=1.5)
        self.assertIn('"volume" is 1.5', error.message)
        self.assertRefused(cued.UnknownCue, "unknown-cue", c.play, "no-such-cue")
        self.assertRefused(cued.UnknownEvent, "unknown-event", c.play, event="no-such-sound-anywhere")
        self.assertRefused(cued.UnknownVoice, "unknown-voice", c.stop, 999999)
        self.assertRefused(cued.UnknownPlayer, "unknown-player", c.player(999999).get)
        self.assertRefused(cued.UnknownSound, "unknown-sound", c.sound(999999).play)
        self.assertRefused(cued.UnknownGroup, "unknown-group", c.group, "nope")
        self.assertRefused(cued.BadPath, "bad-path", c.create_sound, path="/etc/passwd")
        self.assertRefused(cued.BadPath, "bad-path", c.create_sound, path=os.path.join(self.daemon.sounds, "notes.txt"))
        player = c.create_player("pico")
        self.assertRefused(cued.NotEnabled, "not-enabled", player.set_rate, 1.5)
        # A line over the limit is answered with "id": null; it still reaches the request it answers.
        error = self.assertRefused(cued.LineTooLong, "line-too-long", c.request, "ping", padding="x" * 70000)
        self.assertIsNone(error.reply["id"])
        self.assertTrue(c.ping(), "the connection carries on")

    def test_limits_config_errors_and_an_unavailable_device(self) -> None:
        limited = Daemon(["--max-players", "1", "--max-sounds", "1", "--max-clients", "1"], config="")
        self.addCleanup(limited.stop)
        with cued.Client(limited.socket) as c:
            # The daemon refuses a second client unprompted ("id": null) and closes the connection.
            self.assertRefused(cued.LimitReached, "limit-reached", cued.connect, limited.socket)
            c.create_player("pico")
            self.assertRefused(cued.LimitReached, "limit-reached", c.create_player, "pico")
            c.create_sound("pico")
            self.assertRefused(cued.LimitReached, "limit-reached", c.create_sound, "tick")
            with open(limited.config, "w") as file:
                file.write("[groups.ui\n")
            error = self.assertRefused(cued.ConfigError, "config-error", c.reload)
            self.assertIn(limited.config, error.message)
        deviceless = Daemon(["--device", "hw:99"])
        self.addCleanup(deviceless.stop)
        with cued.Client(deviceless.socket) as c:
            self.assertRefused(cued.DeviceUnavailable, "device-unavailable", c.play, "pico")

    def test_requests_that_cannot_be_encoded_are_refused_before_sending(self) -> None:
        with self.assertRaises(ValueError):
            self.client.play("pico", volume=float("nan"))
        self.assertTrue(self.client.ping())

    def test_no_daemon_is_unreachable_naming_the_path(self) -> None:
        path = os.path.join(self.daemon.directory, "nobody.sock")
        with self.assertRaises(cued.Unreachable) as caught:
            cued.connect(path)
        self.assertIn(path, str(caught.exception))
        self.assertIsInstance(caught.exception, ConnectionError)


class EventTests(ClientTestCase):
    def test_started_finished_and_device_events_in_order(self) -> None:
        # The device closes after the idle window (0.5 s); the next play opens it.
        deadline = time.monotonic() + 5
        while self.client.status().device_state != "closed" and time.monotonic() < deadline:
            time.sleep(0.05)
        with self.client.events(["started", "finished", "device"]) as stream:
            voice = self.client.play("pico").voice
            kinds: List[cued.Event] = []
            while len(kinds) < 3:
                event = stream.wait_for()
                if event.kind == "device" or voice in event.ids:
                    kinds.append(event)
            self.assertEqual([event.kind for event in kinds], ["device", "started", "finished"])
            device = kinds[0]
            assert isinstance(device, cued.DeviceEvent)
            self.assertEqual((device.state, device.device), ("opened", "null"))
            started = kinds[1]
            assert isinstance(started, cued.StartedEvent)
            self.assertEqual((started.voice, started.cue), (voice, "pico"))
            self.assertGreaterEqual(started.heard_in, 0)
            closed = stream.wait_for("device", timeout=5)
            assert isinstance(closed, cued.DeviceEvent)
            self.assertEqual(closed.state, "closed-idle")

    def test_a_stream_narrowed_by_ids_and_owed_events_without_subscribing(self) -> None:
        loop = self.client.play("wrap", loops=-1).voice
        assert loop is not None
        with self.client.events(ids=[loop]) as mine, self.client.events(subscribe=False) as owed:
            other = self.client.play("tick", notify=True).voice
            self.client.stop(loop)
            finished = mine.wait_for("finished")
            self.assertEqual(finished.ids, (loop,))
            notified = owed.wait_for("finished", voice=other)
            assert isinstance(notified, cued.FinishedEvent)
            self.assertTrue(notified.successfully)

    def test_callbacks_run_in_order_and_may_make_calls(self) -> None:
        seen: List[int] = []
        played: List[int] = []
        done = threading.Event()
        pongs: List[bool] = []

        def on_finished(event: cued.Event) -> None:
            seen.extend(event.ids)  # every client's voices: the shared daemon may still end others
            pongs.append(self.client.ping())  # a call from the callback thread
            if len(played) == 2 and set(played) <= set(seen):
                done.set()

        listener = self.client.on_event(on_finished, kinds=["finished"])
        for cue in ("tick", "pico"):
            voice = self.client.play(cue).voice
            assert voice is not None
            played.append(voice)
        self.assertTrue(done.wait(5))
        listener.close()
        self.assertEqual([voice for voice in seen if voice in played], played)
        self.assertTrue(pongs and all(pongs))

    def test_subscribe_and_unsubscribe_say_what_is_admitted(self) -> None:
        self.assertEqual(self.client.subscribe(["finished", "started"]), ["finished", "started"])
        self.assertEqual(len(self.client.subscribe()), 8)
        with self.client.events(["paging"]):
            self.assertEqual(self.client.subscribe(["finished"]), ["finished", "paging"])
        self.client.unsubscribe()
        self.assertEqual(self.client.request("subscribe", kinds=[])["kinds"], [])

    def test_a_path_players_decode_error(self) -> None:
        player = self.client.create_player(path=os.path.join(self.daemon.sounds, "notes.txt"))
        with player.events() as stream:
            self.assertTrue(player.play().playing)
            error = stream.wait_for("decode-error")
            assert isinstance(error, cued.DecodeErrorEvent)
            self.assertEqual((error.player, os.path.basename(error.path)), (player.id, "notes.txt"))
            self.assertIn("not an MP3", error.reason)
            finished = stream.wait_for("finished")
            assert isinstance(finished, cued.FinishedEvent)
            self.assertEqual((finished.reason, finished.voice), ("error", None))


class PlayerTests(ClientTestCase):
    def test_a_player_session(self) -> None:
        player = self.client.create_player("wrap", volume=0.8, pan=-0.5, number_of_loops=-1)
        assert player.properties is not None
        self.assertEqual((player.properties.volume, player.properties.cue), (0.8, "wrap"))
        self.assertAlmostEqual(player.duration, 0.27)
        self.assertEqual(player.number_of_channels, 1)
        prepared = player.prepare_to_play()
        self.assertFalse(prepared.is_playing)
        self.assertTrue(player.play().playing)
        self.assertTrue(player.is_playing)
        time.sleep(0.15)
        paused = player.pause()
        self.assertFalse(paused.is_playing)
        self.assertGreater(paused.current_time, 0)
        self.assertEqual(player.current_time, paused.current_time)
        player.current_time = 0.05
        self.assertAlmostEqual(player.current_time, 0.05)
        player.volume = 0.3
        self.assertAlmostEqual(player.volume, 0.3)
        player.pan = 0.5
        self.assertEqual(player.pan, 0.5)
        self.assertTrue(player.play().playing)
        faded = player.set_volume(0.1, fade=0.05)
        self.assertEqual(faded.volume, 0.1)
        stopped = player.stop()
        self.assertFalse(stopped.is_playing)
        player.number_of_loops = 0
        player.set_current_time(0.2)
        finished = player.play_to_end()
        self.assertEqual((finished.player, finished.reason, finished.successfully), (player.id, "end", True))
        self.assertEqual(player.current_time, 0)
        self.assertEqual(player.destroy(), player.id)
        with self.assertRaises(cued.UnknownPlayer):
            player.get()

    def test_rate_metering_and_a_synchronised_start(self) -> None:
        fast = self.client.create_player("wrap", enable_rate=True, metering_enabled=True, number_of_loops=-1)
        self.assertEqual(fast.set_rate(1.5).rate, 1.5)
        fast.play()
        time.sleep(0.1)
        metered = fast.get()
        assert metered.average_power is not None and metered.peak_power is not None
        self.assertEqual(len(metered.peak_power), 1)
        self.assertGreater(metered.peak_power[0], -60)
        fast.destroy()
        left, right = self.client.create_player("pico", pan=-1), self.client.create_player("tick", pan=1)
        with self.client.events(["started"], ids=[left.id, right.id]) as stream:
            at = left.prepare().device_current_time + 0.2
            left.play(at_time=at)
            right.play(at_time=at)
            starts = [stream.wait_for("started"), stream.wait_for("started")]
        self.assertEqual({event.raw["player"] for event in starts}, {left.id, right.id})
        for event in starts:
            assert isinstance(event, cued.StartedEvent)
            self.assertAlmostEqual(event.device_time, at, places=3)

    def test_a_detached_player_outlives_its_connection(self) -> None:
        with cued.Client(self.daemon.socket) as owner:
            kept = owner.create_player("pico", detached=True)
            gone = owner.create_player("tick")
        again = self.client.player(kept.id)
        self.assertTrue(again.get().detached)
        # Its finished would go to its owner; subscribed to its ids, this connection gets it too.
        with again.events(["finished"], subscribe=True):
            self.assertTrue(again.play_to_end().successfully)
        with self.assertRaises(cued.UnknownPlayer):
            self.client.player(gone.id).get()
        again.destroy()


class SystemSoundTests(ClientTestCase):
    def test_a_system_sound_with_a_completion(self) -> None:
        sound = self.client.create_sound("pico")
        completions: List[cued.CompletionEvent] = []
        done = threading.Event()

        def completion(event: cued.CompletionEvent) -> None:
            completions.append(event)
            done.set()

        played = sound.play(completion)
        self.assertTrue(played.played)
        self.assertEqual(sound.dispose(), 1, "the play goes on after the dispose")
        self.assertTrue(done.wait(5), "the completion came after the dispose")
        self.assertEqual((completions[0].voice, completions[0].played, completions[0].reason), (played.voice, True, "end"))
        with self.assertRaises(cued.UnknownSound):
            sound.play()

    def test_muted_plays_complete_at_once_and_completions_can_stop(self) -> None:
        sound = self.client.create_sound(path=os.path.join(self.daemon.sounds, "tick.mp3"))
        self.assertEqual(sound.play_and_wait(timeout=5).reason, "end")
        self.client.system(muted=True)
        try:
            muted = sound.play_and_wait(timeout=5)
            self.assertEqual((muted.played, muted.reason, muted.voice), (False, "muted", None))
        finally:
            self.client.system(muted=False)
        self.assertFalse(sound.set_completion(False))
        with self.client.events(["completion"], subscribe=False) as stream:
            sound.play()
            self.assertIsNone(stream.get(0.3))
        self.assertEqual(sound.dispose(now=True), 0)


class ConcurrencyTests(ClientTestCase):
    def test_many_threads_with_requests_in_flight_each_get_their_own_reply(self) -> None:
        results: List[Any] = []
        errors: List[BaseException] = []

        def work(index: int) -> None:
            try:
                for _ in range(10):
                    if index % 3 == 0:
                        results.append(("ping", self.client.ping()))
                    elif index % 3 == 1:
                        results.append(("voice", self.client.play("tick", volume=0).voice))
                    else:
                        results.append(("cues", len(self.client.cues())))
            except BaseException as error:  # noqa: B902 (reported below)
                errors.append(error)

        threads = [threading.Thread(target=work, args=(i,)) for i in range(12)]
        for thread in threads:
            thread.start()
        reload_result = self.client.reload()  # deferred, while the others fly
        for thread in threads:
            thread.join()
        self.assertEqual(errors, [])
        self.assertEqual(reload_result.cues, 5)
        self.assertEqual(len(results), 120)
        self.assertTrue(all(value is True for kind, value in results if kind == "ping"))
        voices = [value for kind, value in results if kind == "voice"]
        self.assertEqual(len(set(voices)), 40, "each play got its own voice")
        self.assertTrue(all(value == 5 for kind, value in results if kind == "cues"))


class CarouselTests(ClientTestCase):
    def paging(self, stream: cued.EventStream, count: int) -> List[cued.PagingEvent]:
        events: List[cued.PagingEvent] = []
        while len(events) < count:
            event = stream.wait_for("paging")
            assert isinstance(event, cued.PagingEvent)
            events.append(event)
        return events

    def test_the_whole_scroll_lifecycle_fire_and_forget(self) -> None:
        demo = self.client.carousel("demo", 5, page=4)
        with self.client.events(["paging"]) as stream:
            self.assertEqual(demo.flick(1, velocity=6), [], "fire-and-forget: no replies")
            events = self.paging(stream, 8)
            self.assertEqual([(e.message, e.decision) for e in events], [
                ("drag-began", "played"), ("will-end-dragging", "unbound"), ("page-changed", "played"),
                ("wrapped", "merged"), ("drag-ended", "unbound"), ("will-begin-decelerating", "unbound"),
                ("deceleration-ended", "unbound"), ("settled", "unbound")])
            self.assertEqual((events[2].from_page, events[2].to_page, events[2].cue), (4, 0, "wrap"))
            self.assertEqual((events[1].velocity, events[1].target_page), (6.0, 0))
            demo.drag(-2)
            events = self.paging(stream, 7)
            self.assertEqual([e.message for e in events], [
                "drag-began", "page-changed", "wrapped", "page-changed", "will-end-dragging", "drag-ended", "settled"])
            self.assertEqual((events[5].decelerate, events[3].direction, events[3].to_page), (False, "previous", 3))
            demo.key(1)
            events = self.paging(stream, 3)
            self.assertEqual([(e.message, e.reason) for e in events],
                             [("page-changed", "key"), ("scroll-animation-ended", None), ("settled", None)])
            demo.jump(1)
            jump = self.paging(stream, 2)
            self.assertEqual([(e.message, e.to_page) for e in jump], [("page-changed", 1), ("settled", None)])

    def test_a_bounded_pagers_edge_and_replies(self) -> None:
        pager = self.client.carousel("pager", 4, loops=False, replies=True)
        results = pager.push_edge("start")
        self.assertEqual([r.decision for r in results], ["played", "unbound", "unbound", "unbound", "unbound", "unbound"])
        self.assertTrue(results[-1].settled)
        self.assertFalse(results[-1].out_of_order)
        stray = pager.did_end_decelerating()
        self.assertTrue(stray[0].out_of_order)
        self.assertGreaterEqual(self.client.status().raw["paging"]["outOfOrder"], 1)


class ReconnectionTests(unittest.TestCase):
    def test_a_restarted_daemon_is_found_again_and_the_subscription_restored(self) -> None:
        own = Daemon()
        self.addCleanup(own.stop)
        client = cued.Client(own.socket)
        self.addCleanup(client.close)
        stream = client.events(["finished"])
        player = client.create_player("pico")
        own.stop(remove=False)
        lost = stream.wait_for("disconnected", timeout=5)
        self.assertIsInstance(lost, cued.DisconnectedEvent)
        with self.assertRaises(cued.Unreachable):
            client.ping()
        own.start()
        self.assertTrue(client.ping())
        self.assertIsInstance(stream.wait_for("reconnected"), cued.ReconnectedEvent)
        with self.assertRaises(cued.UnknownPlayer):
            player.get()
        voice = client.play("tick").voice
        self.assertEqual(stream.wait_for("finished").ids, (voice,))
        client.close()
        self.assertIsNone(stream.get(0.1), "close ends the stream")
        self.assertEqual(list(stream), [])

    def test_a_call_waiting_when_the_daemon_stops_fails_with_disconnected(self) -> None:
        own = Daemon()
        self.addCleanup(own.stop)
        with cued.Client(own.socket) as client:
            player = client.create_player("wrap", number_of_loops=-1)
            outcomes: List[Any] = []

            def wait() -> None:
                try:
                    outcomes.append(player.play_to_end().reason)
                except cued.CuedError as error:
                    outcomes.append(error)

            thread = threading.Thread(target=wait)
            thread.start()
            time.sleep(0.2)
            own.stop(remove=False)
            thread.join(10)
            # The daemon ends the loop as it stops (finished, "stopped"), or the connection goes first.
            self.assertFalse(thread.is_alive())
            self.assertEqual(len(outcomes), 1)
            self.assertTrue(outcomes[0] == "stopped" or isinstance(outcomes[0], cued.Disconnected), outcomes)


if __name__ == "__main__":
    unittest.main()
