#!/usr/bin/env bash
# Installs the Debian packages cued needs to build, run and test. Idempotent and quick when all
# is present: it asks dpkg first and runs apt-get only for what is missing.
#   libasound2-dev, libmpg123-dev  headers + pkg-config files for ALSA, libmpg123 and libsyn123
#   libasound2-plugins             ALSA's pulse PCM (so 'default' reaches PulseAudio/PipeWire)
#   pulseaudio, pulseaudio-utils   a private null-sink server and parec for the end-to-end tests
set -euo pipefail
packages=(libasound2-dev libmpg123-dev libasound2-plugins pulseaudio pulseaudio-utils)
if [[ "${1:-}" == "--with-tools" ]]; then
  packages+=(sox lame mpg123 socat)  # regenerate sounds/fixtures, benchmarks, protocol examples
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0
echo "installing: ${missing[*]}" >&2
sudo=""
[[ $(id -u) -eq 0 ]] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
