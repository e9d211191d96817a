#!/usr/bin/env python3
"""A raw wire client for the protocol checks (standard library only): any number of requests in
flight, pipelined writes (several lines in one `write`), and every line read kept in order in
`lines`, which is what Tests/Protocol/ordering.py looks at. Programs use the `cued` package
(clients/python) instead; this one stays bare so that the ordering checks see the wire itself.
"""
import json
import os
import socket
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
