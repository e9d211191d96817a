"""Where cued's socket is when nobody says otherwise (docs/PROTOCOL.md, "The socket")."""
from __future__ import annotations

import os
from typing import Optional


def default_socket_path(explicit: Optional[str] = None) -> str:
    """The socket path by cued's and cuectl's rules: `explicit` (if not empty), then
    `$CUED_SOCKET` (if not empty), then `$XDG_RUNTIME_DIR/cued/cued.sock` when that variable is an
    absolute path, then `/tmp/cued-UID/cued.sock`."""
    if explicit:
        return explicit
    from_environment = os.environ.get("CUED_SOCKET", "")
    if from_environment:
        return from_environment
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if runtime.startswith("/"):
        return runtime + "/cued/cued.sock"
    return "/tmp/cued-%d/cued.sock" % os.getuid()
