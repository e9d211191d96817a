# A stand-in for polkit's authority on a private system bus, for the RTKit tests only: rtkit-daemon
# asks org.freedesktop.PolicyKit1 CheckAuthorization before it grants real-time, and this answers
# "authorized" to every subject and action. RTKit itself is the real rtkit-daemon.
# Needs python3-dbus and python3-gi (scripts/install-deps.sh --test); DBUS_SYSTEM_BUS_ADDRESS names the bus.
import dbus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.SystemBus()


class Authority(dbus.service.Object):
    @dbus.service.method(
        "org.freedesktop.PolicyKit1.Authority", in_signature="(sa{sv})sa{ss}us", out_signature="(bba{ss})"
    )
    def CheckAuthorization(self, subject, action, details, flags, cancellation):
        return (True, False, {})


name = dbus.service.BusName("org.freedesktop.PolicyKit1", bus)
Authority(bus, "/org/freedesktop/PolicyKit1/Authority")
GLib.MainLoop().run()
