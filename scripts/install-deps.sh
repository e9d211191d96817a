#!/usr/bin/env bash
# Installs the Debian packages that one use of this checkout needs, and nothing else; never removes
# or replaces a package that is already installed.
#
#   scripts/install-deps.sh [--run | --package | --test | --tools] [--dry-run]
#
#   --run    (make run, make build, make install) Swift 6, and the headers and pkg-config files that
#            building needs. Running needs nothing more: the libraries come with their headers, and
#            the sound server is whatever the machine already has. No server, no test tool.
#   --package (make deb) --run's, and dpkg-dev and binutils (dpkg-shlibdeps, strip).
#   --test   (make test, make sanitize, make fuzz) --run's, and the servers and tools the tests start
#            (below). The PulseAudio-protocol tests need a PulseAudio-protocol server: on a machine
#            whose sound stack is PipeWire (pipewire-pulse, pipewire-audio or pipewire-alsa installed)
#            that is a private pipewire-pulse (`pipewire -c` with its pulse module, which the pipewire
#            package ships), and the pulseaudio package, which would replace the desktop's
#            pipewire-pulse, is not installed; elsewhere it is the pulseaudio server.
#            CUED_TEST_PULSE_SERVER=pulseaudio|pipewire-pulse overrides the choice.
#   --tools  (make sounds, make fixtures, make bench) --test's, and sox, lame, mpg123, opus-tools,
#            flac, stress-ng: what regenerates the sounds and fixtures and loads the machine in
#            benchmarks.
#   --dry-run  prints the plan (what is missing, the PulseAudio-protocol server, what apt would do)
#            and installs nothing.
#
# Every install is simulated first (`apt-get -s`): when apt would remove a package, the script stops
# before installing anything, names the packages and says what to do. Quick when all is present: it
# asks dpkg first and runs apt-get only for what is missing. CUED_DPKG_ADMINDIR (tests) points dpkg
# and apt's simulation at another package database, such as a desktop's.
#
# What each package is for:
#   pkgconf, libasound2-dev, libmpg123-dev, libpipewire-0.3-dev, libspa-0.2-dev, libpulse-dev,
#   libsndfile1-dev, libebur128-dev, libcanberra-dev
#          (--run) headers and pkg-config files: ALSA, libmpg123/libsyn123, PipeWire, PulseAudio,
#          libsndfile (Ogg Vorbis/Opus, WAV), libebur128 (loudness), libcanberra (the libcanberra
#          driver links libcanberra.so.0, as libcanberra's own drivers do). libsndfile1 brings libflac12,
#          which cued loads for FLAC files; its face declares the little of libFLAC it calls, so
#          building needs no libflac-dev (where that is installed, the face is checked against it)
#   pulseaudio        (--test, see above) a private null-sink server for the end-to-end tests
#   pulseaudio-utils  (--test) pactl and parec, which talk to either server
#   libasound2-plugins (--test) ALSA's pulse PCM, one of the paths the tests play through
#   pipewire, pipewire-bin, wireplumber, dbus
#          (--test) the headless PipeWire the tests start (scripts/pipewire-env.sh), and the private
#          buses of the RTKit tests. PipeWire's ALSA plugin (pipewire-alsa) would make ALSA's default
#          PipeWire for the whole machine and conflicts with pulseaudio: it is unpacked from its .deb
#          into .build/pipewire-alsa instead of installed.
#   bubblewrap, systemd   (--test) the service's sandbox; systemd-analyze, systemd-socket-activate
#   dpkg-dev, binutils, lintian  (--test) make deb and its check in the install tests
#   socat, netcat-openbsd (--test) the shell transcripts of docs/PROTOCOL.md
#   python3-venv  (--test) the virtual environment the Python client's tests install it into
#   sound-theme-freedesktop, libcanberra0, strace
#          (--test) the real sound theme, and libcanberra traced as its oracle (SoundThemeTests)
#   libcanberra-dev, libcanberra-pulse
#          (--test) the real libcanberra driving cued's driver (CanberraDriverTests: canberra-play links
#          it through pkg-config), and the driver it falls over to when cued is not running
#   xvfb, libcanberra-gtk3-module, gir1.2-gtk-3.0, gir1.2-gsound-1.0, gnome-session-canberra
#          (--test) the programs users play libcanberra sounds from (CanberraHostTests): a GTK 3
#          program with canberra-gtk-module on a private X server, GSound from Python, and
#          canberra-gtk-play (also the libcanberra example of README.md and docs/CLIENT.md, run as
#          written by DocumentedExampleTests)
#   tmux   (--test) the terminal carousel's tests
#   rtkit, python3-dbus, python3-gi
#          (--test) the real rtkit-daemon on a private system bus, and the stand-in polkit authority
#          it asks (Tests/RealtimeKitTestSupport): real-time through RTKit, tested unprivileged
#   libglib2.0-bin, dconf-service, dconf-gsettings-backend
#          (--test) gsettings and glib-compile-schemas, and dconf on a private session bus: the
#          desktop's sound settings as GNOME keeps them (DesktopSettingsTests, the transcripts)
#   golang-github-burntsushi-toml-dev
#          (--test) toml-test, the language-neutral TOML suite, which it ships as data
#          (internal/toml-test/tests): the config parser must pass it (TOMLTestSuiteTests); no Go needed
set -euo pipefail

