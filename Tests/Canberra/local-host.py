#!/usr/bin/env python3
# local-host.py: a host that loads libcanberra with local binding (RTLD_LOCAL), as Python's ctypes,
# an extension module or a plugin does: libcanberra's symbols stay out of the global scope, so a
# driver finds them only through its own NEEDED libcanberra.so.0. Plays one sound with whatever
# driver CANBERRA_DRIVER names and waits for its end. The end-to-end tests run it
# (Tests/EndToEndTests/CanberraHostTests.swift).
#
#   local-host.py EVENT_ID     prints "play: RESULT" and, when the sound ended, "finished: RESULT"
#                              (ca_strerror's text); exits 1 when the play failed
import ctypes
import os
import sys
import threading

if len(sys.argv) != 2:
    sys.exit("usage: local-host.py EVENT_ID")
canberra = ctypes.CDLL("libcanberra.so.0", mode=os.RTLD_LOCAL | os.RTLD_NOW)
canberra.ca_strerror.restype = ctypes.c_char_p
Callback = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_void_p)
ended = threading.Event()
result = []


@Callback
def finished(_context, _id, error, _userdata):
    result.append(error)
    ended.set()


def text(code):
    return canberra.ca_strerror(code).decode()


context = ctypes.c_void_p()
properties = ctypes.c_void_p()
assert canberra.ca_context_create(ctypes.byref(context)) == 0
canberra.ca_context_change_props(context, b"application.name", b"local-host", None)
assert canberra.ca_proplist_create(ctypes.byref(properties)) == 0
canberra.ca_proplist_sets(properties, b"event.id", sys.argv[1].encode())
ret = canberra.ca_context_play_full(context, 1, properties, finished, None)
print("play: " + text(ret), flush=True)
if ret == 0:
    ended.wait(10)
    print("finished: " + (text(result[0]) if result else "timed out"), flush=True)
canberra.ca_proplist_destroy(properties)
canberra.ca_context_destroy(context)
sys.exit(0 if ret == 0 else 1)
