#!/usr/bin/env python3
"""Every ordering and deferral rule of docs/PROTOCOL.md, checked on the lines a real cued sends.

Each check pipelines its requests (one write holding several lines) and looks at the order of
the lines that come back. Run by Tests/EndToEndTests/OutsideClientTests.swift against a daemon
whose sound directory (--sounds) holds pico, tick, wrap (MP3s) and notes.txt (not an MP3), with a
short idle window (0.3 s). Standard library only; uses wire.py beside it.

    Tests/Protocol/ordering.py --socket PATH --sounds DIR
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from wire import Client  # noqa: E402

failures = []


def check(condition, rule, detail):
    print(("ok    " if condition else "FAIL  ") + rule)
    if not condition:
        failures.append("%s: %s" % (rule, detail))


def position(lines, predicate):
    """Index of the first line matching `predicate`, or None."""
    return next((i for i, line in enumerate(lines) if predicate(line)), None)


def reply_to(request_id):
    return lambda line: "ok" in line and line.get("id") == request_id


def event(kind, **fields):
    return lambda line: line.get("event") == kind and all(line.get(k) == v for k, v in fields.items())


def read_until(client, predicate, timeout=5.0, since=None):
    """Reads lines until one matches `predicate`; returns every line read (in order) from now, or
    from index `since` of the lines already read (events that came while earlier replies were read)."""
    deadline = time.monotonic() + timeout
    start = len(client.lines) if since is None else since
    while True:
        if any(predicate(line) for line in client.lines[start:]):
            return client.lines[start:]
        if time.monotonic() > deadline:
            return client.lines[start:]
        client.sock.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            client.read_line()
        except (TimeoutError, OSError):
            pass


def wait_device_quiet(client):
    """Waits for the idle window to pass: "closed" once the device closed, "paused" once a PipeWire or
    PulseAudio stream paused (it stays connected: the next play resumes it, with no device event),
    None if neither came."""
    for _ in range(100):
        device = client.request("status")["device"]
        if device["state"] == "closed":
            return "closed"
        if device.get("paused"):
            return "paused"
        time.sleep(0.05)
    return None


def main(socket_path, sounds):
    c = Client(socket_path)

    # Replies come in the order of the requests (none of these is deferred).
    c.write(*[{"id": i, "op": op} for i, op in enumerate(["ping", "status", "list", "voices", "ping", "hello"] * 5, start=1000)])
    lines = read_until(c, reply_to(1029))
    ids = [line["id"] for line in lines if "ok" in line]
    check(ids == list(range(1000, 1030)), "replies come in the order of the requests", ids)

    # The reply to a request comes before every event it caused: started and finished of its voice.
    c.write({"id": 1, "op": "subscribe", "kinds": ["started", "finished", "device", "completion", "reloaded", "decode-error"]},
            {"id": 2, "op": "play", "cue": "tick", "notify": True})
    lines = read_until(c, event("finished", cue="tick"))
    reply, started, finished = position(lines, reply_to(2)), position(lines, event("started", cue="tick")), position(lines, event("finished", cue="tick"))
    check(None not in (reply, started, finished) and reply < started < finished,
          "a play's reply, then its voice's started, then its finished", lines)

    # The device event "opened" comes after the reply to the play that opened the device (the first
    # play above did, and every play after the idle window does, unless the stream stayed connected).
    opened = position(lines, event("device", state="opened"))
    check(None not in (reply, opened) and reply < opened, "the device opened event comes after the reply that opened it", lines)
    quiet = wait_device_quiet(c)
    check(quiet is not None, "the device closes or pauses after the idle window", c.request("status")["device"])
    c.write({"id": 3, "op": "play", "cue": "pico"})
    lines = read_until(c, event("finished", cue="pico"))
    reply, opened = position(lines, reply_to(3)), position(lines, event("device", state="opened"))
    if quiet == "paused":
        check(reply is not None and opened is None, "a paused stream resumes with no device event", lines)
    else:
        check(None not in (reply, opened) and reply < opened, "the device opened event comes after the reply that opened it", lines)

    # A sound-theme event's first play is deferred (its file is decoded first): a ping sent after it
    # is answered first, and its reply still comes before the device's opened and its started.
    quiet = wait_device_quiet(c)
    check(quiet is not None, "the device closes or pauses after the idle window", c.request("status")["device"])
    c.write({"id": 30, "op": "play", "event": "bell"}, {"id": 31, "op": "ping"})
    lines = read_until(c, event("finished", cue="bell"))
    ping, reply = position(lines, reply_to(31)), position(lines, reply_to(30))
    opened, started = position(lines, event("device", state="opened")), position(lines, event("started", cue="bell"))
    if quiet == "paused":
        opened = reply  # no device event: the paused stream resumes
    check(None not in (ping, reply, opened, started) and ping < reply <= opened < started,
          "a theme event's first play is deferred (a later ping first); its reply before opened and started", lines)

    # A file's first play is deferred the same way (decoded on a worker first): a ping sent after it
    # is answered first, and its reply still comes before its voice's started.
    path = os.path.abspath(os.path.join(sounds, "wrap.mp3"))
    c.write({"id": 32, "op": "play", "file": path}, {"id": 33, "op": "ping"})
    lines = read_until(c, event("finished", cue="wrap"))
    ping, reply, started = position(lines, reply_to(33)), position(lines, reply_to(32)), position(lines, event("started", cue="wrap"))
    check(None not in (ping, reply, started) and ping < reply < started,
          "a file's first play is deferred (a later ping first); its reply before started", lines)

    # A muted sound.play: its completion (reason muted) comes after its reply.
    sound = c.request("sound.create", cue="pico")["sound"]
    c.request("sound.completion", sound=sound)
    c.request("system", muted=True)
    c.write({"id": 4, "op": "sound.play", "sound": sound})
    lines = read_until(c, event("completion", sound=sound))
    reply, completion = position(lines, reply_to(4)), position(lines, event("completion", sound=sound))
    check(None not in (reply, completion) and reply < completion and lines[completion]["reason"] == "muted",
          "a muted sound.play: reply, then completion (muted)", lines)
    c.request("system", muted=False)

    # For one play of a system sound, completion comes before finished.
    c.write({"id": 5, "op": "sound.play", "sound": sound})
    lines = read_until(c, lambda l: l.get("event") == "finished" and l.get("sound") == sound)
    completion = position(lines, event("completion", sound=sound))
    finished = position(lines, lambda l: l.get("event") == "finished" and l.get("sound") == sound)
    check(None not in (completion, finished) and position(lines, reply_to(5)) < completion < finished,
          "a system sound's play: reply, completion, then finished", lines)

    # decode-error comes before the finished (error) of the play that waited for the file.
    notes = os.path.join(sounds, "notes.txt")
    player = c.request("player.create", path=notes)["player"]
    c.write({"id": 6, "op": "player.play", "player": player})
    lines = read_until(c, event("finished", player=player))
    error, finished = position(lines, event("decode-error", player=player)), position(lines, event("finished", player=player))
    check(None not in (error, finished) and position(lines, reply_to(6)) < error < finished and lines[finished]["reason"] == "error",
          "decode-error, then finished (error)", lines)

    # Deferred: reload answers when its rescan is done; a ping sent after it is answered first,
    # and the reloaded event comes after the reload's reply.
    c.write({"id": 7, "op": "reload"}, {"id": 8, "op": "ping"})
    lines = read_until(c, event("reloaded"))
    reload_reply, ping, reloaded = position(lines, reply_to(7)), position(lines, reply_to(8)), position(lines, event("reloaded"))
    check(None not in (reload_reply, ping, reloaded) and ping < reload_reply < reloaded,
          "reload is deferred (a later ping first); reloaded after its reply", lines)

    # Deferred: sound.create with a path answers once the file is decoded.
    c.write({"id": 9, "op": "sound.create", "path": os.path.join(sounds, "wrap.mp3")}, {"id": 10, "op": "ping"})
    lines = read_until(c, reply_to(9))
    check(position(lines, reply_to(10)) is not None and position(lines, reply_to(10)) < position(lines, reply_to(9)),
          "sound.create with a path is deferred (a later ping first)", lines)

    # Deferred: player.prepare of a path player, whose file is decoded only when it is prepared or played.
    fresh = c.request("player.create", path=os.path.join(sounds, "tick.mp3"))["player"]
    c.write({"id": 14, "op": "player.prepare", "player": fresh}, {"id": 15, "op": "ping"})
    lines = read_until(c, reply_to(14))
    prepare, ping = position(lines, reply_to(14)), position(lines, reply_to(15))
    check(prepare is not None and lines[prepare]["ok"] and lines[prepare].get("duration", 0) > 0,
          "player.prepare of a path player answers once decoded (with its duration)", lines)
    check(None not in (prepare, ping) and ping < prepare,
          "player.prepare of an undecoded path player is deferred (a later ping first)", lines)

    # Deferred: player.pause and player.stop of a playing player answer once the audio thread has
    # said where it stopped; a ping sent after is answered first; no finished event is sent.
    looping = c.request("player.create", cue="wrap", numberOfLoops=-1)["player"]
    c.request("player.play", player=looping)
    c.event("started", player=looping)
    time.sleep(0.05)
    for op, first in (("player.pause", 16), ("player.stop", 18)):
        c.write({"id": first, "op": op, "player": looping}, {"id": first + 1, "op": "ping"})
        lines = read_until(c, reply_to(first))
        stop, ping = position(lines, reply_to(first)), position(lines, reply_to(first + 1))
        check(None not in (stop, ping) and ping < stop and lines[stop]["currentTime"] > 0 and not lines[stop]["isPlaying"],
              "%s of a playing player is deferred and reports where it stopped" % op, lines)
        check(position(lines, event("finished", player=looping)) is None, "%s sends no finished event" % op, lines)
        if op == "player.pause":
            c.request("player.play", player=looping)
            time.sleep(0.05)

    # Events across one connection arrive once each, in the order produced: started before finished for every voice.
    # A voice may start (even finish) while a later play's reply is read: look from the first play on.
    mark = len(c.lines)
    voices = [c.request("play", cue="tick", notify=True)["voice"] for _ in range(5)]
    lines = read_until(c, lambda l: l.get("event") == "finished" and l.get("voice") == voices[-1], since=mark)
    for voice in voices:
        started, finished = position(lines, event("started", voice=voice)), position(lines, event("finished", voice=voice))
        check(None not in (started, finished) and started < finished
              and sum(1 for l in lines if event("finished", voice=voice)(l)) == 1,
              "voice %d: started once before finished once" % voice, lines)

    c.close()
    if failures:
        print("\n".join(["", "FAILED:"] + failures))
        sys.exit(1)
    print("all ordering rules hold")


if __name__ == "__main__":
    args = sys.argv[1:]
    main(args[args.index("--socket") + 1], args[args.index("--sounds") + 1])
