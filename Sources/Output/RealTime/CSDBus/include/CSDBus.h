// A plain-C face of libsystemd's sd-bus, loaded with dlopen("libsystemd.so.0") on first use: just the
// calls that ask RTKit for a real-time thread. One C call each, no policy (CueOutput/RealtimeKit.swift
// decides what to ask and what an answer means).
//
// Why dlopen, not a link: cued asks RTKit only when SCHED_FIFO is refused, so `cued --device null`
// as root, or a process that never mixes, maps neither libsystemd nor what it pulls in.
// Why no <systemd/sd-bus.h>: nothing links libsystemd, so its -dev package would be needed only for
// these seven prototypes; they are declared here (as function-pointer types in sdbus.c) from
// sd-bus(3), whose ABI they belong to has been stable since libsystemd.so.0 exported them
// (sd_bus_set_method_call_timeout since systemd 240). sd_bus_error's layout is the public one.
#ifndef CUED_CSDBUS_H
#define CUED_CSDBUS_H
#include <stddef.h>
#include <stdint.h>

/// An sd_bus connection (opaque).
typedef struct cued_sdbus cued_sdbus;

/// `sd_bus_error`, field for field: `name` (a D-Bus error name) and `message`, both NULL when unset.
typedef struct cued_sdbus_error {
  const char *name;
  const char *message;
  int _need_free;
} cued_sdbus_error;

/// dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL) and dlsym of the calls below, once per process
/// (later calls return the first answer). 0, or -1 with dlerror()'s text in `error` (of `size` bytes).
/// Not thread-safe: call from one thread at a time.
int cued_sdbus_load(char *error, size_t size);

/// `sd_bus_open_system`: a new connection to the system bus ($DBUS_SYSTEM_BUS_ADDRESS, else
/// /run/dbus/system_bus_socket). 0 with `*bus` set, or a negative errno. Needs cued_sdbus_load.
int cued_sdbus_open_system(cued_sdbus **bus);

/// `sd_bus_set_method_call_timeout`: how long each call below waits for its answer, in microseconds.
int cued_sdbus_set_method_call_timeout(cued_sdbus *bus, uint64_t usec);

/// `sd_bus_get_property_trivial`: a property of basic `type` ('i': int32_t, 'x': int64_t, …) into
/// `value`. 0 or a negative errno, with the bus's error in `error` (free with cued_sdbus_error_free).
int cued_sdbus_get_property_trivial(
  cued_sdbus *bus, const char *destination, const char *path, const char *interface, const char *member,
  cued_sdbus_error *error, char type, void *value);

/// `sd_bus_call_method(…, "tu", t, u)`, the reply dropped: a method that takes a uint64 and a uint32
/// (RTKit's MakeThreadRealtime). sd_bus_call_method is variadic, which Swift cannot call.
/// 0 or a negative errno, with the bus's error in `error`.
int cued_sdbus_call_method_tu(
  cued_sdbus *bus, const char *destination, const char *path, const char *interface, const char *member,
  cued_sdbus_error *error, uint64_t t, uint32_t u);

/// `sd_bus_call_method(…, "ti", t, i)`, the reply dropped: a uint64 and an int32 (RTKit's
/// MakeThreadHighPriority). 0 or a negative errno, with the bus's error in `error`.
int cued_sdbus_call_method_ti(
  cued_sdbus *bus, const char *destination, const char *path, const char *interface, const char *member,
  cued_sdbus_error *error, uint64_t t, int32_t i);

/// `sd_bus_error_free`.
void cued_sdbus_error_free(cued_sdbus_error *error);

/// `sd_bus_flush_close_unref`: flushes, closes and frees the connection. NULL is fine.
void cued_sdbus_close_unref(cued_sdbus *bus);

#endif
