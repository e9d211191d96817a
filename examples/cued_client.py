#!/usr/bin/env python3
"""cued from Python, with the `cued` package (clients/python: `pip install ./clients/python`).

    examples/cued_client.py [--socket PATH]     plays, pauses and resumes a player, plays a
                                                 system sound, and prints what happened

Without the package installed it imports it from this checkout. `make test` runs it against a
real daemon (Tests/EndToEndTests/OutsideClientTests.swift); the package's own tests are in
clients/python/tests.
"""
import os
import queue
import sys
import time
from typing import Optional

try:
    import cued
except ImportError:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "clients", "python", "src"))
    import cued


def demo(socket_path: Optional[str]) -> None:
    """Plays, pauses and resumes a player, plays a system sound; exits non-zero on any surprise."""
    with cued.Client(socket_path, name="cued_client.py") as client:
        hello = client.connect()  # connected already: the hello reply
        ops = hello.capabilities.ops if hello.capabilities else []
        print("cued %s, protocol %d, %d ops" % (hello.version, hello.protocol, len(ops)))
        for op in ("player.create", "player.pause", "sound.play"):
            assert op in ops, "this daemon has no %s" % op

        with client.events(["started", "finished"]) as events:
            # A cue, and the same waiting for its end.
            client.play("pico", volume=0.5)
            finished = client.play_to_end("pico")
            assert finished.successfully and finished.reason == "end", finished
            print("play: voice %s finished (%s)" % (finished.voice, finished.reason))

            # A player that loops until paused: play, pause (its reply says where), resume, stop.
            player = client.create_player("pico", number_of_loops=-1)
            player.play()
            events.wait_for("started", player=player.id)
            time.sleep(0.15)
            paused = player.pause()
            assert not paused.is_playing and paused.current_time > 0, paused
            print("player %d paused at %.3f s" % (player.id, paused.current_time))
            player.play()
            assert player.is_playing
            time.sleep(0.1)
            stopped = player.stop()
            assert not stopped.is_playing, stopped
            player.destroy()

        # A system sound: play with a completion, dispose right away (it still plays out).
        sound = client.create_sound("pico")
        completions: "queue.Queue[cued.CompletionEvent]" = queue.Queue()
        played = sound.play(completions.put)
        sound.dispose()
        completion = completions.get(timeout=5)
        assert completion.played and completion.voice == played.voice, completion
        print("sound %d: completion %s" % (sound.id, completion.reason))

        # An error names the problem and what to do; the connection keeps working.
        try:
            client.play("no-such-cue")
            raise AssertionError("an unknown cue was played")
        except cued.UnknownCue as error:
            print("unknown cue: %s" % error.code)
        client.ping()
    print("ok")


if __name__ == "__main__":
    arguments = sys.argv[1:]
    demo(arguments[arguments.index("--socket") + 1] if "--socket" in arguments else None)
