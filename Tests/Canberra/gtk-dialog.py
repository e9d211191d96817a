#!/usr/bin/env python3
# gtk-dialog.py: a GTK 3 program as a GNOME session runs one. GNOME starts every GTK 3 program with
# GTK_MODULES=canberra-gtk-module, and GTK loads that module with local binding
# (G_MODULE_BIND_LOCAL); the module plays the dialog's response sound through libcanberra, with
# whatever driver CANBERRA_DRIVER names. The end-to-end tests run it under Xvfb
# (Tests/EndToEndTests/CanberraHostTests.swift).
#
#   gtk-dialog.py [ok | cancel]   shows a dialog, answers it (ok: GTK_RESPONSE_OK, whose sound is
#                                 dialog-ok; cancel: dialog-cancel), and exits 1.5 s later, once
#                                 the module's sound has been sent
#
# Prints "response: ok" or "response: cancel" when the dialog got its answer.
import sys

import gi

gi.require_version("Gtk", "3.0")
from gi.repository import GLib, Gtk  # noqa: E402

answer = sys.argv[1] if len(sys.argv) > 1 else "ok"
if answer not in ("ok", "cancel"):
    sys.exit("usage: gtk-dialog.py [ok | cancel]")
response = Gtk.ResponseType.OK if answer == "ok" else Gtk.ResponseType.CANCEL

dialog = Gtk.Dialog(title="cued test")
dialog.add_button("_OK", Gtk.ResponseType.OK)
dialog.add_button("_Cancel", Gtk.ResponseType.CANCEL)


def answered(_dialog, got):
    print("response: " + ("ok" if got == Gtk.ResponseType.OK else "cancel"), flush=True)
    GLib.timeout_add(1500, Gtk.main_quit)


def respond():
    # As a click on the button does: GtkDialog emits "response", which the module hooks.
    dialog.response(response)
    return False


dialog.connect("response", answered)
dialog.show_all()
GLib.timeout_add(500, respond)
Gtk.main()
