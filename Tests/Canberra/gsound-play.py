#!/usr/bin/env python3
# gsound-play.py: plays a sound-theme event through GSound (the GObject library GNOME programs use
# for their sounds, over libcanberra), as a GNOME program written in Python does, and waits for its
# end. The end-to-end tests run it (Tests/EndToEndTests/CanberraHostTests.swift).
#
#   gsound-play.py EVENT_ID    prints "finished: ok", or "finished: ERROR" with GSound's message
import os
import sys

import gi

gi.require_version("GSound", "1.0")
from gi.repository import GLib, GSound  # noqa: E402

if len(sys.argv) != 2:
    sys.exit("usage: gsound-play.py EVENT_ID")
loop = GLib.MainLoop()
outcome = []


def done(context, result):
    try:
        context.play_full_finish(result)
        outcome.append("ok")
    except GLib.Error as error:
        outcome.append(error.message)
    loop.quit()


context = GSound.Context()
context.init()
context.set_attributes({GSound.ATTR_APPLICATION_NAME: "gsound-play"})
context.play_full({GSound.ATTR_EVENT_ID: sys.argv[1]}, None, done)
GLib.timeout_add_seconds(10, loop.quit)
loop.run()
print("finished: " + (outcome[0] if outcome else "timed out"), flush=True)
# Leave without finalizing the context, as a C program that exits does. GSound drops its task's
# reference (and with it one of the context's) on libcanberra-pulse's own thread after the callback
# is queued; were Python's exit to drop the last other reference first, the context would be
# finalized on that thread and pa_threaded_mainloop_stop() would abort ("!in_worker(m)"): a race in
# GSound and libcanberra-pulse, seen once in CI, with or without cued's driver in front.
os._exit(0 if outcome == ["ok"] else 1)
