#!/usr/bin/env python3
"""Which file libcanberra itself picks for sound-theme event names: the oracle for SoundThemeTests.

    canberra-lookup.py NAME:THEME:LOCALE ...

Runs libcanberra (libcanberra.so.0, through ctypes) under strace: for each query it plays the
event id with that theme and language (ALSA driver; point ALSA_CONFIG_PATH at a null PCM and
XDG_CACHE_HOME at a scratch directory so its lookup cache starts empty), and reads from the trace
the first sound file it opened, or the `.disabled` file it found. Prints one line per query:
`file PATH`, `disabled PATH` or `notfound`. The search environment ($XDG_DATA_HOME,
$XDG_DATA_DIRS) is the caller's. Standard library only; needs strace and libcanberra0.
"""
import ctypes
import os
import re
import subprocess
import sys
import tempfile

MARK = "/cued-canberra-lookup-mark/"


def child(queries):
    ca = ctypes.CDLL("libcanberra.so.0")
    ca.ca_context_play.restype = ctypes.c_int
    context = ctypes.c_void_p()
    if ca.ca_context_create(ctypes.byref(context)) != 0:
        sys.exit("ca_context_create failed")
    ca.ca_context_set_driver(context, b"alsa")
    for i, query in enumerate(queries):
        name, theme, locale = query.split(":")
        os.access(MARK + str(i), os.F_OK)  # a line in the trace that starts this query
        ca.ca_context_play(context, 0, b"event.id", name.encode(), b"canberra.xdg-theme.name", theme.encode(),
                           b"media.language", locale.encode(), None)
        ca.ca_context_cancel(context, 0)
    os.access(MARK + str(len(queries)), os.F_OK)


def main():
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2:])
        return
    queries = sys.argv[1:]
    with tempfile.TemporaryDirectory() as scratch:
        trace = os.path.join(scratch, "trace")
        subprocess.run(["strace", "-f", "-qq", "-e", "trace=openat,access", "-o", trace, sys.executable, __file__, "--child"] + queries,
                       check=True, stdout=subprocess.DEVNULL)
        lines = open(trace, encoding="utf-8", errors="replace").read().splitlines()
    marks = [next(n for n, line in enumerate(lines) if MARK + str(i) + '"' in line) for i in range(len(queries) + 1)]
    opened = re.compile(r'openat\(AT_FDCWD, "([^"]*/sounds/[^"]*)", [^)]*\) = \d+')
    disabled = re.compile(r'access\("([^"]*/sounds/[^"]*\.disabled)", F_OK\) = 0')
    for i in range(len(queries)):
        result = "notfound"
        for line in lines[marks[i]:marks[i + 1]]:
            if m := disabled.search(line):
                result = "disabled " + m.group(1)
                break
            if (m := opened.search(line)) and not m.group(1).endswith("/index.theme"):
                result = "file " + m.group(1)
                break
        print(result)


main()