profile=run
dry_run=false
for argument in "$@"; do
  case "$argument" in
    --run | --package | --test | --tools) profile="${argument#--}" ;;
    --with-tools) profile=tools ;;  # the earlier spelling
    --dry-run) dry_run=true ;;
    *) echo "install-deps: unknown argument '$argument' (--run, --package, --test, --tools, --dry-run)" >&2; exit 2 ;;
  esac
done

die() { echo "install-deps: $*" >&2; exit 1; }

# Swift first: nothing is worth installing for a checkout that cannot be built.
swift="${SWIFT:-swift}"
if ! swift_version="$("$swift" --version 2>/dev/null)"; then
  die "Swift ('$swift') was not found. cued needs Swift 6 or later: install a toolchain from swift.org
  (Debian 12: the 'Debian 12' tarball, unpacked and its usr/bin put on PATH), or name one with
  'make SWIFT=/path/to/swift'. Nothing was installed."
fi
swift_major="$(sed -n 's/.*Swift version \([0-9][0-9]*\)\..*/\1/p' <<<"$swift_version" | head -n 1)"
if [[ -z "$swift_major" || "$swift_major" -lt 6 ]]; then
  die "cued needs Swift 6 or later; '$swift' is: $(head -n 1 <<<"$swift_version"). Install a newer
  toolchain from swift.org or name one with 'make SWIFT=/path/to/swift'. Nothing was installed."
fi

command -v dpkg-query >/dev/null && command -v apt-get >/dev/null ||
  die "this script installs Debian packages with apt-get; on another system install the equivalents of
  the packages listed at the top of $0 and run the build directly ('swift build'). Nothing was installed."

dpkg_options=()
apt_options=()
if [[ -n "${CUED_DPKG_ADMINDIR:-}" ]]; then
  dpkg_options=(--admindir="$CUED_DPKG_ADMINDIR")
  apt_options=(-o "Dir::State::status=$CUED_DPKG_ADMINDIR/status")
