#!/usr/bin/env python3
"""Replays every transcript of docs/PROTOCOL.md against real daemons and compares the lines.

A transcript is a fenced block of lines a client sent and lines the daemon sent. A daemon line is a
JSON object with an "ok" member, or with an "event" member naming an event kind of
docs/protocol.schema.json; every other line is something the client sends, malformed ones
included. For each block the checker starts a fresh cued on the silent sink (with a scratch copy of
the sound directory), sends the client lines one at a time on one connection, and after each reads
exactly as many lines as the document shows before the next client line (at most --timeout seconds
for each), which also paces sessions whose events come later. Standard library only.

Every fenced block that holds a daemon line needs an HTML comment on the line(s) just before its
fence, or the check fails:

    <!-- transcript: NAME [OPTION ...] -->   replayed and compared
    <!-- excerpt: NAME[,NAME...] -->          every line is a line of the named transcripts
    <!-- example -->                          not replayed; its daemon lines must fit the schema

Options of a transcript (words split as a shell would):
    session=NAME          share the daemon and the connection with the other blocks of that
                          session, replayed in document order (the first block's options apply)
    daemon='ARGS'         cued options replacing or adding to the defaults (DAEMON_DEFAULTS)
    sounds=CUE,CUE        the scratch sound directory starts with only these of --sounds
    setup=ACTION,...      file actions before the daemon starts (see below)
    before=ID:ACTION,...  file actions before the client line with that request id is sent; an
                          item that starts with another ID: begins that request's actions
    together[=A-B,C-D]    the client lines with ids A..B (without a range: every client line of
                          the block) go in one write, and the daemon lines among them and after
                          them are read together
    pause-after=ID:S,...  wait S seconds after the lines that follow request ID were read
    unordered=ID,...      the daemon lines after request ID may come in any order
    elided=A-B            a line "… N more …" stands for requests A..B, each like the client
                          line after it; their replies are read, not compared
    abbreviations         client lines are expanded: \\xHH is that byte, ␍ a carriage return
                          before the line feed, ␠ a space, ␉ a tab, [×N] N nested empty arrays,
                          and "LINE   …N bytes in all" LINE padded with spaces to N bytes; an
                          empty line is sent as an empty line
    interactive           a "$ COMMAND" line starts a program that reads the client lines from
                          its standard input (socat, nc); without it a "$ COMMAND" runs to its
                          end and every line after it, up to the next "$", is its output
    with-file=NAME        the fenced block before this one is saved as NAME where commands run
    config                the fenced block before this one (TOML) is the daemon's config file
                          (--config instead of --no-config)
File actions: copy:FILE[>NAME] (from --sounds), remove:NAME, text:NAME (a file that is not
audio), link:NAME>TARGET (a symlink), desktop:KEY=VALUE (a key of the desktop's sound settings,
org.gnome.desktop.sound, set to a GVariant: desktop:event-sounds=false).

Every daemon follows a desktop of its own (cued's default `sound-theme = "desktop"`): GNOME's sound
schema as Tests/Fixtures/desktop-schemas declares it, compiled into the scratch directory
(GSETTINGS_SCHEMA_DIR, so neither the machine's schemas nor a distribution's defaults show), and
GLib's keyfile backend in the scratch directory, which the desktop: actions write.

In a block whose lines all start with "A: ", "B: "…, each letter is a connection of its own (one
daemon), and "A: (closes its connection)" closes A. "$ COMMAND" lines run with the document's
socket path (DOC_SOCKET) replaced by the daemon's; so are DOC_SOUNDS in client lines, and both are
put back in what the daemon says. Values that vary from run to run compare as RULES says: voice,
player and sound ids by one consistent renaming per session (in messages and a program's output
too: "voice 12"), clocks, positions, meter levels and the counters of status by type and range.
Everything else, field names and their order included, compares exactly. Daemon lines shown before
any client line are read as lines the daemon sends unprompted.

    transcripts.py [--cued BIN] [--sounds DIR] [--doc FILE] [--only NAME] [--timeout S] [--update [--all]]

--update rewrites the daemon lines that differ with what the daemon said (keeping the client
lines, the annotations and the document's id numbers), so a release's changes are one command
away from the document: `make transcripts`. --update --all rewrites every daemon line, times and
levels too (a time that changed meaning still compares as a time). Read the diff: the prose must
still say what the blocks show.
"""
import argparse
import itertools
import json
import os
import re
import select
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import schema_check  # noqa: E402

# What the document calls the daemon's socket and sound directory.
DOC_SOCKET = "/tmp/docs-cued.sock"
DOC_SOUNDS = "/tmp/docs/sounds"
DOC_DATA = "/tmp/docs/data"
# Every daemon runs with these (the document's introduction names them); a block's daemon= option
# replaces or adds to them. --sounds and --socket are the scratch ones.
DESKTOP_SCHEMAS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Fixtures", "desktop-schemas")
DAEMON_DEFAULTS = ["--device", "null", "--idle-timeout", "1", "--realtime-priority", "0", "--no-config"]
DAEMON_EVENTS = set(schema_check.SCHEMA["$defs"]["events"])
OPTIONS = {"session", "daemon", "sounds", "setup", "before", "together", "pause-after", "unordered", "elided",
           "abbreviations", "interactive", "with-file", "config"}


# --- how values compare --------------------------------------------------------------------------


