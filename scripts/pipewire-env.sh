#!/usr/bin/env bash
# A private, headless PipeWire for tests: a session D-Bus, pipewire with a timer-paced null sink
# (Tests/PipeWire/pipewire.conf) and WirePlumber to link streams, all in one 0700 directory.
#
#   scripts/pipewire-env.sh start [DIR]   start (or find running) and print the client environment
#   scripts/pipewire-env.sh env   [DIR]   print the client environment of a running instance
#   scripts/pipewire-env.sh stop  [DIR]   stop every process it started and remove DIR
#
# DIR must be new, empty or one this script made (it leaves a marker file there): stop removes it.
# DIR defaults to $CUED_PIPEWIRE_DIR, else /tmp/cued-pipewire-$UID. The environment comes as
# `export NAME='value'` lines:  eval "$(scripts/pipewire-env.sh start)"
# Nothing here touches ALSA's configuration: a test that wants the pipewire ALSA PCM names it.
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
config="$here/Tests/PipeWire/pipewire.conf"
sink="cued-test-sink"
command="${1:-}"
dir="${2:-${CUED_PIPEWIRE_DIR:-/tmp/cued-pipewire-$(id -u)}}"
# The order processes start in; stop goes backwards.
services=(dbus pipewire wireplumber)
marker=".cued-pipewire-env"

die() { echo "pipewire-env: $*" >&2; exit 1; }

# The pid in DIR/NAME.pid if that process still runs the program we started (not a reused pid).
live_pid() {
  local file="$dir/$1.pid" pid
  [[ -f "$file" ]] || return 1
  pid="$(<"$file")"
  [[ -n "$pid" && -r "/proc/$pid/cmdline" ]] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q -- "$1" || return 1
  echo "$pid"
}

# Whether a process still runs: an exited one may linger as a zombie until its new parent (init,
# once this script has gone) reaps it.
alive() {
  local state
  state="$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" || return 1
  [[ -n "$state" && "$state" != Z ]]
}

running() {
  local s
  for s in "${services[@]}"; do live_pid "$s" >/dev/null || return 1; done
}

print_env() {
  cat <<END
export XDG_RUNTIME_DIR='$dir'
export PIPEWIRE_RUNTIME_DIR='$dir'
export DBUS_SESSION_BUS_ADDRESS='unix:path=$dir/bus'
export CUED_PIPEWIRE_DIR='$dir'
export CUED_PIPEWIRE_SINK='$sink'
END
}

# Runs a program with the private environment, detached into its own session, logging to DIR.
# Descriptors the caller left open are closed first: a daemon holding the caller's pipe or socket
# would keep the caller waiting for an end of file that never comes (Foundation's Process does).
spawn() {
  local name="$1"; shift
  (
    for fd in /proc/$BASHPID/fd/*; do
      fd="${fd##*/}"
      if ((fd > 2)); then eval "exec $fd>&-" 2>/dev/null || true; fi
    done
    exec env -i PATH="$PATH" HOME="$dir" XDG_RUNTIME_DIR="$dir" PIPEWIRE_RUNTIME_DIR="$dir" \
      XDG_CONFIG_HOME="$dir/config" XDG_STATE_HOME="$dir/state" XDG_DATA_HOME="$dir/data" \
      DBUS_SESSION_BUS_ADDRESS="unix:path=$dir/bus" DISABLE_RTKIT=1 \
      setsid "$@" </dev/null >"$dir/$name.log" 2>&1
  ) &
  echo $! >"$dir/$name.pid"
}

# Polls (every 10 ms, for 5 s by the clock, however long each try takes) until the command succeeds.
wait_for() {
  local what="$1"; shift
  local deadline=$(( ${EPOCHREALTIME/./} + 5000000 ))
  while (( ${EPOCHREALTIME/./} < deadline )); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.01
  done
  die "$what did not come up within 5 s (logs in $dir)"
}

stop() {
  local i s pid pids=()
  for ((i = ${#services[@]} - 1; i >= 0; i--)); do
    s="${services[$i]}"
    if pid="$(live_pid "$s")"; then
      kill -TERM "$pid" 2>/dev/null || true
      pids+=("$pid")
    fi
  done
  for pid in "${pids[@]}"; do
    for _ in $(seq 200); do alive "$pid" || break; sleep 0.01; done
    alive "$pid" && kill -KILL "$pid" 2>/dev/null || true
  done
  # Only a directory this script made goes; anything else keeps its contents.
  [[ -f "$dir/$marker" ]] && rm -rf "$dir"
  return 0
}

start() {
  if running; then print_env; return; fi
  if [[ -d "$dir" && ! -f "$dir/$marker" && -n "$(ls -A "$dir")" ]]; then
    die "$dir is not empty and was not made by this script: give an empty or new directory"
  fi
  stop  # a half-started or dead instance: start clean
  command -v pipewire >/dev/null && command -v wireplumber >/dev/null && command -v dbus-daemon >/dev/null ||
    die "pipewire, wireplumber or dbus-daemon missing: run scripts/install-deps.sh"
  mkdir -m 0700 -p "$dir" "$dir/config" "$dir/state" "$dir/data"
  chmod 0700 "$dir"
  : >"$dir/$marker"
  spawn dbus dbus-daemon --session --nofork --nopidfile --address="unix:path=$dir/bus"
  wait_for "dbus-daemon" test -S "$dir/bus"
  spawn pipewire pipewire -c "$config"
  wait_for "pipewire" test -S "$dir/pipewire-0"
  spawn wireplumber wireplumber
  # Ready when WirePlumber has chosen our sink as the default: streams then link to it.
  wait_for "wireplumber (default sink)" default_sink_is_ours
  print_env
}

default_sink_is_ours() {
  XDG_RUNTIME_DIR="$dir" PIPEWIRE_RUNTIME_DIR="$dir" pw-metadata -n default 0 default.audio.sink 2>/dev/null |
    grep -q "\"name\":\"$sink\""
}

case "$command" in
  start) start ;;
  env) running || die "not running in $dir (start it first)"; print_env ;;
  stop) stop ;;
  *) die "usage: $0 start|env|stop [DIR]" ;;
esac
