"""A real cued for the tests, as Tests/Protocol/transcripts.py starts one: a scratch directory with
a copy of the shipped sounds, the silent sink, no config file (unless a test gives one), and a
socket of its own. `CUED_BINARY` names the daemon (default: this checkout's .build/debug/cued),
`CUED_SOUNDS` the sounds to copy (default: the checkout's sounds/)."""
from __future__ import annotations

import os
import shutil
import signal
import socket
import socketserver
import subprocess
import tempfile
import threading
import time
from typing import Callable, List, Optional

REPOSITORY = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


def cued_binary() -> str:
    return os.environ.get("CUED_BINARY") or os.path.join(REPOSITORY, ".build", "debug", "cued")


def shipped_sounds() -> str:
    return os.environ.get("CUED_SOUNDS") or os.path.join(REPOSITORY, "sounds")


class Daemon:
    """A cued of its own; `stop()` (SIGTERM) ends it and removes its directory."""

    DEFAULTS = ["--device", "null", "--idle-timeout", "0.5", "--realtime-priority", "0"]

    def __init__(self, arguments: Optional[List[str]] = None, config: Optional[str] = None,
                 directory: Optional[str] = None) -> None:
        self.directory = directory or os.path.realpath(tempfile.mkdtemp(prefix="cued-py-", dir="/tmp"))
        self.sounds = os.path.join(self.directory, "sounds")
        self.socket = os.path.join(self.directory, "cued.sock")
        self.config = os.path.join(self.directory, "cued.toml")
        if not os.path.isdir(self.sounds):
            os.mkdir(self.sounds)
            for name in sorted(os.listdir(shipped_sounds())):
                if name.endswith(".mp3"):
                    shutil.copy(os.path.join(shipped_sounds(), name), self.sounds)
            with open(os.path.join(self.sounds, "notes.txt"), "w") as file:
                file.write("not audio\n")
        self.arguments = list(arguments or [])
        configuration = ["--no-config"]
        if config is not None:
            with open(self.config, "w") as file:
                file.write(config)
            configuration = ["--config", self.config]
        self.command = [cued_binary(), "--sounds", self.sounds, "--socket", self.socket] + self.DEFAULTS \
            + configuration + self.arguments
        self.process: Optional["subprocess.Popen[bytes]"] = None
        self.start()

    def start(self) -> None:
        environment = dict(os.environ, XDG_DATA_HOME=os.path.join(self.directory, "data"), LC_ALL="C.UTF-8")
        environment.pop("CUED_SOCKET", None)
        log = open(os.path.join(self.directory, "cued.log"), "ab")
        self.process = subprocess.Popen(self.command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                        env=environment)
        log.close()
        deadline = time.monotonic() + 15
        while not self._answers():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop(remove=False)
                raise RuntimeError("cued did not start (%s): %s" % (" ".join(self.command), self.log()))
            time.sleep(0.02)

    def _answers(self) -> bool:
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
                probe.settimeout(2)
                probe.connect(self.socket)
                probe.sendall(b'{"op":"ping"}\n')
                return probe.recv(4096).startswith(b'{"id":null,"ok":true')
        except OSError:
            return False

    def log(self) -> str:
        try:
            with open(os.path.join(self.directory, "cued.log"), errors="replace") as file:
                return file.read()
        except OSError:
            return ""

    def stop(self, remove: bool = True) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if remove:
            shutil.rmtree(self.directory, ignore_errors=True)


class SharedDaemon:
    """One daemon for a test module: `setUpModule = shared.start`, `tearDownModule = shared.stop`."""

    def __init__(self) -> None:
        self._daemon: Optional[Daemon] = None

    @property
    def daemon(self) -> Daemon:
        assert self._daemon is not None, "the module's daemon starts in setUpModule"
        return self._daemon

    def start(self) -> None:
        self._daemon = Daemon()

    def stop(self) -> None:
        if self._daemon is not None:
            self._daemon.stop()
            self._daemon = None


class FakeDaemon:
    """A stand-in daemon for what a real one cannot be made to send (PROTOCOL.md, section 5: `busy`
    from a full queue, `access-denied`, `internal`): `answer(request line)` gives the lines to send
    back; `greeting` is sent as soon as a client connects."""

    def __init__(self, answer: Callable[[bytes], List[bytes]], greeting: bytes = b"") -> None:
        self.directory = tempfile.mkdtemp(prefix="cued-py-fake-", dir="/tmp")
        self.socket = os.path.join(self.directory, "fake.sock")
        answer_lines, hello_line = answer, greeting

        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                if hello_line:
                    self.wfile.write(hello_line)
                for line in self.rfile:
                    for reply in answer_lines(line):
                        self.wfile.write(reply)

        self.server = socketserver.ThreadingUnixStreamServer(self.socket, Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        shutil.rmtree(self.directory, ignore_errors=True)
