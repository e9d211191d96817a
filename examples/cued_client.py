#!/usr/bin/env python3
"""A cued client in Python, standard library only, written from docs/PROTOCOL.md alone.

It keeps any number of requests in flight, matches replies to requests by "id" (some replies are
deferred: docs/PROTOCOL.md, "Connections and ordering") and queues events in arrival order.

    examples/cued_client.py [--socket PATH]     plays, pauses and resumes a player, plays a
                                                 system sound, and prints what happened

`make test` runs it against a real daemon (Tests/EndToEndTests/OutsideClientTests.swift), and
Tests/Protocol/ordering.py uses it to check the protocol's ordering rules.
"""
import json
import os
import socket
import sys
import time


def default_socket_path():
    """Where cued listens when nobody says otherwise (docs/PROTOCOL.md, "The socket")."""
    if os.environ.get("CUED_SOCKET"):
        return os.environ["CUED_SOCKET"]
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if runtime.startswith("/"):
        return os.path.join(runtime, "cued", "cued.sock")
    return "/tmp/cued-%d/cued.sock" % os.getuid()


class CuedError(Exception):
    """An error reply: `code` is stable, `message` says what to do."""

    def __init__(self, code, message):
        super().__init__("%s: %s" % (code, message))
        self.code = code
        self.message = message


class Client:
    def __init__(self, path=None, timeout=10.0):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path or default_socket_path())
        self.sock.settimeout(timeout)
        self.buffer = b""
        self.next_id = 1
        self.replies = {}  # id -> reply, for replies read while waiting for another
        self.events = []  # events in arrival order
        self.lines = []  # every line read, in order (what ordering checks look at)

    def close(self):
        self.sock.close()

    # --- lines ---------------------------------------------------------------------------------

    def write(self, *messages):
        """Writes messages (dicts) in one send: pipelined, as a client in a hurry does."""
        data = b"".join(json.dumps(m, separators=(",", ":")).encode() + b"\n" for m in messages)
        self.sock.sendall(data)

    def read_line(self):
        while b"\n" not in self.buffer:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError("cued closed the connection")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        message = json.loads(line)
        self.lines.append(message)
        return message

    def _take(self, message):
        """Files one line: a reply (it has "ok") under its id, else an event."""
        if "ok" in message:
            self.replies[json.dumps(message.get("id"))] = message
        else:
            self.events.append(message)

    # --- requests ------------------------------------------------------------------------------

    def send(self, op, **fields):
        """Sends one request without waiting; returns its id."""
        request_id = self.next_id
        self.next_id += 1
        self.write(dict({"id": request_id, "op": op}, **fields))
        return request_id

    def reply(self, request_id):
        """The reply to `request_id` (waiting for it); raises CuedError for an error reply."""
        key = json.dumps(request_id)
        while key not in self.replies:
            self._take(self.read_line())
        message = self.replies.pop(key)
        if not message["ok"]:
            raise CuedError(message["error"]["code"], message["error"]["message"])
        return message

    def request(self, op, **fields):
        return self.reply(self.send(op, **fields))

    def event(self, kind, timeout=5.0, **match):
        """The first queued or arriving event of `kind` whose fields include `match`."""
        deadline = time.monotonic() + timeout
        while True:
            for index, event in enumerate(self.events):
                if event.get("event") == kind and all(event.get(k) == v for k, v in match.items()):
                    return self.events.pop(index)
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no %s event %r within %.1f s (queued: %r)" % (kind, match, timeout, self.events))
            self.sock.settimeout(left)
            try:
                self._take(self.read_line())
            finally:
                self.sock.settimeout(10.0)


def demo(path):
    """Plays, pauses and resumes a player, plays a system sound; exits non-zero on any surprise."""
    client = Client(path)
    hello = client.request("hello", client="cued_client.py")
    capabilities = hello.get("capabilities", {})
    print("cued %s, protocol %d, %d ops" % (hello["version"], hello["protocol"], len(capabilities.get("ops", []))))
    for op in ("player.create", "player.pause", "sound.play"):
        assert op in capabilities.get("ops", []), "this daemon has no %s" % op
    client.request("subscribe", kinds=["started", "finished"])

    # A cue, fire-and-forget, then the same with a finished event for this connection.
    voice = client.request("play", cue="pico", notify=True)["voice"]
    finished = client.event("finished", voice=voice)
    assert finished["successfully"] is True and finished["reason"] == "end", finished
    print("play: voice %d finished (%s)" % (voice, finished["reason"]))

    # A player that loops until paused: play, pause (its reply says where), resume, stop.
    player = client.request("player.create", cue="pico", numberOfLoops=-1)["player"]
    client.request("player.play", player=player)
    client.event("started", player=player)
    time.sleep(0.15)
    paused = client.request("player.pause", player=player)
    assert paused["isPlaying"] is False and paused["currentTime"] > 0, paused
    print("player %d paused at %.3f s" % (player, paused["currentTime"]))
    client.request("player.play", player=player)
    assert client.request("player.get", player=player)["isPlaying"] is True
    time.sleep(0.1)
    stopped = client.request("player.stop", player=player)
    assert stopped["isPlaying"] is False, stopped
    client.request("player.destroy", player=player)

    # A system sound: create, ask for its completion, play, dispose right away (it still plays out).
    sound = client.request("sound.create", cue="pico")["sound"]
    client.request("sound.completion", sound=sound)
    played = client.request("sound.play", sound=sound)["voice"]
    client.request("sound.dispose", sound=sound)
    completion = client.event("completion", sound=sound, voice=played)
    assert completion["played"] is True and completion["reason"] == "end", completion
    print("sound %d: completion %s" % (sound, completion["reason"]))

    # An error names the problem and what to do; the connection keeps working.
    try:
        client.request("play", cue="no-such-cue")
        raise AssertionError("an unknown cue was played")
    except CuedError as error:
        assert error.code == "unknown-cue", error
        print("unknown cue: %s" % error.code)
    client.request("ping")
    client.close()
    print("ok")


if __name__ == "__main__":
    arguments = sys.argv[1:]
    socket_path = arguments[arguments.index("--socket") + 1] if "--socket" in arguments else None
    demo(socket_path)