class Number:
    """Any JSON number in lo...hi (an integer when `integer`): how far a clock got, a level."""

    def __init__(self, lo, hi, integer=False):
        self.lo, self.hi, self.integer = lo, hi, integer

    def __call__(self, doc, actual, state):
        if isinstance(actual, bool) or not isinstance(actual, int if self.integer else (int, float)):
            return "%s, not %s" % ("an integer" if self.integer else "a number", json.dumps(actual))
        if not self.lo <= actual <= self.hi:
            return "%s is outside %s…%s" % (json.dumps(actual), self.lo, self.hi)
        return None


def same_id(doc, actual, state):
    """Voice, player and sound ids: one renaming for the whole session, the same both ways."""
    if not isinstance(actual, int) or isinstance(actual, bool):
        return "an id, not %s" % json.dumps(actual)
    if not isinstance(doc, int) or not state.ids.pair(doc, actual):
        return "%s where the document's %s is %s" % (actual, doc, state.ids.doc_to_actual.get(doc, "another id"))
    return None


def levels(doc, actual, state):
    """Meter levels: one dBFS value per channel, as many as the document shows."""
    if not isinstance(actual, list) or len(actual) != len(doc):
        return "%d levels expected" % len(doc)
    return next(filter(None, (Number(-160, 0)(d, a, state) for d, a in zip(doc, actual))), None)


def scheduled(doc, actual, state):
    """A started event's deviceTime: exact where a player.play asked for that atTime, else a time."""
    if doc in state.at_times:
        return None if actual == doc else "%s, not the atTime %s" % (json.dumps(actual), doc)
    return Number(0, 1e6)(doc, actual, state)


def any_object(doc, actual, state):
    return None if isinstance(actual, dict) else "an object expected"


TIME = Number(0, 1e6)
COUNT = Number(0, 2**53, integer=True)

# Field paths are CONTEXT/FIELD[/FIELD…]: CONTEXT is the op of the request a reply answers
# ("status") or "event:KIND"; "[]" follows an array's name; "*" stands for any context or field.
# A field not listed compares exactly: versions, capabilities, error codes and messages (with their
# ids renamed), names, counts of cues, clients, players and sounds.
RULES = {
    "*/voice": same_id,
    "*/player": same_id,
    "*/sound": same_id,
    "*/stole": same_id,
    "*/destroyed": same_id,
    "*/currentTime": Number(0, 86400),
    "*/deviceCurrentTime": TIME,
    "event:started/deviceTime": scheduled,
    "*/heardIn": Number(0, 1),
    "*/averagePower": levels,
    "clients/clients[]/connection": same_id,
    "event:meters/mix/*": Number(0, 2),
    "event:meters/voices[]/voice": same_id,
    "event:meters/voices[]/*": Number(0, 2),
    "*/peakPower": levels,
    "voices/voices[]/seconds": TIME,
    "status/pid": Number(1, 2**31, integer=True),
    "status/uptime": TIME,
    "status/voices": COUNT,
    "status/plays": COUNT,
    "status/underruns": COUNT,
    "status/framesWritten": COUNT,
    "status/eventsDropped": COUNT,
    "status/triggerLatency/*": Number(0, 1e9),  # microseconds (maxUs has a fraction), and a count
    "status/device/delayFrames": COUNT,
    "status/device/fillTargetFrames": COUNT,
    "status/scheduling": any_object,  # what the machine grants the audio thread
    "status/controlThread": any_object,  # and the control thread (root, RTKit or neither)
}
# In strings (error messages, a program's output), "voice 12", "player 3" and "sound 4" name ids.
ID_IN_TEXT = re.compile(r"\b((?:voice|player|sound) )(\d+)\b")


def rule_for(path):
    context, _, rest = path.partition("/")
    parent, _, last = rest.rpartition("/")
    for key in (path, "%s/%s/*" % (context, parent) if parent else None, "*/" + last if "/" not in rest else None):
        if key in RULES:
            return RULES[key]
    return None


class Ids:
    """The one-to-one renaming of the document's ids to the daemon's."""

    def __init__(self):
        self.doc_to_actual, self.actual_to_doc = {}, {}

    def pair(self, doc, actual):
        if doc in self.doc_to_actual:
            return self.doc_to_actual[doc] == actual
        if actual in self.actual_to_doc:
            return False
        self.doc_to_actual[doc], self.actual_to_doc[actual] = actual, doc
        return True

    def copy(self):
        other = Ids()
        other.doc_to_actual, other.actual_to_doc = dict(self.doc_to_actual), dict(self.actual_to_doc)
        return other


def same_text(doc, actual, state):
    """Strings compare exactly, except for the ids they name."""
    doc_parts, actual_parts = ID_IN_TEXT.split(doc), ID_IN_TEXT.split(actual)
    if len(doc_parts) != len(actual_parts):
        return "%s, not %s" % (json.dumps(actual), json.dumps(doc))
    for index, (d, a) in enumerate(zip(doc_parts, actual_parts)):
        if index % 3 == 2:
            if not state.ids.pair(int(d), int(a)):
                return "%s names id %s where the document's %s is %s" % (json.dumps(actual), a, d, state.ids.doc_to_actual.get(int(d)))
        elif d != a:
            return "%s, not %s" % (json.dumps(actual), json.dumps(doc))
    return None


