#!/usr/bin/env bash
# Installs the Debian packages cued needs to build, run and test. Idempotent and quick when all
# is present: it asks dpkg first and runs apt-get only for what is missing.
#   libasound2-dev, libmpg123-dev  headers + pkg-config files for ALSA, libmpg123 and libsyn123
#   libasound2-plugins             ALSA's pulse PCM (so 'default' reaches PulseAudio/PipeWire)
#   pulseaudio, pulseaudio-utils   a private null-sink server and parec for the end-to-end tests
#   pipewire, wireplumber, dbus, bubblewrap
#                                  PipeWire under the service's sandbox (bwrap) in tests. Its ALSA plugin
#                                  (pipewire-alsa) conflicts with the pulseaudio package, so it is not
#                                  installed: the plugin is unpacked from its .deb into .build/pipewire-alsa.
#                                  pipewire-bin has pw-cli/pw-metadata/pw-dump, which scripts/pipewire-env.sh
#                                  (the headless PipeWire the tests start) uses. dbus-daemon also runs the
#                                  private buses of the RTKit tests (a fake RTKit on each); setpriv and
#                                  prlimit (util-linux, always there) take CAP_SYS_NICE from cued in them.
#   libpipewire-0.3-dev, libspa-0.2-dev
#                                  headers + pkg-config file for the native PipeWire output (CPipeWire).
#                                  Neither changes ALSA's 'default' (only pipewire-alsa would).
#   libpulse-dev                   headers for the native PulseAudio output (CPulseShims)
#   systemd                        systemd-analyze and systemd-socket-activate for the unit tests
#   dpkg-dev, binutils, lintian    make deb (dpkg-shlibdeps, strip) and its check in the install tests
#   socat, netcat-openbsd          the shell transcripts of docs/PROTOCOL.md, which the tests run as
#                                  they are shown (Tests/Protocol/transcripts.py)
#   libsndfile1-dev                headers for libsndfile (CSndfile): Ogg Vorbis/Opus, WAV and FLAC files
#   libebur128-dev                 headers for libebur128 (CEbur128): each cue's EBU R128 loudness and peaks
#   sound-theme-freedesktop        the real theme the sound-theme lookup is tested on (SoundThemeTests),
#   libcanberra0, strace           and libcanberra itself, traced, as its oracle
set -euo pipefail
packages=(libasound2-dev libmpg123-dev libasound2-plugins pulseaudio pulseaudio-utils
  pipewire pipewire-bin wireplumber dbus libpipewire-0.3-dev libspa-0.2-dev libpulse-dev bubblewrap systemd dpkg-dev binutils lintian tmux
  socat netcat-openbsd libsndfile1-dev libebur128-dev sound-theme-freedesktop libcanberra0 strace)
if [[ "${1:-}" == "--with-tools" ]]; then
  packages+=(sox libsox-fmt-all lame mpg123 opus-tools stress-ng)  # regenerate sounds/fixtures, benchmarks (stress-ng: under load)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
sudo=""
[[ $(id -u) -eq 0 ]] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
if [[ ${#missing[@]} -gt 0 ]]; then
  echo "installing: ${missing[*]}" >&2
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# PipeWire's ALSA plugin, unpacked (not installed) for the tests.
here="$(cd "$(dirname "$0")/.." && pwd)"
plugin_dir="$here/.build/pipewire-alsa"
if [[ ! -f "$plugin_dir/libasound_module_pcm_pipewire.so" ]]; then
  work="$(mktemp -d)"
  (cd "$work" && apt-get download pipewire-alsa >/dev/null 2>&1 && dpkg-deb -x pipewire-alsa_*.deb x) ||
    { echo "could not fetch pipewire-alsa (run apt-get update?)" >&2; rm -rf "$work"; exit 0; }
  mkdir -p "$plugin_dir"
  cp "$work"/x/usr/lib/*/alsa-lib/libasound_module_pcm_pipewire.so "$plugin_dir/"
  rm -rf "$work"
fi
