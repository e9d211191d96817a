"""The asyncio client against a real cued: the same surface as the synchronous one, awaited."""
from __future__ import annotations

import asyncio
import os
import unittest
from typing import List

import cued
from support import SharedDaemon

shared = SharedDaemon()
setUpModule = shared.start
tearDownModule = shared.stop


class AsyncClientTests(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self) -> None:
        self.daemon = daemon = shared.daemon
        self.client = await cued.connect_async(daemon.socket, name="py-async-tests")

    async def asyncTearDown(self) -> None:
        await self.client.close()

    async def test_every_plain_op(self) -> None:
        c = self.client
        assert c.server is not None and c.server.capabilities is not None
        self.assertIn("sound.dispose", c.server.capabilities.ops)
        self.assertEqual((await c.hello("again")).protocol, 1)
        self.assertTrue(await c.ping())
        self.assertEqual((await c.request("ping"))["pong"], True)
        self.assertEqual(len(await c.cues()), 5)
        loop = await c.play("wrap", loops=-1, volume=0.5, pan=0.2)
        self.assertIn(loop.voice, [voice.voice for voice in await c.voices()])
        self.assertEqual((await c.status()).device_state, "open")
        self.assertEqual(await c.stop(cue="wrap", fade=0), 1)
        self.assertEqual((await c.reload()).cues, 5)
        self.assertEqual((await c.system(volume=0.7)).volume, 0.7)
        await c.system(volume=1)
        self.assertEqual((await c.level()).level, "full")
        self.assertEqual([group.name for group in await c.group()], ["default", "system"])
        finished = await c.play_to_end("pico")
        self.assertEqual((finished.cue, finished.successfully), ("pico", True))

    async def test_prepare_meters_and_clients(self) -> None:
        c = self.client
        path = os.path.join(self.daemon.sounds, "pico.mp3")
        self.assertEqual((await c.prepare(file=path)).file, path)
        loop = await c.play("wrap", loops=-1, volume=0.5)
        stream = await c.events(["meters"], subscribe=False)
        self.assertEqual(await c.meters(20), 20)
        event = await stream.wait_for("meters", where=lambda e: isinstance(e, cued.MetersEvent) and loop.voice in e.voices)
        assert isinstance(event, cued.MetersEvent)
        self.assertGreater(event.mix.peak, 0)
        listed = await c.clients()
        self.assertEqual([(info.name, info.meters) for info in listed if info.asking], [("py-async-tests", 20.0)])
        self.assertEqual(await c.stop_meters(), 0)
        await stream.aclose()
        await c.stop(all=True)

    async def test_errors_raise_their_classes(self) -> None:
        with self.assertRaises(cued.UnknownCue) as caught:
            await self.client.play("nope")
        self.assertEqual(caught.exception.code, "unknown-cue")
        with self.assertRaises(cued.OutOfRange):
            await self.client.stop(-1)
        with self.assertRaises(cued.UnknownPlayer):
            await self.client.player(424242).play()
        with self.assertRaises(cued.UnknownGroup):
            await self.client.group("nope", muted=True)
        with self.assertRaises(cued.Unreachable):
            await cued.connect_async(os.path.join(self.daemon.directory, "nobody.sock"))

    async def test_events_by_async_iteration_and_callback(self) -> None:
        seen: List[cued.Event] = []

        async def on_started(event: cued.Event) -> None:
            seen.append(event)

        listener = await self.client.on_event(on_started, kinds=["started"])
        async with await self.client.events(["finished"]) as stream:
            voice = (await self.client.play("tick")).voice
            async for event in stream:
                if voice in event.ids:
                    break
        await listener.aclose()
        await asyncio.sleep(0)
        self.assertIn(voice, [event.ids[0] for event in seen])

    async def test_a_player_session_with_awaited_properties(self) -> None:
        player = await self.client.create_player("wrap", number_of_loops=-1, enable_rate=True)
        self.assertAlmostEqual(await player.duration, 0.27)
        await player.prepare()
        self.assertTrue((await player.play()).playing)
        self.assertTrue(await player.is_playing)
        await asyncio.sleep(0.1)
        paused = await player.pause()
        self.assertEqual(await player.current_time, paused.current_time)
        await player.set_rate(0.5)
        self.assertEqual(await player.rate, 0.5)
        await player.set_volume(0.4)
        await player.set_pan(-1)
        self.assertEqual((await player.get()).pan, -1)
        await player.set_number_of_loops(0)
        await player.set_current_time(0.25)
        self.assertEqual(await player.number_of_loops, 0)
        self.assertEqual((await player.play_to_end()).reason, "end")
        await player.play()
        self.assertFalse((await player.stop()).is_playing)
        self.assertEqual(await player.destroy(), player.id)

    async def test_a_system_sound_with_a_completion(self) -> None:
        sound = await self.client.create_sound("pico")
        done: "asyncio.Future[cued.CompletionEvent]" = asyncio.get_running_loop().create_future()
        played = await sound.play(done.set_result)
        self.assertEqual(await sound.dispose(), 1)
        completion = await asyncio.wait_for(done, 5)
        self.assertEqual((completion.voice, completion.played), (played.voice, True))
        with self.assertRaises(cued.UnknownSound):
            await sound.set_completion(False)
        other = await self.client.create_sound("tick")
        self.assertEqual((await other.play_and_wait(5)).reason, "end")

    async def test_many_requests_in_flight_each_get_their_own_reply(self) -> None:
        calls = [self.client.ping() if i % 2 else self.client.play("tick", volume=0) for i in range(100)]
        results = await asyncio.gather(self.client.reload(), *calls)
        self.assertEqual(results[0].cues, 5)
        voices = [result.voice for result in results[1:] if isinstance(result, cued.PlayResult)]
        self.assertEqual(len(set(voices)), 50)
        self.assertEqual(sum(1 for result in results[1:] if result is True), 50)

    async def test_the_carousel_lifecycle_gets_paging_events(self) -> None:
        pager = self.client.carousel("pager", 4, loops=False, replies=True)
        async with await self.client.events(["paging"]) as stream:
            results = await pager.flick(2, velocity=9)
            self.assertEqual([r.decision for r in results][:2], ["played", "played"])
            self.assertTrue(results[-1].settled)
            messages: List[str] = []
            while len(messages) < 8:
                event = await stream.wait_for("paging", carousel="pager")
                assert isinstance(event, cued.PagingEvent)
                messages.append(event.message)
            self.assertEqual(messages, [
                "drag-began", "page-changed", "will-end-dragging", "page-changed", "drag-ended",
                "will-begin-decelerating", "deceleration-ended", "settled"])
            edge = await pager.key(5)
            self.assertEqual(len(edge), 1)
            bump = await stream.wait_for("paging", message="edge")
            assert isinstance(bump, cued.PagingEvent)
            self.assertEqual(bump.edge, "end")


if __name__ == "__main__":
    unittest.main()