def compare(doc, actual, path, state):
    """Why `actual` differs from `doc` at `path` (None when they agree), renaming ids on the way."""
    rule = rule_for(path)
    if rule is not None:
        reason = rule(doc, actual, state)
        return None if reason is None else "%s: %s" % (path, reason)
    if isinstance(doc, dict):
        if not isinstance(actual, dict):
            return "%s: an object expected" % path
        if list(doc) != list(actual):
            return "%s: the fields are %s, not %s" % (path, ",".join(actual), ",".join(doc))
        return next(filter(None, (compare(doc[k], actual[k], path + "/" + k, state) for k in doc)), None)
    if isinstance(doc, list):
        if not isinstance(actual, list) or len(doc) != len(actual):
            return "%s: %s, not %s" % (path, json.dumps(actual), json.dumps(doc))
        return next(filter(None, (compare(d, a, path + "[]", state) for d, a in zip(doc, actual))), None)
    if isinstance(doc, str) and isinstance(actual, str):
        reason = same_text(doc, actual, state)
        return None if reason is None else "%s: %s" % (path, reason)
    if doc != actual or type(doc) is not type(actual):
        return "%s: %s, not %s" % (path, json.dumps(actual), json.dumps(doc))
    return None


# --- lines ---------------------------------------------------------------------------------------


class RawFloat(float):
    """A float that remembers how the daemon wrote it, so that --update writes it the same way."""

    def __new__(cls, text):
        value = super().__new__(cls, text)
        value.text = text
        return value


def parse(text):
    try:
        return json.loads(text, parse_float=RawFloat)
    except ValueError:
        return None


def is_daemon_line(text):
    message = parse(text)
    return isinstance(message, dict) and ("ok" in message or message.get("event") in DAEMON_EVENTS)


def block_ops(block):
    """{request id: op} of the block's client lines, so that each reply is checked against its own
    op's reply schema; an id the block gives to requests of two ops maps to None (either)."""
    ops = {}
    for _, text in block.lines:
        text = re.sub(r"^[A-Z]: ", "", text)
        found = None if is_daemon_line(text) else schema_check.request_op(text)
        if found:
            op, key = found
            ops[key] = op if ops.get(key, op) == op else None
    return ops


def reply_op(ops, message):
    """The op of the request a daemon line answers, from `block_ops`; None when unknown or not a reply."""
    if isinstance(message, dict) and "ok" in message and "id" in message:
        return ops.get(json.dumps(message["id"], sort_keys=True))
    return None


def write_json(value):
    """Compact JSON as the daemon writes it."""
    if isinstance(value, dict):
        return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + write_json(v) for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(write_json(v) for v in value) + "]"
    if isinstance(value, RawFloat):
        return value.text
    return json.dumps(value, ensure_ascii=False)


def doc_ids_back(value, ids, key=None):
    """`value` (a daemon line) with the daemon's ids put back to the document's."""
    if isinstance(value, dict):
        return {k: doc_ids_back(v, ids, k) for k, v in value.items()}
    if isinstance(value, list):
        return [doc_ids_back(v, ids, key) for v in value]
    if isinstance(value, int) and not isinstance(value, bool) and key in ("voice", "player", "sound", "stole", "destroyed"):
        return ids.actual_to_doc.get(value, value)
    if isinstance(value, str):
        return ID_IN_TEXT.sub(lambda m: m.group(1) + str(ids.actual_to_doc.get(int(m.group(2)), m.group(2))), value)
    return value


def identity(text):
    """What a line stands for, whatever its values: the reply to an id, or an event of a kind."""
    message = parse(text)
    if not isinstance(message, dict):
        return text
    if "event" in message:
        return ("event", message["event"], message.get("voice"), message.get("player"), message.get("sound"))
    return ("reply", json.dumps(message.get("id")))


def expand(text):
    """A client line with its abbreviations written out (the `abbreviations` option), as bytes."""
    padded = re.match(r"^(.*?)\s*…(\d+) bytes in all$", text)
    if padded:
        line = expand(padded.group(1))
        return line + b" " * (int(padded.group(2)) - len(line))
    text = re.sub(r"\[×(\d+)\]", lambda m: "[" * int(m.group(1)) + "]" * int(m.group(1)), text)
    text = text.replace("␠", " ").replace("␉", "\t").replace("␍", "\r")
    out = b""
    for index, part in enumerate(re.split(r"\\x([0-9A-Fa-f]{2})", text)):
        out += bytes([int(part, 16)]) if index % 2 else part.encode()
    return out


def request_id(text):
    message = parse(text)
    return message.get("id") if isinstance(message, dict) else None


def in_ranges(value, ranges):
    return isinstance(value, int) and any(lo <= value <= hi for lo, hi in ranges)


def parse_ranges(text):
    return [tuple(int(n) for n in (part.split("-") * 2)[:2]) for part in text.split(",") if part]


def parse_pairs(text, convert):
    """"3:0.2,5:0.1" → {3: 0.2, 5: 0.1}."""
    return {int(key): convert(value) for key, value in (part.split(":", 1) for part in text.split(",") if part)}


# --- the document --------------------------------------------------------------------------------


class Block:
    """One fenced block: where it is, its annotation, and its lines (1-based document line numbers)."""

    def __init__(self, fence_line, info, lines, annotation):
        self.fence_line, self.info, self.lines = fence_line, info, lines
        self.kind, self.name, self.options = None, None, {}
        if annotation is not None:
            try:
                words = shlex.split(annotation)
            except ValueError:
                words = ["?"]
            head = words[0] if words else ""
            if head == "example" and len(words) == 1:
                self.kind = "example"
            elif head in ("transcript:", "excerpt:") and len(words) > 1:
                self.kind, self.name = head[:-1], words[1]
                for word in words[2:]:
                    key, _, value = word.partition("=")
                    self.options[key] = value
                if head == "excerpt:" and len(words) > 2 or set(self.options) - OPTIONS:
                    self.kind = "unknown: " + annotation
            else:
                self.kind = "unknown: " + annotation

    def has_daemon_lines(self):
        return any(is_daemon_line(re.sub(r"^[A-Z]: ", "", text)) for _, text in self.lines)