fi
installed() { dpkg-query "${dpkg_options[@]}" -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

packages=(pkgconf libasound2-dev libmpg123-dev libpipewire-0.3-dev libspa-0.2-dev libpulse-dev libsndfile1-dev libebur128-dev
  libcanberra-dev)
pulse_server=""
if [[ "$profile" == package ]]; then
  packages+=(dpkg-dev binutils)
elif [[ "$profile" != run ]]; then
  # The machine's sound stack decides which PulseAudio-protocol server the tests start.
  pipewire_stack=""
  for p in pipewire-pulse pipewire-audio pipewire-alsa; do installed "$p" && pipewire_stack+="$p "; done
  pulse_server="${CUED_TEST_PULSE_SERVER:-}"
  if [[ -z "$pulse_server" ]]; then
    if [[ -n "$pipewire_stack" ]]; then pulse_server=pipewire-pulse; else pulse_server=pulseaudio; fi
  fi
  # libcanberra-pulse needs pulseaudio or pipewire-pulse: with neither (a PipeWire machine without its
  # pulse server), it is left out, and so is the one test that falls over to it.
  case "$pulse_server" in
    pulseaudio) packages+=(pulseaudio libcanberra-pulse) ;;
    # pipewire (below) ships the pulse module; the test set-up runs it privately
    pipewire-pulse) if installed pipewire-pulse; then packages+=(libcanberra-pulse); fi ;;
    *) die "CUED_TEST_PULSE_SERVER is '$pulse_server': give pulseaudio or pipewire-pulse" ;;
  esac
  packages+=(pulseaudio-utils libasound2-plugins pipewire pipewire-bin wireplumber dbus bubblewrap systemd
    dpkg-dev binutils lintian socat netcat-openbsd python3-venv sound-theme-freedesktop libcanberra0 strace tmux
    rtkit python3-dbus python3-gi libglib2.0-bin dconf-service dconf-gsettings-backend
    xvfb libcanberra-gtk3-module gir1.2-gtk-3.0 gir1.2-gsound-1.0 gnome-session-canberra
    golang-github-burntsushi-toml-dev)
fi
if [[ "$profile" == tools ]]; then
  packages+=(sox libsox-fmt-all lame mpg123 opus-tools flac stress-ng)
fi

missing=()
for p in "${packages[@]}"; do installed "$p" || missing+=("$p"); done

sudo=""
[[ $(id -u) -eq 0 ]] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive

# apt's plan for the missing packages (a simulation); stops, naming them, when apt cannot install
# them or would remove any installed package. apt's lists are refreshed once when they are missing or
# do not know a package (not for a simulated machine: its lists are this one's).
installs=0
if [[ ${#missing[@]} -gt 0 ]]; then
  simulate() { apt-get "${apt_options[@]}" -s install --no-install-recommends "${missing[@]}" 2>&1; }
  if ! plan="$(simulate)"; then
    [[ -n "${CUED_DPKG_ADMINDIR:-}" ]] || $sudo apt-get update -qq
    plan="$(simulate)" || die "apt cannot install ${missing[*]}:
$(grep -E '^(E:| )' <<<"$plan" | head -n 20)
Nothing was installed."
  fi
  removed="$(awk '$1 == "Remv" {print $2}' <<<"$plan" | sort -u | tr '\n' ' ')"
  if [[ -n "$removed" ]]; then
    if [[ " ${missing[*]} " == *" pulseaudio "* ]]; then
      advice="this machine's sound stack is PipeWire, and the pulseaudio server replaces it. Let the tests
  run a private pipewire-pulse instead (unset CUED_TEST_PULSE_SERVER, or set it to pipewire-pulse)."
    else
      advice="install the packages above yourself, choosing what to keep, then run this again."
    fi
    die "installing ${missing[*]} would remove: ${removed% }.
  Nothing was installed: cued's set-up never removes or replaces a package you have.
  What to do: $advice"
  fi
  installs="$(awk '$1 == "Inst" {print $2}' <<<"$plan" | sort -u | wc -l)"
fi

if $dry_run; then
  echo "profile: $profile"
  [[ -n "$pulse_server" ]] && echo "pulse-server: $pulse_server"
  echo "missing: ${missing[*]}"
  echo "apt-installs: $installs"
  echo "apt-removes: none"
  exit 0
fi

if [[ ${#missing[@]} -gt 0 ]]; then
  echo "installing: ${missing[*]} ($installs packages with what they need)" >&2
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# PipeWire's ALSA plugin, unpacked (not installed) for the tests.
if [[ "$profile" == test || "$profile" == tools ]]; then
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
fi