def read_blocks(text):
    lines = text.split("\n")
    blocks, index = [], 0
    while index < len(lines):
        if lines[index].startswith("```"):
            fence, body = index, []
            index += 1
            while index < len(lines) and not lines[index].startswith("```"):
                body.append((index + 1, lines[index]))
                index += 1
            annotation = None
            if fence > 0 and lines[fence - 1].rstrip().endswith("-->"):
                start = fence - 1
                while start > 0 and "<!--" not in lines[start]:
                    start -= 1
                comment = " ".join(lines[start:fence])
                annotation = comment[comment.index("<!--") + 4:comment.rindex("-->")].strip()
            blocks.append(Block(fence + 1, lines[fence][3:], body, annotation))
        index += 1
    return blocks


# --- daemons and connections ---------------------------------------------------------------------


class Daemon:
    """A cued of its own: a scratch directory with the sound directory and the socket."""

    def __init__(self, cued, sounds, options, config_text=None):
        self.directory = os.path.realpath(tempfile.mkdtemp(prefix="cued-tx-", dir="/tmp"))
        self.sounds, self.socket, self.source = self.directory + "/sounds", self.directory + "/cued.sock", sounds
        os.mkdir(self.sounds)
        wanted = options.get("sounds")
        for name in sorted(os.listdir(sounds)):
            if name.endswith(".mp3") and (not wanted or name[:-4] in wanted.split(",")):
                shutil.copy(os.path.join(sounds, name), self.sounds)
        self.act(options.get("setup", ""))
        defaults = DAEMON_DEFAULTS
        if config_text is not None:
            with open(self.directory + "/cued.toml", "w") as file:
                file.write(config_text)
            defaults = [word for word in DAEMON_DEFAULTS if word != "--no-config"] + ["--config", self.directory + "/cued.toml"]
        arguments = merge_options(defaults, shlex.split(options.get("daemon", "")))
        self.log = open(self.directory + "/cued.log", "wb")
        # The sound-theme lookup's places, the same on every machine: an empty data home (shown as
        # DOC_DATA) and the XDG defaults, where sound-theme-freedesktop is installed.
        os.makedirs(self.directory + "/data", exist_ok=True)
        environment = dict(os.environ, XDG_DATA_HOME=self.directory + "/data", XDG_DATA_DIRS="/usr/local/share:/usr/share",
                           LC_ALL="C.UTF-8", **self.desktop_environment())
        self.process = subprocess.Popen(
            [cued, "--sounds", self.sounds, "--socket", self.socket] + arguments,
            stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=environment)
        deadline = time.monotonic() + 10
        while not self.answers():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("cued did not start: " + self.log_text)
            time.sleep(0.01)

    def answers(self):
        try:
            connection = Connection(self.socket)
        except OSError:
            return False
        connection.send(b'{"op":"ping"}\n')
        line = connection.read_line(2)
        connection.close()
        return line is not None

    def desktop_environment(self):
        """The private desktop: the fixture schemas compiled here, GLib's keyfile backend here."""
        schemas = self.directory + "/schemas"
        if not os.path.isdir(schemas):
            if shutil.which("glib-compile-schemas") is None:
                raise RuntimeError("glib-compile-schemas is not installed (scripts/install-deps.sh installs it)")
            os.makedirs(schemas)
            subprocess.run(["glib-compile-schemas", "--strict", "--targetdir=" + schemas, DESKTOP_SCHEMAS], check=True)
        return {"GSETTINGS_SCHEMA_DIR": schemas, "GSETTINGS_BACKEND": "keyfile", "XDG_CONFIG_HOME": self.directory + "/config",
                "XDG_CURRENT_DESKTOP": ""}

    def set_desktop(self, key, value):
        """A key of org.gnome.desktop.sound in the keyfile GLib's keyfile backend reads (and watches)."""
        path = self.directory + "/config/glib-2.0/settings/keyfile"
        os.makedirs(os.path.dirname(path), exist_ok=True)
        lines = open(path).read().splitlines() if os.path.exists(path) else ["[org/gnome/desktop/sound]"]
        lines = [line for line in lines if not line.startswith(key + "=")] + ["%s=%s" % (key, value)]
        with open(path + ".new", "w") as file:
            file.write("\n".join(lines) + "\n")
        os.rename(path + ".new", path)

    def act(self, actions):
        """File actions: copy:FILE[>NAME], remove:NAME, text:NAME, link:NAME>TARGET, desktop:KEY=VALUE."""
        for action in filter(None, actions.split(",")):
            verb, _, argument = action.partition(":")
            name, _, target = argument.partition(">")
            if verb == "desktop":
                key, _, value = argument.partition("=")
                self.set_desktop(key, value)
            elif verb == "copy":
                shutil.copyfile(os.path.join(self.source, name), os.path.join(self.sounds, target or name))
            elif verb == "remove":
                os.remove(os.path.join(self.sounds, name))
            elif verb == "text":
                with open(os.path.join(self.sounds, name), "w") as file:
                    file.write("not audio\n")
            elif verb == "link":
                os.symlink(target, os.path.join(self.sounds, name))
            else:
                raise ValueError("unknown file action %r" % action)

    def to_daemon(self, text):
        return text.replace(DOC_SOCKET, self.socket).replace(DOC_SOUNDS, self.sounds)

    def to_doc(self, text):
        return text.replace(self.socket, DOC_SOCKET).replace(self.sounds, DOC_SOUNDS).replace(self.directory + "/data", DOC_DATA)

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log.close()
        self.log_text = open(self.directory + "/cued.log", errors="replace").read()
        shutil.rmtree(self.directory, ignore_errors=True)


def merge_options(defaults, extra):
    """`defaults` with the options of `extra` replacing theirs (an option's value follows it)."""
    def pairs(words):
        found = []
        for word in words:
            if word.startswith("--"):
                found.append([word])
            elif found:
                found[-1].append(word)
        return found
    merged = {pair[0]: pair for pair in pairs(defaults)}
    merged.update({pair[0]: pair for pair in pairs(extra)})
    return [word for pair in merged.values() for word in pair]


class Connection:
    """A client connection, or a program's standard input and output (`process`)."""

    def __init__(self, path=None, process=None):
        self.process, self.buffer = process, b""
        if process is None:
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.sock.connect(path)

    def fileno(self):
        return self.process.stdout.fileno() if self.process else self.sock.fileno()

    def send(self, data):
        if self.process:
            self.process.stdin.write(data)
            self.process.stdin.flush()
        else:
            self.sock.sendall(data)

    def read_line(self, timeout):
        """The next line (without its "\\n"), or None at the timeout or the end."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.fileno()], [], [], left)[0]:
                return None
            chunk = os.read(self.fileno(), 1 << 20)
            if not chunk:
                return None
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return line.decode("utf-8", "replace")

    def close(self):
        if self.process:
            if self.process.stdin:
                self.process.stdin.close()
            try:
                self.process.wait(1)
            except subprocess.TimeoutExpired:
                self.process.terminate()
                self.process.wait()
        else:
            self.sock.close()


class Session:
    """A daemon and the connections of the blocks that share it, with the ids seen so far."""

    def __init__(self, daemon):
        self.daemon, self.connections, self.ids, self.at_times = daemon, {}, Ids(), set()
        self.ops = {}  # (connection, json id) -> op, to know what a reply answers
        self.failed = False

    def connection(self, label):
        if label not in self.connections:
            self.connections[label] = Connection(self.daemon.socket)
        return self.connections[label]

    def close_connection(self, label):
        """Closes a connection and waits until the daemon has seen it go (status counts clients)."""
        self.connections.pop(label).close()
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            probe = Connection(self.daemon.socket)
            probe.send(b'{"id":1,"op":"status"}\n')
            status = parse(probe.read_line(5) or "null")
            probe.close()
            if isinstance(status, dict) and status.get("clients") == len(self.connections) + 1:
                return
            time.sleep(0.02)

    def end(self):
        for connection in self.connections.values():
            connection.close()
        self.daemon.stop()


# --- replaying -----------------------------------------------------------------------------------


class Expected:
    """A line the document shows the daemon (or a program) sending, and on which connection."""

    def __init__(self, number, text, label):
        self.number, self.text, self.label = number, text, label
        self.message = parse(text) if is_daemon_line(text) else None


class Step:
    """Something the client does (send lines, run a command, close, elide), then the lines it reads.

    A step of kind "daemon" sends nothing: it reads lines the daemon sends unprompted."""

    def __init__(self, kind, number, text, label):
        self.kind, self.number, self.text, self.label = kind, number, text, label
        self.sends = []  # (line number, client line)
        self.expects = []  # Expected

    def request_ids(self):
        return [request_id(text) for _, text in self.sends]


def plan(block):
    """A transcript block as steps; each reads the daemon lines shown before the next client line."""
    options = block.options
    together = parse_ranges(options.get("together") or "")
    whole = "together" in options and not together
    multi = any(block.lines) and all(re.match(r"^[A-Z]: ", text) for _, text in block.lines if text)
    items = []
    for number, text in block.lines:
        label = "default"
        if multi and text:
            label, text = text[0], text[3:]
        if text.startswith("$ "):
            kind = "command"
        elif text.startswith("(") and text.endswith(")"):
            kind = "action"
        elif text.strip().startswith("…"):
            kind = "elision"
        elif is_daemon_line(text):
            kind = "daemon"
        elif not text and "abbreviations" not in options:
            continue
        else:
            kind = "client"
        items.append((kind, number, text, label))

    def write_of(text):
        """Which write a client line goes in: "all", a range of together=, or None (its own)."""
        if whole:
            return "all"
        return next((r for r in together if in_ranges(request_id(text), [r])), None)
    steps, index, interactive = [], 0, False
    while index < len(items):
        kind, number, text, label = items[index]
        index += 1
        step = Step(kind, number, text, label)
        steps.append(step)
        if kind == "command":
            # An interactive program takes the client lines that follow; another prints what follows.
            interactive = "interactive" in options
            while not interactive and index < len(items) and items[index][0] != "command":
                step.expects.append(Expected(items[index][1], items[index][2], "$"))
                index += 1
        elif kind in ("client", "daemon"):
            if kind == "client":
                step.sends.append((number, text))
            else:
                step.expects.append(Expected(number, text, "$" if interactive else label))
            write = write_of(text) if kind == "client" else None
            while index < len(items) and (items[index][0] == "daemon" or (
                    write is not None and items[index][0] == "client" and write_of(items[index][2]) == write)):
                kind, number, text, label = items[index]
                if kind == "client":
                    step.sends.append((number, text))
                else:
                    step.expects.append(Expected(number, text, "$" if interactive else label))
                index += 1
    return steps


class Replayer:
    """Replays transcripts, session by session, and keeps what failed and what --update changes."""

    def __init__(self, arguments, blocks):
        self.arguments, self.blocks = arguments, blocks
        self.sessions = {}
        self.failures = []  # (block, line number, what)
        self.updates = []  # the same, for what --update rewrote
        self.edits = {}  # document line number -> the lines that replace it (--update)
        self.replaced = {}  # old line -> new line (--update), for the excerpts
        self.compared = self.replayed = 0

    def fail(self, block, number, what):
        self.failures.append((block, number, what))

    def differs(self, block, number, what):
        """A difference from the document: a failure, or with --update a line rewritten."""
        (self.updates if self.arguments.update else self.failures).append((block, number, what))

    def session_of(self, block):
        name = block.options.get("session", block.name)
        if name not in self.sessions:
            config_text = None
            if "config" in block.options:
                previous = [b for b in self.blocks if b.fence_line < block.fence_line][-1]
                config_text = "\n".join(text for _, text in previous.lines) + "\n"
            self.sessions[name] = Session(Daemon(self.arguments.cued, self.arguments.sounds, block.options, config_text))
        return self.sessions[name]

    def end_session(self, block):
        """The session's last block is done: nothing more may come; stop its daemon."""
        session = self.sessions.pop(block.options.get("session", block.name), None)
        if session is None:
            return
        if not session.failed:
            for connection in session.connections.values():
                extra = connection.read_line(0.1)
                if extra is not None:
                    self.fail(block, None, "the daemon sent more than the document shows: " + session.daemon.to_doc(extra))
        session.end()

    def replay(self, block):
        session = self.session_of(block)
        if session.failed:
            self.fail(block, None, "not replayed: its session failed in an earlier block")
            return
        self.replayed += 1
        options = block.options
        pauses = parse_pairs(options.get("pause-after", ""), float)
        before = {}  # request id -> its file actions, comma-separated
        current = None
        for item in filter(None, options.get("before", "").split(",")):
            head, _, rest = item.partition(":")
            if head.isdigit():
                current = int(head)
                before[current] = rest
            elif current is not None:
                before[current] += "," + item
            else:
                raise ValueError("before= must start with a request id: %s" % item)
        unordered = {int(n) for n in options.get("unordered", "").split(",") if n}
        steps = plan(block)
        for position, step in enumerate(steps):
            ids = step.request_ids()
            for request in ids:
                if request in before:
                    session.daemon.act(before[request])
            if step.kind == "action":
                if step.text != "(closes its connection)":
                    raise ValueError("unknown action %s at line %d" % (step.text, step.number))
                session.close_connection(step.label)
                ok = True
            elif step.kind == "elision":
                following = next((s for s in steps[position + 1:] if s.sends), None)
                if not options.get("elided") or following is None:
                    raise ValueError("the elided line %d needs elided=A-B and a client line after it" % step.number)
                ok = self.send_elided(block, session, step, parse_ranges(options["elided"])[0], following.sends[0][1])
            elif step.kind == "command":
                ok = self.run_command(block, session, step)
            else:
                # Daemon lines before any client line come unprompted (a limit-reached notice).
                if step.sends:
                    self.send(block, session, step)
                ok = self.check(block, session, step, any(i in unordered for i in ids))
            if not ok and not self.arguments.update:
                session.failed = True
                return
            for request in ids:
                if request in pauses:
                    time.sleep(pauses[request])
        if "$" in session.connections:
            session.connections.pop("$").close()

    def client_bytes(self, block, session, label, text):
        """A client line as it goes to the daemon: abbreviations, paths and ids made the daemon's."""
        data = expand(text) if "abbreviations" in block.options else text.encode()
        data = session.daemon.to_daemon(data.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")
        ids = session.ids.doc_to_actual

        def renamed(number):
            return str(ids.get(int(number), int(number))).encode()
        data = re.sub(rb'("(?:voice|player|sound)"\s*:\s*)(\d+)', lambda m: m.group(1) + renamed(m.group(2)), data)
        data = re.sub(rb'"ids"\s*:\s*\[[\d,\s]*\]', lambda m: re.sub(rb"\d+", lambda n: renamed(n.group()), m.group()), data)
        message = parse(text)
        if isinstance(message, dict):
            if "atTime" in message:
                session.at_times.add(message["atTime"])
            if "op" in message and "id" in message:
                session.ops[(label, json.dumps(message["id"]))] = message["op"]
        return data + b"\n"

    def send(self, block, session, step):
        """Writes the step's client lines at once: to an interactive program, or to the connection."""
        label = "$" if "$" in session.connections else step.label
        data = b"".join(self.client_bytes(block, session, label, text) for _, text in step.sends)
        (session.connections["$"] if label == "$" else session.connection(label)).send(data)

    def send_elided(self, block, session, step, ids, template):
        """The requests an elision stands for, like `template` but for their ids; each must succeed."""
        connection = session.connection(step.label)
        lines = [re.sub(r'"id":\d+', '"id":%d' % n, template, count=1) for n in range(ids[0], ids[1] + 1)]
        connection.send(b"".join(self.client_bytes(block, session, step.label, line) for line in lines))
        for n in range(ids[0], ids[1] + 1):
            reply = parse(connection.read_line(self.arguments.timeout) or "null")
            if not (isinstance(reply, dict) and reply.get("id") == n and reply.get("ok") is True):
                self.fail(block, step.number, "the elided request %d was answered %s" % (n, json.dumps(reply)))
                return False
        return True

    def run_command(self, block, session, step):
        """A "$ COMMAND" line: an interactive program takes the next client lines; another runs to its end."""
        command = session.daemon.to_daemon(step.text[2:])
        for part in command.split("|"):
            program = next((word for word in shlex.split(part) if "=" not in word), None)
            if program and shutil.which(program) is None:
                raise RuntimeError("%s is not installed (scripts/install-deps.sh installs it)" % program)
        if options_file := block.options.get("with-file"):
            previous = [b for b in self.blocks if b.fence_line < block.fence_line][-1]
            with open(os.path.join(session.daemon.directory, options_file), "w") as file:
                file.write("\n".join(text for _, text in previous.lines) + "\n")
        interactive = "interactive" in block.options
        process = subprocess.Popen(
            ["sh", "-c", command], cwd=session.daemon.directory, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            stdin=subprocess.PIPE if interactive else subprocess.DEVNULL)
        session.connections["$"] = Connection(process=process)
        if interactive:
            return True
        ok = self.check(block, session, step, False)
        extra = session.connections["$"].read_line(self.arguments.timeout)
        if ok and extra is not None:
            self.fail(block, step.number, "the command printed more than the document shows: " + extra)
            ok = False
        session.connections.pop("$").close()
        return ok

    def read(self, session, expected):
        """The lines each connection sent: as many as the document shows for it."""
        actual = {}
        for label in dict.fromkeys(e.label for e in expected):
            connection = session.connections["$"] if label == "$" else session.connection(label)
            lines = []
            for _ in range(sum(1 for e in expected if e.label == label)):
                line = connection.read_line(self.arguments.timeout)
                if line is None:
                    break
                lines.append(session.daemon.to_doc(line))
            actual[label] = lines
        return actual

    def check(self, block, session, step, unordered):
        """Reads the step's lines and compares them with the document's; False at the first difference."""
        actual = self.read(session, step.expects)
        ok = True
        ops = block_ops(block)
        for label, lines in actual.items():
            mine = [e for e in step.expects if e.label == label]
            for line in lines:
                message = parse(line)
                if isinstance(message, dict) and ("ok" in message or "event" in message):
                    for reason in schema_check.validate(message, "daemon", reply_op(ops, message))[:1]:
                        self.fail(block, mine[0].number, "the schema refuses a line the daemon sent (%s): %s" % (reason, line))
                        ok = False
            if unordered:
                matched = self.match_any_order(session, mine, lines, label)
                if not matched:
                    self.differs(block, mine[0].number, "these lines, in any order, do not match what the daemon sent:\n%s\n  daemon:\n%s" % (
                        "\n".join("    " + e.text for e in mine), "\n".join("    " + line for line in lines)))
                    ok = False
            else:
                for index, e in enumerate(mine):
                    line = lines[index] if index < len(lines) else None
                    self.compared += 1
                    reason = self.compare_line(session, e, line, label)
                    if reason:
                        self.differs(block, e.number, "%s\n  document: %s\n  daemon:   %s" % (reason, e.text, line))
                        ok = False
                        break
            if not ok or self.arguments.all:
                self.rewrite(session, mine, lines, label)
        return ok

    def compare_line(self, session, expected, line, label):
        """Why `line` is not the document's line (None when it is); learns the ids it pairs."""
        if line is None:
            return "nothing came within %g s" % self.arguments.timeout
        if expected.message is None:
            return same_text(expected.text, line, session)
        message = parse(line)
        if not isinstance(message, dict):
            return "not a JSON object"
        if "event" in message:
            context = "event:" + str(message["event"])
        else:
            context = str(session.ops.get((label, json.dumps(message.get("id"))), "?"))
        return compare(expected.message, message, context, session)

    def match_any_order(self, session, expected, lines, label):
        """True when some order of `lines` matches; the ids of that order are kept."""
        if len(lines) != len(expected):
            return False
        saved = session.ids
        for order in itertools.permutations(lines):
            session.ids = saved.copy()
            if all(self.compare_line(session, e, line, label) is None for e, line in zip(expected, order)):
                self.compared += len(expected)
                return True
        session.ids = saved
        return False

    def rewrite(self, session, expected, lines, label):
        """--update: the document's lines of this step become the daemon's (those that match stay)."""
        if not self.arguments.update:
            return
        prefix = "" if label in ("default", "$") else label + ": "
        new = []
        for index, line in enumerate(lines):
            if index < len(expected):
                # A line that matches on its own stays (unless --all), and the ids it pairs are kept.
                saved, session.ids = session.ids, session.ids.copy()
                same = self.compare_line(session, expected[index], line, label) is None
                if not same:
                    session.ids = saved
                elif not self.arguments.all:
                    new.append(expected[index].text)
                    continue
            message = parse(line)
            new.append(write_json(doc_ids_back(message, session.ids)) if isinstance(message, dict) else doc_ids_back(line, session.ids))
        for index, e in enumerate(expected):
            last = index == len(expected) - 1
            replacement = new[index:] if last else new[index:index + 1]
            self.edits[e.number] = [prefix + text for text in replacement]
            # An excerpt of this line shows the new line that stands for the same reply or event.
            if e.text not in new:
                same = [text for text in new if identity(text) == identity(e.text)]
                if len(same) == 1:
                    self.replaced[e.text] = same[0]


# --- the check -----------------------------------------------------------------------------------


def main():
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cued", default=os.path.join(ROOT, ".build", "debug", "cued"), help="the daemon to run (default: .build/debug/cued)")
    parser.add_argument("--sounds", default=os.path.join(ROOT, "sounds"), help="the sounds the scratch directories copy (default: sounds/)")
    parser.add_argument("--doc", default=os.path.join(ROOT, "docs", "PROTOCOL.md"), help="the document (default: docs/PROTOCOL.md)")
    parser.add_argument("--only", action="append", help="replay only this transcript or session (repeatable)")
    parser.add_argument("--timeout", type=float, default=5.0, help="seconds to wait for each line (default: 5)")
    parser.add_argument("--update", action="store_true", help="rewrite the daemon lines that differ with what the daemon said")
    parser.add_argument("--all", action="store_true", help="with --update: rewrite every daemon line, also those that match (fresh times and levels)")
    arguments = parser.parse_args()

    text = open(arguments.doc, encoding="utf-8").read()
    blocks = read_blocks(text)
    replayer = Replayer(arguments, blocks)
    names = {}
    for block in blocks:
        if block.kind is None and block.has_daemon_lines():
            replayer.fail(block, None, "it holds daemon lines but has no <!-- transcript: … -->, <!-- excerpt: … --> or <!-- example --> before its fence")
        elif block.kind and block.kind.startswith("unknown"):
            replayer.fail(block, None, "an annotation this checker does not know: " + block.kind[len("unknown: "):])
        elif block.kind == "transcript":
            if block.name in names:
                replayer.fail(block, None, "a second transcript named %r" % block.name)
            names[block.name] = block

    transcripts = [b for b in blocks if b.kind == "transcript"]
    if arguments.only:
        transcripts = [b for b in transcripts if b.name in arguments.only or b.options.get("session") in arguments.only]
    last_of_session = {b.options.get("session", b.name): index for index, b in enumerate(transcripts)}
    try:
        for index, block in enumerate(transcripts):
            try:
                replayer.replay(block)
            except (OSError, RuntimeError, ValueError) as error:
                replayer.fail(block, None, "could not be replayed: %s" % error)
                if block.options.get("session", block.name) in replayer.sessions:
                    replayer.sessions[block.options.get("session", block.name)].failed = True
            if last_of_session[block.options.get("session", block.name)] == index:
                replayer.end_session(block)
    finally:
        for session in replayer.sessions.values():
            session.end()

    # An excerpt shows what --update made of its lines in the transcripts.
    for block in blocks:
        if block.kind == "excerpt":
            for number, line in block.lines:
                if replayer.replaced.get(line, line) != line:
                    replayer.edits[number] = [replayer.replaced[line]]
    if arguments.update and replayer.edits:
        lines = text.split("\n")
        for number in sorted(replayer.edits, reverse=True):
            lines[number - 1:number] = replayer.edits[number]
        text = "\n".join(lines)
        with open(arguments.doc, "w", encoding="utf-8") as file:
            file.write(text)
        blocks = read_blocks(text)
        names = {block.name: block for block in blocks if block.kind == "transcript"}

    # Every daemon line the document shows must fit the schema: those of examples, which are not
    # replayed, and those of transcripts and excerpts too. An excerpt's lines are lines of its
    # transcripts.
    examples = excerpts = 0
    for block in blocks:
        if block.kind in ("example", "transcript", "excerpt"):
            ops = block_ops(block)
            for number, line in block.lines:
                line = re.sub(r"^[A-Z]: ", "", line)
                if is_daemon_line(line):
                    for reason in schema_check.validate(parse(line), "daemon", reply_op(ops, parse(line)))[:1]:
                        replayer.fail(block, number, "the schema refuses this daemon line (%s): %s" % (reason, line))
        examples += block.kind == "example"
        if block.kind == "excerpt":
            excerpts += 1
            sources = [names.get(name) for name in block.name.split(",")]
            if None in sources:
                replayer.fail(block, None, "an excerpt of a transcript that does not exist: " + block.name)
                continue
            shown = {text for source in sources for _, text in source.lines}
            # And in their order: an excerpt that shows an event before the reply it follows contradicts its transcript.
            texts = [[text for _, text in source.lines] for source in sources]
            after = [0] * len(sources)
            for number, line in block.lines:
                if line not in shown:
                    replayer.fail(block, number, "this line is in none of the transcripts %s: %s" % (block.name, line))
                    continue
                later = [i for i, lines in enumerate(texts) if line in lines[after[i]:]]
                if not later:
                    replayer.fail(block, number, "this line comes earlier in the transcripts %s than the excerpt shows it: %s" % (block.name, line))
                for i in later:
                    after[i] = texts[i].index(line, after[i]) + 1

    def report(word, found):
        for block, number, what in found:
            label = ("%s %s" % (block.kind or "block", block.name or "")).strip()
            print("%s %s:%d (%s): %s" % (word, os.path.relpath(arguments.doc), number or block.fence_line, label, what))
    report("UPDATED", replayer.updates)
    report("FAIL", replayer.failures)
    summary = "%d transcripts, %d lines compared, %d excerpts, %d examples" % (
        replayer.replayed, replayer.compared, excerpts, examples)
    if arguments.update:
        summary += ", %d lines of %s rewritten" % (len(replayer.edits), os.path.relpath(arguments.doc))
    if replayer.failures:
        print("%s: %d failed" % (summary, len(replayer.failures)))
        sys.exit(1)
    print(summary + (", all match" if not replayer.updates else ""))


if __name__ == "__main__":
    main()
